# sgld(model) and mala(model) with every setting left to lr = "auto" (issue 16).
# The bar: every posterior mean within 0.15 posterior sd and every sd within
# 10% of the exact posterior. Each check first makes sure the Monte Carlo
# error leaves the bar its power: three Monte Carlo standard errors must fit
# inside it, so a sampler off by the bar's size fails.

accuracy <- function(fit, mean, sd) {
  # the parameters (as.matrix() of a linear model adds sigma after them)
  x <- as.matrix(fit)[, seq_along(mean), drop = FALSE]
  z <- sweep(x, 2, colMeans(x))
  list(mean = abs(colMeans(x) - mean) / sd, sd = abs(apply(x, 2, sd) / sd - 1),
       ess = summary(fit)$statistics[seq_along(mean), "n_eff"],
       kurtosis = colMeans(z^4) / colMeans(z^2)^2)
}

expect_accurate <- function(fit, mean, sd, label) {
  a <- accuracy(fit, mean, sd)
  # a mean from E effective draws has error sd / sqrt(E); a sd has relative
  # error sqrt((kurtosis - 1) / (4 E)), sqrt(1 / (2 E)) for a normal marginal
  # and more for the heavy right tail of sigma2 (the sample kurtosis is used)
  expect_true(all(3 / sqrt(a$ess) < 0.15), label = paste(label, "has the power for means"))
  expect_true(all(3 * sqrt((a$kurtosis - 1) / (4 * a$ess)) < 0.10),
              label = paste(label, "has the power for sds"))
  expect_true(all(a$mean < 0.15), label = paste(label, "means within 0.15 sd"))
  expect_true(all(a$sd < 0.10), label = paste(label, "sds within 10%"))
}

test_that("sgld(m) alone is accurate on the handout data and on unscaled mtcars", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(1601)
  fit <- sgld(m, chains = 1)
  expect_accurate(fit, ex$mean, ex$sd, "handout")
  expect_true(fit$auto$control_variates)
  expect_output(print(fit), "lr = \"auto\"")
  # close to Gaussian: no warm-up, the run length is the plan's
  expect_lt(fit$auto$laplace_departure, 1)
  expect_null(fit$auto$warmup_spread)
  expect_null(fit$auto$coordinates)

  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  ex <- linear_exact_posterior(m)
  set.seed(1602)
  fit <- sgld(m, chains = 1)
  expect_accurate(fit, ex$mean, ex$sd, "mtcars")
  expect_identical(fit$settings$batch_size, 32)
})

test_that("sgld(m) and mala(m) alone are accurate on Pima (7 unscaled predictors)", {
  skip_if_not_installed("MASS")
  m <- model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(1603)
  ref <- mala(m, iter = 100000, burnin = 1000, thin = 5, chains = 1)
  expect_true(ref$acceptance > 0.45 && ref$acceptance < 0.85)
  r <- as.matrix(ref)
  # the reference's own error is a small part of the bar
  expect_true(all(summary(ref)$statistics[, "n_eff"] > 8000))
  set.seed(1604)
  fit <- sgld(m, chains = 1)
  expect_accurate(fit, colMeans(r), apply(r, 2, sd), "Pima sgld")
  set.seed(1605)
  fit <- mala(m, chains = 1)
  expect_accurate(fit, colMeans(r), apply(r, 2, sd), "Pima mala")
  # the glm intercept is -9.77 (unscaled glucose, age, ...): the quoted failures
  # of fixed learning rates gave -312 to 0.01
  expect_lt(abs(coef(fit)[["(Intercept)"]] - coef(stats::glm(
    type ~ npreg + glu + bp + skin + bmi + ped + age, binomial, MASS::Pima.tr))[[1]]), 0.5)
})

test_that("sgld(m) alone is accurate on a simulated logistic regression with n = 10^6", {
  skip_on_cran()
  set.seed(1606)
  n <- 1e6
  d <- 20
  X <- cbind(1, matrix(rnorm(n * (d - 1)), n))
  y <- rbinom(n, 1, plogis(drop(X %*% rnorm(d, 0, 0.3))))
  m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
  rm(X, y)
  # The reference is the Laplace approximation: at n = 10^6 the posterior's
  # skewness, and with it the gap between mean and mode, is of order
  # n^(-1/2) = 0.001 posterior sd, and its sds differ from the Laplace ones
  # by a relative O(1 / n): far below the bar's 0.15 sd and 10%.
  pm <- posterior_mode(m, covariance = TRUE)
  set.seed(1607)
  fit <- sgld(m, chains = 1)
  expect_true(fit$auto$control_variates)
  expect_lt(fit$settings$batch_size, 2000)
  expect_accurate(fit, pm$mode, sqrt(diag(pm$covariance)), "n = 10^6")
})

