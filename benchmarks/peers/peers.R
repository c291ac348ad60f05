# peers.R: lme4's and glmmTMB's fits of the everyday mixed models, the
# reference figures that glmmfit's fits of the same models are compared
# with (issue 15). CI does not run it; tests read its committed output.
#
# Debian: apt-get install -y r-base-core r-cran-lme4 r-cran-glmmtmb
#
#   Rscript benchmarks/peers/peers.R /work/shared/datasets benchmarks/peers/peers_estimates.csv
#
# For each data set it fits the model its documentation names (lmer with
# REML = FALSE for the Gaussian ones, glmer with the Laplace approximation,
# glmmTMB with nbinom2 for the negative-binomial ones, and glmmTMB beside
# glmer for verbagg), and writes one row per fixed effect (estimate and
# standard error) and per variance component (standard deviation, and
# the residual sd or the NB2 dispersion phi), with the elapsed seconds of
# the fit (system.time, package loading and reading excluded).

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[[1]] else "../shared/datasets"
out <- if (length(args) >= 2) args[[2]] else "peers_estimates.csv"

suppressPackageStartupMessages({
  library(lme4)
  library(glmmTMB)
})

rd <- function(f) read.csv(file.path(dir, f), stringsAsFactors = TRUE)

rows <- list()
add <- function(data, tool, fit, secs) {
  if (inherits(fit, "glmmTMB")) {
    cf <- summary(fit)$coefficients$cond
    vc <- VarCorr(fit)$cond
    comps <- lapply(names(vc), function(g) {
      s <- attr(vc[[g]], "stddev")
      data.frame(kind = "sd", term = paste0(g, ":", names(s)), estimate = s, se = NA)
    })
    extra <- NULL
    fam <- family(fit)$family
    if (grepl("nbinom2", fam)) extra <- data.frame(kind = "phi", term = "phi", estimate = sigma(fit), se = NA)
    if (fam == "gaussian") extra <- data.frame(kind = "sd", term = "Residual", estimate = sigma(fit), se = NA)
    ll <- as.numeric(logLik(fit))
  } else {
    cf <- summary(fit)$coefficients
    vc <- as.data.frame(VarCorr(fit))
    vc <- vc[is.na(vc$var2), ]
    comps <- list(data.frame(kind = "sd",
                             term = ifelse(vc$grp == "Residual", "Residual", paste0(vc$grp, ":", vc$var1)),
                             estimate = vc$sdcor, se = NA))
    extra <- NULL
    ll <- as.numeric(logLik(fit))
  }
  fx <- data.frame(kind = "beta", term = rownames(cf), estimate = cf[, 1], se = cf[, 2])
  all <- rbind(fx, do.call(rbind, comps), extra)
  all$data <- data
  all$tool <- tool
  all$seconds <- secs
  all$loglik <- ll
  rows[[length(rows) + 1]] <<- all
  cat(sprintf("%s %s: %.2f s, logLik %.3f\n", data, tool, secs, ll))
}

timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(v = v, t = t)
}

d <- rd("sleepstudy.csv")
f <- timed(lmer(Reaction ~ Days + (Days | Subject), data = d, REML = FALSE))
add("sleepstudy", "lmer", f$v, f$t)

d <- rd("penicillin.csv")
d$plate <- factor(d$plate); d$sample <- factor(d$sample)
f <- timed(lmer(diameter ~ 1 + (1 | plate) + (1 | sample), data = d, REML = FALSE))
add("penicillin", "lmer", f$v, f$t)

d <- rd("verbagg.csv")
d$id <- factor(d$id); d$item <- factor(d$item)
f <- timed(glmer(r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item), data = d, family = binomial))
add("verbagg", "glmer", f$v, f$t)
f <- timed(glmmTMB(r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item), data = d, family = binomial))
add("verbagg", "glmmTMB", f$v, f$t)

d <- rd("insteval.csv")
d$s <- factor(d$s); d$d <- factor(d$d); d$dept <- factor(d$dept); d$service <- factor(d$service)
f <- timed(lmer(y ~ service + (1 | s) + (1 | d) + (1 | dept), data = d, REML = FALSE))
add("insteval", "lmer", f$v, f$t)

d <- rd("salamanders.csv")
d$site <- factor(d$site)
f <- timed(glmmTMB(count ~ spp * mined + (1 | site), data = d, family = nbinom2))
add("salamanders", "glmmTMB", f$v, f$t)

d <- rd("owls.csv")
d$Nest <- factor(d$Nest)
f <- timed(glmmTMB(SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest),
                   data = d, family = nbinom2))
add("owls", "glmmTMB", f$v, f$t)

d <- rd("arabidopsis.csv")
d$popu <- factor(d$popu); d$gen <- factor(d$gen); d$rack <- factor(d$rack); d$nutrient <- factor(d$nutrient)
f <- timed(glmer(total.fruits ~ nutrient * amd + rack + status + (1 | popu) + (1 | gen), data = d, family = poisson))
add("arabidopsis", "glmer", f$v, f$t)

d <- rd("grouseticks.csv")
d$BROOD <- factor(d$BROOD); d$INDEX <- factor(d$INDEX); d$LOCATION <- factor(d$LOCATION)
f <- timed(glmer(TICKS ~ factor(YEAR) + cHEIGHT + (1 | BROOD) + (1 | INDEX) + (1 | LOCATION), data = d, family = poisson))
add("grouseticks", "glmer", f$v, f$t)

res <- do.call(rbind, rows)
res <- res[, c("data", "tool", "kind", "term", "estimate", "se", "seconds", "loglik")]
res$estimate <- sprintf("%.6g", res$estimate)
res$se <- ifelse(is.na(res$se), "", sprintf("%.6g", res$se))
res$seconds <- sprintf("%.2f", res$seconds)
res$loglik <- sprintf("%.4f", res$loglik)
con <- file(out, "w")
writeLines(c(
  "# lme4 and glmmTMB fits of the everyday mixed models (issue 15): fixed effects (beta: estimate, se),",
  "# random-effect and residual standard deviations (sd) and NB2 dispersions (phi), elapsed fit seconds.",
  sprintf("# Made by benchmarks/peers/peers.R on %s with %s, lme4 %s, glmmTMB %s (Debian packages).",
          format(Sys.time(), "%Y-%m-%d", tz = "UTC"), R.version.string,
          as.character(packageVersion("lme4")), as.character(packageVersion("glmmTMB"))),
  "# Gaussian models: lmer(REML = FALSE); others: Laplace approximation (glmer nAGQ = 1, glmmTMB)."
), con)
write.csv(res, con, row.names = FALSE, quote = FALSE)
close(con)
