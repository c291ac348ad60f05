# grouseticks.R: glmer's fits of the two grouseticks models of issue 12,
# with YEAR as a number (95-97) far from zero: the figures glmmfit's
# default prior must agree with (cmd/glmmfit's TestPriorAgreesWithGlmer
# reads the output; tests never run R).
#
# Debian: apt-get install -y r-base-core r-cran-lme4
#
#   Rscript benchmarks/peers/grouseticks.R /work/shared/datasets benchmarks/peers/grouseticks_glmer.csv

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[[1]] else "../shared/datasets"
out <- if (length(args) >= 2) args[[2]] else "grouseticks_glmer.csv"
suppressPackageStartupMessages(library(lme4))
d <- read.csv(file.path(dir, "grouseticks.csv"))
d$BROOD <- factor(d$BROOD)
models <- c("TICKS ~ YEAR + cHEIGHT + (1 | BROOD)", "TICKS ~ YEAR + log(HEIGHT) + (1 | BROOD)")
rows <- NULL
for (f in models) {
  m <- glmer(as.formula(f), data = d, family = poisson)
  cf <- summary(m)$coefficients
  rows <- rbind(rows, data.frame(formula = f, term = rownames(cf),
    estimate = signif(cf[, 1], 7), se = signif(cf[, 2], 7), row.names = NULL))
}
con <- file(out, "w")
writeLines(sprintf("# glmer (Laplace) fits of grouseticks.csv with YEAR numeric. Made by benchmarks/peers/grouseticks.R with %s, lme4 %s.",
  R.version.string, packageVersion("lme4")), con)
write.csv(rows, con, row.names = FALSE)
close(con)
