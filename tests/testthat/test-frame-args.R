# subset, weights, offset, na.action and cbind(events, nonevents) in the
# formula faces of model_linear() and model_logistic(), as glm() has them.

# a logistic data set with a count response and an offset
binom_data <- function(n = 60, seed = 11) {
  set.seed(seed)
  d <- data.frame(x = rnorm(n), g = factor(sample(c("a", "b"), n, TRUE)),
                  trials = sample(1:6, n, TRUE), t = runif(n, 0.5, 2))
  p <- plogis(-0.3 + 0.8 * d$x + 0.5 * (d$g == "b") + log(d$t))
  d$s <- rbinom(n, d$trials, p)
  d$f <- d$trials - d$s
  d$w <- sample(1:3, n, TRUE)
  d
}

# one 0/1 row per trial, each row repeated w times when weighted
expand_bernoulli <- function(d, weighted = FALSE) {
  reps <- if (weighted) d$w else rep(1, nrow(d))
  rows <- rep(seq_len(nrow(d)), d$trials * reps)
  out <- d[rows, ]
  out$y <- unlist(lapply(seq_len(nrow(d)), function(i)
    rep(c(rep(1, d$s[i]), rep(0, d$f[i])), reps[i])))
  out
}

test_that("gradients with weights, offsets and counts match finite differences", {
  d <- binom_data()
  set.seed(1)
  ml <- model_linear(x ~ g + t, data = d, weights = w, offset = log(t), prior = prior_nig())
  expect_lt(max(gradient_errors(ml, c(rnorm(3), log(0.7)))), 1e-6)
  for (sparse in c(FALSE, TRUE)) {
    mc <- model_logistic(cbind(s, f) ~ x + g, data = d, weights = w, offset = log(t),
                         sparse = sparse, prior = prior_normal(0, 10), prior_intercept = NULL)
    expect_lt(max(gradient_errors(mc, rnorm(3))), 1e-6)
    mb <- model_logistic(I(s > f) ~ x + g, data = d, offset = log(t), sparse = sparse, prior = prior_normal(0, 10), prior_intercept = NULL)
    expect_lt(max(gradient_errors(mb, rnorm(3))), 1e-6)
  }
})

test_that("integer case weights are replicated rows, in the likelihood and the exact posterior", {
  d <- small_data(80)
  d$w <- rep(1:4, 20)
  mw <- model_linear(y ~ x1 + g, data = d, weights = w, prior = prior_nig())
  mr <- model_linear(y ~ x1 + g, data = d[rep(seq_len(nrow(d)), d$w), ], prior = prior_nig())
  set.seed(2)
  for (k in 1:3) {
    w <- c(rnorm(4), log(runif(1, 0.2, 2)))
    a <- log_posterior(mw, w)
    b <- log_posterior(mr, w)
    expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
    expect_equal(a$grad_loglik, b$grad_loglik, tolerance = 1e-12)
  }
  ew <- linear_exact_posterior(mw)
  er <- linear_exact_posterior(mr)
  expect_equal(ew$mean, er$mean, tolerance = 1e-12)
  expect_equal(ew$sd, er$sd, tolerance = 1e-12)
})

test_that("SGLD on weighted rows samples the replicated rows' posterior", {
  d <- small_data(200)
  d$w <- rep(c(1, 3), 100)
  mw <- model_linear(y ~ x1, data = d, weights = w, prior = prior_nig())
  ex <- linear_exact_posterior(model_linear(y ~ x1, data = d[rep(seq_len(200), d$w), ], prior = prior_nig()))
  set.seed(3)
  fit <- expect_run_warnings(mala(mw, lr = 2e-4, iter = 40000, chains = 2), "acceptance")
  x <- as.matrix(fit)[, names(ex$mean)]   # the parameters (sigma is derived)
  ess <- coda::effectiveSize(coda::as.mcmc.list(fit))
  # posterior means within 4 Monte Carlo standard errors of the exact ones
  z <- (colMeans(x) - ex$mean) / (ex$sd / sqrt(ess))
  expect_true(all(abs(z) < 4), info = paste(format(z, digits = 3), collapse = ", "))
})

