# model_custom(): the handout's linear model written in R functions against
# the built-in model_linear(), the numerical-gradient fallback, and the
# engine's use of the functions (batches, scales, samplers).

# The largest difference between two fits' draws relative to the draws' size.
max_rel_diff <- function(a, b) {
  x <- as.matrix(a, scale = "sampler")
  y <- as.matrix(b, scale = "sampler")
  expect_identical(dim(x), dim(y))
  max(abs(x - y) / pmax(1, abs(y)))
}

test_that("the R-function linear model gives the built-in model's draws for the same seed", {
  mc <- handout_custom()
  ml <- handout_model()
  # Same data, gradients equal up to summation order: the draws may differ
  # only by rounding, which these short runs do not amplify. Measured: at most
  # 1.5e-15 (pSGLD), relative to max(1, |draw|).
  tol <- 1e-12
  # (the samplers' short runs warn from their run checks, the optimisers' do not)
  same <- function(run, warns = TRUE) {
    ran <- if (warns) function(m) expect_run_warnings(run(m)) else run
    set.seed(41); a <- ran(mc)
    set.seed(41); b <- ran(ml)
    expect_lt(max_rel_diff(a, b), tol)
    expect_identical(a$kept, b$kept)
    a
  }
  fit <- same(function(m) sgld(m, lr = 1e-6, batch_size = 10, iter = 2000, burnin = 0, chains = 1))
  expect_identical(colnames(as.matrix(fit)), c("(Intercept)", "x", "sigma2"))
  expect_identical(colnames(as.matrix(fit, scale = "sampler")),
                   c("w_(Intercept)", "w_x", "w_sigma2"))
  same(function(m) sgld(m, lr = 1e-6, batch_size = 100, iter = 500, chains = 2, thin = 5,
                        threads = 2))
  same(function(m) psgld(m, lr = 1e-4, batch_size = 10, iter = 1000, chains = 1))
  same(function(m) sghmc(m, lr = 1e-8, batch_size = 10, iter = 1000, chains = 1))
  same(function(m) sgd(m, lr = 1e-5, batch_size = 10, iter = 500, optimizer = "adam"), FALSE)
  same(function(m) gd(m, lr = 1e-5, iter = 50), FALSE)
  same(function(m) sgld(m, lr = 1e-3, batch_size = 10, iter = 500,
                        precondition = diag(c(1e-4, 1e-4, 2e-4)), chains = 1))
  # control variates around one mode (BFGS, for the R functions, stops a few
  # 1e-6 short of the built-in model's Newton mode, which is not what is
  # compared here)
  mode <- posterior_mode(ml)$mode
  expect_lt(max(abs(posterior_mode(mc)$mode - mode) / abs(mode)), 1e-5)
  same(function(m) sgld(m, lr = 1e-6, batch_size = 10, iter = 500, control_variates = mode, chains = 1))
  same(function(m) sgld(m, lr = 1e-6, batch_size = 10, iter = 400,
                        diagnostics = diagnostics_every(100), monitor = monitor_every(100), chains = 1))
})

test_that("a continued R-function run gives the draws of one long run", {
  mc <- handout_custom(handout[1:500, ])
  set.seed(5)
  long <- expect_run_warnings(sgld(mc, lr = 1e-5, batch_size = 10, iter = 400, burnin = 0,
                                   chains = 1))
  set.seed(5)
  first <- expect_run_warnings(sgld(mc, lr = 1e-5, batch_size = 10, iter = 200, burnin = 0,
                                    chains = 1))
  second <- expect_run_warnings(sgld(mc, lr = 1e-5, batch_size = 10, iter = 200, burnin = 0,
                                     init = first, chains = 1))
  expect_identical(rbind(as.matrix(first), as.matrix(second)), as.matrix(long))
})

test_that("the gradient of the R-function linear model matches finite differences", {
  mc <- handout_custom()
  w <- c(0.05, 0.85, log(0.2))
  lp <- log_posterior(mc, w)
  fd <- central_difference(function(v) log_posterior(mc, v)$logpost, w)
  # measured 2e-9: the error of the finite difference itself
  expect_lt(max(abs(lp$grad_logpost - fd) / pmax(1, abs(fd))), 1e-7)
  # and the built-in model's log posterior, up to rounding
  ref <- log_posterior(handout_model(), w)
  expect_lt(abs(lp$logpost - ref$logpost) / abs(ref$logpost), 1e-13)
})

