# tune_sgld(): pilot runs scored by KSD at equal cost (issue 16).

test_that("tune_sgld() on Pima returns settings whose run is accurate, reproducibly", {
  skip_if_not_installed("MASS")
  m <- model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(1651)
  tuned <- tune_sgld(m, step = c(0.01, 0.1, 0.25, 0.5), iter = 1000)
  set.seed(1651)
  again <- tune_sgld(m, step = c(0.01, 0.1, 0.25, 0.5), iter = 1000)
  expect_identical(tuned$table, again$table)
  # settings whose minibatch noise widens the sds (alpha > 0.1) come last;
  # within each group, best score first
  quiet <- tuned$table$alpha <= 0.1
  expect_true(all(quiet[seq_len(sum(quiet))]))
  for (g in split(tuned$table$score, quiet))
    expect_true(all(diff(g[is.finite(g)]) >= 0))
  expect_true(all(tuned$table$alpha[tuned$table$batch_size == m$n] == 0))
  expect_true(all(tuned$table$alpha[tuned$table$batch_size < m$n] > 0))
  # with the predictors on their own scales, the unpreconditioned rows lose
  expect_identical(tuned$table$precondition[1], "laplace")
  expect_output(print(tuned), "Best: lr = ")
  pdf(NULL)
  expect_identical(plot(tuned), tuned)
  dev.off()
  set.seed(1652)
  ref <- as.matrix(mala(m, iter = 100000, burnin = 1000, thin = 5, chains = 1))
  set.seed(1653)
  fit <- expect_no_warning(sgld(m, tune = tuned, chains = 1))
  set.seed(1653)
  expect_identical(fit$draws, do.call(sgld, c(list(m), tuned$best, chains = 1))$draws)
  x <- as.matrix(fit)
  ess <- summary(fit)$statistics[, "n_eff"]
  expect_true(all(3 / sqrt(ess) < 0.10))
  expect_true(all(abs(colMeans(x) - colMeans(ref)) / apply(ref, 2, sd) < 0.15))
  expect_true(all(abs(apply(x, 2, sd) / apply(ref, 2, sd) - 1) < 0.10))
})

test_that("tune_sgld() on Adult returns settings whose run is accurate", {
  # about 2 minutes on one core: pilots with the full data (n = 32,561) and
  # the recommended run; the reference is 150,000 MALA draws
  # (data-raw/adult-reference.R)
  skip_on_cran()
  d <- sgld::adult[sgld::adult$set == "train", ]
  m <- expect_run_warnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL), "design")
  ref <- readRDS(test_path("adult-reference.rds"))
  set.seed(1671)
  tuned <- tune_sgld(m, step = c(0.05, 0.1, 0.25))
  # the posterior is far from Gaussian along rare levels: steps above 0.1 are left out
  expect_true(tuned$steps_capped)
  expect_true(all(tuned$table$step <= 0.1))
  # minibatches without a preconditioner or control variates are too noisy
  # here (alpha in the tens): they rank last
  expect_true(tuned$table$alpha[1] <= 0.1)
  set.seed(1672)
  fit <- sgld(m, tune = tuned, chains = 1)
  x <- as.matrix(fit)
  ess <- summary(fit)$statistics[, "n_eff"]
  expect_true(all(3 / sqrt(ess) < 0.15))
  expect_true(all(abs(colMeans(x) - ref$mean) / ref$sd < 0.15))
  expect_true(all(abs(apply(x, 2, sd) / ref$sd - 1) < 0.10))
})

test_that("tune_sgld() checks its arguments", {
  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  expect_error(tune_sgld(m, step = 3), "`step` must be numbers between 0 and 2")
  expect_error(tune_sgld(m, batch_size = 0.5), "`batch_size` must be whole numbers")
  expect_error(tune_sgld(m, precondition = "rmsprop"), "`precondition` must hold")
  expect_error(tune_sgld(m, control_variates = NA), "`control_variates` must hold")
  expect_error(tune_sgld(m, iter = 5), "`iter`")
})

test_that("sgld(model, tune = ) uses the tuned settings under the ones given", {
  m <- model_linear(y ~ x, data = handout, prior = prior_nig())
  set.seed(1661)
  tuned <- tune_sgld(m, step = c(0.05, 0.25), iter = 300)
  set.seed(1662)
  fit <- quietly_checked(sgld(m, tune = tuned, iter = 500, burnin = 100, chains = 1))
  expect_identical(fit$settings$iter, 500)
  expect_equal(fit$settings$lr$eta, tuned$best$lr)
  expect_equal(fit$settings$batch_size, tuned$best$batch_size)
  expect_identical(as.character(fit$call[[1]]), "sgld")
  # several chains start apart (from the Laplace approximation widened), not all at the mode
  set.seed(1663)
  fit4 <- quietly_checked(sgld(m, tune = tuned, iter = 50, burnin = 0, chains = 3))
  starts <- t(vapply(fit4$draws, function(x) x[1, ], numeric(m$d)))
  expect_true(all(apply(starts, 2, sd) > 0))
  expect_error(sgld(m, tune = list(best = list())), "`tune` must be the result of tune_sgld()")
  expect_error(sgld(model_linear(mpg ~ wt + hp, data = mtcars), tune = tuned),
               "`tune` was made for another model")
  expect_error(sgld(m, tune = tuned, lr = "auto"), "give one of them")
})
