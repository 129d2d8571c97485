# The conditioning benchmark (bench/conditioning.R) in miniature. Its step
# search (lr = 1e-2 * 2^-k walked from large to small; stable = 2 pilot chains
# of 20,000 iterations all "done", finite, every sd <= 10 x exact) found the
# largest stable constant steps used here:
#   SGLD  7.450581e-11 (k = 27),   pSGLD 9.536743e-09 (k = 20).
#
# What is asserted is the criterion restricted to the parameters other than
# x2. On x2, the stiffest coordinate, both samplers overstate the sd by the
# same factor (about 7.9): with minibatches of m out of n, a Gaussian
# coordinate's stationary variance is (2 + h n / m) / (lambda (2 - h)) with
# h = eta * G * lambda, which depends on the preconditioner G only through h,
# and at each sampler's largest stable step h is about the same. Over all four
# parameters the criterion fails (max sd errors 6.88 vs 6.93, ratio 0.99); what
# pSGLD does fix is the coordinates SGLD cannot move at a step x2 tolerates.

conditioning_case <- function() {
  set.seed(20240601)
  n <- 1e4
  dat <- data.frame(x1 = rnorm(n), x2 = 1000 * rnorm(n))
  dat$y <- 1 + 0.5 * dat$x1 - 5e-4 * dat$x2 + rnorm(n)
  model_linear(y ~ x1 + x2, data = dat, prior = prior_nig())
}

test_that("pSGLD mixes the slow coordinates of a badly conditioned regression that SGLD cannot", {
  m <- conditioning_case()
  ex <- linear_exact_posterior(m)
  d <- length(ex$mode)
  init <- c(ex$mode[-d], exp(ex$mode[d]))
  run <- function(sampler, lr) {
    set.seed(101)
    # (the ill-conditioned posterior is what is shown: the run checks warn)
    fit <- expect_run_warnings(sampler(m, lr = lr, batch_size = 100, iter = 2e5, burnin = 2e4,
                                       thin = 10, chains = 4, init = init))
    expect_true(all(fit$status == "done"))
    # the parameters (sigma is derived)
    quietly_checked(summary(fit))$statistics[seq_len(d), ]
  }
  s_sgld <- run(sgld, 7.450581e-11)
  s_psgld <- run(psgld, 9.536743e-09)
  err_sgld <- abs(s_sgld[, "sd"] / ex$sd - 1)
  err_psgld <- abs(s_psgld[, "sd"] / ex$sd - 1)
  slow <- names(ex$sd) != "x2"
  info <- paste("SGLD:", paste(format(err_sgld, digits = 3), collapse = " "),
                "| pSGLD:", paste(format(err_psgld, digits = 3), collapse = " "))

  # measured over seeds 101, 202, 303, 404, 505: max error on these parameters
  # 0.03-0.07 for pSGLD, 0.71-0.85 for SGLD (their ratio 0.04-0.08)
  expect_lte(max(err_psgld[slow]), 0.5 * max(err_sgld[slow]), label = info)

  # pSGLD's own errors. Its ESS on these parameters was 234-408 over the five
  # seeds, so the relative Monte Carlo sd of an sd estimate is about
  # 1 / sqrt(2 ESS) ~ 0.045; the minibatch noise adds ~2.5% (h n / (4 m) with
  # h ~ 1e-3). 0.2 is four Monte Carlo sds above that bias; the largest error
  # measured was 0.068.
  expect_true(all(s_psgld[slow, "n_eff"] > 150), label = info)
  expect_true(all(err_psgld[slow] < 0.2), label = info)
  # the step stays stable over the long run: x2 keeps within the search's cap
  expect_lt(s_psgld["x2", "sd"] / ex$sd[["x2"]], 10)
})
