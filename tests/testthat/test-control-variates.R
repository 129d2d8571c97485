# Control variates (Baker et al. 2019) on a simulated logistic regression
# small enough for a full-data MALA reference inside the test suite.

cv_fixture <- function(n = 1e4, seed = 42) {
  set.seed(seed)
  beta <- c(-0.3, 0.8, -0.5, 0.3)
  X <- cbind(1, matrix(rnorm(n * 3), n, 3))
  colnames(X) <- c("(Intercept)", "x1", "x2", "x3")
  y <- as.numeric(runif(n) < plogis(drop(X %*% beta)))
  m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
  mode <- posterior_mode(m)
  # Laplace approximation: X' diag(p(1-p)) X plus the prior precision; it sets
  # the scale of "near the mode", MALA's preconditioner and SGLD's step
  p <- plogis(drop(X %*% mode$mode))
  H <- crossprod(X * sqrt(p * (1 - p))) + diag(1 / 100, ncol(X))
  S <- solve(H)
  list(m = m, mode = mode, H = H, S = S, sd = sqrt(diag(S)),
       lambda_max = max(eigen(H, symmetric = TRUE, only.values = TRUE)$values))
}

test_that("control variates cut the gradient noise near the mode, and both estimators are unbiased", {
  fx <- cv_fixture()
  m <- fx$m
  w_hat <- fx$mode$mode
  times <- 2000
  points <- list(mode = w_hat, one_sd = w_hat + fx$sd * c(0, 1, 0, 0))
  set.seed(11)
  for (nm in names(points)) {
    at <- points[[nm]]
    plain <- stochastic_gradients(m, at, batch_size = 100, times = times)
    cv <- stochastic_gradients(m, at, batch_size = 100, times = times, control_variates = TRUE)
    v_plain <- apply(plain, 2, var)
    v_cv <- apply(cv, 2, var)
    # measured: ratio ~1e4 one sd out, infinite at the mode (the control-variate
    # estimate does not depend on the minibatch there); the criterion is 10
    expect_gt(sum(v_plain), 10 * sum(v_cv), label = paste("plain variance at", nm))
    g_full <- log_posterior(m, at)$grad_logpost
    # 4 Monte Carlo standard errors, plus room for rounding where the MCSE is 0:
    # the control-variate sum at the mode is accumulated in another order
    for (est in list(plain = list(plain, v_plain), cv = list(cv, v_cv))) {
      tol <- 4 * sqrt(est[[2]] / times) + 1e-8 * (1 + abs(g_full))
      expect_true(all(abs(colMeans(est[[1]]) - g_full) < tol), label = paste("unbiased at", nm))
    }
  }
})

test_that("sgld() with control variates reproduces the posterior sds and means of MALA", {
  fx <- cv_fixture()
  m <- fx$m
  set.seed(21)
  ref <- mala(m, lr = 0.6, iter = 3000, burnin = 200, chains = 2, init = fx$mode$mode,
              precondition = fx$S, threads = 2)
  expect_true(all(ref$acceptance > 0.4 & ref$acceptance < 0.9))
  # eta * lambda_max = 0.05: for a Gaussian target the constant step inflates the
  # variance along an eigenvector by 1 / (1 - eta lambda / 2), at most 2.6% here
  set.seed(22)
  fit <- sgld(m, lr = 0.05 / fx$lambda_max, batch_size = 100, iter = 1e5, burnin = 1000,
              thin = 10, chains = 2, control_variates = TRUE, threads = 2)
  s_ref <- summary(ref)$statistics
  s_cv <- summary(fit)$statistics
  # the test has power only if the Monte Carlo error is well inside the tolerance:
  # a sd from E effective draws has relative error about 1 / sqrt(2 E)
  mcse_ratio <- sqrt(1 / (2 * s_ref[, "n_eff"]) + 1 / (2 * s_cv[, "n_eff"]))
  mcse_mean <- sqrt(1 / s_ref[, "n_eff"] + 1 / s_cv[, "n_eff"])
  expect_true(all(3 * mcse_ratio < 0.15))
  expect_true(all(3 * mcse_mean < 0.15))
  expect_true(all(abs(s_cv[, "sd"] / s_ref[, "sd"] - 1) < 0.15))
  expect_true(all(abs(s_cv[, "mean"] - s_ref[, "mean"]) / s_ref[, "sd"] < 0.15))
})

