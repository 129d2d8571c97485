# rstanarm's names and methods: `draws` beside `ndraws`, predict()'s
# intervals, pp_check(), prior_summary() and sigma for the linear model.

fit_lin <- local({
  set.seed(31)
  sgld(model_linear(y ~ x1 + g, data = small_data(200), prior = prior_nig()), chains = 2)
})
fit_log <- local({
  set.seed(32)
  sgld(model_logistic(type ~ glu + bmi, data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL), chains = 2)
})
new_rows <- small_data(200, seed = 4)[1:7, ]

test_that("the prediction methods take rstanarm's `draws` as `ndraws`, not both", {
  skip_if_not_installed("rstantools")
  same <- function(f, ...) {
    set.seed(5)
    a <- f(fit_lin, draws = 12, ...)
    set.seed(5)
    b <- f(fit_lin, ndraws = 12, ...)
    expect_identical(a, b)
    expect_error(f(fit_lin, draws = 12, ndraws = 12, ...),
                 "give `ndraws` or `draws` \\(rstanarm's name for it\\), not both")
    a
  }
  expect_identical(dim(same(rstantools::posterior_predict, newdata = new_rows)), c(12L, 7L))
  expect_identical(dim(same(rstantools::posterior_linpred)), c(12L, 200L))
  expect_identical(dim(same(rstantools::posterior_epred)), c(12L, 200L))
  expect_identical(dim(same(rstantools::log_lik)), c(12L, 200L))
  expect_identical(dim(same(rstantools::predictive_interval)), c(200L, 2L))
  expect_error(rstantools::posterior_predict(fit_lin, draws = 0), "`draws`")
  # more than the fit holds: the message names the argument that was given
  too_many <- nrow(as.matrix(fit_lin)) + 1
  expect_error(rstantools::posterior_predict(fit_lin, draws = too_many), "`draws`")
  expect_error(rstantools::log_lik(fit_lin, ndraws = too_many), "`ndraws`")
})

test_that("predict()'s intervals are quantiles of posterior_epred() and posterior_predict()", {
  skip_if_not_installed("rstantools")
  for (fit in list(fit_lin, fit_log)) {
    nd <- if (identical(fit, fit_lin)) new_rows else pima()[1:9, ]
    mu <- rstantools::posterior_epred(fit, newdata = nd)
    by_hand <- function(x, level) unname(t(apply(x, 2, quantile,
                                                 c((1 - level) / 2, (1 + level) / 2),
                                                 names = FALSE)))
    conf <- predict(fit, nd, interval = "confidence", level = 0.8)
    expect_identical(colnames(conf), c("fit", "lwr", "upr"))
    expect_identical(rownames(conf), colnames(mu))
    expect_equal(unname(conf[, "fit"]), unname(colMeans(mu)), tolerance = 1e-12)
    # the fit column is predict()'s posterior mean
    expect_equal(unname(conf[, "fit"]), unname(predict(fit, nd)), tolerance = 1e-10)
    expect_identical(unname(conf[, c("lwr", "upr")]), by_hand(mu, 0.8))
    # new observations: the same draws of posterior_predict() under the same seed
    set.seed(8)
    pred <- predict(fit, nd, interval = "prediction", ndraws = 300)
    set.seed(8)
    yrep <- rstantools::posterior_predict(fit, newdata = nd, ndraws = 300)
    expect_identical(unname(pred[, c("lwr", "upr")]), by_hand(yrep, 0.95))
    # the link scale
    eta <- rstantools::posterior_linpred(fit, newdata = nd)
    link <- predict(fit, nd, type = "link", interval = "confidence")
    expect_identical(unname(link[, c("lwr", "upr")]), by_hand(eta, 0.95))
    # se.fit: a list as predict.glm()'s
    se <- predict(fit, nd, se.fit = TRUE)
    expect_identical(names(se), c("fit", "se.fit", "residual.scale"))
    expect_equal(unname(se$se.fit), unname(apply(mu, 2, sd)), tolerance = 1e-12)
    expect_equal(unname(predict(fit, nd, type = "link", se.fit = TRUE)$se.fit),
                 unname(apply(eta, 2, sd)), tolerance = 1e-12)
  }
  expect_equal(predict(fit_lin, new_rows, se.fit = TRUE)$residual.scale,
               mean(sqrt(as.matrix(fit_lin)[, "sigma2"])))
  expect_identical(predict(fit_log, pima()[1:2, ], se.fit = TRUE)$residual.scale, 1)
  # wrong combinations are clear errors
  expect_error(predict(fit_log, interval = "confidence", type = "class"), "`type` = \"class\"")
  expect_error(predict(fit_lin, interval = "prediction", type = "link"),
               "`interval` = \"prediction\" is an interval of a new observation")
  expect_error(predict(fit_lin, interval = "confidence", draws = TRUE), "give one or the other")
  expect_error(predict(fit_lin, interval = "both"), "`interval`")
  expect_error(predict(fit_lin, interval = "confidence", level = 1.5), "`level`")
})

