# Exact references for the multilevel model's tests (tests/testthat/test-model-glmm.R):
# rstanarm::stan_glmer() at its defaults (4 chains, and 10,000 iterations each rather
# than its 2,000, half warm-up: 20,000 draws), with fixed seeds, on
#   sleepstudy: Reaction ~ Days + (Days | Subject)                      (gaussian)
#   cbpp:       cbind(incidence, size - incidence) ~ period + (1 | herd)  (binomial)
# Stored per data set: posterior means and sds of every parameter under rstanarm's
# names; the intercept on centred predictors (rstanarm's prior is stated for it:
# `alpha` = (Intercept) + sum_j beta_j mean(x_j)); each term's sds and correlations; the adjusted prior scales prior_summary() reports; the
# largest Monte Carlo standard error of a mean relative to its sd and the smallest
# bulk ESS; the versions.
#   Rscript data-raw/glmm-reference.R
library(rstanarm)
options(mc.cores = 1)

reference <- function(fit, seed) {
  draws <- as.matrix(fit)
  draws <- draws[, !grepl("^mean_PPD|^log-posterior", colnames(draws))]
  X <- fit$glmod$X
  slopes <- setdiff(colnames(X), "(Intercept)")
  alpha <- draws[, "(Intercept)"] + draws[, slopes, drop = FALSE] %*% colMeans(X[, slopes, drop = FALSE])
  extra <- cbind(alpha = drop(alpha))
  # each term's sds and correlations, as lme4's VarCorr() gives them
  sig <- grep("^Sigma\\[", colnames(draws), value = TRUE)
  pattern <- "^Sigma\\[([^:]*):([^,]*),(.*)\\]$"
  g <- sub(pattern, "\\1", sig)
  a <- sub(pattern, "\\2", sig)
  b <- sub(pattern, "\\3", sig)
  sds <- sqrt(draws[, sig[a == b], drop = FALSE])
  colnames(sds) <- paste0("sd[", g[a == b], ":", a[a == b], "]")
  extra <- cbind(extra, sds)
  for (j in which(a != b)) {
    cor <- draws[, sig[j]] / (sds[, paste0("sd[", g[j], ":", a[j], "]")] *
                                sds[, paste0("sd[", g[j], ":", b[j], "]")])
    extra <- cbind(extra, cor)
    colnames(extra)[ncol(extra)] <- paste0("cor[", g[j], ":", b[j], ",", a[j], "]")
  }
  all <- cbind(draws, extra)
  ps <- prior_summary(fit)
  mon <- rstan::monitor(array(all, c(nrow(all) / 4, 4, ncol(all))), warmup = 0, print = FALSE)
  list(
    mean = colMeans(all), sd = apply(all, 2, sd), x_means = colMeans(X[, slopes, drop = FALSE]),
    mcse_rel = max(mon[, "se_mean"] / mon[, "sd"]), min_ess = min(mon[, "Bulk_ESS"]),
    prior = list(intercept_loc = ps$prior_intercept$location,
                 intercept_scale = ps$prior_intercept$adjusted_scale %||%
                   ps$prior_intercept$scale,
                 coef_loc = ps$prior$location,
                 coef_scale = ps$prior$adjusted_scale %||% ps$prior$scale,
                 # prior_summary() stores the exponential's adjusted scale, 1 / rate
                 aux_rate = if (!is.null(ps$prior_aux))
                   1 / (ps$prior_aux$adjusted_scale %||% ps$prior_aux$scale),
                 covariance = ps$prior_covariance),
    prior_summary = utils::capture.output(print(ps)),
    settings = paste("stan_glmer defaults, chains = 4, iter = 10000, seed =", seed),
    versions = c(rstanarm = as.character(packageVersion("rstanarm")),
                 rstan = as.character(packageVersion("rstan")),
                 lme4 = as.character(packageVersion("lme4")), R = R.version.string))
}
`%||%` <- function(a, b) if (is.null(a)) b else a

refs <- list(
  sleepstudy = reference(stan_glmer(Reaction ~ Days + (Days | Subject), data = lme4::sleepstudy,
                                    chains = 4, iter = 10000, seed = 20261128, refresh = 0),
                         20261128),
  cbpp = reference(stan_glmer(cbind(incidence, size - incidence) ~ period + (1 | herd),
                              data = lme4::cbpp, family = binomial, chains = 4, iter = 10000,
                              seed = 20261129, refresh = 0), 20261129))
for (r in refs) {
  print(r$prior_summary)
  print(round(cbind(mean = r$mean, sd = r$sd), 3))
  cat("largest mcse/sd", r$mcse_rel, "smallest bulk ESS", r$min_ess, "\n")
}
saveRDS(refs, "tests/testthat/glmm-reference.rds", version = 2)