test_that("without a gradient, central differences of the density stand in for it", {
  f <- linear_custom_functions()
  analytic <- handout_custom()
  expect_warning(
    numerical <- handout_custom(grad_loglik = NULL),
    "no `grad_loglik`, so it is taken by central differences of `loglik`: 6 evaluations")
  expect_warning(handout_custom(grad_logprior = NULL),
                 "no `grad_logprior`.*6 evaluations of `logprior` per gradient")
  expect_output(print(numerical), "Numerical gradient of loglik")
  w <- c(0.05, 0.85, log(0.2))
  a <- log_posterior(analytic, w)
  b <- log_posterior(numerical, w)
  # truncation and rounding error of a central difference with a relative step
  # of 6e-6 on a log likelihood of size 1e4: measured 7e-10 relative
  expect_lt(max(abs(b$grad_loglik - a$grad_loglik) / pmax(1, abs(a$grad_loglik))), 1e-8)
  expect_gt(max(abs(b$grad_loglik - a$grad_loglik)), 0)    # it really is a different path
  # the sampler runs on it, close to the analytic draws over a short run
  # (measured 2e-12)
  set.seed(3)
  x <- expect_run_warnings(sgld(numerical, lr = 1e-6, batch_size = 10, iter = 300, burnin = 0,
                                chains = 1))
  set.seed(3)
  y <- expect_run_warnings(sgld(analytic, lr = 1e-6, batch_size = 10, iter = 300, burnin = 0,
                                chains = 1))
  expect_lt(max_rel_diff(x, y), 1e-9)
})

test_that("mala() on the R-function model reproduces the exact posterior", {
  mc <- handout_custom()
  ex <- linear_exact_posterior(handout_model())
  sd_sampler <- c(ex$sd[1:2], ex$sd[["sigma2"]] / ex$mean[["sigma2"]])
  set.seed(211)
  fit <- mala(mc, lr = 0.5, iter = 6000, burnin = 1000, thin = 5, init = ex$mean,
              precondition = diag(sd_sampler^2), chains = 1)
  expect_true(fit$acceptance > 0.4 && fit$acceptance < 0.95)
  x <- as.matrix(fit)
  ess <- coda::effectiveSize(fit$draws)
  # each posterior mean within 4 Monte Carlo standard errors of the exact one
  z <- (colMeans(x) - ex$mean) / (apply(x, 2, sd) / sqrt(ess))
  expect_true(all(abs(z) < 4), label = paste(format(z, digits = 3), collapse = ", "))
  cdf <- function(p) Vectorize(function(q)
    integrate(function(v) ex$density(v, p), ex$mean[[p]] - 15 * ex$sd[[p]], q)$value)
  for (p in colnames(x)) expect_gt(ks.test(x[, p], cdf(p))$p.value, 0.01)
})

test_that("the functions get the parameter vector and the selected rows, 1-based", {
  df <- data.frame(id = 1:50, x = rnorm(50), f = factor(rep(c("a", "b"), 25)))
  seen <- list()
  m <- model_custom(df, d = 1,
    grad_loglik = function(w, batch) {
      seen[[length(seen) + 1L]] <<- batch
      -nrow(batch) * w
    },
    grad_logprior = function(w) -w, loglik = function(w, batch) -0.5 * nrow(batch) * w^2,
    logprior = function(w) -0.5 * w^2)
  set.seed(1)
  fit <- expect_run_warnings(sgld(m, lr = 1e-3, batch_size = 7, iter = 20, chains = 1))
  expect_length(seen, 20)
  for (b in seen) {
    expect_s3_class(b, "data.frame")
    expect_identical(names(b), c("id", "x", "f"))
    expect_identical(nrow(b), 7L)
    expect_true(all(b$id >= 1 & b$id <= 50) && !anyDuplicated(b$id))
    expect_identical(b$x, df$x[b$id])
    expect_identical(levels(b$f), c("a", "b"))
  }
  # the full data, as given, for full-data evaluations
  seen <- list()
  log_posterior(m, 0.5)
  expect_identical(seen[[1]], df)
})

