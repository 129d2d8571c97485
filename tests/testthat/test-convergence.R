# R-hat above 1.05 or ESS below 100 warns when the run ends, for every
# sampler, judged on quantities that mean the same in every chain: the
# parameters of a regression, the log likelihood (and sigma2) of a network,
# whose weights permute between chains.

convergence_warnings <- function(res) grep("R-hat is above|effective sample size is below",
                                           res$warnings, value = TRUE)

net_model <- function() {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- sin(x[, 1]) + 0.5 * x[, 2] + rnorm(200, sd = 0.3)
  # N(0, 1/fan-in) on each layer: under the default hierarchical prior two
  # chains of this 3-unit network settle in modes that predict differently
  # (SGHMC at lr 3e-4: R-hat of sigma2 and the log likelihood 1.16-1.30 at
  # 20,000 and 40,000 iterations, seeds 26-28), which is not what this
  # file's good runs are for
  model_mlp(x, y, hidden = 3, activation = "tanh", prior = prior_normal(0, sqrt(1 / c(2, 3))))
}

# Two chains from far apart, at a step too small to bring them together: the
# fit itself warns of both, and names a remedy with the run's figures.
expect_bad_run_warns <- function(run, label) {
  res <- with_warnings(run())
  w <- convergence_warnings(res)
  expect_true(any(grepl("R-hat is above 1.05 .* Run more iterations \\(iter = [0-9,]+", w)),
              label = paste(label, "warns of R-hat"))
  expect_true(any(grepl("effective sample size is below 100 .*about iter = [0-9,]+", w)),
              label = paste(label, "warns of the ESS"))
  expect_gt(res$value$checks$convergence$rhat_max, 1.05)
  expect_lt(res$value$checks$convergence$ess_min, 100)
  res$value
}

expect_good_run_quiet <- function(run, label) {
  res <- with_warnings(run())
  expect_identical(res$warnings, character(), label = paste(label, "warnings"))
  expect_lt(res$value$checks$convergence$rhat_max, 1.05)
  expect_gt(res$value$checks$convergence$ess_min, 100)
  res$value
}

test_that("a regression's R-hat and ESS warn at fit time for sgld, psgld and sghmc", {
  m <- model_linear(y ~ x1 + x2 + g, data = small_data(), prior = prior_nig())
  apart <- rbind(c(3, 2, 1, 1, 1, 4), c(-2, -1, -1, -1, -1, 0.1))
  set.seed(11)
  expect_bad_run_warns(function() sgld(m, lr = 1e-6, iter = 2000, chains = 2, init = apart,
                                       batch_size = 200), "sgld")
  set.seed(12)
  expect_bad_run_warns(function() psgld(m, lr = 1e-6, iter = 2000, chains = 2, init = apart,
                                        batch_size = 200), "psgld")
  set.seed(13)
  expect_bad_run_warns(function() sghmc(m, lr = 1e-9, iter = 2000, chains = 2, init = apart,
                                        batch_size = 200), "sghmc")
  set.seed(14)
  expect_good_run_quiet(function() sgld(m, lr = 1e-3, iter = 10000, chains = 2,
                                        batch_size = 200), "sgld")
  set.seed(15)
  expect_good_run_quiet(function() psgld(m, lr = 1e-4, iter = 10000, chains = 2,
                                         batch_size = 200), "psgld")
  set.seed(16)
  expect_good_run_quiet(function() sghmc(m, lr = 3e-4, iter = 10000, chains = 2,
                                         batch_size = 200), "sghmc")
})

test_that("a network's R-hat and ESS judge its log likelihood, not its permuted weights", {
  m <- net_model()
  set.seed(21)
  bad <- expect_bad_run_warns(function() sgld(m, lr = 1e-6, iter = 4000, chains = 2,
                                              batch_size = 200, pars = TRUE), "network sgld")
  # sigma2, the log likelihood of all 200 rows, and of 5 rows alone
  expect_identical(names(bad$checks$convergence$rhat),
                   c("sigma2", "log likelihood of 200 training rows",
                     paste("log likelihood of training row", c(1, 51, 100, 150, 200))))
  set.seed(22)
  expect_bad_run_warns(function() psgld(m, lr = 1e-6, iter = 4000, chains = 2,
                                        batch_size = 200, pars = TRUE), "network psgld")
  set.seed(23)
  expect_bad_run_warns(function() sghmc(m, lr = 1e-8, iter = 4000, chains = 2,
                                        batch_size = 200, pars = TRUE), "network sghmc")
  set.seed(24)
  good <- expect_good_run_quiet(function() sgld(m, lr = 1e-3, iter = 20000, chains = 2,
                                                batch_size = 200, pars = TRUE), "network sgld")
  # the two chains found different arrangements of the hidden units: their
  # weights' R-hat is far above 1.05, which means nothing for a network
  s <- quietly_checked(summary(good))$statistics
  expect_gt(max(s[grep("^[Wb]", rownames(s)), "Rhat"]), 2)
  set.seed(25)
  expect_good_run_quiet(function() psgld(m, lr = 1e-3, iter = 20000, chains = 2,
                                         batch_size = 200, pars = TRUE), "network psgld")
  set.seed(26)
  expect_good_run_quiet(function() sghmc(m, lr = 3e-4, iter = 20000, chains = 2,
                                         batch_size = 200, pars = TRUE), "network sghmc")
  # the log likelihood is the engine's own, row by row
  W <- t(as.matrix(good, scale = "sampler")[1:3, ])
  expect_equal(.Call(sgld:::C_sgld_loglik_draws, m, W, as.double(1:200)),
               apply(W, 2, function(w) log_posterior(m, w)$loglik), tolerance = 1e-12)
  # without the weights stored, sigma2 alone is judged
  set.seed(27)
  fit <- sgld(m, lr = 1e-3, iter = 4000, batch_size = 200, chains = 2)
  expect_identical(names(fit$checks$convergence$ess), "sigma2")
})

