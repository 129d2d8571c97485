# `pars`: which parameters' draws are stored; the running moments of every
# parameter that the engine keeps whatever is stored.

wide_logistic <- function(n = 1000, d = 2000, seed = 5) {
  set.seed(seed)
  X <- matrix(rnorm(n * d), n, d)
  build <- function() model_logistic(X, rbinom(n, 1, 0.5), prior = prior_normal(0, 10),
                                     prior_intercept = NULL)
  # more columns than rows: the design is rank deficient, which the model says
  if (d > n) expect_run_warnings(build(), "design") else build()
}

test_that("a d = 2000 run keeps the draws asked for, and moments of all 2000", {
  m <- wide_logistic()
  set.seed(1)
  # (short runs of a model wider than its data: R-hat and the ESS warn)
  few <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 100, iter = 1000, chains = 2,
                                  pars = 1:5))
  set.seed(1)
  all <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 100, iter = 1000, chains = 2,
                                  pars = TRUE))
  expect_identical(dim(few$draws[[1]]), c(500L, 5L))
  expect_identical(colnames(few$draws[[1]]), paste0("x", 1:5))
  expect_identical(dim(all$draws[[1]]), c(500L, 2000L))
  for (c in 1:2) {
    x <- unclass(all$draws[[c]])
    # the stored columns are the same draws
    expect_identical(as.vector(unclass(few$draws[[c]])), as.vector(x[, 1:5]))
    # the running moments of all 2000 against the stored draws of the full run
    expect_lt(max(abs(few$moments$mean[c, ] - colMeans(x))), 1e-10)
    expect_lt(max(abs(sqrt(few$moments$var[c, ]) - apply(x, 2, sd))), 1e-10)
    eta <- all$lr[, c]
    expect_lt(max(abs(few$moments$weighted_mean[c, ] - colSums(x * eta) / sum(eta))), 1e-10)
  }
  expect_identical(few$moments$mean, all$moments$mean)
  # summary and coef use the moments for the parameters without draws
  s_few <- expect_run_warnings(summary(few))$statistics
  s_all <- expect_run_warnings(summary(all))$statistics
  expect_identical(dim(s_few), dim(s_all))
  cols <- c("mean", "weighted_mean", "sd")
  expect_lt(max(abs(s_few[, cols] - s_all[, cols])), 1e-10)
  expect_true(all(is.na(s_few[-(1:5), c("2.5%", "n_eff", "Rhat")])))
  expect_identical(s_few[1:5, ], s_all[1:5, ])
  expect_lt(max(abs(coef(few) - coef(all))), 1e-10)
  expect_lt(max(abs(coef(few, weighted = TRUE) - coef(all, weighted = TRUE))), 1e-10)
  # methods that need every draw say so
  expect_error(vcov(few), "needs the draws of every parameter.*stored 5 of 2000")
  expect_error(predict(few, newdata = matrix(0, 1, 2000)), "needs the draws of every parameter")
})

test_that("a 1,500-parameter model's default fit stores its draws, for coda too", {
  m <- wide_logistic(n = 200, d = 1500)
  set.seed(2)
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 50, iter = 200, chains = 1))
  expect_null(fit$pars)
  expect_null(fit$storage)
  x <- as.matrix(coda::as.mcmc.list(fit)[[1]])
  expect_identical(dim(x), c(100L, 1500L))
  expect_identical(colnames(x)[1:2], c("x1", "x2"))
})

test_that("a fit without stored draws says so and what has them", {
  m <- wide_logistic(n = 200, d = 1001)
  set.seed(2)
  fit <- sgld(m, lr = 1e-5, batch_size = 50, iter = 200, pars = FALSE, chains = 1)
  expect_identical(ncol(fit$draws[[1]]), 0L)
  expect_identical(nrow(fit$draws[[1]]), 100L)
  expect_length(coef(fit), 1001)
  expect_identical(nrow(summary(fit)$statistics), 1001L)
  expect_output(print(fit), "x1 .*and 971 more parameters.*Draws stored for 0 of 1001 parameters")
  expect_error(coda::as.mcmc.list(fit),
               "as.mcmc.list\\(\\): this fit stored no draws \\(`pars = FALSE` was given\\).*`pars = TRUE`")
  expect_error(coda::as.mcmc(fit), "as.mcmc\\(\\): this fit stored no draws")
})

