# models.R: lme4's and glmmTMB's fits of the issue 15 data sets (the
# everyday mixed models: sleepstudy, penicillin, verbagg, insteval,
# salamanders, owls, arabidopsis, grouseticks with crossed effects) and of
# the paper's epilepsy, toenail and cbpp models: the fixture that the
# gaussian and negative-binomial families and the crossed random effects
# of glmmfit are checked against (tests read the output; tests never run R).
#
# Debian: apt-get install -y r-base-core r-cran-lme4 r-cran-glmmtmb
#
#   Rscript benchmarks/peers/models.R /work/shared/datasets benchmarks/peers/models_peers.csv
#
# Output: long format, one row per number, columns
#   data     the data file without .csv
#   tool     lmer (always REML = FALSE), glmer (Laplace, nAGQ = 1) or glmmTMB (Laplace, ML)
#   formula  the model formula as fitted
#   kind     fixed   a fixed effect (estimate, se)
#            sd      a random-effect standard deviation, term "group:effect"
#            cor     a random-effect correlation, term "group:effect1,effect2"
#            sigma   the residual standard deviation of a Gaussian model (term Residual)
#            phi     the NB2 dispersion (glmmTMB's sigma for nbinom2; var = mu + mu^2/phi)
#            loglik  the maximised log-likelihood (Laplace approximation for GLMMs)
#            seconds elapsed seconds of the fit alone (system.time; reading, factor
#                    coding and package loading excluded; each tool first makes a
#                    small warm-up fit so one-time costs are not charged to a data set)
#            warning a warning (or message, such as lme4's singular-fit note)
#                    raised during the fit, or a convergence failure the fit records (glmmTMB: optimiser code, non-positive-definite
#                    Hessian), the message in term
#   term, estimate, se (NA where there is none)
#
# Coding (datasets/README.md): grouping columns are factors even where the
# file holds numbers (Subject, plate, sample, id, item, s, d, dept, site,
# Nest, popu, gen, BROOD, INDEX, LOCATION, subject, patientID, herd);
# insteval's service (0/1), arabidopsis's rack (1/2) and nutrient (1/8) and
# cbpp's period are factors, as in lme4; grouseticks's YEAR enters as
# factor(YEAR). verbagg's r2 and toenail's outcome are coded 1 for Y and for
# "moderate or severe". Epilepsy and toenail use Tan's coding as
# datasets/loaders.go does: Base = log(base/4) (not centred), Trt = 1 for
# progabide, Age = log(age) centred, Visit = -0.3, -0.1, 0.1, 0.3 for periods
# 1-4; toenail Trt = 1 for terbinafine, t = time in months (raw).
#
# Optimisers: the defaults of each package, throughout (lmer: nloptwrap
# bobyqa; glmer: bobyqa then Nelder_Mead; glmmTMB: nlminb). Every fit
# converged with them, with no warning and no singular fit, so no fit needed
# another optimiser; a warning in a later run is kept as a row of kind
# "warning". glmer stops a little short of glmmTMB's maximum on toenail
# (logLik 0.0065 lower, random-intercept sd 4.557 against 4.571) and
# epilepsy (0.0008 lower), without a convergence warning.

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[[1]] else "../shared/datasets"
out <- if (length(args) >= 2) args[[2]] else "models_peers.csv"

suppressPackageStartupMessages({
  library(lme4)
  library(glmmTMB)
})

rd <- function(f) read.csv(file.path(dir, f), stringsAsFactors = TRUE)
fac <- function(d, cols) {
  for (c in cols) d[[c]] <- factor(d[[c]])
  d
}

rows <- list()
row <- function(kind, term, estimate, se = NA) {
  data.frame(kind = kind, term = term, estimate = estimate, se = se, stringsAsFactors = FALSE)
}

