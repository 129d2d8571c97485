# tune_sgld(): pilot runs scored by KSD at equal cost (issue 16).

test_that("tune_sgld() on Pima returns settings whose run is accurate, reproducibly", {
  skip_if_not_installed("MASS")
  m <- model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = MASS::Pima.tr)
  set.seed(1651)
  tuned <- tune_sgld(m, step = c(0.01, 0.1, 0.25, 0.5), iter = 1000)
  set.seed(1651)
  again <- tune_sgld(m, step = c(0.01, 0.1, 0.25, 0.5), iter = 1000)
  expect_identical(tuned$table, again$table)
  expect_true(all(diff(tuned$table$score[is.finite(tuned$table$score)]) >= 0))
  # with the predictors on their own scales, the unpreconditioned rows lose
  expect_identical(tuned$table$precondition[1], "laplace")
  expect_output(print(tuned), "Best: lr = ")
  pdf(NULL)
  expect_identical(plot(tuned), tuned)
  dev.off()
  set.seed(1652)
  ref <- as.matrix(mala(m, iter = 100000, burnin = 1000, thin = 5))
  set.seed(1653)
  fit <- expect_no_warning(do.call(sgld, c(list(m), tuned$best)))
  x <- as.matrix(fit)
  ess <- summary(fit)$statistics[, "ess"]
  expect_true(all(3 / sqrt(ess) < 0.10))
  expect_true(all(abs(colMeans(x) - colMeans(ref)) / apply(ref, 2, sd) < 0.15))
  expect_true(all(abs(apply(x, 2, sd) / apply(ref, 2, sd) - 1) < 0.10))
})

test_that("tune_sgld() checks its arguments", {
  m <- model_linear(mpg ~ wt + hp, data = mtcars)
  expect_error(tune_sgld(m, step = 3), "`step` must be numbers between 0 and 2")
  expect_error(tune_sgld(m, batch_size = 0.5), "`batch_size` must be whole numbers")
  expect_error(tune_sgld(m, precondition = "rmsprop"), "`precondition` must hold")
  expect_error(tune_sgld(m, control_variates = NA), "`control_variates` must hold")
  expect_error(tune_sgld(m, iter = 5), "`iter`")
})