test_that("several chains start over-dispersed and user settings override the automatic ones", {
  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  set.seed(1608)
  fit <- sgld(m, chains = 4)
  init <- fit$settings$init
  expect_true(fit$auto$overdispersed)
  sd_user <- linear_exact_posterior(m)$sd
  # the starts spread over about 2 posterior sds, not one point
  expect_true(all(apply(init[, 1:3], 2, sd) > 0.5 * sd_user[1:3]))
  s <- summary(fit)$statistics
  expect_true(all(s[, "Rhat"] < 1.05))
  set.seed(1609)
  # (a short run: its ESS rightly warns)
  fit <- quietly_checked(sgld(m, iter = 3000, burnin = 500, thin = 2, batch_size = 8,
                               init = c(37, -4, 0, 7), chains = 1))
  expect_identical(fit$settings$iter, 3000)
  expect_identical(fit$settings$batch_size, 8)
  expect_identical(fit$settings$burnin, 500)
  expect_identical(fit$settings$thin, 2)
  expect_false(fit$auto$overdispersed)
  expect_true(fit$auto$control_variates)
})

test_that("a given lr behaves exactly as before lr had a default", {
  m <- handout_model()
  # (short runs from the default start: the checks rightly warn)
  set.seed(1610)
  a <- quietly_checked(sgld(m, lr = 1e-6, batch_size = 10, iter = 400, chains = 1))
  set.seed(1610)
  b <- quietly_checked(sgld(m, lr = 1e-6, batch_size = 10, iter = 400, burnin = 200, chains = 1))
  expect_identical(as.matrix(a), as.matrix(b))
  expect_identical(a$settings$iter, 10000 / 25)
  expect_null(a$auto)
  set.seed(1611)
  a <- quietly_checked(mala(m, lr = 1e-5, iter = 300, chains = 1))
  expect_identical(a$settings$burnin, 150)
  set.seed(1612)
  # 10,000 iterations, half burn-in; without `thin`, 1,000 of the 5,000 stored
  expect_identical(nrow(as.matrix(quietly_checked(sgld(m, lr = 1e-6, chains = 1)))), 1000L)
})

test_that("lr = \"auto\" says why it cannot be used", {
  m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
  expect_error(sgld(m, precondition = "rmsprop", chains = 1), "fixed matrix")
  expect_error(sgld(model_mixture(mixture_data(50)), chains = 1), "has several modes. Give `lr` yourself")
  expect_error(mala(model_ica(matrix(rnorm(40), 20)), chains = 1), "has several modes")
  expect_error(psgld(m, chains = 1), "psgld\\(\\) needs a learning rate `lr`.*sgld\\(model\\) chooses")
  expect_error(sghmc(m, chains = 1), "sghmc\\(\\) needs a learning rate")
  expect_error(sgd(m), "posterior_mode\\(model\\) finds the mode")
  expect_error(gd(m), "gd\\(\\) needs a learning rate")
})

test_that("sgld(m) alone is accurate on a nearly separated regression, by Metropolis-adjusted steps", {
  # helper-auto.R: 1,300 rows, predictors on scales 1 to 10^4, one the ratio
  # of two others and nearly separating the classes. Its Laplace
  # approximation is far off (income's coefficient: mode -0.9, posterior
  # mean -8.3 with sd 2.8); the unadjusted steps ran 380,000 iterations to
  # mean errors of 5.4 sd with only Stein's warning, whose advice was to
  # leave `lr` out
  skip_on_cran()
  m <- nearly_separated_model()
  # 2,020,000 MALA iterations, smallest ESS 7,149 (data-raw/nearly-separated-reference.R)
  ref <- readRDS(test_path("nearly-separated-reference.rds"))
  set.seed(1656)
  res <- with_warnings(sgld(m, chains = 1))
  fit <- res$value
  expect_identical(res$warnings, character())
  expect_identical(fit$auto$strategy, "mala")
  expect_identical(fit$method, "mala")
  expect_gt(fit$auto$laplace_departure, 1e3)
  expect_output(print(fit), "Metropolis-adjusted")
  expect_accurate(fit, ref$mean, ref$sd, "nearly separated")
  # a milder version (k = 300) is far from Gaussian but stays with the
  # unadjusted steps; an `iter` shorter than their planned burn-in (3,801
  # here) keeps sgld()'s default burn-in, half of it
  m <- nearly_separated_model(k = 300)
  set.seed(1657)
  fit <- quietly_checked(sgld(m, iter = 2000, chains = 1))
  expect_identical(fit$auto$strategy, "langevin")
  expect_identical(fit$settings$burnin, 1000)
  expect_gt(fit$auto$laplace_departure, 1)
  expect_lt(fit$auto$laplace_departure, 1e3)
})

