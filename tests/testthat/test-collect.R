test_that("a threshold burn-in starts keeping draws once alpha falls below it", {
  m <- handout_model()
  set.seed(131)
  fit <- expect_run_warnings(sgld(m, lr = lr_exp(1e-5, 1e-9), batch_size = 10, iter = 50000,
                                  burnin = sampling_threshold(0.1, every = 1000), thin = 10, chains = 1))
  d <- fit$diagnostics
  first <- d$iteration[which(d$alpha <= 0.1)[1]]
  expect_true(all(d$alpha[d$iteration < first] > 0.1))
  expect_identical(fit$collect_from, first)
  it <- fit$iteration[, 1]
  expect_identical(it[1], first + 9)
  expect_true(all(diff(it) == 10))
  expect_identical(nrow(fit$draws[[1]]), length(it))
  expect_identical(coda::mcpar(fit$draws[[1]]), c(1, length(it), 1))
  expect_equal(fit$lr[, 1], lr_values(lr_exp(1e-5, 1e-9), it, iter = 50000))
})

test_that("mixing-distance thinning keeps draws a fixed summed step apart", {
  m <- handout_model()
  lr <- lr_poly(a = 1e-6, b = 10, gamma = 0.55)
  D0 <- 5e-6
  set.seed(132)
  fit <- expect_run_warnings(sgld(m, lr = lr, batch_size = 10, iter = 20000, burnin = 1000,
                                  thin = mixing_distance(D0), chains = 2))
  it <- fit$iteration[, 1]
  eta <- lr_values(lr, 1:20000)
  cum <- cumsum(eta)
  # each kept draw is the first iteration at which the summed eta since the
  # previous one (or since burn-in) reaches D0
  prev <- c(1000, it[-length(it)])
  expect_true(all(cum[it] - cum[prev] >= D0))
  expect_true(all(cum[it - 1] - cum[prev] < D0))
  expect_gt(length(it), 10)
  # gaps widen as the learning rate shrinks
  expect_gt(mean(diff(it)[seq(length(it) - 5, length(it) - 1)]), mean(diff(it)[1:5]))
  expect_identical(fit$iteration[, 1], fit$iteration[, 2])
})

test_that("collection policies are checked", {
  m <- handout_model()
  expect_error(sampling_threshold(0), "`alpha` must be greater than 0")
  expect_error(mixing_distance(-1), "`D0` must be greater than 0")
  expect_error(sgld(m, lr = 1e-7, iter = 100, burnin = sampling_threshold(0.1, every = 500), chains = 1),
               "`every` must be at most `iter`")
  expect_error(sgld(m, lr = 1e-7, iter = 1000, burnin = sampling_threshold(0.1, every = 100),
                    diagnostics = diagnostics_every(200), chains = 1), "must check at the same iterations")
})
