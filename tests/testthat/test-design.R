# The checks of a design matrix shared by the regression models (R/design.R).

test_that("a column whose squares overflow is an error naming it, in either face", {
  set.seed(1)
  X <- cbind(`(Intercept)` = 1, a = rnorm(50), b = rnorm(50))
  y <- rbinom(50, 1, 0.5)
  big <- X
  big[, "a"] <- big[, "a"] * 1e300
  expect_error(model_logistic(big, y),
               "column 'a' holds values so large \\(up to [0-9.]+e\\+300\\) that the sum of their squares overflows.*Rescale it")
  d <- data.frame(y = rnorm(50), a = X[, "a"] * 1e200, b = X[, "b"] * 1e250)
  expect_error(model_linear(y ~ a + b, data = d), "columns 'a', 'b' hold values so large")
  # large but within range: no error, and the rank is read as before
  d$a <- X[, "a"] * 1e150
  d$b <- X[, "b"]
  expect_silent(model_linear(y ~ a + b, data = d, prior = prior_nig()))
  d$b <- d$a * 3
  expect_warning(model_linear(y ~ a + b, data = d, prior = prior_nig()), "rank deficient \\(rank 2 with 3 columns\\): 'b'")
})