test_that("pp_check() returns bayesplot's ggplot of the data against replicates", {
  skip_if_not_installed("bayesplot")
  set.seed(9)
  p <- bayesplot::pp_check(fit_log)
  expect_s3_class(p, "ggplot")
  expect_s3_class(bayesplot::pp_check(fit_lin, plotfun = "stat", stat = "mean"), "ggplot")
  expect_error(bayesplot::pp_check(fit_lin, plotfun = "nothing"), "bayesplot has no ppc_nothing")
  expect_error(bayesplot::pp_check(fit_lin, ndraws = 0), "`ndraws`")
})

test_that("prior_summary() names each parameter's prior", {
  skip_if_not_installed("rstantools")
  p <- rstantools::prior_summary(fit_lin)
  expect_identical(p$parameter, c("(Intercept)", "x1", "gb", "gc", "sigma2"))
  expect_identical(p$prior[1], "normal(mean = 0, sd = 10 * sigma), given sigma2")
  expect_identical(p$prior[5], "inverse-gamma(shape = 1, rate = 1)")
  expect_output(print(p), "x1 +normal\\(mean = 0, sd = 10 \\* sigma\\)")
  m <- model_logistic(type ~ glu + bmi, data = pima(), prior = prior_laplace(0, 2),
                      prior_intercept = prior_normal(1, 5))
  expect_identical(rstantools::prior_summary(m)$prior,
                   c("normal(mean = 1, sd = 5) at centred predictors",
                     "laplace(location = 0, scale = 2)", "laplace(location = 0, scale = 2)"))
  nb <- model_negbin(y ~ x, data = data.frame(y = c(0, 3, 1, 7, 2), x = 1:5),
                     prior = prior_normal(0, 2.5), prior_overdispersion = 0.5)
  expect_identical(rstantools::prior_summary(nb)$prior,
                   c("normal(mean = 0, sd = 2.5) at centred predictors",
                     "normal(mean = 0, sd = 2.5)", "1/phi ~ half-normal(0, 0.5)"))
  expect_error(rstantools::prior_summary(model_mixture(mixture_data(20))),
               "prior_summary\\(\\) describes the priors of model_linear\\(\\)")
})

test_that("the linear model reports sigma beside sigma2", {
  x <- as.matrix(fit_lin)
  expect_identical(colnames(x), c("(Intercept)", "x1", "gb", "gc", "sigma2", "sigma"))
  expect_identical(x[, "sigma"], sqrt(x[, "sigma2"]))
  a <- as.array(fit_lin)
  expect_identical(dimnames(a)$parameter, colnames(x))
  expect_identical(a[, 2, "sigma"], sqrt(a[, 2, "sigma2"]))
  s <- summary(fit_lin)$statistics
  expect_identical(rownames(s), colnames(x))
  expect_equal(s["sigma", "mean"], mean(x[, "sigma"]), tolerance = 1e-12)
  expect_identical(s["sigma", "97.5%"], quantile(x[, "sigma"], 0.975, names = FALSE))
  expect_gt(s["sigma", "n_eff"], 10)
  # rstanarm's sigma(): the posterior median
  expect_identical(sigma(fit_lin), median(x[, "sigma"]))
  # rstanarm's coef(): one entry per column of the model matrix, no sigma2
  expect_identical(names(coef(fit_lin)), colnames(sgld:::design_matrix(fit_lin$model)))
  expect_identical(dim(vcov(fit_lin)), c(4L, 4L))
  if (requireNamespace("posterior", quietly = TRUE))
    expect_true("sigma" %in% posterior::variables(posterior::as_draws_df(fit_lin)))
  expect_error(sigma(fit_log), "sigma\\(\\) is the residual sd of a Gaussian model")
})