# components returns the sd, cor, sigma and phi rows of a fit.
components <- function(fit) {
  out <- NULL
  if (inherits(fit, "glmmTMB")) {
    vc <- VarCorr(fit)$cond
    for (g in names(vc)) {
      s <- attr(vc[[g]], "stddev")
      out <- rbind(out, row("sd", paste0(g, ":", names(s)), unname(s)))
      cr <- attr(vc[[g]], "correlation")
      if (length(s) > 1) {
        for (j in 2:length(s)) for (i in 1:(j - 1)) {
          out <- rbind(out, row("cor", paste0(g, ":", names(s)[i], ",", names(s)[j]), cr[i, j]))
        }
      }
    }
    fam <- family(fit)$family
    if (fam == "gaussian") out <- rbind(out, row("sigma", "Residual", sigma(fit)))
    if (grepl("nbinom2", fam)) out <- rbind(out, row("phi", "phi", sigma(fit)))
  } else {
    vc <- as.data.frame(VarCorr(fit), order = "cov.last")
    # (Days || Subject) splits into groups Subject and Subject.1: name both Subject.
    grp <- sub("\\.[0-9]+$", "", vc$grp)
    for (k in seq_len(nrow(vc))) {
      if (vc$grp[k] == "Residual") {
        out <- rbind(out, row("sigma", "Residual", vc$sdcor[k]))
      } else if (is.na(vc$var2[k])) {
        out <- rbind(out, row("sd", paste0(grp[k], ":", vc$var1[k]), vc$sdcor[k]))
      } else {
        out <- rbind(out, row("cor", paste0(grp[k], ":", vc$var1[k], ",", vc$var2[k]), vc$sdcor[k]))
      }
    }
  }
  out
}

# fitrows fits expr (a call of lmer, glmer or glmmTMB, evaluated lazily
# here), timing it and catching its warnings and messages, and adds its rows.
fitrows <- function(data, tool, formula, expr) {
  warns <- character(0)
  t <- system.time(fit <- withCallingHandlers(expr,
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    },
    message = function(m) {
      warns <<- c(warns, sub("\n$", "", conditionMessage(m)))
      invokeRestart("muffleMessage")
    }))[["elapsed"]]
  if (inherits(fit, "glmmTMB")) {
    cf <- summary(fit)$coefficients$cond
    if (fit$fit$convergence != 0) warns <- c(warns, paste("nlminb:", fit$fit$message))
    if (!isTRUE(fit$sdr$pdHess)) warns <- c(warns, "non-positive-definite Hessian")
  } else {
    cf <- summary(fit)$coefficients
    # Convergence notes lme4 stored without warning (those it warned of are caught above).
    warns <- gsub("\\s+", " ", trimws(warns))
    for (m in gsub("\\s+", " ", trimws(unlist(c(fit@optinfo$conv$lme4$messages, fit@optinfo$warnings))))) {
      if (!any(grepl(m, warns, fixed = TRUE))) warns <- c(warns, m)
    }
  }
  warns <- unique(gsub("\\s+", " ", trimws(warns)))
  r <- rbind(
    row("fixed", rownames(cf), unname(cf[, 1]), unname(cf[, 2])),
    components(fit),
    row("loglik", "logLik", as.numeric(logLik(fit))),
    row("seconds", "elapsed", t))
  if (length(warns) > 0) r <- rbind(r, row("warning", warns, NA))
  r <- cbind(data.frame(data = data, tool = tool, formula = formula, stringsAsFactors = FALSE), r)
  rows[[length(rows) + 1]] <<- r
  cat(sprintf("%-12s %-8s %7.2f s  logLik %.4f%s\n", data, tool, t, as.numeric(logLik(fit)),
              if (length(warns) > 0) paste0("  WARNING: ", paste(warns, collapse = " | ")) else ""))
  invisible(fit)
}

lmm <- function(data, d, f) fitrows(data, "lmer", f, lmer(as.formula(f), data = d, REML = FALSE))
glmm <- function(data, d, f, family) fitrows(data, "glmer", f, glmer(as.formula(f), data = d, family = family))
tmb <- function(data, d, f, family) fitrows(data, "glmmTMB", f, glmmTMB(as.formula(f), data = d, family = family))

# Warm-up fits (not recorded).
invisible(suppressMessages(suppressWarnings({
  w <- fac(rd("cbpp.csv"), c("herd", "period"))
  lmer(incidence ~ period + (1 | herd), data = w, REML = FALSE)
  glmer(cbind(incidence, size - incidence) ~ period + (1 | herd), data = w, family = binomial)
  glmmTMB(cbind(incidence, size - incidence) ~ period + (1 | herd), data = w, family = binomial)
})))

