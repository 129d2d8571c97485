# Independence Metropolis-Hastings, lr = "auto"'s route for near-Gaussian
# negative binomials (R/auto-imh.R)

test_that("the independence sampler matches a posterior computed by quadrature", {
  # an intercept and log phi: the exact posterior on a 161 x 161 grid of
  # +- 8 Laplace sds; tolerances 4 Monte Carlo errors from the run's own
  # effective sample sizes (a mean's sd / sqrt(n_eff), an sd's about
  # 1 / sqrt(2 n_eff)); with the t density's term taken out of the weights
  # in src/imh.c (a sampler of p q, not p) the sds fail it
  m <- model_negbin(Days ~ 1, data = MASS::quine)
  set.seed(3)
  fit <- sgld(m)
  expect_identical(fit$auto$strategy, "imh")
  expect_identical(fit$method, "mala")
  pm <- posterior_mode(m, covariance = TRUE)
  sds <- sqrt(diag(pm$covariance))
  g1 <- pm$sampler[1] + seq(-8, 8, length.out = 161) * sds[1]
  g2 <- pm$sampler[2] + seq(-8, 8, length.out = 161) * sds[2]
  W <- as.matrix(expand.grid(g1, g2))
  lp <- sgld:::log_joint_draws(m, W)
  p <- exp(lp - max(lp))
  p <- p / sum(p)
  U <- cbind(W[, 1], exp(W[, 2]))   # the user's scale: phi
  exact_mean <- colSums(U * p)
  exact_sd <- sqrt(colSums((U - rep(exact_mean, each = nrow(U)))^2 * p))
  st <- summary(fit)$statistics
  expect_true(all(abs(st[, "mean"] - exact_mean) < 4 * exact_sd / sqrt(st[, "n_eff"])))
  expect_true(all(abs(st[, "sd"] / exact_sd - 1) < 4 / sqrt(2 * st[, "n_eff"])))
  expect_gt(min(fit$acceptance), 0.5)
  expect_lt(max(st[, "Rhat"]), 1.05)
})

test_that("the engine's batch: log_posterior() at every proposal, t weights, a valid scan", {
  m <- model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
  set.seed(2)
  pm <- posterior_mode(m, covariance = TRUE)
  proposal <- list(location = pm$sampler, factor = chol(pm$covariance), df = 7)
  stream <- .Call(sgld:::C_sgld_streams, 1L)[1:32]
  b <- sgld:::imh_batch(m, proposal, 6, pm$sampler, -1e300, stream)
  each <- apply(b$proposals, 1, function(w) log_posterior(m, w)$logpost)
  expect_equal(b$log_post, each, tolerance = 1e-10)
  expect_equal(b$log_weight, sgld:::imh_weight(proposal, b$proposals, each), tolerance = 1e-10)
  # from a state of weight -1e300 the first proposal is accepted; every state
  # is the last accepted proposal
  expect_identical(b$draws[1, ], b$proposals[1, ])
  for (k in 2:6) expect_true(identical(b$draws[k, ], b$proposals[k, ]) ||
                               identical(b$draws[k, ], b$draws[k - 1, ]))
  expect_identical(b$last_lw, b$log_weight[max(which(apply(b$draws == b$proposals, 1, all)))])
  # the same stream, the same batch; the returned stream moves on
  expect_identical(sgld:::imh_batch(m, proposal, 6, pm$sampler, -1e300, stream), b)
  expect_false(identical(b$stream, stream))
  expect_error(sgld:::imh_batch(m, proposal, 0, pm$sampler, 0, stream), "whole number")
})

