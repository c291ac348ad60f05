# peers.R: one whole-process fit by glmer or glmmTMB, as a user runs it:
# start R, load the package, read the CSV file, fit, print the summary.
# benchmarks/compare times this script as a whole process, beside glmmfit.
#
#   Rscript benchmarks/compare/peers.R glmer|glmmtmb FILE
#
# The model is the issue's: y ~ x1 + x2 + x3 + (1 | id), Bernoulli (logit).
# Debian: apt-get install -y r-base-core r-cran-lme4 r-cran-glmmtmb

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) stop("usage: Rscript peers.R glmer|glmmtmb FILE")
tool <- args[[1]]
d <- read.csv(args[[2]]) # read.csv reads .gz too
d$id <- factor(d$id)
if (tool == "glmer") {
  suppressPackageStartupMessages(library(lme4))
  m <- glmer(y ~ x1 + x2 + x3 + (1 | id), data = d, family = binomial)
} else if (tool == "glmmtmb") {
  suppressPackageStartupMessages(library(glmmTMB))
  m <- glmmTMB(y ~ x1 + x2 + x3 + (1 | id), data = d, family = binomial)
} else {
  stop("unknown tool ", tool)
}
print(summary(m))