test_that("cbind(events, nonevents) is the expanded 0/1 data", {
  d <- binom_data()
  e <- expand_bernoulli(d)
  for (sparse in c(FALSE, TRUE)) {
    mc <- model_logistic(cbind(s, f) ~ x + g, data = d, sparse = sparse, prior = prior_normal(0, 10), prior_intercept = NULL)
    me <- model_logistic(y ~ x + g, data = e, sparse = sparse, prior = prior_normal(0, 10), prior_intercept = NULL)
    set.seed(4)
    for (k in 1:3) {
      w <- rnorm(3)
      expect_equal(log_posterior(mc, w)$loglik, log_posterior(me, w)$loglik, tolerance = 1e-12)
      expect_equal(log_posterior(mc, w)$grad_loglik, log_posterior(me, w)$grad_loglik,
                   tolerance = 1e-12)
    }
  }
  # with weights: each row's trials repeated w times
  mcw <- model_logistic(cbind(s, f) ~ x + g, data = d, weights = w, prior = prior_normal(0, 10), prior_intercept = NULL)
  mew <- model_logistic(y ~ x + g, data = expand_bernoulli(d, weighted = TRUE), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_equal(log_posterior(mcw, c(0.1, -0.4, 0.3))$loglik,
               log_posterior(mew, c(0.1, -0.4, 0.3))$loglik, tolerance = 1e-12)
  expect_error(model_logistic(cbind(s, f + 0.5) ~ x, data = d), "non-negative whole numbers")
})

test_that("offset and subset match glm() and lm() under a vague prior", {
  d <- binom_data(300)
  m <- model_logistic(cbind(s, f) ~ x + g, data = d, offset = log(t), subset = x > -1,
                      prior = prior_normal(0, 1e4), prior_intercept = NULL)
  ref <- glm(cbind(s, f) ~ x + g, family = binomial, data = d, offset = log(t),
             subset = x > -1, control = glm.control(epsilon = 1e-14, maxit = 100))
  # glm's estimate maximises the same likelihood: its score there is zero (to
  # rounding: the largest per-row term is of order 1)
  expect_lt(max(abs(log_posterior(m, coef(ref))$grad_loglik)), 1e-9)
  # and the posterior mode under the vague prior is the same point, to the
  # precision BFGS stops at
  expect_equal(posterior_mode(m)$mode, coef(ref), tolerance = 1e-5, ignore_attr = TRUE)
  expect_identical(nobs(sgd(m, lr = 1e-4, iter = 2)), sum(d$x > -1))
  ml <- model_linear(x ~ g + offset(0.5 * t), data = d, subset = trials > 2, weights = w,
                     prior = prior_nig(V = 1e8))
  ref <- lm(x ~ g + offset(0.5 * t), data = d, subset = trials > 2, weights = w)
  expect_equal(linear_exact_posterior(ml)$mu_n, coef(ref), tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("predictions add the offset of new data", {
  d <- binom_data()
  m <- model_logistic(cbind(s, f) ~ x, data = d, offset = log(t), prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(5)
  fit <- expect_run_warnings(sgld(m, lr = 1e-3, batch_size = 10, iter = 2000, thin = 4, chains = 1))
  W <- as.matrix(fit)
  new <- data.frame(x = c(0, 1, -1), t = c(1, 2, 0.5))
  eta <- cbind(1, new$x) %*% t(W) + log(new$t)
  # (predict() names its values by the rows; the values are checked here)
  expect_equal(predict(fit, new, type = "link"), rowMeans(eta), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(predict(fit, new), rowMeans(plogis(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(predict(fit, type = "link"),
               rowMeans(cbind(1, d$x) %*% t(W) + log(d$t)), tolerance = 1e-12,
               ignore_attr = TRUE)
  skip_if_not_installed("rstantools")
  expect_equal(rstantools::posterior_linpred(fit, newdata = new), t(eta), ignore_attr = TRUE)
  # log_lik sums to the log likelihood, counts and offset included
  ll <- rstantools::log_lik(fit)
  expect_equal(sum(ll[7, ]), log_posterior(m, W[7, ])$loglik, tolerance = 1e-10)
  yrep <- rstantools::posterior_predict(fit, ndraws = 20)
  expect_true(all(yrep <= rep(d$trials, each = 20)))
})

test_that("na.action and subset work as in glm(); bad arguments are named", {
  aq <- airquality
  m1 <- model_linear(Ozone ~ Wind + Temp, data = aq, subset = !is.na(Ozone) & !is.na(Wind), prior = prior_nig())
  expect_identical(m1$n, as.double(sum(!is.na(aq$Ozone))))
  expect_error(model_linear(Ozone ~ Solar.R, data = aq),
               "column 'Ozone' has missing values \\(first at row 5\\).*na.action = na.omit")
  m2 <- model_linear(Ozone ~ Solar.R, data = aq, na.action = na.omit, prior = prior_nig())
  expect_identical(m2$n, as.double(sum(complete.cases(aq[c("Ozone", "Solar.R")]))))
  m3 <- model_linear(Ozone ~ Solar.R, data = aq, na.action = "na.omit", prior = prior_nig())
  expect_identical(m3$n, m2$n)
  expect_error(model_linear(Ozone ~ Wind, data = aq, na.action = "na.drop"),
               "`na.action` must be na.fail, na.omit or na.exclude")
  expect_error(model_linear(mpg ~ wt, data = mtcars, weights = -cyl),
               "`weights` must be non-negative numbers")
  expect_error(model_linear(mpg ~ wt, data = mtcars, subset = cyl > 100),
               "`subset` leaves no rows")
  expect_error(model_linear(mpg ~ wt, data = mtcars, family = "gaussian"),
               "unknown argument: `family`")
  m4 <- model_linear(mpg ~ wt, data = mtcars, weights = cyl, prior = prior_nig())
  expect_identical(m4$obs_weight, as.double(mtcars$cyl))
})

test_that("models say which per-observation fields they carry", {
  expect_output(print(model_linear(mpg ~ wt, data = mtcars, weights = cyl, offset = hp / 100, prior = prior_nig())),
                "With case weights summing to 198, an offset")
  expect_output(print(model_logistic(cbind(s, f) ~ x, data = binom_data(), prior = prior_normal(0, 10), prior_intercept = NULL)), "binomial counts")
})
