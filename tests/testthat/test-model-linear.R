test_that("gradients equal central finite differences at 20 random points", {
  df <- small_data()
  m <- model_linear(y ~ x1 + x2 + g, data = df,
                    prior = prior_nig(mean = 0.3, V = c(4, 9, 1, 2, 3), shape = 2, rate = 0.5))
  set.seed(21)
  worst <- c(lik = 0, prior = 0, post = 0)
  for (k in 1:20) {
    w <- c(rnorm(m$p, sd = 1), rnorm(1, mean = log(0.5), sd = 0.5))
    ev <- log_posterior(m, w)
    fd_lik <- central_difference(function(v) log_posterior(m, v)$loglik, w)
    fd_prior <- central_difference(function(v) log_posterior(m, v)$logprior, w)
    rel <- function(a, b) max(abs(a - b) / pmax(1, abs(b)))
    worst <- pmax(worst, c(rel(ev$grad_loglik, fd_lik), rel(ev$grad_logprior, fd_prior),
                           rel(ev$grad_logpost, fd_lik + fd_prior)))
  }
  expect_lt(worst[["lik"]], 1e-6)
  expect_lt(worst[["prior"]], 1e-6)
  expect_lt(worst[["post"]], 1e-6)
})

test_that("a full prior matrix gives the same gradient check", {
  df <- small_data()
  V <- matrix(c(4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2), 3)
  m <- model_linear(y ~ x1 + x2, data = df, prior = prior_nig(mean = c(1, 0, -1), V = V))
  set.seed(22)
  for (k in 1:5) {
    w <- c(rnorm(3), log(0.6))
    ev <- log_posterior(m, w)
    fd <- central_difference(function(v) log_posterior(m, v)$logprior, w)
    expect_lt(max(abs(ev$grad_logprior - fd) / pmax(1, abs(fd))), 1e-6)
  }
})

test_that("log densities are the model's, normalising constants included", {
  df <- small_data()
  m <- model_linear(y ~ x1, data = df, prior = prior_nig(mean = c(0.5, -1), V = c(2, 5),
                                                          shape = 3, rate = 2))
  w <- c(0.8, 0.4, log(0.3))
  X <- cbind(1, df$x1)
  s2 <- exp(w[3])
  ll <- sum(dnorm(df$y, X %*% w[1:2], sqrt(s2), log = TRUE))
  # prior in (beta, log sigma2): normal x inverse gamma x Jacobian sigma2
  lp <- sum(dnorm(w[1:2], c(0.5, -1), sqrt(s2 * c(2, 5)), log = TRUE)) +
    dgamma(1 / s2, shape = 3, rate = 2, log = TRUE) - 2 * log(s2) + log(s2)
  ev <- log_posterior(m, w)
  expect_equal(ev$loglik, ll, tolerance = 1e-12)
  expect_equal(ev$logprior, lp, tolerance = 1e-12)
})

test_that("formula and matrix faces build the same model; factors become indicators", {
  df <- small_data()
  m1 <- model_linear(y ~ x1 + g, data = df, prior = prior_nig())
  X <- model.matrix(~ x1 + g, df)
  m2 <- model_linear(X, df$y, prior = prior_nig())
  expect_identical(m1$z, m2$z)
  expect_identical(m1$names, c("(Intercept)", "x1", "gb", "gc", "sigma2"))
  expect_identical(m2$names, m1$names)
  m3 <- model_linear(cbind(1, df$x1), df$y, prior = prior_nig())
  expect_identical(m3$names, c("x1", "x2", "sigma2"))
  # observation-contiguous storage: column i is (x_i, y_i)
  expect_identical(dim(m1$z), c(5L, nrow(df)))
  expect_equal(m1$z[, 7], c(X[7, ], df$y[7]), ignore_attr = TRUE)
  # character columns are factors, logical columns numbers
  df$h <- as.character(df$g)
  df$flag <- df$x1 > 0
  m4 <- model_linear(y ~ h + flag, data = df, prior = prior_nig())
  expect_identical(m4$names, c("(Intercept)", "hb", "hc", "flagTRUE", "sigma2"))
})

test_that("the blocked kernel for many coefficients gives R's gradient", {
  # p >= 8 runs dense.h's blocks of 4 rows (n = 203: 3 rows after the last
  # block; p = 23: a tail after the vector lanes)
  set.seed(8)
  for (p in c(8, 23, 64)) {
    n <- 203
    X <- matrix(rnorm(n * p), n, p)
    y <- drop(X %*% rnorm(p)) + rnorm(n)
    m <- model_linear(X, y, prior = prior_nig())
    w <- c(rnorm(p), 0.3)
    r <- y - drop(X %*% w[1:p])
    g <- c(exp(-w[p + 1]) * drop(crossprod(X, r)), -n / 2 + exp(-w[p + 1]) * sum(r^2) / 2)
    expect_equal(unname(log_posterior(m, w)$grad_loglik), g, tolerance = 1e-12)
  }
})