test_that("posterior_mode() finds the exact mode of the conjugate linear model", {
  m <- model_linear(y ~ x, data = handout, prior = prior_nig())
  pm <- posterior_mode(m)
  ex <- linear_exact_posterior(m)
  expect_true(pm$converged)
  # relative to the size of the whole vector: the intercept is near 0 (5e-4),
  # where a per-coordinate relative error measures nothing useful
  expect_equal(pm$sampler, ex$mode, tolerance = 1e-6)
  # and per coordinate on the posterior's own scale (log sigma2 has sd ~ sqrt(2 / n))
  sd_sampler <- c(ex$sd[1:2], sqrt(2 / m$n))
  expect_true(all(abs(pm$sampler - ex$mode) / sd_sampler < 1e-5))
})

test_that("control_variates = the mode vector gives the same draws as TRUE", {
  fx <- cv_fixture()
  m <- fx$m
  lr <- 0.05 / fx$lambda_max
  run <- function(cv, ...) {
    set.seed(31)
    as.matrix(expect_run_warnings(sgld(m, lr = lr, batch_size = 100, iter = 2000, control_variates = cv, ..., chains = 1)))
  }
  by_flag <- run(TRUE)
  # logistic regression: the user's and the sampler's scales coincide, so the
  # centre and the starting point are the same doubles and the draws identical
  expect_identical(run(posterior_mode(m)$mode), by_flag)
  # the comparison has teeth: plain minibatch gradients from the same start differ
  expect_false(isTRUE(all.equal(run(FALSE, init = fx$mode$mode), by_flag)))

  # linear model: the mode is given for sigma2 and mapped back by log(), which
  # may differ from the sampler-scale mode in the last bit; SGLD contracts such
  # differences, so the draws agree to rounding
  lm_m <- model_linear(y ~ x, data = handout, prior = prior_nig())
  run_lm <- function(cv) {
    set.seed(32)
    as.matrix(expect_run_warnings(sgld(lm_m, lr = 1e-6, batch_size = 100, iter = 1000, control_variates = cv, chains = 1)))
  }
  expect_equal(run_lm(posterior_mode(lm_m)$mode), run_lm(TRUE), tolerance = 1e-10)
})

test_that("bad control_variates values are refused with an error naming the argument", {
  m <- model_linear(y ~ x, data = handout, prior = prior_nig())
  at <- c(0, 0.9, 0.19)
  bad <- list("yes", c(0, 0.9), NA, c(0, NA, 0.19), c(TRUE, FALSE))
  for (cv in bad) {
    expect_error(sgld(m, lr = 1e-6, iter = 10, control_variates = cv, chains = 1), "`control_variates`",
                 fixed = TRUE)
    expect_error(stochastic_gradients(m, at, times = 10, control_variates = cv),
                 "`control_variates`", fixed = TRUE)
  }
})

test_that("posterior_mode(covariance = TRUE) gives the Laplace covariance", {
  # for logistic regression with a flat-ish prior it matches glm's vcov()
  d <- pima()
  m <- model_logistic(type ~ glu + bmi + age, data = d, prior = prior_normal(0, 1e3),
                      prior_intercept = NULL)
  pm <- posterior_mode(m, covariance = TRUE)
  g <- glm(type ~ glu + bmi + age, data = d, family = binomial)
  expect_equal(unname(pm$mode), unname(coef(g)), tolerance = 1e-4)
  expect_equal(unname(pm$covariance), unname(vcov(g)), tolerance = 1e-3)
  # for the linear model: the exact posterior is not Gaussian in log sigma2,
  # but at n = 10^4 the Laplace sds of the coefficients are within 1%
  ml <- handout_model()
  pl <- posterior_mode(ml, covariance = TRUE)
  ex <- linear_exact_posterior(ml)
  expect_equal(sqrt(diag(pl$covariance))[1:2], ex$sd[1:2], tolerance = 0.01, ignore_attr = TRUE)
  expect_error(posterior_mode(ml, covariance = NA), "`covariance` must be TRUE or FALSE")
})
