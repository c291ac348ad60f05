# links.R: glmer's fits with the probit and complementary log-log links,
# the figures glmmfit's -link is compared with (cmd/glmmfit's
# TestPeerModels reads the output; tests never run R). cbpp by the Laplace
# approximation, as glmer does by default; toenail also by adaptive
# Gauss-Hermite quadrature with 25 nodes, as Laplace is far off there
# (probit: random-intercept sd 4.57 against 2.12).
#
# Debian: apt-get install -y r-base-core r-cran-lme4
#
#   Rscript benchmarks/peers/links.R /work/shared/datasets benchmarks/peers/links_peers.csv

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[[1]] else "../shared/datasets"
out <- if (length(args) >= 2) args[[2]] else "links_peers.csv"
suppressPackageStartupMessages(library(lme4))
rows <- NULL
add <- function(data, tool, formula, m) {
  cf <- summary(m)$coefficients
  for (k in seq_len(nrow(cf)))
    rows <<- rbind(rows, data.frame(data = data, tool = tool, formula = formula, kind = "fixed",
      term = rownames(cf)[k], estimate = signif(cf[k, 1], 7), se = signif(cf[k, 2], 7)))
  vc <- VarCorr(m)
  for (g in names(vc)) {
    s <- attr(vc[[g]], "stddev")
    rows <<- rbind(rows, data.frame(data = data, tool = tool, formula = formula, kind = "sd",
      term = paste0(g, ":", names(s)), estimate = signif(s, 7), se = NA))
  }
  rows <<- rbind(rows, data.frame(data = data, tool = tool, formula = formula, kind = "loglik",
    term = "logLik", estimate = signif(as.numeric(logLik(m)), 7), se = NA))
}
cb <- read.csv(file.path(dir, "cbpp.csv"))
cb$herd <- factor(cb$herd)
cb$period <- factor(cb$period)
te <- read.csv(file.path(dir, "toenail.csv"))
te$y <- as.integer(te$outcome != "none or mild")
te$patientID <- factor(te$patientID)
for (l in c("probit", "cloglog")) {
  f <- "cbind(incidence, size - incidence) ~ period + (1 | herd)"
  add("cbpp", paste0("glmer-", l), f, glmer(as.formula(f), data = cb, family = binomial(link = l)))
  f <- "y ~ treatment * time + (1 | patientID)"
  add("toenail", paste0("glmer-", l, "-agq25"), f,
    glmer(as.formula(f), data = te, family = binomial(link = l), nAGQ = 25))
}
con <- file(out, "w")
writeLines(sprintf("# glmer fits with the probit and cloglog links. Made by benchmarks/peers/links.R with %s, lme4 %s.",
  R.version.string, packageVersion("lme4")), con)
write.csv(rows, con, row.names = FALSE)
close(con)
