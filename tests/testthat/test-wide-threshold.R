# The wide recipe's sampling threshold (R/auto-wide.R: wide_threshold()),
# which never holds all its gradient draws at once, against
# estimator_threshold() (R/warnings.R) on the same draws held at once.

test_that("the blockwise sampling threshold is the one of all the draws at once", {
  set.seed(3)
  n <- 2000
  d <- 30L
  X <- cbind(1, matrix(rnorm(n * (d - 1)), n))
  y <- rbinom(n, 1, plogis(X %*% rnorm(d, 0, 0.3)))
  m <- model_logistic(X, y)
  expect_identical(m$d, d)
  pm <- posterior_mode(m)
  # a factor of the wide recipe's form: a diagonal and a rank-2 correction
  V <- qr.Q(qr(matrix(rnorm(d * 2), d)))
  ops <- sgld:::precondition_ops(runif(d, 0.01, 0.1), V, c(0.5, -0.3))
  # away from the mode, where control variates leave some noise
  at <- pm$mode + rnorm(d, 0, 0.05)
  times <- 40
  block_size <- 7 * d   # blocks of 7 rows: 6 blocks, the last of 5
  ends <- c(seq(7, 35, by = 7), 40)
  for (cv in list(FALSE, pm$mode)) {
    set.seed(11)
    alpha <- sgld:::wide_threshold(m, at, 50, cv, 0.4, ops$Lt, times, block_size)
    after <- runif(1)
    # the same draws, each block from its seed, held at once
    set.seed(11)
    seeds <- floor(runif(8) * .Machine$integer.max)
    expect_identical(runif(1), after)   # 8 uniforms taken from R's stream
    G <- do.call(rbind, lapply(seq_along(ends), function(p) {
      set.seed(seeds[1] %% 1e9 + p)
      stochastic_gradients(m, at, batch_size = 50, times = ends[p] - c(0, ends)[p],
                           control_variates = cv)
    }))
    expect_identical(dim(G), c(40L, d))
    expect_equal(alpha, sgld:::estimator_threshold(G, 0.4, ops$Lt), tolerance = 1e-10)
    # one block: the same statistic (other draws)
    set.seed(11)
    one <- sgld:::wide_threshold(m, at, 50, cv, 0.4, ops$Lt, times, 1e6)
    expect_gt(one, 0)
    expect_lt(abs(log(one / alpha)), log(3))
  }
})