test_that("summary() and print() repeat the fit's convergence warnings", {
  m <- model_linear(y ~ x1 + x2 + g, data = small_data(), prior = prior_nig())
  set.seed(31)
  fit <- quietly_checked(sgld(m, lr = 1e-6, iter = 2000, chains = 2, batch_size = 200,
                               init = rbind(c(3, 2, 1, 1, 1, 4), c(-2, -1, -1, -1, -1, 0.1))))
  for (res in list(with_warnings(summary(fit)), with_warnings(capture.output(print(fit)))))
    expect_identical(convergence_warnings(res), fit$checks$convergence$messages)
  # an optimiser's trajectory is not judged
  set.seed(32)
  expect_null(sgd(m, lr = 1e-6, iter = 200, batch_size = 20)$checks$convergence)
})

test_that("psrf() is coda's R-hat point estimate, for every variable at once", {
  set.seed(11)
  for (m in 2:4) {
    x <- coda::mcmc.list(lapply(seq_len(m), function(k) {
      z <- matrix(rnorm(300 * 6), 300, 6)
      z[, 2] <- z[, 2] + k            # chains that disagree
      z[, 3] <- cumsum(z[, 3]) / 10   # a slowly mixing one
      z[, 4] <- z[, 4] * k            # and unequal spreads
      coda::mcmc(z)
    }))
    expect_equal(psrf(x),
                 unname(coda::gelman.diag(x, autoburnin = FALSE, multivariate = FALSE)$psrf[, 1]),
                 tolerance = 1e-12)
  }
  expect_gt(psrf(x)[2], 1.5)
  expect_true(all(is.na(psrf(x[1]))))
})

test_that("a default fit has several chains: gelman.diag works, summary has Rhat, n_eff, mcse", {
  set.seed(3)
  fit <- sgld(type ~ npreg + glu + bmi, data = MASS::Pima.tr, family = binomial())
  expect_identical(length(fit$draws), 4L)
  g <- coda::gelman.diag(coda::as.mcmc.list(fit))
  # summary's R-hat is over all the draws; gelman.diag drops the first half by default
  g_all <- coda::gelman.diag(coda::as.mcmc.list(fit), autoburnin = FALSE)
  expect_identical(dim(g$psrf), c(4L, 2L))
  expect_true(all(g$psrf[, 1] < 1.05))
  s <- summary(fit)$statistics
  expect_true(all(c("Rhat", "n_eff", "mcse") %in% colnames(s)))
  expect_equal(s[, "Rhat"], g_all$psrf[, 1], tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(s[, "mcse"], s[, "sd"] / sqrt(s[, "n_eff"]))
  expect_true(all(s[, "n_eff"] > 400))
  expect_output(print(fit), "Effective sample size of the stored draws: smallest [0-9]+")
})

test_that("the effective sample sizes are coda's, computed for all variables at once", {
  # R/fit.R: ess_ar() fits coda's spectrum0.ar() autoregressions to every
  # column together; the numbers must be coda's to rounding, including its
  # zero for a constant or straight-line column and its order choice on
  # short and long, weakly and strongly correlated chains
  set.seed(8)
  for (N in c(40, 900, 5000)) {
    rho <- c(-0.4, 0, 0.5, 0.9, 0.99)
    chains <- lapply(1:3, function(k) {
      x <- matrix(rnorm(N * 5), N)
      for (t in 2:N) x[t, ] <- rho * x[t - 1, ] + x[t, ]
      coda::mcmc(cbind(x * 10^(k - 2), flat = 2, line = seq_len(N) / 7))
    })
    draws <- coda::mcmc.list(chains)
    coda_ess <- vapply(seq_len(7), function(j) unname(coda::effectiveSize(draws[, j, drop = TRUE])), 1)
    ours <- sgld:::ess(draws)
    expect_equal(ours[1:5] / coda_ess[1:5], rep(1, 5), tolerance = 1e-10)
    expect_identical(coda_ess[6:7], c(0, 0))
    expect_identical(ours[6:7], c(0, 0))
  }
  # a non-finite draw: coda's own answer, here an error, so NA
  bad <- coda::mcmc.list(list(coda::mcmc(cbind(a = rnorm(50), b = c(rnorm(49), Inf)))))
  expect_true(is.na(sgld:::ess(bad)[2]))
  expect_equal(sgld:::ess(bad)[1], unname(coda::effectiveSize(bad[, 1, drop = TRUE])))
})
