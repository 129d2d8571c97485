# Poisson regression (model_poisson()): the log likelihood against dpois(),
# gradients against finite differences, sgld(), mala() and bbb() at their
# defaults against exact references (rstan NUTS, data-raw/count-references.R;
# the mean-field optimum computed here), and the prediction methods.

insurance <- function() {
  model_poisson(Claims ~ District + Group + Age, data = MASS::Insurance, offset = log(Holders), prior = prior_normal(0, 10), prior_intercept = NULL)
}
warpbreaks_model <- function() model_poisson(breaks ~ wool * tension, data = datasets::warpbreaks, prior = prior_normal(0, 10), prior_intercept = NULL)

test_that("the log likelihood is dpois's and the log prior the normal's", {
  m <- insurance()
  expect_s3_class(m, "sgld_model_poisson")
  g <- glm(Claims ~ District + Group + Age + offset(log(Holders)), family = poisson,
           data = MASS::Insurance)
  lp <- log_posterior(m, coef(g))
  expect_equal(lp$loglik, as.numeric(logLik(g)), tolerance = 1e-12)
  expect_equal(lp$logprior, sum(dnorm(coef(g), 0, 10, log = TRUE)), tolerance = 1e-12)
  # the score is zero at glm's maximum
  expect_lt(max(abs(lp$grad_loglik)), 1e-6)
  # case weights count rows that many times
  d <- datasets::warpbreaks
  wt <- rep(1:3, length.out = nrow(d))
  mw <- model_poisson(breaks ~ wool + tension, data = d, weights = wt, prior = prior_normal(0, 10), prior_intercept = NULL)
  me <- model_poisson(breaks ~ wool + tension, data = d[rep(seq_len(nrow(d)), wt), ], prior = prior_normal(0, 10), prior_intercept = NULL)
  w <- c(3, -0.2, -0.3, -0.5)
  expect_equal(log_posterior(mw, w)$loglik, log_posterior(me, w)$loglik, tolerance = 1e-12)
})

test_that("gradients agree with finite differences", {
  set.seed(1)
  for (m in list(insurance(), warpbreaks_model())) {
    for (k in 1:3) expect_lt(max(gradient_errors(m, rnorm(m$d, 0, 0.2))), 1e-6)
  }
})

test_that("sgld(m) at its defaults is within 0.15 sd and 10% of NUTS on two data sets", {
  # measured (seed 1): Insurance 0.049 sd and 2.4%, warpbreaks 0.024 sd and 2.4%;
  # seeds 2 and 3 at most 0.049 sd and 3.1%
  for (case in list(list(m = insurance(), ref = "insurance"),
                    list(m = warpbreaks_model(), ref = "warpbreaks"))) {
    set.seed(1)
    fit <- sgld(case$m, chains = 1)
    err <- reference_errors(as.matrix(fit), count_reference(case$ref))
    expect_lt(err[["mean"]], 0.15)
    expect_lt(err[["sd"]], 0.10)
  }
})

test_that("mala(m) at its defaults matches NUTS", {
  # measured: 0.051 sd and 2.7%
  set.seed(2)
  fit <- mala(insurance(), chains = 1)
  err <- reference_errors(as.matrix(fit), count_reference("insurance"))
  expect_lt(err[["mean"]], 0.15)
  expect_lt(err[["sd"]], 0.10)
})

# The mean-field optimum, independently of the package: the ELBO in closed
# form (E exp(eta) = exp(a + v / 2) for eta ~ N(a, v)), maximised by BFGS.
poisson_meanfield_optimum <- function(X, y, off, s) {
  p <- ncol(X)
  negelbo <- function(th) {
    mu <- th[1:p]; sd <- exp(th[p + 1:p])
    a <- drop(X %*% mu) + off; v <- drop(X^2 %*% sd^2)
    -(sum(y * a - exp(a + v / 2) - lgamma(y + 1)) +
        sum(-(mu^2 + sd^2) / (2 * s^2)) + sum(log(sd)))
  }
  grad <- function(th) {
    mu <- th[1:p]; sd <- exp(th[p + 1:p])
    a <- drop(X %*% mu) + off; v <- drop(X^2 %*% sd^2)
    r <- exp(a + v / 2)
    g_mu <- drop(crossprod(X, y - r)) - mu / s^2
    g_sd <- -drop(crossprod(X^2, r)) * sd - sd / s^2 + 1 / sd
    -c(g_mu, g_sd * sd)
  }
  o <- optim(c(numeric(p), rep(-3, p)), negelbo, grad, method = "BFGS",
             control = list(maxit = 10000, reltol = 1e-15))
  list(mean = o$par[1:p], sd = exp(o$par[p + 1:p]), gradient = grad(o$par))
}

