# glmer.R: lme4's estimates on the simulated logistic files, the reference
# of the comparison in benchmarks/scaling (go run ./benchmarks/scaling -logit).
#
# Optional: CI does not run it, and the Go program needs only its output,
# the committed glmer_estimates.csv. To reproduce that file (Debian:
# apt-get install -y --no-install-recommends r-base-core r-cran-lme4):
#
#   Rscript benchmarks/scaling/glmer.R /work/shared/datasets benchmarks/scaling/glmer_estimates.csv
#
# For each of sim_logit_n10000.csv and sim_logit_n100000.csv.gz it fits
#   glmer(y ~ x1 + x2 + x3 + (1 | id), family = binomial)
# with lme4's defaults (Laplace approximation, nAGQ = 1, the default
# optimizer and controls) and writes the fixed-effect estimates and their
# standard errors, with the elapsed seconds of reading the file and of the
# fit (system.time), to the output file. Comment lines (#) at its top record
# the R and lme4 versions, the date and the command.

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[[1]] else "../shared/datasets"
out <- if (length(args) >= 2) args[[2]] else "glmer_estimates.csv"

suppressPackageStartupMessages(library(lme4))

files <- c("sim_logit_n10000.csv", "sim_logit_n100000.csv.gz")
rows <- list()
for (f in files) {
  path <- file.path(dir, f)
  read_secs <- system.time(d <- read.csv(path))[["elapsed"]] # read.csv reads .gz
  d$id <- factor(d$id)
  fit_secs <- system.time(
    m <- glmer(y ~ x1 + x2 + x3 + (1 | id), data = d, family = binomial)
  )[["elapsed"]]
  cf <- summary(m)$coefficients
  msgs <- m@optinfo$conv$lme4$messages
  cat(sprintf("%s: %d rows, %d subjects, read %.1f s, glmer %.1f s, sd(id) %.4f%s\n",
              f, nrow(d), nlevels(d$id), read_secs, fit_secs,
              attr(VarCorr(m)$id, "stddev"),
              if (is.null(msgs)) "" else paste0(", warnings: ", paste(msgs, collapse = "; "))))
  print(cf)
  rows[[f]] <- data.frame(file = f, term = rownames(cf),
                          estimate = sprintf("%.6f", cf[, "Estimate"]),
                          se = sprintf("%.6f", cf[, "Std. Error"]),
                          seconds = sprintf("%.1f", fit_secs),
                          read_seconds = sprintf("%.1f", read_secs),
                          sd_id = sprintf("%.6f", attr(VarCorr(m)$id, "stddev")))
}

con <- file(out, "w")
writeLines(c(
  "# glmer fixed-effect estimates and standard errors on the sim_logit files.",
  sprintf("# Made by benchmarks/scaling/glmer.R on %s with %s, lme4 %s (Debian r-base-core, r-cran-lme4):",
          format(Sys.time(), "%Y-%m-%d", tz = "UTC"), R.version.string, as.character(packageVersion("lme4"))),
  "#   glmer(y ~ x1 + x2 + x3 + (1 | id), family = binomial), defaults (Laplace, nAGQ = 1).",
  "# seconds: elapsed time of the glmer call (system.time) on the 2-core machine the issue-7",
  "# timings were made on, while other jobs were running; read_seconds: read.csv.",
  "# sd_id: the estimated random-intercept standard deviation."
), con)
write.csv(do.call(rbind, rows), con, row.names = FALSE, quote = FALSE)
close(con)
