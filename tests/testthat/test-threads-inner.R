# One chain on several threads (src/gradient.c): the minibatch gradient is
# cut into pieces fixed by the model and the batch size, and the pieces are
# added in a fixed order, so the draws are bit-identical whatever `threads`.
# The second chunk of every run is on all the threads (the start of a probe,
# src/chunks.c), so runs of several chunks take the threaded path. Threads
# beyond the machine's processors are not used (src/run.c), so on 2 cores
# `threads = 3` runs as 2; the draws must be the same either way.

inner_fits <- function(model, threads, ..., sampler = sgld) {
  lapply(threads, function(th) {
    set.seed(7)
    # (the run checks may warn; so may `threads` beyond this machine's
    # processors, once a session: both are beside the point here)
    quietly_checked(sampler(model, iter = 3000, burnin = 0, thin = 1, chains = 1,
                            threads = th, ...), c(run_check_kinds, "threads"))
  })
}

expect_same_draws <- function(fits) {
  for (f in fits[-1]) {
    expect_identical(f$draws, fits[[1]]$draws)
    expect_identical(f$state$w, fits[[1]]$state$w)
  }
}

test_that("one dense logistic chain gives the same draws on 1, 2 and 3 threads", {
  set.seed(1)
  n <- 2000; d <- 50
  X <- cbind(1, matrix(rnorm(n * (d - 1)), n))
  y <- rbinom(n, 1, plogis(drop(X %*% rnorm(d, sd = 0.1))))
  m <- model_logistic(X, y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  fits <- inner_fits(m, c(1, 2, 3), lr = 1e-5, batch_size = 100)
  expect_same_draws(fits)
  # the float copy of the rows goes through the same pieces
  mf <- model_logistic(X, y, sparse = FALSE, storage = "float", prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_same_draws(inner_fits(mf, c(1, 2), lr = 1e-5, batch_size = 100))
  # a batch that the pieces cannot share evenly (102 = 4 groups of 25 + 2)
  expect_same_draws(inner_fits(m, c(1, 2), lr = 1e-5, batch_size = 102))
  # preconditioners read the batch mean; control variates take two sums
  expect_same_draws(inner_fits(m, c(1, 2), lr = 1e-5, batch_size = 100,
                               sampler = psgld))
  expect_same_draws(inner_fits(m, c(1, 2), lr = 1e-5, batch_size = 100,
                               control_variates = TRUE))
})

test_that("one linear regression chain gives the same draws on 1 and 2 threads", {
  set.seed(2)
  n <- 3000; p <- 40
  X <- matrix(rnorm(n * p), n)
  y <- drop(X %*% rnorm(p)) + rnorm(n)
  m <- model_linear(X, y, prior = prior_nig())
  expect_same_draws(inner_fits(m, c(1, 2), lr = 1e-6, batch_size = 100))
})
