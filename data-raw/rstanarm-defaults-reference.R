# rstanarm's stan_glm() at its defaults (default priors, autoscaled, the
# intercept's prior on centred predictors; 4 chains), for
# tests/testthat/test-default-priors.R, which checks that sgld(f, data,
# family) at its defaults gives the same posterior: one small data set per
# family, from base R and MASS.
#   gaussian  longley: Employed ~ Unemployed + Armed.Forces + Year (16 rows;
#             Year is a calendar year, 1947-1962, the case of issue 47)
#   binomial  MASS::Pima.tr: type ~ npreg + glu + bmi + ped + age (200 rows)
#   poisson   warpbreaks: breaks ~ wool + tension (54 rows, indicator columns)
#   neg_binomial_2  MASS::quine: Days ~ Eth + Sex + Age + Lrn (146 rows)
#   binomial  rare_levels_data() of tests/testthat/helper-auto.R (3,000 rows):
#             y ~ x1 + x2 + group, where levels h and i have no events and
#             j only events: the autoscaled priors of those rare indicator
#             columns (2.5 / sd, about 25-80) are all that bounds them
# 4 chains of 5,000 iterations (half warm-up): 10,000 draws, so that
# rstanarm's own Monte Carlo error (at least a few thousand effective
# draws) is small beside the test's bar of 0.15 posterior sd and 10%.
# Stored small: prior_summary()'s adjusted scales, posterior means, sds,
# 5/50/95% quantiles and bulk ESS of every parameter.
# Made with rstanarm 2.21.3, rstan 2.21.7, R 4.2.2 (Debian r-cran-rstanarm),
# seed 4747:
#   cd <package root> && nice Rscript data-raw/rstanarm-defaults-reference.R
library(rstanarm)
source("tests/testthat/helper-auto.R")   # rare_levels_data()

sets <- list(
  gaussian = list(formula = Employed ~ Unemployed + Armed.Forces + Year,
                  data = datasets::longley, family = gaussian()),
  binomial = list(formula = type ~ npreg + glu + bmi + ped + age,
                  data = MASS::Pima.tr, family = binomial()),
  poisson = list(formula = breaks ~ wool + tension, data = datasets::warpbreaks,
                 family = poisson()),
  negbin = list(formula = Days ~ Eth + Sex + Age + Lrn, data = MASS::quine,
                family = neg_binomial_2()),
  rare_levels = list(formula = y ~ x1 + x2 + group, data = rare_levels_data(),
                     family = binomial()))

reference <- function(set, seed = 4747) {
  fit <- stan_glm(set$formula, data = set$data, family = set$family, chains = 4,
                  iter = 5000, cores = 1, seed = seed, refresh = 0)
  draws <- as.matrix(fit)
  arr <- posterior::as_draws_array(as.array(fit))
  ps <- prior_summary(fit)
  ess <- posterior::summarise_draws(arr, "ess_bulk")
  list(formula = set$formula, family = set$family$family,
       mean = colMeans(draws), sd = apply(draws, 2, stats::sd),
       quantiles = apply(draws, 2, stats::quantile, probs = c(0.05, 0.5, 0.95)),
       ess_bulk = stats::setNames(as.numeric(ess$ess_bulk), ess$variable),
       prior = list(coef_scale = ps$prior$adjusted_scale,
                    intercept_location = ps$prior_intercept$location,
                    intercept_scale = if (is.null(ps$prior_intercept$adjusted_scale))
                      ps$prior_intercept$scale else ps$prior_intercept$adjusted_scale,
                    aux_dist = ps$prior_aux$dist,
                    aux_rate = if (is.null(ps$prior_aux$adjusted_scale)) ps$prior_aux$rate
                               else 1 / ps$prior_aux$adjusted_scale),
       draws_kept = nrow(draws), seed = seed)
}

out <- lapply(sets, reference)
out$rstanarm <- as.character(packageVersion("rstanarm"))
out$rstan <- as.character(packageVersion("rstan"))
out$R <- R.version.string
out$date <- format(Sys.time(), tz = "UTC", usetz = TRUE)
str(out, max.level = 3)
saveRDS(out, "tests/testthat/rstanarm-defaults-reference.rds", version = 2)