test_that("bbb(m) at its defaults reaches the mean-field optimum", {
  # exact expected log likelihoods (the model's expected_loglik): measured
  # errors below 1e-3 of the optimum's sds
  m <- insurance()
  X <- model.matrix(Claims ~ District + Group + Age, data = MASS::Insurance)
  opt <- poisson_meanfield_optimum(X, MASS::Insurance$Claims, log(MASS::Insurance$Holders), 10)
  expect_lt(max(abs(opt$gradient)), 1e-4)
  set.seed(3)
  fit <- suppressMessages(quietly_checked(bbb(m)))
  expect_lt(max(abs(fit$variational$mean[1, ] - opt$mean) / opt$sd), 0.01)
  expect_lt(max(abs(fit$variational$sd[1, ] / opt$sd - 1)), 0.005)
})

test_that("log_lik, predict, posterior_predict and loo follow from the draws", {
  skip_if_not_installed("rstantools")
  skip_if_not_installed("loo")
  m <- warpbreaks_model()
  set.seed(4)
  fit <- expect_run_warnings(sgld(m, iter = 2000, chains = 1), "ess")
  W <- as.matrix(fit, scale = "sampler")
  X <- model.matrix(breaks ~ wool * tension, data = datasets::warpbreaks)
  eta <- W %*% t(X)
  y <- datasets::warpbreaks$breaks
  ref <- matrix(dpois(rep(y, each = nrow(W)), exp(eta), log = TRUE), nrow(W))
  ll <- rstantools::log_lik(fit)
  expect_equal(ll, ref, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(rstantools::log_lik(fit, newdata = datasets::warpbreaks), ll, ignore_attr = TRUE)
  expect_equal(predict(fit), colMeans(exp(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(predict(fit, type = "link"), colMeans(eta), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(rstantools::posterior_epred(fit), exp(eta), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(fitted(fit), colMeans(exp(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(residuals(fit), y - colMeans(exp(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_error(predict(fit, type = "class"), "is for logistic models")
  expect_identical(family(fit)$family, "poisson")
  set.seed(5)
  yrep <- rstantools::posterior_predict(fit)
  expect_true(all(yrep >= 0 & yrep == round(yrep)))
  set.seed(5)
  expect_equal(yrep, matrix(rpois(length(eta), exp(eta)), nrow(eta)), ignore_attr = TRUE)
  # the offset enters predictions made from new data
  mi <- insurance()
  set.seed(6)
  fi <- sgld(mi, chains = 1)
  nd <- MASS::Insurance[1:5, ]
  eta_i <- as.matrix(fi, scale = "sampler") %*% t(model.matrix(Claims ~ District + Group + Age, data = nd)) +
    rep(log(nd$Holders), each = nrow(as.matrix(fi)))
  expect_equal(predict(fi, newdata = nd), colMeans(exp(eta_i)), tolerance = 1e-12,
               ignore_attr = TRUE)
  # (loo warns of a few Pareto k above 0.5 on these 54 rows)
  lo <- suppressWarnings(loo::loo(fit))
  r_eff <- loo::relative_eff(exp(ref), chain_id = sgld:::chain_of_draws(fit))
  expect_equal(lo$estimates, suppressWarnings(loo::loo(ref, r_eff = r_eff))$estimates)
})

test_that("bad input is a clear error", {
  d <- datasets::warpbreaks
  expect_error(model_poisson(breaks / 2 ~ wool, data = d), "counts, non-negative whole numbers")
  expect_error(model_poisson(I(-breaks) ~ wool, data = d), "non-negative whole numbers")
  expect_error(model_poisson(wool ~ tension, data = d), "must be counts")
  expect_error(model_poisson(breaks ~ wool, data = d, prior = prior_laplace()),
               "must be made by prior_normal\\(\\) for model_poisson")
  expect_error(model_poisson(cbind(1, d$tension == "M"), d$breaks[-1]), "`y`")
})

test_that("held-out rows keep their offsets, for log_lik(newdata) and the monitor", {
  m <- insurance()
  nd <- MASS::Insurance[60:64, ]
  held <- eval(quote(held_out_model(m, nd)), list(m = m, nd = nd), asNamespace("sgld"))
  w <- seq(-1, 1, length.out = m$d) / 10
  X <- model.matrix(Claims ~ District + Group + Age, data = nd)
  expect_equal(log_posterior(held, w)$loglik,
               sum(dpois(nd$Claims, exp(drop(X %*% w) + log(nd$Holders)), log = TRUE)),
               tolerance = 1e-12)
  set.seed(7)
  fit <- expect_run_warnings(sgld(m, lr = 1e-3, batch_size = 16, iter = 200,
                               monitor = monitor_every(100, newdata = nd), chains = 1))
  expect_true(all(is.finite(fit$monitor$test_loglik)))
})