d <- fac(rd("sleepstudy.csv"), "Subject")
f <- "Reaction ~ Days + (Days | Subject)"
lmm("sleepstudy", d, f)
tmb("sleepstudy", d, f, gaussian)
lmm("sleepstudy", d, "Reaction ~ Days + (Days || Subject)")

d <- fac(rd("penicillin.csv"), c("plate", "sample"))
f <- "diameter ~ 1 + (1 | plate) + (1 | sample)"
lmm("penicillin", d, f)
tmb("penicillin", d, f, gaussian)

d <- fac(rd("verbagg.csv"), c("id", "item"))
d$r2 <- as.integer(d$r2 == "Y")
f <- "r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item)"
glmm("verbagg", d, f, binomial)
tmb("verbagg", d, f, binomial)

d <- fac(rd("insteval.csv"), c("s", "d", "dept", "service"))
f <- "y ~ service + (1 | s) + (1 | d) + (1 | dept)"
lmm("insteval", d, f)
tmb("insteval", d, f, gaussian)

d <- fac(rd("salamanders.csv"), "site")
tmb("salamanders", d, "count ~ spp * mined + (1 | site)", nbinom2)

d <- fac(rd("owls.csv"), "Nest")
tmb("owls", d, "SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest)", nbinom2)

d <- fac(rd("arabidopsis.csv"), c("popu", "gen", "rack", "nutrient"))
glmm("arabidopsis", d, "total.fruits ~ nutrient * amd + rack + status + (1 | popu) + (1 | gen)", poisson)

d <- fac(rd("grouseticks.csv"), c("BROOD", "INDEX", "LOCATION"))
glmm("grouseticks", d, "TICKS ~ factor(YEAR) + cHEIGHT + (1 | BROOD) + (1 | INDEX) + (1 | LOCATION)", poisson)

d <- fac(rd("epilepsy.csv"), "subject")
d$Base <- log(d$base / 4)
d$Trt <- as.integer(d$trt == "progabide")
d$Age <- log(d$age) - mean(log(d$age))
d$Visit <- c(-0.3, -0.1, 0.1, 0.3)[d$period]
f <- "y ~ Base * Trt + Age + Visit + (1 + Visit | subject)"
glmm("epilepsy", d, f, poisson)
tmb("epilepsy", d, f, poisson)

d <- fac(rd("toenail.csv"), "patientID")
d$y <- as.integer(d$outcome == "moderate or severe")
d$Trt <- as.integer(d$treatment == "terbinafine")
d$t <- d$time
f <- "y ~ Trt * t + (1 | patientID)"
glmm("toenail", d, f, binomial)
tmb("toenail", d, f, binomial)

d <- fac(rd("cbpp.csv"), c("herd", "period"))
f <- "cbind(incidence, size - incidence) ~ period + (1 | herd)"
glmm("cbpp", d, f, binomial)
tmb("cbpp", d, f, binomial)

res <- do.call(rbind, rows)
num <- !(res$kind %in% c("loglik", "seconds"))
res$estimate[num] <- signif(res$estimate[num], 7)
res$se <- signif(res$se, 7)
res$estimate[res$kind == "loglik"] <- round(res$estimate[res$kind == "loglik"], 4)
res$estimate[res$kind == "seconds"] <- round(res$estimate[res$kind == "seconds"], 3)
con <- file(out, "w")
writeLines(sprintf("# lmer (REML = FALSE), glmer (Laplace) and glmmTMB (Laplace, ML) fits of the issue 15 data sets and of epilepsy, toenail and cbpp. Made by benchmarks/peers/models.R with %s, lme4 %s, glmmTMB %s, TMB %s, Matrix %s, %d core(s).",
  R.version.string, packageVersion("lme4"), packageVersion("glmmTMB"), packageVersion("TMB"),
  packageVersion("Matrix"), parallel::detectCores()), con)
write.csv(res, con, row.names = FALSE)
close(con)