test_that("the memory budget thins a default run further, or stores nothing", {
  m <- wide_logistic(n = 200, d = 1500)
  # 1,000 draws of 1500 parameters: 8 x 1000 x (3 x 1500 + 3) bytes = 36 MB
  old <- options(sgld.memory_limit = 10e6)   # a budget of 5 MB: 138 draws
  on.exit(options(old))
  set.seed(3)
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 50, iter = 3000, burnin = 1000,
                                  chains = 1))
  expect_null(fit$pars)
  budget_rows <- floor(5e6 / (8 * (3 * 1500 + 3)))
  expect_identical(fit$settings$thin, ceiling(2000 / budget_rows))
  expect_identical(ndraws(fit), as.integer(floor(2000 / fit$settings$thin)))
  expect_match(fit$storage, "over half the memory available, so it stored every 15-th")
  # the moments still count every iteration after burn-in
  expect_identical(fit$moments$n, 2000)
  # a `thin` the user gave is kept: draws beyond the memory are refused
  expect_error(sgld(m, lr = 1e-5, batch_size = 50, iter = 3000, burnin = 1000, thin = 2, chains = 1),
               "would keep up to 1,000 draws of 1500 parameters.*more than the 0.00931 GiB")
  # a budget too small for 100 draws a chain stores nothing either
  options(sgld.memory_limit = 2e6)
  set.seed(3)
  none <- sgld(m, lr = 1e-5, batch_size = 50, iter = 3000, burnin = 1000, chains = 1)
  expect_identical(none$pars, integer())
  expect_match(none$storage, "storing every parameter's draws would take 0.0335 GiB")
  expect_output(print(none), "Draws: storing every parameter's draws")
  expect_error(coda::as.mcmc.list(none), "stored no draws \\(storing every parameter's")
  # the moments are the same whatever was stored
  expect_identical(none$moments$mean, fit$moments$mean)
  # asking for every draw overrides the budget's choice
  options(sgld.memory_limit = 10e6)
  set.seed(3)
  all <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 50, iter = 1200, burnin = 1000,
                                  pars = TRUE, chains = 1))
  expect_null(all$pars)
  expect_identical(ndraws(all), 200L)
})

test_that("pars takes names, regular expressions and indices; moments are on the user's scale", {
  m <- handout_model()
  set.seed(3)
  # (a step too small for 2000 iterations: the run checks warn)
  full <- expect_run_warnings(sgld(m, lr = 2e-7, batch_size = 100, iter = 2000, chains = 2))
  expect_null(full$pars)
  for (p in list("sigma2", "^sig", 3L, c("sigma2", "x"))) {
    set.seed(3)
    fit <- expect_run_warnings(sgld(m, lr = 2e-7, batch_size = 100, iter = 2000, chains = 2,
                                    pars = p))
    keep <- if (identical(p, c("sigma2", "x"))) 2:3 else 3L
    expect_identical(fit$pars, keep)
    expect_identical(colnames(fit$draws[[1]]), c("(Intercept)", "x", "sigma2")[keep])
    expect_identical(as.vector(unclass(fit$draws[[2]])), as.vector(unclass(full$draws[[2]])[, keep]))
    expect_identical(as.matrix(fit, scale = "sampler")[, "log_sigma2"],
                     as.matrix(full, scale = "sampler")[, "log_sigma2"])
  }
  # sigma2 = exp(log sigma2): its moments are those of sigma2, not of the log
  x <- unclass(full$draws[[1]])
  expect_lt(max(abs(full$moments$mean[1, ] - colMeans(x)) / abs(colMeans(x))), 1e-12)
  expect_lt(abs(sqrt(full$moments$var[1, 3]) / sd(x[, 3]) - 1), 1e-10)
})

test_that("bad pars are clear errors", {
  m <- handout_model()
  run <- function(p) sgld(m, lr = 1e-7, iter = 100, pars = p, chains = 1)
  expect_error(run("tau"), "`pars`: \"tau\" matches no parameter")
  expect_error(run("(["), "neither a parameter name nor a regular expression")
  expect_error(run(4), "indices from 1 to 3")
  expect_error(run(1.5), "indices from 1 to 3")
  expect_error(run(list(1)), "`pars` must be NULL, TRUE")
})

test_that("without `thin` a run stores about 1,000 draws a chain, its moments every iteration", {
  m <- wide_logistic(n = 200, d = 3)
  set.seed(4)
  auto <- sgld(m, lr = 1e-3, batch_size = 50, iter = 6000, chains = 2)
  set.seed(4)
  every <- sgld(m, lr = 1e-3, batch_size = 50, iter = 6000, chains = 2, thin = 1)
  expect_identical(auto$settings$thin, 3)   # floor(3000 / 1000)
  expect_identical(ndraws(auto), 1000L)
  expect_identical(ndraws(every), 3000L)
  for (c in 1:2) {
    x <- unclass(every$draws[[c]])
    # the stored draws are every third state of the same chain
    expect_identical(unclass(auto$draws[[c]])[, ], x[seq(3, 3000, by = 3), ])
    # the moments take every state after burn-in, whatever is stored
    expect_lt(max(abs(auto$moments$mean[c, ] - colMeans(x))), 1e-12)
    expect_lt(max(abs(sqrt(auto$moments$var[c, ]) - apply(x, 2, sd))), 1e-12)
  }
  expect_identical(auto$moments, every$moments)
})
