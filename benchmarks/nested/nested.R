# nested.R: lme4's fits of the simulated nested data of benchmarks/nested
# (300 schools, 3 classes each, 6 rows a class; go run ./benchmarks/nested),
# the fixture that glmmfit's nested random effects, (1 | school/class) with
# each school's block holding its classes, are checked against
# (cmd/glmmfit's TestPeerNested reads the output; tests never run R).
#
# Debian: apt-get install -y r-base-core r-cran-lme4
#
#   Rscript benchmarks/nested/nested.R benchmarks/nested/nested_sim.csv benchmarks/nested/nested_peers.csv
#
# Models: glmer(y ~ x + (1 | school/class), family = binomial) (Laplace,
# nAGQ = 1) and lmer(z ~ x + (1 | school/class), REML = FALSE), lme4's
# defaults otherwise. Output as benchmarks/peers/models_peers.csv: columns
# data, tool, formula, kind (fixed, sd with term "group:(Intercept)",
# sigma, loglik, seconds), term, estimate, se.

args <- commandArgs(trailingOnly = TRUE)
path <- if (length(args) >= 1) args[[1]] else "nested_sim.csv"
out <- if (length(args) >= 2) args[[2]] else "nested_peers.csv"

suppressPackageStartupMessages(library(lme4))

d <- read.csv(path, stringsAsFactors = TRUE)
rows <- list()
add <- function(tool, formula, kind, term, estimate, se = NA) {
  rows[[length(rows) + 1]] <<- data.frame(data = "nested_sim", tool = tool, formula = formula, kind = kind,
                                          term = term, estimate = signif(estimate, 7), se = signif(se, 7))
}
fits <- list(
  list(tool = "glmer", formula = "y ~ x + (1 | school/class)",
       fit = function() glmer(y ~ x + (1 | school/class), data = d, family = binomial)),
  list(tool = "lmer", formula = "z ~ x + (1 | school/class)",
       fit = function() lmer(z ~ x + (1 | school/class), data = d, REML = FALSE))
)
for (f in fits) {
  secs <- system.time(m <- f$fit())[["elapsed"]]
  print(summary(m))
  cf <- summary(m)$coefficients
  for (k in seq_len(nrow(cf))) add(f$tool, f$formula, "fixed", rownames(cf)[k], cf[k, "Estimate"], cf[k, "Std. Error"])
  vc <- as.data.frame(VarCorr(m))
  for (k in seq_len(nrow(vc))) {
    if (vc$grp[k] == "Residual") {
      add(f$tool, f$formula, "sigma", "Residual", vc$sdcor[k])
    } else {
      add(f$tool, f$formula, "sd", paste0(vc$grp[k], ":", vc$var1[k]), vc$sdcor[k])
    }
  }
  add(f$tool, f$formula, "loglik", "", as.numeric(logLik(m)))
  add(f$tool, f$formula, "seconds", "", secs)
}
con <- file(out, "w")
writeLines(sprintf("# lme4 fits of benchmarks/nested/nested_sim.csv. Made by benchmarks/nested/nested.R with %s, lme4 %s.",
                   R.version.string, packageVersion("lme4")), con)
write.csv(do.call(rbind, rows), con, row.names = FALSE)
close(con)