test_that("a Poisson regression without a transform recovers glm()'s estimates", {
  set.seed(9)
  x <- rnorm(400)
  d <- cbind(x = x, y = rpois(400, exp(0.5 + 0.3 * x)))
  m <- model_custom(d,
    grad_loglik = function(w, batch) {
      r <- batch[, "y"] - exp(w[1] + w[2] * batch[, "x"])
      c(sum(r), sum(r * batch[, "x"]))
    },
    loglik = function(w, batch) {
      eta <- w[1] + w[2] * batch[, "x"]
      sum(batch[, "y"] * eta - exp(eta) - lgamma(batch[, "y"] + 1))
    },
    grad_logprior = function(w) -w / 1e4, logprior = function(w) -sum(w^2) / 2e4,
    names = c("b0", "b1"))
  expect_identical(m$default_init, c(0, 0))
  expect_output(print(m), "400 data items, 2 parameters \\(b0, b1\\)")
  g <- glm(y ~ x, family = poisson, data = as.data.frame(d))
  mode <- posterior_mode(m)
  expect_lt(max(abs(mode$mode - coef(g))), 1e-4)
  set.seed(10)
  fit <- mala(m, lr = 2e-3, iter = 3000, burnin = 500, chains = 1)
  se <- sqrt(diag(vcov(g)))
  ess <- coda::effectiveSize(fit$draws)
  z <- (colMeans(as.matrix(fit)) - coef(g)) / (se / sqrt(ess))
  # the posterior mean and glm's estimate differ by O(1/n) besides Monte Carlo error
  expect_true(all(abs(z) < 5), label = paste(format(z, digits = 3), collapse = ", "))
  expect_lt(max(abs(apply(as.matrix(fit), 2, sd) / se - 1)), 0.25)
})

test_that("features that need the log densities say which function is missing", {
  f <- linear_custom_functions()
  m <- model_custom(handout_matrix(handout[1:200, ]), grad_loglik = f$grad_loglik,
                    grad_logprior = f$grad_logprior, logprior = f$logprior,
                    names = c("b0", "b1", "s2"), transform = log_transform, init = c(0, 0, 1))
  expect_error(mala(m, lr = 1e-5, chains = 1), "mala\\(\\) needs .*given no `loglik`\\.")
  expect_error(sgld(m, lr = 1e-5, diagnostics = diagnostics_every(10), chains = 1),
               "`diagnostics` needs .*no `loglik`")
  expect_error(sgld(m, lr = 1e-5, monitor = monitor_every(10), chains = 1), "`monitor` needs .*no `loglik`")
  expect_error(sgld(m, lr = 1e-5, control_variates = TRUE, chains = 1), "posterior_mode\\(\\) needs .*no `loglik`")
  expect_error(log_posterior(m, c(0, 0, 0)), "log_posterior\\(\\) needs .*no `loglik`")
  m2 <- model_custom(handout_matrix(handout[1:200, ]), grad_loglik = f$grad_loglik,
                     grad_logprior = f$grad_logprior, d = 3)
  expect_error(mala(m2, lr = 1e-5, chains = 1), "no `loglik` and `logprior`")
  # sampling and a given control-variate centre need only the gradients
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 100,
                                  control_variates = c(0, 1, 0.2), chains = 1))
  expect_identical(fit$status, "done")
  mc <- handout_custom(handout[1:200, ])
  expect_error(sgld(mc, lr = 1e-6, monitor = monitor_every(10, newdata = handout[1:5, ]), chains = 1),
               "`monitor`: held-out data \\(`newdata`\\) are not available for model_custom")
  fit <- expect_run_warnings(sgld(mc, lr = 1e-6, batch_size = 10, iter = 100, chains = 1))
  expect_error(predict(fit), "predict\\(\\) is not available for sgld_model_custom")
})

test_that("a transform maps draws and starting values between the two scales", {
  mc <- handout_custom(handout[1:300, ])
  expect_equal(mc$default_init, c(0, 0, var(handout$y[1:300])))
  set.seed(2)
  fit <- expect_run_warnings(sgld(mc, lr = 1e-6, batch_size = 10, iter = 50,
                                  init = c(0.1, 0.2, 0.5), burnin = 0, chains = 1))
  expect_equal(as.matrix(fit)[, 3], exp(as.matrix(fit, scale = "sampler")[, 3]))
  expect_error(sgld(mc, lr = 1e-6, init = c(0, 0, -1), chains = 1),
               "`init`: row 1 is outside the parameter space \\(transform\\$to_sampler gives NaN at position 3\\)")
  # without init, the sampler starts at w = 0
  m0 <- handout_custom(handout[1:300, ], init = NULL)
  expect_equal(m0$default_init, c(0, 0, 1))
})
