test_that("SGLD with a small constant step reproduces the exact posterior", {
  # eta = 2e-7 with batches of 1000: the minibatch noise inflates the variance of
  # the coefficients by about eta n lambda / (2 m) ~ 5% (sd +2.6%), the
  # discretisation by eta lambda / 2 ~ 0.5%, with lambda ~ n / sigma2 the
  # posterior precision; both well inside the tolerance.
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(20261122)
  fit <- sgld(m, lr = 2e-7, batch_size = 1000, iter = 6e5, burnin = 1e4, thin = 50,
              chains = 2)
  s <- summary(fit)$statistics[names(ex$mean), ]   # the parameters (sigma is derived)
  # the test has power: Monte Carlo error of the mean is well below the tolerance
  mcse <- s[, "sd"] / sqrt(s[, "n_eff"])
  expect_true(all(3 * mcse < 0.15 * ex$sd))
  expect_true(all(s[, "n_eff"] > 300))
  z <- abs(s[, "mean"] - ex$mean) / ex$sd
  expect_true(all(z < 0.15), info = paste(names(z), format(z), collapse = "; "))
  ratio <- s[, "sd"] / ex$sd
  expect_true(all(abs(ratio - 1) < 0.10), info = paste(names(ratio), format(ratio), collapse = "; "))
})

test_that("the temperature scales the stationary variance", {
  # at temperature tau the target is p^(1/tau): sds scale by sqrt(tau)
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(7)
  # (sigma2, not checked here, mixes slowly at this step: its ESS warns)
  fit <- expect_run_warnings(sgld(m, lr = 2e-7, batch_size = 1000, iter = 1.5e5, burnin = 5e3,
                                  thin = 20, temperature = 4, chains = 1), "ess")
  s <- expect_run_warnings(summary(fit), "ess")$statistics
  ratio <- s[c("(Intercept)", "x"), "sd"] / ex$sd[c("(Intercept)", "x")]
  expect_true(all(abs(ratio / 2 - 1) < 0.1), info = format(ratio))
})

test_that("set.seed() makes a run reproducible and different seeds differ", {
  m <- handout_model()
  run <- function(seed) {
    set.seed(seed)
    # (a step too small for 2000 iterations: the run checks warn)
    expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 2000, chains = 2))
  }
  a <- run(1)
  b <- run(1)
  c <- run(2)
  expect_identical(as.array(a), as.array(b))
  expect_identical(a$last, b$last)
  expect_false(any(as.matrix(a) == as.matrix(c)))
  # the chains of one run differ from each other
  expect_false(any(a$draws[[1]] == a$draws[[2]]))
})

test_that("results do not depend on the order in which chains run", {
  m <- handout_model()
  settings <- sgld:::run_settings(m, lr = 1e-7, batch_size = 50, iter = 3000, burnin = 0,
                                  thin = 1, temperature = 1, chains = 3, init = NULL,
                                  replace = FALSE, clip = NULL)
  set.seed(9)
  forward <- .Call(sgld:::C_sgld_run, m, settings)
  settings$order <- c(3L, 1L, 2L)
  set.seed(9)
  shuffled <- .Call(sgld:::C_sgld_run, m, settings)
  expect_identical(forward$draws, shuffled$draws)
  expect_identical(forward$last, shuffled$last)
  # and chain 1 is the same whether or not other chains run beside it
  set.seed(9)
  alone <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 50, iter = 3000, burnin = 0,
                                    chains = 1, thin = 1))
  expect_identical(unclass(alone$draws[[1]]), {
    x <- forward$draws[[1]]; x[, 3] <- exp(x[, 3]); colnames(x) <- m$names; x
  }, ignore_attr = TRUE)
})

test_that("with replacement, minibatches still give a valid sampler", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(31)
  # (sigma2, not checked here, mixes slowly at this step: its ESS warns)
  fit <- expect_run_warnings(sgld(m, lr = 2e-7, batch_size = 1000, iter = 1e5, burnin = 5e3,
                                  thin = 20, replace = TRUE, chains = 1), "ess")
  s <- expect_run_warnings(summary(fit), "ess")$statistics
  expect_true(all(abs(s[1:2, "mean"] - ex$mean[1:2]) / ex$sd[1:2] < 0.3))
  expect_true(all(abs(s[1:2, "sd"] / ex$sd[1:2] - 1) < 0.15))
})

test_that("burn-in and thinning arithmetic: rows, mcpar and learning rates agree", {
  m <- handout_model()
  set.seed(4)
  fit <- expect_run_warnings(sgld(m, lr = lr_poly(a = 1e-6, b = 10, gamma = 0.6),
                                  batch_size = 10, iter = 1000, burnin = 100, thin = 7,
                                  chains = 2))
  K <- floor((1000 - 100) / 7)
  kept_iter <- 100 + 7 * seq_len(K)
  for (ch in fit$draws) {
    expect_identical(nrow(ch), as.integer(K))
    expect_identical(coda::mcpar(ch), c(107, 100 + 7 * K, 7))
  }
  expect_identical(dim(fit$lr), c(as.integer(K), 2L))
  expect_equal(fit$lr[, 1], 1e-6 * (10 + kept_iter)^-0.6, tolerance = 1e-14)
  expect_identical(fit$lr[, 1], fit$lr[, 2])
  expect_identical(fit$kept, c(K, K))
  # coda's diagnostics run on the two chains
  ess <- coda::effectiveSize(coda::as.mcmc.list(fit))
  expect_true(all(ess > 0) && length(ess) == 3)
  gd <- coda::gelman.diag(coda::as.mcmc.list(fit))
  expect_identical(dim(gd$psrf), c(3L, 2L))
})

test_that("a run that diverges stops there and keeps what it had", {
  m <- handout_model()
  set.seed(8)
  # a deliberately huge step (50 times the handout's): the chain blows up mid-run
  r <- with_warnings(sgld(m, lr = 5e-4, batch_size = 10, iter = 5000, burnin = 0, thin = 1, chains = 1))
  fit <- r$value
  expect_match(r$warnings[1], "chain 1 diverged at iteration [0-9]+")
  expect_match(r$warnings[1], "smaller learning rate")
  expect_identical(fit$status, "diverged")
  stop_at <- fit$stop_iter
  expect_match(r$warnings[1], paste0("iteration ", stop_at, ":"))
  expect_true(stop_at > 1 && stop_at < 5000)
  expect_identical(fit$kept, stop_at - 1)
  expect_identical(nrow(fit$partial[["chain 1"]]), as.integer(stop_at - 1))
  expect_identical(nrow(fit$draws[[1]]), as.integer(stop_at - 1))
  expect_true(all(is.finite(as.matrix(fit))))
  expect_true(all(is.finite(fit$last)))
})

test_that("a diverging chain does not stop the others", {
  m <- handout_model()
  init <- rbind(c(0, 0.9, 0.19), c(0, 0.9, 1e-300), c(0, 0.9, 0.2))
  set.seed(2)
  r <- with_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 500, burnin = 0, chains = 3,
                          init = init))
  fit <- r$value
  expect_match(r$warnings[1], "chain 2 diverged at iteration")
  expect_match(r$warnings[2], "`draws` holds chains 1, 3")
  expect_identical(fit$status, c("done", "diverged", "done"))
  expect_identical(fit$kept[c(1, 3)], c(500, 500))
  expect_identical(fit$chain_ids, c(1L, 3L))
  expect_identical(nrow(fit$draws[[2]]), 500L)
  expect_identical(dim(fit$lr), c(500L, 2L))
})
