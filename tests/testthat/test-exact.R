test_that("the exact posterior's densities, means and sds agree with each other", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  for (nm in m$names) {
    lo <- ex$mean[[nm]] - 12 * ex$sd[[nm]]
    hi <- ex$mean[[nm]] + 12 * ex$sd[[nm]]
    f <- function(x) ex$density(x, nm)
    expect_equal(integrate(f, lo, hi)$value, 1, tolerance = 1e-6)
    mu <- integrate(function(x) x * f(x), lo, hi)$value
    expect_equal(mu, ex$mean[[nm]], tolerance = 1e-6 * max(1, abs(mu)) + 1e-4 * ex$sd[[nm]])
    v <- integrate(function(x) (x - mu)^2 * f(x), lo, hi)$value
    expect_equal(sqrt(v), ex$sd[[nm]], tolerance = 1e-5)
  }
  # log_sigma2 carries the Jacobian
  g <- log(0.19)
  expect_equal(ex$density(g, "log_sigma2"), ex$density(0.19, "sigma2") * 0.19)
})

test_that("the exact mode maximises the log posterior", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  grad <- log_posterior(m, ex$mode)$grad_logpost
  expect_lt(max(abs(grad)), 1e-6)
  lp0 <- log_posterior(m, ex$mode)$logpost
  set.seed(1)
  for (k in 1:5) expect_lt(log_posterior(m, ex$mode + rnorm(3, sd = 1e-3))$logpost, lp0)
})

test_that("with a vague prior the posterior mean is the least-squares fit", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig(V = 1e10))
  ex <- linear_exact_posterior(m)
  expect_equal(unname(ex$mean[1:2]), unname(coef(lm(y ~ x, sgld::handout))), tolerance = 1e-8)
})
