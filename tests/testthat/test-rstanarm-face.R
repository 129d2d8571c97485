# rstanarm's shapes: coef() of the coefficients, sigma(), vcov(), bayes_R2(),
# loo_R2(), names; the generics available with library(sgld) alone; loo()
# computed in C equal to loo::loo() on the same matrix.

face_fit <- local({
  set.seed(47)
  d <- MASS::Pima.tr
  rownames(d) <- paste0("woman", seq_len(nrow(d)))
  list(data = d,
       gaussian = sgld(glu ~ bmi + age + type, data = d),
       binomial = sgld(type ~ glu + bmi, data = d, family = binomial()))
})

test_that("coef() has one entry per model-matrix column; sigma() and vcov() as rstanarm", {
  fit <- face_fit$gaussian
  X <- model.matrix(glu ~ bmi + age + type, face_fit$data)
  expect_identical(names(coef(fit)), colnames(X))
  expect_length(drop(X %*% coef(fit)), nrow(X))
  expect_equal(coef(fit), colMeans(as.matrix(fit)[, colnames(X)]))
  expect_identical(dimnames(vcov(fit)), list(colnames(X), colnames(X)))
  expect_identical(sigma(fit), median(sqrt(as.matrix(fit)[, "sigma2"])))
  expect_identical(names(fitted(fit)), rownames(face_fit$data))
  expect_identical(names(residuals(fit)), rownames(face_fit$data))
  expect_identical(names(predict(fit)), rownames(face_fit$data))
})

test_that("bayes_R2() draws lie in [0, 1] and follow rstanarm's definition", {
  for (fit in face_fit[c("gaussian", "binomial")]) {
    r2 <- bayes_R2(fit)
    expect_length(r2, nrow(as.matrix(fit)))
    expect_true(all(r2 >= 0 & r2 <= 1))
  }
  # rstanarm's formula by hand: var(mu) / (var(mu) + sigma^2), draw by draw
  fit <- face_fit$gaussian
  mu <- posterior_epred(fit)
  s2 <- as.matrix(fit)[, "sigma2"]
  v <- apply(mu, 1, var)
  expect_equal(bayes_R2(fit), v / (v + s2))
  # against lm()'s R-squared: the posterior median near it
  expect_lt(abs(median(bayes_R2(fit)) -
                summary(lm(glu ~ bmi + age + type, face_fit$data))$r.squared), 0.05)
  mu <- posterior_epred(face_fit$binomial)
  v <- apply(mu, 1, var)
  expect_equal(bayes_R2(face_fit$binomial), v / (v + rowMeans(mu * (1 - mu))))
  mix <- expect_run_warnings(sgld(model_mixture(mixture_data(50)), lr = 1e-3, iter = 20, chains = 1))
  expect_error(bayes_R2(mix), "available for fits of regression models")
})

test_that("loo_R2() gives values in [-1, 1] a little below bayes_R2()", {
  set.seed(4)
  r2 <- loo_R2(face_fit$gaussian)
  expect_length(r2, nrow(as.matrix(face_fit$gaussian)))
  expect_true(all(r2 >= -1 & r2 <= 1))
  expect_lt(median(r2), median(bayes_R2(face_fit$gaussian)))
  expect_gt(median(r2), median(bayes_R2(face_fit$gaussian)) - 0.1)
})

test_that("loo() in C equals loo::loo() on the same log-likelihood matrix", {
  for (fit in face_fit[c("gaussian", "binomial")]) {
    ll <- log_lik(fit)
    chain <- rep(seq_along(fit$draws), each = nrow(fit$draws[[1]]))
    ref <- loo::loo(ll, r_eff = loo::relative_eff(exp(ll), chain_id = chain))
    ours <- loo(fit)
    expect_s3_class(ours, "psis_loo")
    expect_equal(ours$estimates, ref$estimates, tolerance = 1e-10)
    expect_equal(ours$pointwise, ref$pointwise, tolerance = 1e-10, ignore_attr = TRUE)
    expect_equal(ours$diagnostics, ref$diagnostics, tolerance = 1e-10, ignore_attr = TRUE)
    expect_identical(attr(ours, "dims"), attr(ref, "dims"))
    expect_output(print(ours), "elpd_loo")
  }
  # the relative efficiencies alone, on draws with autocorrelation and ties
  set.seed(5)
  S <- 400
  x <- apply(matrix(rnorm(S * 30), S), 2, function(e) stats::filter(e, 0.7, "recursive"))
  ll <- -abs(x) - 1
  ll[1:20, 3] <- ll[1, 3]   # repeated draws, as a rejecting sampler gives
  chain <- rep(1:4, each = S / 4)
  r <- loo::relative_eff(exp(ll), chain_id = chain)
  ours <- sgld:::fast_psis_loo(ll, chain)
  expect_equal(unname(ours$pointwise[, "r_eff"]), r, tolerance = 1e-10)
  ref <- suppressWarnings(loo::loo(ll, r_eff = r))
  expect_equal(unname(ours$pointwise[, "elpd_loo"]), ref$pointwise[, "elpd_loo"],
               tolerance = 1e-10)
  expect_equal(unname(ours$pointwise[, "influence_pareto_k"]), ref$diagnostics$pareto_k,
               tolerance = 1e-10)
})

test_that("with only library(sgld) attached, rstanarm's generics work", {
  skip_if_not_installed("callr")
  out <- callr::r(function() {
    library(sgld)
    set.seed(1)
    fit <- sgld(mpg ~ wt + hp, data = mtcars, chains = 2)
    list(attached = search(), ll = dim(log_lik(fit)), pp = dim(posterior_predict(fit)),
         ep = dim(posterior_epred(fit)), lp = dim(posterior_linpred(fit)),
         pi = dim(predictive_interval(fit)), ps = class(prior_summary(fit)),
         r2 = length(bayes_R2(fit)), loo = class(loo(fit)), waic = class(waic(fit)),
         loo_r2 = length(loo_R2(fit)))
  })
  expect_false(any(c("package:rstantools", "package:loo") %in% out$attached))
  expect_identical(out$ll, c(2000L, 32L))
  expect_identical(out$pp, out$ll)
  expect_identical(out$ep, out$ll)
  expect_identical(out$lp, out$ll)
  expect_identical(out$pi, c(32L, 2L))
  expect_identical(out$r2, 2000L)
  expect_identical(out$loo_r2, 2000L)
  expect_true("psis_loo" %in% out$loo)
  expect_true("waic" %in% out$waic)
})
