# Exact reference for the multilevel model's prior (tests/testthat/test-model-glmm.R):
# rstanarm::stan_glmer(Reaction ~ Days + (Days | Subject), lme4::sleepstudy) at its
# defaults (4 chains, and 4,000 iterations each rather than its 2,000, half warm-up:
# 8,000 draws), with a fixed seed. Stored: posterior means and sds of every
# parameter under rstanarm's names; the intercept on centred Days (rstanarm's
# prior is stated for it: `alpha` = (Intercept) + Days' coefficient * mean(Days));
# the adjusted prior scales prior_summary() reports; the largest Monte Carlo
# standard error of a mean relative to its sd; the versions.
#   Rscript data-raw/glmm-reference.R
library(rstanarm)
options(mc.cores = 1)
fit <- stan_glmer(Reaction ~ Days + (Days | Subject), data = lme4::sleepstudy,
                  chains = 4, iter = 4000, seed = 20261128, refresh = 0)
draws <- as.matrix(fit)
keep <- !grepl("^mean_PPD|^log-posterior", colnames(draws))
draws <- draws[, keep]
alpha <- draws[, "(Intercept)"] + draws[, "Days"] * mean(lme4::sleepstudy$Days)
# the covariance's sds and correlation, as lme4's VarCorr names them
s0 <- sqrt(draws[, "Sigma[Subject:(Intercept),(Intercept)]"])
s1 <- sqrt(draws[, "Sigma[Subject:Days,Days]"])
rho <- draws[, "Sigma[Subject:Days,(Intercept)]"] / (s0 * s1)
extra <- cbind(alpha = alpha, "sd[Subject:(Intercept)]" = s0, "sd[Subject:Days]" = s1,
               "cor[Subject:(Intercept),Days]" = rho)
all <- cbind(draws, extra)
ps <- prior_summary(fit)
mon <- rstan::monitor(array(all, c(nrow(all) / 4, 4, ncol(all))), warmup = 0, print = FALSE)
ref <- list(
  mean = colMeans(all), sd = apply(all, 2, sd),
  mcse_rel = max(mon[, "se_mean"] / mon[, "sd"]), min_ess = min(mon[, "Bulk_ESS"]),
  prior = list(intercept_loc = ps$prior_intercept$location,
               intercept_scale = ps$prior_intercept$adjusted_scale,
               coef_loc = ps$prior$location, coef_scale = ps$prior$adjusted_scale,
               # prior_summary() stores the exponential's adjusted scale, 1 / rate
               aux_rate = 1 / ps$prior_aux$adjusted_scale,
               covariance = ps$prior_covariance),
  prior_summary = utils::capture.output(print(ps)),
  settings = "stan_glmer defaults, chains = 4, iter = 4000, seed = 20261128",
  versions = c(rstanarm = as.character(packageVersion("rstanarm")),
               rstan = as.character(packageVersion("rstan")),
               lme4 = as.character(packageVersion("lme4")), R = R.version.string))
print(ref$prior_summary)
print(round(cbind(mean = ref$mean, sd = ref$sd), 3))
cat("largest mcse/sd", ref$mcse_rel, "smallest bulk ESS", ref$min_ess, "\n")
saveRDS(ref, "tests/testthat/glmm-reference.rds", version = 2)