test_that("the batch's block evaluation is log_posterior() for every kind of negbin data", {
  # src/model_negbin.c: negbin_loglik_points() sums the lgamma steps by count
  # (a table of logs, or an lgammafn() per distinct count, plus the rows of
  # counts past the table) and takes the linear predictors of eight points
  # side by side (dense rows of at most 64 coefficients; others row by row)
  check_batch <- function(m, K = 11) {
    proposal <- list(location = c(rep(0.05, m$d - 1), 0.3),
                     factor = diag(0.05, m$d), df = 15)
    stream <- .Call(sgld:::C_sgld_streams, 1L)[1:32]
    b <- sgld:::imh_batch(m, proposal, K, proposal$location, -1e300, stream)
    each <- apply(b$proposals, 1, function(w) log_posterior(m, w)$logpost)
    expect_equal(b$log_post, each, tolerance = 1e-10)
  }
  set.seed(5)
  n <- 40
  d <- data.frame(x = rnorm(n), g = factor(sample(letters[1:4], n, TRUE)),
                  t = runif(n, 1, 3), wt = runif(n, 0.5, 2))
  d$y <- rnbinom(n, mu = 3, size = 2)
  # with case weights and an offset; counts past the table (table_max 4096)
  # and few distinct counts: an lgammafn() per count
  d$y[1:2] <- c(5000, 4100)
  check_batch(model_negbin(y ~ x + g + offset(log(t)), data = d, weights = wt))
  # small counts: the table of logs
  d$y[1:2] <- c(1, 9)
  check_batch(model_negbin(y ~ x + g, data = d))
  # a sparse design, and a dense one of 70 coefficients (row by row)
  X <- Matrix::sparseMatrix(i = seq_len(n), j = rep(1:5, length.out = n), x = 1,
                            dims = c(n, 5))
  check_batch(model_negbin(X, d$y))
  check_batch(model_negbin(cbind(1, matrix(rnorm(80 * 69, sd = 0.1), 80)), rep(d$y, 2)), K = 9)
})

test_that("same seed, same draws; init = fit continues the chains", {
  m <- model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
  set.seed(4)
  a <- sgld(m, chains = 2)
  set.seed(4)
  b <- sgld(m, chains = 2)
  expect_identical(as.matrix(a), as.matrix(b))
  expect_identical(a$auto$strategy, "imh")
  # the fit's check reports the stopping rule's effective sample sizes:
  # those of every stored draw (not thinned), as ess() measures them
  conv <- a$checks$convergence
  expect_identical(conv$thin, 1)
  expect_equal(unname(conv$ess), sgld:::ess(a$draws), tolerance = 1e-10)
  more <- sgld(m, init = a, iter = 300)
  expect_true(more$auto$continued)
  expect_identical(nrow(more$draws[[1]]), 300L)
  # the first proposal of each chain is scanned from that chain's last draw
  expect_equal(more$settings$chains, 2)
})

test_that("a pilot whose weights are heavy-tailed falls back, its random numbers given back", {
  # six counts: the Laplace approximation's departure is small (0.54) but the
  # pilot's PSIS k-hat is 0.75, above auto_imh_khat
  set.seed(7)
  n <- sample(5:9, 1)
  d <- data.frame(y = rnbinom(n, mu = 2, size = 0.7), x = rnorm(n))
  m <- model_negbin(y ~ x, data = d)
  pm <- posterior_mode(m, covariance = TRUE)
  set.seed(1)
  before <- .Random.seed
  out <- sgld:::auto_imh(m, list(chains = 4), character(), NULL, new.env(), pm,
                         list(departure = 0.5), 0)
  expect_null(out)
  expect_identical(.Random.seed, before)
  set.seed(1)
  fit <- suppressWarnings(sgld(m))
  expect_identical(fit$auto$strategy, "mala-gaussian")
})

test_that("above auto_full_n rows the route is taken where it costs less than the subsampled plan", {
  # auto_imh_evaluations (6,000) evaluations of every row against
  # auto_imh_row_cost (12) times the plan's rows (batch x iterations)
  nb <- structure(list(n = 5000), class = c("sgld_model_negbin", "sgld_model"))
  expect_true(sgld:::imh_pays(nb, NULL))   # the alternative is full-data MALA
  expect_true(sgld:::imh_pays(nb, list(batch = 1197, iter = 3852)))    # DoctorVisits' plan
  expect_false(sgld:::imh_pays(nb, list(batch = 381, iter = 3852)))    # the simulated set's
  expect_false(sgld:::imh_pays(structure(list(n = 50), class = c("sgld_model_poisson",
                                                                  "sgld_model")), NULL))
})
