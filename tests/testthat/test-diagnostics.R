test_that("the sampling threshold falls from above 1 to below 0.1 as the step shrinks", {
  m <- handout_model()
  set.seed(121)
  fit <- expect_run_warnings(sgld(m, lr = lr_exp(1e-5, 1e-9), batch_size = 10, iter = 1e5,
                                  diagnostics = diagnostics_every(2000), chains = 1))
  d <- fit$diagnostics
  expect_identical(nrow(d), 50L)
  expect_gt(mean(d$alpha[1:5]), 1)
  expect_lt(mean(d$alpha[46:50]), 0.1)
  expect_gt(cor(log(d$lr), log(d$alpha), method = "spearman"), 0.9)
  # alpha is the ratio of the two noise variances at temperature 1
  expect_equal(d$alpha, d$var_gradient / d$var_injected)
  # the traces cross: gradient noise dominates first, injected noise last
  expect_true(d$var_gradient[1] > d$var_injected[1])
  expect_true(d$var_gradient[50] < d$var_injected[50])

  set.seed(122)
  mm <- model_mixture(mixture_data(100))
  fm <- expect_run_warnings(sgld(mm, lr = lr_exp(0.005, 5e-8), batch_size = 1, iter = 2e5,
                                 diagnostics = diagnostics_every(5000), chains = 1))
  a <- fm$diagnostics$alpha
  expect_gt(mean(a[1:4]), 1)
  expect_lt(mean(a[37:40]), 0.1)
})

test_that("alpha matches a direct computation of the score covariance", {
  set.seed(123)
  x <- mixture_data(60)
  mm <- model_mixture(x)
  fit <- expect_run_warnings(sgld(mm, lr = 1e-3, batch_size = 6, iter = 40, burnin = 0,
                                  diagnostics = diagnostics_every(40), chains = 1))
  w <- as.matrix(fit)[40, ]
  # the diagnostic is taken before the 40th step, at the state after step 39
  w39 <- as.matrix(fit)[39, ]
  prior_grad <- log_posterior(mm, w39)$grad_logprior
  scores <- t(vapply(x, function(v) log_posterior(model_mixture(v), w39)$grad_loglik +
                       prior_grad / 60, numeric(2)))
  # model_mixture(v) for one item has its own prior, so use the likelihood part only
  V <- cov(scores) * (59 / 60)
  lambda <- max(eigen(V, symmetric = TRUE)$values)
  d <- fit$diagnostics
  expect_equal(d$alpha, 1e-3 * 60^2 * lambda / (2 * 6), tolerance = 1e-6)
  expect_equal(d$var_injected, 2e-3)
})

test_that("the rejection probability grows with the step size", {
  set.seed(124)
  mm <- model_mixture(mixture_data(100))
  fit <- expect_run_warnings(sgld(mm, lr = lr_exp(0.005, 5e-9), batch_size = 1, iter = 1e5,
                                  diagnostics = diagnostics_every(500), chains = 1))
  d <- fit$diagnostics
  bins <- cut(log10(d$lr), 4)
  r <- tapply(d$rejection, bins, mean)
  expect_true(all(diff(r) > 0), info = format(r))
  expect_true(all(d$rejection >= 0 & d$rejection <= 1))
})

test_that("diagnostics leave the draws unchanged", {
  m <- handout_model()
  set.seed(125)
  a <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 3000, chains = 1))
  set.seed(125)
  b <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 3000, diagnostics = diagnostics_every(500), chains = 1))
  expect_identical(as.matrix(a), as.matrix(b))
  expect_null(a$diagnostics)
  expect_identical(nrow(b$diagnostics), 6L)
  expect_error(sgld(m, lr = 1e-7, iter = 10, diagnostics = 5, chains = 1), "`diagnostics` must be NULL or made by diagnostics_every")
  expect_error(diagnostics_every(0), "`every` must be a whole number between 1")
})
