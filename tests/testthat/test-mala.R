test_that("mala() reproduces the exact posterior of the linear model (KS tests)", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  # precondition with the exact posterior scales on the sampler's scale, so a
  # moderate step mixes fast and thinned draws are nearly independent
  sd_sampler <- c(ex$sd[1:2], log_sigma2 = ex$sd[["sigma2"]] / ex$mean[["sigma2"]])
  set.seed(111)
  # MALA with large steps is slow to leave a poor start: start near the mode
  fit <- mala(m, lr = 0.5, iter = 12000, burnin = 2000, thin = 10, chains = 2,
              init = ex$mean, precondition = diag(sd_sampler^2))
  expect_true(all(fit$acceptance > 0.4 & fit$acceptance < 0.95))
  x <- as.matrix(fit)
  expect_identical(nrow(x), 2000L)
  cdf <- function(p) Vectorize(function(q)
    integrate(function(v) ex$density(v, p), ex$mean[[p]] - 15 * ex$sd[[p]], q)$value)
  for (p in m$names) {
    expect_gt(ks.test(x[, p], cdf(p))$p.value, 0.01)
  }
  expect_output(print(fit), "Acceptance rate")
})

test_that("mala() without a preconditioner reports its acceptance and keeps the target", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(112)
  fit <- mala(m, lr = 1e-5, iter = 20000, thin = 5, chains = 1)
  expect_gt(fit$acceptance, 0.5)
  s <- summary(fit)$statistics
  expect_true(all(abs(s[1:2, "mean"] - ex$mean[1:2]) / ex$sd[1:2] < 0.3))
  # a step far too large is rejected, never accepted blindly
  set.seed(113)
  big <- expect_run_warnings(mala(m, lr = 1e-3, iter = 200, burnin = 0, chains = 1), c("acceptance", "convergence"))
  expect_lt(big$acceptance, 0.05)
  expect_true(all(is.finite(as.matrix(big))))
})

test_that("mala() arguments are checked", {
  m <- handout_model()
  expect_error(mala(m, lr = 1e-5, temperature = 0, chains = 1), "`temperature` must be greater than 0")
  expect_error(mala(m, lr = 1e-5, precondition = diag(2), chains = 1), "`precondition` must be a finite 3 x 3 matrix")
  expect_error(mala(m, lr = 1e-5, precondition = matrix(c(1, 2, 0, 2, 1, 0, 0, 0, 1), 3), chains = 1),
               "`precondition` must be positive definite")
  expect_error(mala(m, lr = 1e-5, batch_size = 10, chains = 1), "unknown argument: `batch_size`")
})

test_that("mala(m) starts every chain at the mode, where over-dispersed starts got stuck", {
  # the nearly separated simulation of helper-auto.R at 300 rows: walls of
  # data, predictors on scales 1 to 10^4. Four chains started from
  # N(mode, 4 S), as mala(m) did before, accept no proposal of the step
  # piloted from the mode (seeds 1, 2: acceptance 0 in all four, R-hat
  # infinite); started at the mode they mix (R-hat 1.005 and 1.017)
  m <- nearly_separated_model(n = 300)
  pm <- posterior_mode(m, covariance = TRUE)
  set.seed(1)
  spread <- sgld:::auto_init(m, pm, 4)
  old <- quietly_checked(mala(m, chains = 4, init = spread, iter = 1000))
  expect_true(all(old$acceptance < 0.05))
  set.seed(1)
  fit <- mala(m, chains = 4)
  expect_identical(fit$auto$start, "mode")
  expect_equal(unname(fit$settings$init), matrix(pm$mode, 4, m$d, byrow = TRUE),
               tolerance = 1e-8)
  expect_true(all(fit$acceptance > 0.3))
  expect_lt(max(summary(fit)$statistics[, "Rhat"]), 1.05)
  expect_output(print(fit), "chains start at the posterior mode")
  expect_gt(fit$auto$expected_seconds, 0)
  # a run expected to be long says how long before it starts (the bar
  # lowered to zero here: this one is short)
  old_opt <- options(sgld.mala_announce_seconds = 0)
  on.exit(options(old_opt))
  expect_message(quietly_checked(mala(m, iter = 200, chains = 2)), "mala\\(\\): about .* for 200 iterations of 2 chains")
  options(old_opt)
  # a chain that does not move is told to take a smaller step and to start
  # at the mode, naming what the user did not set or what they gave
  set.seed(2)
  got <- with_warnings(mala(m, lr = 10, iter = 300, chains = 2))
  expect_match(got$warnings, "did not move.*smaller `lr`.*start the chains at the posterior mode",
               all = FALSE)
  got <- with_warnings(mala(m, chains = 2, iter = 300, init = spread[1:2, ]))
  expect_match(got$warnings, "did not move.*instead of the given `init`", all = FALSE)
})
