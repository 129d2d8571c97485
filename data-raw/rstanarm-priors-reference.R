# rstanarm's default priors made concrete, and the posteriors they give, for
# the section "rstanarm's default priors in sgld" of vignette("rstanarm")
# and tests/testthat/test-rstanarm-priors.R. Two small data sets where the
# prior matters: a logistic regression (MASS::Pima.tr, 200 rows, 7
# predictors) and a linear one (mtcars, 32 rows, one binary predictor).
# stan_glm() at its defaults (priors autoscaled, 4 chains of 2,000
# iterations, half warm-up), seed 4141. Stored small: prior_summary()'s
# adjusted scales, posterior means, sds and bulk ESS of every coefficient
# (the intercept on the original scale and, for the centred predictors the
# intercept's prior is on, its centred value), and of sigma.
#   cd <package root> && nice Rscript data-raw/rstanarm-priors-reference.R
library(rstanarm)

sets <- list(
  binomial = list(formula = type ~ npreg + glu + bp + skin + bmi + ped + age,
                  data = MASS::Pima.tr, family = binomial()),
  gaussian = list(formula = mpg ~ wt + hp + am, data = datasets::mtcars,
                  family = gaussian()))

reference <- function(set, seed = 4141) {
  fit <- stan_glm(set$formula, data = set$data, family = set$family, chains = 4,
                  cores = 1, seed = seed, refresh = 0)
  draws <- as.matrix(fit)
  X <- model.matrix(set$formula, set$data)[, -1, drop = FALSE]
  # the intercept of centred predictors, on which rstanarm puts its prior
  centred <- draws[, "(Intercept)"] + draws[, colnames(X), drop = FALSE] %*% colMeans(X)
  draws <- cbind(draws, "(Intercept) centred" = centred[, 1])
  arr <- posterior::as_draws_array(as.array(fit))
  ps <- prior_summary(fit)
  list(mean = colMeans(draws), sd = apply(draws, 2, stats::sd),
       ess_bulk = setNames(as.numeric(posterior::summarise_draws(arr, "ess_bulk")$ess_bulk),
                           posterior::variables(arr)),
       prior = list(coef_scale = ps$prior$adjusted_scale,
                    intercept_location = ps$prior_intercept$location,
                    intercept_scale = if (is.null(ps$prior_intercept$adjusted_scale))
                      ps$prior_intercept$scale else ps$prior_intercept$adjusted_scale,
                    aux = if (!is.null(ps$prior_aux))
                      list(dist = ps$prior_aux$dist, rate = if (is.null(ps$prior_aux$adjusted_scale))
                             ps$prior_aux$rate else 1 / ps$prior_aux$adjusted_scale)),
       draws_kept = nrow(draws), seed = seed)
}

out <- lapply(sets, reference)
out$rstanarm <- as.character(packageVersion("rstanarm"))
out$date <- format(Sys.time(), tz = "UTC", usetz = TRUE)
str(out, max.level = 3)
saveRDS(out, "inst/extdata/rstanarm-priors-reference.rds", version = 2)
