# The learning rate of every iteration is recorded with the draws, so a
# gradient-descent run with thin = 1 shows the schedule the engine used.
etas <- function(lr, iter) {
  fit <- suppressWarnings(sgd(model_linear(y ~ x1, data = small_data()), lr = lr,
                              batch_size = 10, iter = iter))
  fit$lr[, 1]
}

test_that("a bare number is a constant schedule", {
  expect_identical(etas(1e-4, 50), rep(1e-4, 50))
  expect_identical(etas(lr_constant(1e-4), 50), rep(1e-4, 50))
})

test_that("lr_poly follows a (b + t)^-gamma", {
  expect_equal(etas(lr_poly(a = 0.01, b = 3, gamma = 0.55), 200),
               0.01 * (3 + 1:200)^-0.55, tolerance = 1e-14)
  expect_equal(etas(lr_poly(a = 0.01, b = 3, gamma = 0.55, floor = 0.003), 200),
               pmax(0.003, 0.01 * (3 + 1:200)^-0.55), tolerance = 1e-14)
})

test_that("lr_range runs from start at t = 1 to end at t = T", {
  e <- etas(lr_range(start = 1e-3, end = 1e-5, gamma = 0.55), 5000)
  expect_equal(e[1], 1e-3, tolerance = 1e-12)
  expect_equal(e[5000], 1e-5, tolerance = 1e-12)
  expect_true(all(diff(e) < 0))
})

test_that("lr_piecewise is constant, decays, then holds", {
  e <- etas(lr_piecewise(C0 = 1e-4, T0 = 30, T1 = 60, s = 0.51), 100)
  expect_identical(e[1:30], rep(1e-4, 30))
  expect_equal(e[31:60], 1e-4 * (31:60 - 30)^-0.51, tolerance = 1e-14)
  expect_equal(e[61:100], rep(1e-4 * 30^-0.51, 40), tolerance = 1e-14)
})

test_that("schedules check their arguments", {
  expect_error(lr_constant(-1), "`eta` must be greater than 0")
  expect_error(lr_constant(NA), "`eta` must be a single finite number")
  expect_error(lr_poly(a = 1, b = -1), "`b` must be at least 0")
  expect_warning(lr_poly(a = 1, gamma = 0.4), "Robbins-Monro")
  expect_warning(lr_poly(a = 1, gamma = 1.5), "Robbins-Monro")
  expect_error(lr_range(start = 1e-5, end = 1e-3), "`end` must be smaller than `start`")
  expect_error(lr_piecewise(C0 = 1, T0 = 10, T1 = 5), "`T1` must be greater than `T0`")
  expect_error(lr_piecewise(C0 = 1, T0 = 1.5, T1 = 5), "`T0` must be a single whole number")
  expect_output(print(lr_range(0.01, 1e-4)), "from 0.01 at t = 1 to 0.0001 at the last", fixed = TRUE)
})

test_that("lr_exp decays exponentially between its ends, and lr_values agrees with the engine", {
  e <- etas(lr_exp(1e-3, 1e-7), 101)
  expect_equal(e, 1e-3 * (1e-4)^((0:100) / 100), tolerance = 1e-13)
  expect_equal(lr_values(lr_exp(1e-3, 1e-7), 1:101), e)
  expect_equal(lr_values(lr_range(1e-3, 1e-5), c(1, 5000)), c(1e-3, 1e-5))
  expect_error(lr_exp(1e-7, 1e-3), "`end` must be smaller than `start`")
  expect_error(lr_values(1e-3, 0), "`t` must be whole numbers from 1")
})