test_that("sgld(m) alone draws rare levels with events of one class one at a time", {
  m <- rare_levels_model()
  # 2,000,000 MALA iterations, confirmed by NUTS (data-raw/rare-levels-reference.R)
  ref <- readRDS(test_path("rare-levels-reference.rds"))
  set.seed(1661)
  fit <- sgld(m, chains = 1)
  # far from Gaussian along the levels with no events (h, i) or only events
  # (j), close to it along the rest: those three are drawn by slice sampling
  # and the rest take the step of a near-Gaussian posterior (0.25, not 0.1)
  expect_gt(fit$auto$laplace_departure, 1)
  expect_identical(fit$auto$strategy, "langevin")
  expect_identical(fit$auto$coordinates, c("grouph", "groupi", "groupj"))
  expect_equal(fit$auto$lr, 0.25)
  expect_null(fit$auto$warmup_spread)
  expect_output(print(fit), "grouph, groupi, groupj")
  expect_accurate(fit, ref$mean, ref$sd, "rare levels")
  # the three levels' skewness is the posterior's, not the Gaussian's
  x <- as.matrix(fit)[, c("grouph", "groupi", "groupj")]
  skew <- colMeans(sweep(x, 2, colMeans(x))^3) / apply(x, 2, sd)^3
  expect_true(all(abs(skew) > 0.5))
  expect_equal(sign(skew), c(grouph = -1, groupi = -1, groupj = 1))
})

# At the default priors the rare levels' prior sds grow with the rows
# (autoscaling: 2.5 / sd of an indicator with 3-12 rows in 10,000, 96-241),
# and with them the departure, beyond the 100 up to which coordinate updates
# were measured first; they are still used, as the levels and the rest are
# nearly independent (R/auto.R: auto_coord_rho2_far), and the run is checked
# against stan_glm() at its defaults (data-raw/rare-levels-defaults-reference.R).
test_that("sgld(m) draws rare levels alone beyond departure 100 at the default priors", {
  ref <- readRDS(test_path("rare-levels-defaults-reference.rds"))
  m <- model_logistic(ref$formula, data = rare_levels_data(10000))
  set.seed(5151)
  fit <- sgld(m, chains = 1)
  expect_gt(fit$auto$laplace_departure, sgld:::auto_coord_departure)
  expect_identical(fit$auto$strategy, "langevin")
  expect_identical(fit$auto$coordinates, c("grouph", "groupi", "groupj"))
  expect_equal(fit$auto$lr, 0.25)
  expect_accurate(fit, ref$mean, ref$sd, "rare levels at the default priors")
})

test_that("sgld(m) alone is accurate on Adult (a9a design)", {
  # about 15 s of CPU (15,400 full-data steps, see bench/defaults.md), run
  # everywhere but on CRAN
  skip_on_cran()
  d <- sgld::adult[sgld::adult$set == "train", ]
  m <- expect_run_warnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL), "design")
  # 150,000 MALA iterations (data-raw/adult-reference.R)
  ref <- readRDS(test_path("adult-reference.rds"))
  set.seed(1654)
  fit <- sgld(m, chains = 1)
  # far from Gaussian along six rare levels with no or one event (1-51
  # rows): they are drawn one at a time on their own rows, and the rest
  # takes the step of a near-Gaussian posterior, not the small one
  expect_gt(fit$auto$laplace_departure, 1)
  expect_setequal(fit$auto$coordinates,
                  c("workclass=Never-worked", "workclass=Without-pay", "education=Preschool",
                    "native_country=Holand-Netherlands", "native_country=Honduras",
                    "native_country=Outlying-US(Guam-USVI-etc)"))
  expect_equal(fit$auto$lr, 0.25)
  expect_output(print(fit), "slice\\s+sampling")
  expect_accurate(fit, ref$mean, ref$sd, "Adult")
})
