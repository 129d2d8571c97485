test_that("value clipping bounds every coordinate of every step, and is counted", {
  m <- handout_model()
  fit <- gd(m, lr = 1e-5, iter = 1000, init = c(1.1, -2, 1), clip = clip_value(1000))
  w <- rbind(c(1.1, -2, 0), as.matrix(fit, scale = "sampler"))
  expect_true(all(abs(diff(w)) <= 1e-5 * 1000 * (1 + 1e-12)))
  # far from the mode the gradient is huge, so clipping fired at first, then stopped
  expect_gt(fit$clipped, 0)
  expect_lt(fit$clipped, 1000)
  expect_output(print(fit), "Gradient clipped in")
})

test_that("norm clipping bounds the length of every step", {
  m <- handout_model()
  fit <- gd(m, lr = 1e-5, iter = 300, init = c(1.1, -2, 1), clip = clip_norm(500))
  w <- rbind(c(1.1, -2, 0), as.matrix(fit, scale = "sampler"))
  step <- sqrt(rowSums(diff(w)^2))
  expect_true(all(step <= 1e-5 * 500 * (1 + 1e-12)))
  expect_equal(max(step), 1e-5 * 500)
  expect_gt(fit$clipped, 0)
})

test_that("a threshold never reached leaves the run unchanged", {
  m <- handout_model()
  set.seed(1)
  a <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 500, clip = clip_norm(1e12), chains = 1))
  set.seed(1)
  b <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 500, chains = 1))
  expect_identical(a$clipped, 0)
  expect_identical(as.matrix(a), as.matrix(b))
})
