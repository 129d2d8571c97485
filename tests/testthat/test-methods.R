# The methods of rstantools', loo's, generics' and stats' generics, each
# checked against its definition on the draws.

design_matrix_of <- function(fit) sgld:::design_matrix(fit$model)
ndraws_of <- function(fit) nrow(fit$draws[[1]])

fit_lin <- local({
  set.seed(21)
  # (short runs: their R-hat and ESS warn, and again in summary())
  expect_run_warnings(sgld(model_linear(y ~ x1 + g, data = small_data(200), prior = prior_nig()),
                           lr = 2e-4, batch_size = 20, iter = 6000, thin = 5, chains = 2))
})
fit_log <- local({
  set.seed(22)
  expect_run_warnings(sgld(model_logistic(type ~ glu + bmi, data = pima(),
                                          prior = prior_normal(0, 10), prior_intercept = NULL),
                           lr = 2e-4, batch_size = 20, iter = 6000, thin = 5, chains = 2))
})

test_that("posterior_interval and confint are quantiles of the draws", {
  skip_if_not_installed("rstantools")
  x <- as.matrix(fit_lin)
  pi90 <- rstantools::posterior_interval(fit_lin)
  expect_identical(colnames(pi90), c("5%", "95%"))
  expect_equal(pi90, t(apply(x, 2, quantile, c(0.05, 0.95))), ignore_attr = TRUE)
  expect_equal(rstantools::posterior_interval(fit_lin, prob = 0.5, pars = "x1"),
               matrix(quantile(x[, "x1"], c(0.25, 0.75)), 1), ignore_attr = TRUE)
  ci <- confint(fit_lin)
  expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
  expect_equal(ci, t(apply(x, 2, quantile, c(0.025, 0.975))), ignore_attr = TRUE)
  expect_equal(confint(fit_lin, "x1", level = 0.8),
               matrix(quantile(x[, "x1"], c(0.1, 0.9)), 1), ignore_attr = TRUE)
  expect_error(confint(fit_lin, "nope"), "`parm` must be names or positions")
  expect_error(rstantools::posterior_interval(fit_lin, prob = 1), "`prob` must be less than 1")
  expect_error(rstantools::posterior_interval(fit_lin, pars = "nope"), "'nope' is not one")
})

test_that("linpred, epred and fitted are x'beta and its expected response", {
  skip_if_not_installed("rstantools")
  for (fit in list(fit_lin, fit_log)) {
    X <- design_matrix_of(fit)
    W <- as.matrix(fit, scale = "sampler")[, seq_len(ncol(X))]
    eta <- W %*% t(X)
    expect_equal(rstantools::posterior_linpred(fit), eta, ignore_attr = TRUE)
    mu <- if (inherits(fit$model, "sgld_model_logistic")) plogis(eta) else eta
    expect_equal(rstantools::posterior_epred(fit), mu, ignore_attr = TRUE)
    expect_equal(rstantools::posterior_linpred(fit, transform = TRUE), mu, ignore_attr = TRUE)
    expect_equal(fitted(fit), colMeans(mu), tolerance = 1e-12, ignore_attr = TRUE)
    y <- sgld:::model_observed(fit$model)
    expect_equal(residuals(fit), y - colMeans(mu), tolerance = 1e-12, ignore_attr = TRUE)
  }
})

test_that("ndraws takes a random subset of the draws", {
  skip_if_not_installed("rstantools")
  full <- rstantools::posterior_epred(fit_log)
  set.seed(5)
  sub <- rstantools::posterior_epred(fit_log, ndraws = 10)
  set.seed(5)
  rows <- sort(sample.int(nrow(full), 10))
  expect_identical(sub, full[rows, ])
  expect_error(rstantools::posterior_epred(fit_log, ndraws = 1e6), "`ndraws` must be a whole number")
})

test_that("posterior_predict draws from the likelihood at each draw", {
  skip_if_not_installed("rstantools")
  mu <- rstantools::posterior_epred(fit_lin)
  s2 <- as.matrix(fit_lin)[, "sigma2"]
  set.seed(6)
  yrep <- rstantools::posterior_predict(fit_lin)
  set.seed(6)
  z <- matrix(rnorm(length(mu)), nrow(mu))
  expect_equal(yrep, mu + z * sqrt(s2), ignore_attr = TRUE)
  p <- rstantools::posterior_epred(fit_log)
  set.seed(7)
  yrep <- rstantools::posterior_predict(fit_log)
  set.seed(7)
  expect_equal(yrep, matrix(rbinom(length(p), 1, p), nrow(p)), ignore_attr = TRUE)
  expect_true(all(yrep %in% c(0, 1)))
  set.seed(8)
  yrep <- rstantools::posterior_predict(fit_lin, newdata = small_data(3), ndraws = 7)
  set.seed(8)
  expect_equal(rstantools::predictive_interval(fit_lin, newdata = small_data(3), ndraws = 7,
                                               prob = 0.5),
               t(apply(yrep, 2, quantile, c(0.25, 0.75))), ignore_attr = TRUE)
})

