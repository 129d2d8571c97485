test_that("full-batch gradient descent converges to the closed-form posterior mode", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  fit <- gd(m, lr = 1e-5, iter = 3000, init = c(1.1, -2, 1))
  w <- as.matrix(fit, scale = "sampler")
  w_last <- w[nrow(w), ]
  expect_lt(max(abs(w_last - ex$mode) / abs(ex$mode)), 1e-6)
  # coef() of an optimiser is its final iterate's coefficients (sigma2 is
  # auxiliary, as in rstanarm), on the user's scale
  expect_equal(unname(coef(fit)), unname(ex$mode[1:2]), tolerance = 1e-6)
  expect_equal(unname(colMeans(fit$last)), unname(c(ex$mode[1:2], exp(ex$mode[3]))),
               tolerance = 1e-6)
})

test_that("with a vague prior gradient descent matches lm()", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig(V = 1e10))
  fit <- gd(m, lr = 1e-5, iter = 3000)
  expect_equal(unname(coef(fit)[1:2]), unname(coef(lm(y ~ x, sgld::handout))),
               tolerance = 1e-4)
  expect_lt(max(abs(coef(fit)[1:2] - coef(lm(y ~ x, sgld::handout)))), 1e-4)
})

test_that("sgd() with the full batch is gd(), and sgd() keeps the whole trajectory", {
  m <- handout_model()
  a <- gd(m, lr = 1e-5, iter = 200)
  set.seed(3)
  b <- sgd(m, lr = 1e-5, batch_size = m$n, iter = 200)
  expect_identical(as.matrix(a), as.matrix(b))
  set.seed(3)
  s <- sgd(m, lr = 1e-5, batch_size = 10, iter = 1000, init = c(1.1, -2, 1))
  expect_identical(dim(as.matrix(s)), c(1000L, 4L))   # and sigma, from sigma2
  expect_identical(coda::mcpar(s$draws[[1]]), c(1, 1000, 1))
  # minibatch SGD from the handout's start ends near the least-squares fit
  expect_lt(max(abs(coef(s)[1:2] - coef(lm(y ~ x, sgld::handout)))), 0.1)
})
