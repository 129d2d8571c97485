fit2 <- local({
  set.seed(10)
  # (a short run: its R-hat and ESS warn here and again in summary() and print())
  expect_run_warnings(sgld(handout_model(), lr = lr_poly(a = 2e-6, b = 100, gamma = 0.55),
                           batch_size = 100, iter = 4000, burnin = 1000, thin = 3, chains = 2))
})

test_that("draws are an mcmc.list on the user's scale with named columns", {
  expect_s3_class(fit2$draws, "mcmc.list")
  expect_identical(coda::varnames(fit2$draws), c("(Intercept)", "x", "sigma2"))
  expect_true(all(as.matrix(fit2)[, "sigma2"] > 0))
  expect_equal(as.matrix(fit2, scale = "sampler")[, "log_sigma2"],
               log(as.matrix(fit2)[, "sigma2"]))
  expect_identical(coda::as.mcmc.list(fit2), fit2$draws)
  expect_error(coda::as.mcmc(fit2), "use as.mcmc.list")
})

test_that("as.matrix and as.array arrange the same draws", {
  K <- nrow(fit2$draws[[1]])
  a <- as.array(fit2)
  # the linear model's sigma is derived from sigma2 and reported beside it
  expect_identical(dim(a), c(K, 2L, 4L))
  expect_identical(dimnames(a)$parameter, c("(Intercept)", "x", "sigma2", "sigma"))
  expect_identical(as.matrix(fit2), rbind(a[, 1, ], a[, 2, ]), ignore_attr = TRUE)
  expect_identical(dim(as.matrix(fit2)), c(2L * K, 4L))
})

test_that("summary gives plain and step-weighted means, sd, quantiles, ESS and R-hat", {
  s <- expect_run_warnings(summary(fit2))$statistics
  expect_identical(colnames(s), c("mean", "weighted_mean", "sd", "2.5%", "25%", "50%",
                                  "75%", "97.5%", "mcse", "n_eff", "Rhat"))
  x <- as.matrix(fit2)
  w <- as.vector(fit2$lr)
  expect_equal(s[, "mean"], colMeans(x))
  expect_equal(s[, "weighted_mean"], colSums(x * w) / sum(w))
  expect_false(isTRUE(all.equal(s[, "mean"], s[, "weighted_mean"])))
  expect_equal(s[, "sd"], apply(x, 2, sd))
  expect_equal(s[1:3, "n_eff"], coda::effectiveSize(fit2$draws))
  expect_equal(s[, "mcse"], s[, "sd"] / sqrt(s[, "n_eff"]))
  expect_equal(s["sigma", "n_eff"],
               coda::effectiveSize(coda::mcmc.list(lapply(fit2$draws, function(ch)
                 coda::mcmc(sqrt(unclass(ch)[, "sigma2"]))))), ignore_attr = TRUE)
  # coef() and vcov() hold the coefficients, as rstanarm's (sigma2 is auxiliary)
  expect_equal(coef(fit2), s[1:2, "mean"])
  expect_equal(coef(fit2, weighted = TRUE), s[1:2, "weighted_mean"])
  expect_equal(vcov(fit2), cov(x[, 1:2]))
  expect_output(print(expect_run_warnings(summary(fit2))), "weighted_mean")
  expect_output(expect_run_warnings(print(fit2)), "SGLD on sgld_model_linear: 2 chains")
})

test_that("one chain: no R-hat, as.mcmc works, plot draws traces", {
  set.seed(1)
  f <- expect_run_warnings(sgld(handout_model(), lr = 1e-7, batch_size = 10, iter = 200,
                                chains = 1))
  expect_false("Rhat" %in% colnames(expect_run_warnings(summary(f))$statistics))
  expect_s3_class(coda::as.mcmc(f), "mcmc")
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(f), f)
})

test_that("the fit records its settings and starting values", {
  expect_identical(fit2$settings$chains, 2)
  expect_identical(fit2$settings$thin, 3)
  expect_equal(unname(fit2$settings$init[1, ]), c(0, 0, var(sgld::handout$y)))
  expect_identical(fit2$status, c("done", "done"))
  expect_identical(dim(fit2$last), c(2L, 3L))
})
