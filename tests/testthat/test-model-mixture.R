test_that("mixture gradients equal central finite differences, even far from the means", {
  set.seed(101)
  x <- c(mixture_data(50), 40, -35)
  m <- model_mixture(x)
  for (k in 1:20) {
    expect_lt(max(gradient_errors(m, rnorm(2, sd = 2))), 1e-6)
  }
  # items hundreds of sds away: finite, and equal to the log-sum-exp by hand
  far <- model_mixture(c(1e4, -1e4))
  ev <- log_posterior(far, c(0.5, 1))
  expect_true(is.finite(ev$loglik) && all(is.finite(ev$grad_loglik)))
  by_hand <- sum(vapply(c(1e4, -1e4), function(v) {
    a <- dnorm(v, 0.5, sqrt(2), log = TRUE); b <- dnorm(v, 1.5, sqrt(2), log = TRUE)
    max(a, b) + log(0.5 * exp(a - max(a, b)) + 0.5 * exp(b - max(a, b)))
  }, 0))
  expect_equal(ev$loglik, by_hand)
  expect_equal(ev$logprior, dnorm(0.5, 0, sqrt(10), log = TRUE) + dnorm(1, 0, 1, log = TRUE))
})

test_that("the grid posterior is normalised", {
  set.seed(3)
  m <- model_mixture(mixture_data(100))
  g <- grid_posterior(m, seq(-2, 3, length.out = 101), seq(-3, 3, length.out = 121))
  expect_equal(sum(g$prob), 1)
  expect_equal(sum(g$density) * diff(g$x)[1] * diff(g$y)[1], 1)
  # the density is the normalised exp(log posterior)
  lp <- c(log_posterior(m, c(g$x[10], g$y[20]))$logpost, log_posterior(m, c(g$x[60], g$y[90]))$logpost)
  expect_equal(g$density[10, 20] / g$density[60, 90], exp(lp[1] - lp[2]))
  expect_error(grid_posterior(m, c(1, 2, 4), 1:3), "`x` must be equally spaced")
  expect_error(grid_posterior(handout_model(), 1:2, 1:2), "`model` must have two parameters")
})

test_that("with the paper's settings SGLD visits both modes of the bimodal posterior", {
  set.seed(17)
  m <- model_mixture(mixture_data(100))
  g <- grid_posterior(m, seq(-2, 3, length.out = 101), seq(-3, 3, length.out = 121))
  near <- function(a, b, centre) sqrt((a - centre[1])^2 + (b - centre[2])^2) < 0.5
  gx <- outer(g$x, g$y, function(a, b) a)
  gy <- outer(g$x, g$y, function(a, b) b)
  exact <- c(sum(g$prob[near(gx, gy, c(0, 1))]), sum(g$prob[near(gx, gy, c(1, -1))]))
  expect_true(all(exact > 0.1))   # the posterior is bimodal: mass at both modes,
  lp <- function(a, b) log_posterior(m, c(a, b))$logpost
  saddle <- min(vapply(seq(0, 1, by = 0.05), function(s) lp(s, 1 - 2 * s), 0))
  expect_gt(lp(0, 1) - saddle, 1.5)   # and a valley between them
  # batch 1, 10^4 sweeps, Welling and Teh's epsilon from 0.01 to 0.0001 (eta = epsilon / 2)
  set.seed(103)
  fit <- expect_run_warnings(sgld(m, lr = lr_range(0.005, 0.00005, gamma = 0.55), batch_size = 1,
                                  iter = 1e6, burnin = 0, thin = 10, chains = 1), "ess")
  y <- as.matrix(fit)
  mass <- c(mean(near(y[, 1], y[, 2], c(0, 1))), mean(near(y[, 1], y[, 2], c(1, -1))))
  expect_true(all(mass >= 0.05), info = format(mass))
})

test_that("mixture arguments are checked", {
  expect_error(model_mixture("a"), "`x` must be a numeric vector")
  expect_error(model_mixture(c(1, NA)), "`x` must be finite; it has NA at position 2")
  expect_error(model_mixture(1:3, sigma2_x = 0), "`sigma2_x` must be greater than 0")
  expect_error(mixture_data(0), "`n` must be a whole number between 1")
  expect_error(mixture_data(10, theta = 1), "`theta` must be two finite numbers")
})