test_that("log_lik is pointwise and sums to the log likelihood of each draw", {
  skip_if_not_installed("rstantools")
  for (fit in list(fit_lin, fit_log)) {
    ll <- rstantools::log_lik(fit)
    expect_identical(dim(ll), c(2L * ndraws_of(fit), as.integer(fit$model$n)))
    W <- as.matrix(fit, scale = "sampler")
    for (s in c(1, 77, nrow(W)))
      expect_equal(sum(ll[s, ]), log_posterior(fit$model, W[s, ])$loglik, tolerance = 1e-10)
  }
  # the response read from new data gives the same numbers
  expect_equal(rstantools::log_lik(fit_log, newdata = pima()), rstantools::log_lik(fit_log),
               ignore_attr = TRUE)
  expect_equal(rstantools::log_lik(fit_lin, newdata = small_data(200)), rstantools::log_lik(fit_lin),
               ignore_attr = TRUE)
  expect_error(rstantools::log_lik(fit_lin, newdata = small_data(5)[, -1]),
               "no column named 'y': the response")
})

test_that("loo() and waic() agree with direct computations from log_lik", {
  skip_if_not_installed("loo")
  skip_if_not_installed("rstantools")
  ll <- rstantools::log_lik(fit_lin)
  lse <- function(v) max(v) + log(sum(exp(v - max(v))))
  # WAIC has a closed form: no Monte Carlo error between the two
  w <- loo::waic(fit_lin)
  direct <- sum(apply(ll, 2, lse) - log(nrow(ll)) - apply(ll, 2, var))
  expect_equal(w$estimates["elpd_waic", "Estimate"], direct, tolerance = 1e-10)
  # PSIS-LOO against plain importance sampling, elpd_i = -log mean exp(-ll_i):
  # the two differ by the smoothing of the largest weights, which loo's Monte
  # Carlo standard error bounds
  l <- loo::loo(fit_lin)
  is_loo <- sum(-(apply(-ll, 2, lse) - log(nrow(ll))))
  expect_lt(abs(l$estimates["elpd_loo", "Estimate"] - is_loo), 3 * loo::mcse_loo(l))
  expect_s3_class(loo::loo(fit_log), "psis_loo")
})

test_that("stats' generics: nobs, formula, family, logLik, as.data.frame, coef(summary)", {
  expect_identical(nobs(fit_lin), 200L)
  expect_identical(formula(fit_lin), y ~ x1 + g)
  expect_identical(family(fit_lin)$family, "gaussian")
  expect_identical(family(fit_log)$family, "binomial")
  ll <- logLik(fit_lin)
  # at the posterior mean of every parameter, sigma2 included
  w <- colMeans(as.matrix(fit_lin))[fit_lin$model$names]
  w[["sigma2"]] <- log(w[["sigma2"]])
  expect_equal(as.numeric(ll), log_posterior(fit_lin$model, w)$loglik)
  expect_identical(attr(ll, "df"), 5L)
  df <- as.data.frame(fit_lin)
  expect_identical(names(df), c(fit_lin$model$names, "sigma"))
  expect_identical(as.matrix(df), as.matrix(fit_lin), ignore_attr = TRUE)
  s <- expect_run_warnings(summary(fit_lin))
  expect_true(is.matrix(coef(s)))
  expect_identical(coef(s), s$statistics)
  expect_error(df.residual(fit_lin), "no meaning for posterior draws")
  m <- model_linear(cbind(1, handout$x), handout$y, prior = prior_nig())
  expect_error(formula(sgd(m, lr = 1e-6, iter = 5)), "built from a matrix")
})

test_that("tidy() and glance() describe the draws", {
  skip_if_not_installed("generics")
  td <- generics::tidy(fit_lin, conf.int = TRUE, conf.level = 0.9)
  x <- as.matrix(fit_lin)
  expect_identical(td$term, colnames(x))
  expect_equal(td$estimate, unname(colMeans(x)))
  expect_equal(td$std.error, unname(apply(x, 2, sd)))
  expect_equal(td$conf.low, unname(apply(x, 2, quantile, 0.05)))
  g <- generics::glance(fit_lin)
  expect_identical(g$draws, nrow(x))
  expect_identical(g$nobs, 200)
})

test_that("optimiser runs have no posterior to predict from", {
  skip_if_not_installed("rstantools")
  f <- sgd(model_linear(y ~ x1, data = small_data(50), prior = prior_nig()), lr = 1e-4, iter = 10)
  expect_error(rstantools::posterior_predict(f), "needs posterior draws; `object` is a run of sgd")
  expect_error(confint(f), "needs posterior draws")
})

test_that("summary thins long chains for ESS and R-hat and says so; print fits 80 columns", {
  s <- expect_run_warnings(summary(fit_lin, max_draws = 100))
  expect_identical(s$diagnostics_thin, 6)
  # sigma (derived from sigma2) is thinned as the parameters are
  thinned <- coda::mcmc.list(lapply(fit_lin$draws, function(ch) {
    x <- unclass(ch)[seq(1, nrow(ch), by = 6), ]
    coda::mcmc(cbind(x, sigma = sqrt(x[, "sigma2"])))
  }))
  expect_equal(s$statistics[, "n_eff"], coda::effectiveSize(thinned), ignore_attr = TRUE)
  expect_equal(s$statistics[, "Rhat"],
               coda::gelman.diag(thinned, autoburnin = FALSE, multivariate = FALSE)$psrf[, 1],
               ignore_attr = TRUE)
  # means and quantiles still use every draw
  expect_equal(s$statistics[, "mean"], colMeans(as.matrix(fit_lin)))
  expect_output(print(s), "ESS and R-hat from every k-th draw, k = 6")
  old <- options(width = 80)
  on.exit(options(old))
  expect_true(all(nchar(capture.output(print(expect_run_warnings(summary(fit_lin))))) <= 80))
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_identical(plot(fit_lin, max_draws = 50), fit_lin)
  expect_error(plot(fit_lin, max_draws = 0), "`max_draws` must be a whole number")
})
