# Hamiltonian trajectories in mala(leapfrog = L) (src/langevin.c, src/chain.c).

test_that("leapfrog trajectories are reversible, second order, and one step is MALA's proposal", {
  m <- handout_model()
  pm <- posterior_mode(m, covariance = TRUE)
  T <- t(chol(pm$covariance))
  set.seed(5101)
  w0 <- pm$sampler + drop(T %*% rnorm(3))
  r0 <- rnorm(3)
  leap <- function(w, r, eps, steps, factor = T, tau = 1)
    .Call(sgld:::C_sgld_leapfrog, m, factor, w, r, c(eps, steps, tau))
  # 25 steps forward, the momentum negated, 25 back: the start again
  a <- leap(w0, r0, 0.4, 25)
  expect_gt(sqrt(sum(solve(T, a$w - w0)^2)), 1)   # it went somewhere
  b <- leap(a$w, -a$r, 0.4, 25)
  expect_lt(max(abs(b$w - w0)), 1e-10)
  expect_lt(max(abs(-b$r - r0)), 1e-10)
  # the energy error of a path of fixed length falls as eps^2: a wrong kick
  # (the metric's factor untransposed, or the gradient unscaled) leaves an
  # error that does not shrink
  H <- function(x) -x$U + sum(x$r^2) / 2
  U0 <- sgld:::log_posterior(m, w0)$logpost
  err <- vapply(c(0.2, 0.1, 0.05), function(eps)
    abs(H(leap(w0, r0, eps, 2 / eps)) - (-U0 + sum(r0^2) / 2)), 0)
  expect_true(all(err[-3] / err[-1] > 3.2 & err[-3] / err[-1] < 5))
  # one step at eps = sqrt(2 eta tau) is mala()'s proposal:
  # w + eta P grad U + sqrt(2 eta tau) T r, here at tau = 2
  eta <- 0.01
  g <- unname(sgld:::log_posterior(m, w0)$grad_logpost)
  one <- leap(w0, r0, sqrt(2 * eta * 2), 1, tau = 2)
  expect_equal(one$w, w0 + eta * drop(pm$covariance %*% g) + sqrt(4 * eta) * drop(T %*% r0),
               tolerance = 1e-12)
  # without a metric: the identity
  plain <- leap(w0, r0, 1e-4, 1, factor = NULL)
  expect_equal(plain$w, w0 + 0.5e-8 * g + 1e-4 * r0, tolerance = 1e-12)
})

test_that("mala(leapfrog = 3) samples the exact posterior of the linear model", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  pm <- posterior_mode(m, covariance = TRUE)
  set.seed(5102)
  fit <- mala(m, lr = 0.4, iter = 3000, burnin = 500, thin = 1, chains = 2, init = pm$mode,
              precondition = pm$covariance, leapfrog = 3)
  expect_true(all(fit$acceptance > 0.6 & fit$acceptance < 0.95))
  x <- as.matrix(fit)[, m$names]
  ess <- summary(fit)$statistics[m$names, "n_eff"]
  expect_true(all(ess > 2000))
  # within 4 Monte Carlo standard errors, of the mean and of the sd
  # (sigma2's sd: its kurtosis from the exact posterior's draws is about 3.1)
  expect_true(all(abs(colMeans(x) - ex$mean) / ex$sd < 4 / sqrt(ess)))
  expect_true(all(abs(apply(x, 2, sd) / ex$sd - 1) < 4 * sqrt(2.2 / (4 * ess))))
  cdf <- function(p) Vectorize(function(q)
    integrate(function(v) ex$density(v, p), ex$mean[[p]] - 15 * ex$sd[[p]], q)$value)
  thinned <- x[seq(1, nrow(x), by = 5), ]
  for (p in m$names) expect_gt(ks.test(thinned[, p], cdf(p))$p.value, 0.001)
})

test_that("mala(leapfrog = 2) keeps a skewed one-parameter posterior (quadrature)", {
  # log rate w of 3 Poisson counts summing to 2, prior N(0, 2^2):
  # log p(w) = 2 w - 3 exp(w) - w^2 / 8, skewed to the left
  y <- matrix(c(0, 2, 0))
  m <- model_custom(
    data = y, names = "log_rate", init = 0,
    loglik = function(w, batch) sum(batch[, 1]) * w - nrow(batch) * exp(w),
    grad_loglik = function(w, batch) sum(batch[, 1]) - nrow(batch) * exp(w),
    logprior = function(w) -w^2 / 8, grad_logprior = function(w) -w / 4)
  dens <- function(w) exp(2 * w - 3 * exp(w) - w^2 / 8)
  Z <- integrate(dens, -Inf, Inf)$value
  moment <- function(k) integrate(function(w) w^k * dens(w) / Z, -Inf, Inf)$value
  mu <- moment(1)
  sdv <- sqrt(moment(2) - mu^2)
  set.seed(5103)
  fit <- mala(m, lr = 0.5, iter = 6000, burnin = 500, thin = 1, chains = 1, init = 0,
              precondition = matrix(sdv^2), leapfrog = 2)
  x <- as.matrix(fit)[, 1]
  ess <- summary(fit)$statistics[1, "n_eff"]
  expect_gt(ess, 3000)
  expect_lt(abs(mean(x) - mu) / sdv, 4 / sqrt(ess))
  z <- (x - mean(x)) / sd(x)
  expect_lt(abs(sd(x) / sdv - 1), 4 * sqrt((mean(z^4) - 1) / (4 * ess)))
  # and its skewness, far from a Gaussian's 0
  skew <- integrate(function(w) ((w - mu) / sdv)^3 * dens(w) / Z, -Inf, Inf)$value
  expect_lt(skew, -0.4)
  expect_lt(abs(mean(z^3) - skew), 0.2)
  # the probability below the exact quartiles
  q <- vapply(c(0.25, 0.75), function(p)
    uniroot(function(v) integrate(dens, -Inf, v)$value / Z - p, c(-10, 5))$root, 0)
  expect_true(all(abs(c(mean(x < q[1]), mean(x < q[2])) - c(0.25, 0.75)) <
                    4 * sqrt(0.25 * 0.75 / ess) * 1.5))
})

test_that("mala() checks `leapfrog`", {
  m <- handout_model()
  expect_error(mala(m, lr = 1e-5, leapfrog = 0, chains = 1),
               "`leapfrog` must be a whole number between 1 and 10,000")
  expect_error(mala(m, lr = 1e-5, leapfrog = 1.5, chains = 1),
               "`leapfrog` must be a single whole number")
  expect_error(mala(model_ica(matrix(rnorm(40), 20)), lr = 1e-3, leapfrog = 2, chains = 1),
               "`leapfrog` above 1 needs a fixed `precondition`.*natural")
  # leapfrog = 1 is MALA itself: the same draws as without the argument
  set.seed(5104)
  a <- quietly_checked(mala(m, lr = 1e-5, iter = 200, chains = 1))
  set.seed(5104)
  b <- quietly_checked(mala(m, lr = 1e-5, iter = 200, chains = 1, leapfrog = 1))
  expect_identical(as.matrix(a), as.matrix(b))
})
