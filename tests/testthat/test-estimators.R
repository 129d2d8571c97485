# A small fixed chain, whose estimates are computed by hand.
fixed_fit <- function() {
  set.seed(141)
  fit <- expect_run_warnings(sgld(handout_model(), lr = lr_poly(a = 1e-6, b = 1, gamma = 0.6), batch_size = 10,
                                  iter = 12, burnin = 6, thin = 2, chains = 2))
  fit
}

test_that("plain and step-weighted means, variances and expectations by hand", {
  fit <- fixed_fit()
  x <- rbind(unclass(fit$draws[[1]]), unclass(fit$draws[[2]]))
  eta <- c(fit$lr[, 1], fit$lr[, 2])
  expect_equal(eta, rep(1e-6 * (1 + c(8, 10, 12))^-0.6, 2))
  w <- eta / sum(eta)
  for (j in 1:3) {
    expect_equal(posterior_mean(fit)[[j]], sum(w * x[, j]))
    expect_equal(posterior_mean(fit, weighted = FALSE)[[j]], mean(x[, j]))
    expect_equal(posterior_var(fit)[[j]], sum(w * (x[, j] - sum(w * x[, j]))^2))
    expect_equal(posterior_var(fit, weighted = FALSE)[[j]], mean((x[, j] - mean(x[, j]))^2))
  }
  e <- posterior_expectation(fit, function(v) c(a = v[["x"]]^2, b = v[["sigma2"]] * 2))
  expect_equal(e, c(a = sum(w * x[, 2]^2), b = sum(w * 2 * x[, 3])))
  expect_equal(posterior_expectation(fit, function(v) v[["x"]] > 0, weighted = FALSE),
               mean(x[, 2] > 0))
  # coef() holds the coefficients only (rstanarm's shape), posterior_mean() every parameter
  expect_equal(coef(fit, weighted = TRUE), posterior_mean(fit)[c("(Intercept)", "x")])
})

test_that("estimators check their arguments", {
  fit <- fixed_fit()
  expect_error(posterior_expectation(fit, "mean"), "`fun` must be a function")
  expect_error(posterior_expectation(list(), mean), "`fit` must be an sgld_fit")
  expect_error(posterior_mean(fit, weighted = NA), "`weighted` must be TRUE or FALSE")
  grows <- local({ calls <- 0; function(v) { calls <<- calls + 1; seq_len(min(calls, 2)) } })
  expect_error(posterior_expectation(fit, grows), "`fun` must return numbers of the same length")
})
