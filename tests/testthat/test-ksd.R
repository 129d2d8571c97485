# The kernel Stein discrepancy (REFERENCE.md section 9) in C, against the
# formula written out in R.
ksd_direct <- function(x, b, c = 1, beta = -0.5) {
  N <- nrow(x)
  d <- ncol(x)
  s <- 0
  for (i in seq_len(N)) for (j in seq_len(N)) {
    r <- x[i, ] - x[j, ]
    u <- c^2 + sum(r^2)
    s <- s + sum(b[i, ] * b[j, ]) * u^beta - 2 * beta * sum(b[i, ] * r) * u^(beta - 1) +
      2 * beta * sum(b[j, ] * r) * u^(beta - 1) - 2 * beta * d * u^(beta - 1) -
      4 * beta * (beta - 1) * sum(r^2) * u^(beta - 2)
  }
  sqrt(s) / N
}

test_that("ksd() equals the formula written out in R", {
  set.seed(1641)
  x <- matrix(rnorm(36), 12)
  b <- -x + 0.3 * rnorm(36)
  expect_equal(ksd(x, scores = b), ksd_direct(x, b), tolerance = 1e-10)
  expect_equal(ksd(x, scores = b, c = 2, beta = -0.3), ksd_direct(x, b, 2, -0.3), tolerance = 1e-10)
  one <- matrix(rnorm(5), 5)
  expect_equal(ksd(one, scores = -one), ksd_direct(one, -one), tolerance = 1e-10)
  # with a model, the scores are the full-data gradients on the sampler's scale
  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  w <- cbind(37 + rnorm(6), -3.9 + rnorm(6, 0, 0.5), -0.03 + rnorm(6, 0, 0.01), log(6.5) + rnorm(6, 0, 0.2))
  g <- t(apply(w, 1, function(v) log_posterior(m, v)$grad_logpost))
  expect_equal(ksd(w, model = m, scale = "sampler"), ksd_direct(w, g), tolerance = 1e-10)
  u <- w
  u[, 4] <- exp(u[, 4])
  expect_equal(ksd(u, model = m), ksd_direct(w, g), tolerance = 1e-10)
})

test_that("ksd() ranks exact MALA below SGLD at lr 1e-6 below SGLD at lr 1e-5 on the handout", {
  m <- handout_model()
  set.seed(1642)
  exact <- mala(m, iter = 6000, burnin = 1000, chains = 1)
  set.seed(1643)
  small <- expect_run_warnings(sgld(m, lr = 1e-6, batch_size = 10, iter = 20000, chains = 1))
  set.seed(1643)
  large <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 20000, chains = 1))
  k <- c(ksd(exact), ksd(small), ksd(large))
  expect_true(k[1] < k[2] && k[2] < k[3])
  # and by wide margins: the SGLD runs are visibly wrong (sds 2 to 10 times too wide)
  expect_gt(k[2] / k[1], 5)
})

test_that("ksd() thins, pools or separates chains, and checks its arguments", {
  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  set.seed(1644)
  fit <- sgld(m, chains = 2)
  per <- ksd(fit, chains = "separate", max_draws = 500)
  expect_named(per, c("chain 1", "chain 2"))
  expect_true(all(per > 0))
  a <- as.array(fit, scale = "sampler")
  pooled <- rbind(a[, 1, ], a[, 2, ])
  expect_equal(ksd(fit, max_draws = 300), ksd(pooled, model = m, scale = "sampler", max_draws = 300))
  expect_error(ksd(fit, chains = "both"), "`chains` must be one of")
  expect_error(ksd(pooled), "`model` or `scores` must be given")
  expect_error(ksd(pooled, model = m, beta = -1), "`beta`")
  expect_error(ksd(pooled, model = m, c = 0), "`c`")
  expect_error(ksd(pooled[, 1:3], model = m), "must have 4 columns")
  expect_error(ksd(pooled, scores = pooled[, 1:3]), "dimensions of `x`")
})
