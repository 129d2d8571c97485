# Bayes by Backprop (bbb()): at its defaults against the mean-field and
# full-rank optima computed independently of the package (helper-vi.R), the
# linear oracle, the check of every fit (k-hat and importance sampling),
# divergence, the unbiasedness of the stochastic estimators, the engine's
# shared machinery and bad input. The expected log likelihoods the default
# uses for regressions are checked in test-vi-expected.R, local
# reparameterisation in test-vi-local.R.

# q's largest errors against an optimum: means in the optimum's sds, sds as ratios
vi_errors <- function(fit, opt, chain = 1) {
  c(mean = max(abs(fit$variational$mean[chain, ] - opt$mean) / opt$sd),
    sd = max(abs(fit$variational$sd[chain, ] / opt$sd - 1)))
}

quiet <- function(expr) suppressMessages(quietly_checked(expr))

test_that("bbb(m) at its defaults reaches the mean-field optimum (Pima.tr, handout, correlated)", {
  # The acceptance bar is 0.1 of q's sds and 5%. With the expected log
  # likelihoods of these regressions the gradient is exact and the run ends
  # when a part moves q by less than 1e-4 of its sds: measured errors below
  # 5e-4 sd and 5e-5 in the sds, so the bounds here are 0.01 and 0.5%.
  pm <- pima_natural()
  cl <- correlated_logistic()
  h <- sgld::handout
  cases <- list(
    list(m = pm$model, opt = logistic_optimum(pm)),
    list(m = cl$model, opt = logistic_optimum(cl)),
    list(m = model_linear(y ~ x, data = h, prior = prior_nig()),
         opt = meanfield_linear_optimum(cbind(1, h$x), h$y, c(0, 0), diag(100, 2), 1, 1)))
  for (case in cases) {
    expect_lt(max(abs(case$opt$gradient)), 1e-8)
    set.seed(1)
    fit <- quiet(bbb(case$m))
    expect_true(fit$vi$converged)
    err <- vi_errors(fit, case$opt)
    expect_lt(err[["mean"]], 0.01)
    expect_lt(err[["sd"]], 0.005)
    # the exact ELBO at q, and no higher than the optimum's (the reference's
    # constant left out: compare with the package's own at the optimum)
    expect_equal(fit$elbo$se, 0)
  }
})

test_that("bbb(m) at its defaults reaches the mean-field optimum on Adult (a9a design)", {
  skip_on_cran()   # the mode search on 32,561 x 124 takes about 8 s
  opt <- readRDS(test_path("vi-adult-optimum.rds"))   # data-raw/vi-adult-optimum.R
  d <- sgld::adult[sgld::adult$set == "train", ]
  m <- expect_run_warnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)),
                                       adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL), "design")
  set.seed(1)
  fit <- quiet(bbb(m))
  expect_true(fit$vi$converged)
  # q's sds range from 0.017 (intercept: 1 / 500 of its posterior sd) to 6
  err <- vi_errors(fit, opt)
  expect_lt(err[["mean"]], 0.01)
  expect_lt(err[["sd"]], 0.005)
  expect_gt(fit$khat$khat, 0.7)
})

test_that("full rank at its defaults reaches the full-rank optimum (Pima.tr, correlated)", {
  # Stochastic gradients here, averaged over the last three quarters of the
  # run, which ends when the batch means put the average's Monte Carlo
  # error below 0.02 of q's sds (0.005 in the log sds): measured errors at
  # most 0.008 sd, 0.5% in the sds and 0.013 in the correlations over
  # three seeds each. Bounds: the acceptance bar, 5 times the tolerance.
  for (ex in list(pima_natural(), correlated_logistic())) {
    opt <- logistic_optimum(ex, "fullrank")
    expect_lt(max(abs(opt$gradient)), 1e-6)
    set.seed(2)
    fit <- quiet(bbb(ex$model, family = "fullrank"))
    expect_true(fit$vi$converged)
    err <- vi_errors(fit, opt)
    expect_lt(err[["mean"]], 0.1)
    expect_lt(err[["sd"]], 0.05)
    expect_lt(max(abs(cov2cor(fit$variational$cov[[1]]) - cov2cor(opt$cov))), 0.05)
    # and a full-rank q is close to these near-Gaussian posteriors
    expect_lt(fit$khat$khat, 0.7)
  }
})

test_that("the linear mean-field oracle: exact means, sds 1 / sqrt(Lambda_jj)", {
  # n = 20,000, three predictors correlated 0.9: the mean-field sds of the
  # slopes are 0.38 of their marginal sds (1 / sqrt(VIF), VIF = 6.8). The optimum in closed form
  # (helper-vi.R) has the exact posterior means and, given E_q[1/sigma2],
  # the sds 1 / sqrt(Lambda_jj) of the precision of beta.
  set.seed(31)
  n <- 20000
  X <- matrix(rnorm(n * 3), n, 3) %*% chol(matrix(0.9, 3, 3) + diag(0.1, 3))
  d <- data.frame(X, y = drop(X %*% c(0.5, -0.3, 0.2)) + rnorm(n))
  m <- model_linear(y ~ X1 + X2 + X3, data = d, prior = prior_nig())
  opt <- meanfield_linear_optimum(cbind(1, X), d$y, rep(0, 4), diag(100, 4), 1, 1)
  ex <- linear_exact_posterior(m)
  expect_equal(opt$mean[1:4], unname(ex$mu_n), tolerance = 1e-8)
  prec <- solve(ex$V_n) * exp(-opt$mean[5] + opt$sd[5]^2 / 2)
  expect_equal(opt$sd[1:4], unname(1 / sqrt(diag(prec))), tolerance = 1e-8)
  expect_lt(max(opt$sd[2:4] / ex$sd[2:4]), 0.4)
  set.seed(3)
  fit <- quiet(bbb(m))
  err <- vi_errors(fit, opt)
  expect_lt(err[["mean"]], 0.05)
  expect_lt(err[["sd"]], 0.05)
  # measured: 2e-5 and 3e-6
  expect_lt(err[["mean"]], 0.005)
})

test_that("every fit prints its k-hat; no warning on the handout model", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  for (seed in 1:3) {
    set.seed(seed)
    res <- with_warnings(bbb(m))
    expect_length(res$warnings, 0)
    fit <- res$value
    # the importance ratios are nearly constant: q is the posterior, whatever
    # the tail shape of 1,000 of them (k-hat 0.13-0.72 measured)
    expect_lt(fit$khat$log_ratio_sd, 0.1)
  }
  out <- paste(capture.output(print(fit)), collapse = " ")
  expect_match(out, "Pareto k-hat \\(per chain\\)")
  expect_match(out, "nearly\\s+constant")
  expect_match(out, "started\\s+at\\s+the\\s+Laplace\\s+approximation")
  expect_match(out, "converged")
})

test_that("the check warns on separated data and on a funnel-shaped posterior", {
  # completely separated: the posterior of the slope is skewed and its
  # Gaussian approximation too narrow; importance sampling put q's sds at
  # 0.70-0.93 of the corrected ones over four seeds (k-hat 0.28-0.66)
  set.seed(1)
  x <- c(rnorm(20, -1.5), rnorm(20, 1.5))
  sep <- model_logistic(y ~ x, data = data.frame(x, y = as.integer(x > 0)), prior = prior_normal(0, 10), prior_intercept = NULL)
  # four observations of a regression with unknown variance: beta's scale
  # follows sigma, whose posterior is wide, the geometry of Neal's funnel
  set.seed(14)
  d <- data.frame(x = rnorm(4))
  d$y <- 1 + d$x + rnorm(4)
  funnel <- model_linear(y ~ x, data = d, prior = prior_nig())
  for (m in list(sep, funnel)) for (seed in 1:2) {
    set.seed(seed)
    res <- with_warnings(suppressMessages(bbb(m)))
    hit <- grepl(paste0("(Pareto k-hat of the importance ratios is .*above 0.7|",
                        "importance sampling of q's draws .*further from this posterior)"),
                 res$warnings)
    expect_true(any(hit))
    expect_true(any(grepl("Run sgld\\(m\\)", res$warnings[hit])))
  }
})

test_that("bbb(m, lr = 1e10) warns and keeps the last finite q", {
  pm <- pima_natural()
  set.seed(1)
  res <- with_warnings(bbb(pm$model, lr = 1e10))
  fit <- res$value
  expect_s3_class(fit, c("sgld_vi", "sgld_fit"))
  expect_true(any(grepl("diverged at iteration 1", res$warnings)))
  expect_identical(fit$status, "diverged")
  # the last finite q: the Laplace approximation it started from
  lap <- posterior_mode(pm$model, covariance = TRUE)
  expect_equal(unname(fit$variational$mean[1, ]), unname(lap$sampler), tolerance = 1e-8)
  expect_equal(unname(fit$variational$sd[1, ]), unname(1 / sqrt(diag(solve(lap$covariance)))),
               tolerance = 1e-6)
  expect_true(all(is.finite(as.matrix(fit))))
  expect_true(is.finite(fit$elbo$elbo))
  expect_output(print(fit), "Stopped early: chain 1 diverged; q is its last finite iterate")
})

# ------------------------------------------- the stochastic estimators --

# The exact ELBO (up to its constant) of q = N(mu, L L') by tensor
# Gauss-Hermite quadrature over the full-data log joint
elbo_quadrature <- function(model, mu, L, k = 8) {
  gh <- gauss_hermite(k)
  d <- length(mu)
  grid <- as.matrix(expand.grid(rep(list(seq_len(k)), d)))
  Z <- matrix(gh$x[grid], ncol = d)
  wt <- apply(matrix(gh$w[grid], ncol = d), 1, prod)
  W <- sweep(Z %*% t(L), 2, mu, "+")
  lp <- apply(W, 1, function(w) log_posterior(model, w)$logpost)
  sum(wt * lp) + sum(log(abs(diag(L))))
}

# One iteration of gradient ascent at learning rate 1e-4 moves theta by
# 1e-4 times the estimate; each chain is an independent draw (its own eps
# and batch). None of the estimates may be clipped (gradient_vi.c).
engine_gradients <- function(model, mu, scale, batch_size, chains, ...) {
  fit <- bbb(model, lr = 1e-4, iter = 1, batch_size = batch_size, optimizer = "sgd",
             init = sgld:::to_user_scale(model, matrix(mu, 1))[1, ], init_scale = scale,
             chains = chains, draws = 1, ...)
  expect_true(all(fit$clipped == 0) && all(fit$status == "done"))
  theta0 <- c(mu, fit$vi$plan$gradient$opts$scale_init)
  list(G = t(vi_theta_of(fit) - theta0) / 1e-4, plan = fit$vi$plan)
}

# means of `reps` x 1000 estimates against the finite differences of the
# exact ELBO as a function of theta, times the metric; all 2d within 4
# standard errors, and the entropy's part alone many standard errors away
expect_unbiased <- function(model, mu, sd, batch_size, reps = 4, ...) {
  set.seed(11)
  runs <- lapply(seq_len(reps), function(r) engine_gradients(model, mu, sd, batch_size, 1000, ...))
  G <- do.call(rbind, lapply(runs, `[[`, "G"))
  opts <- runs[[1]]$plan$gradient$opts
  d <- length(mu)
  f <- function(th) elbo_quadrature(model, th[seq_len(d)], diag(exp(th[d + seq_len(d)]), d))
  th <- c(mu, log(sd))
  fd <- central_difference(f, th, h = 1e-4)
  if (!is.null(opts$factor)) {   # the Laplace metric (gradient_vi.c)
    S <- tcrossprod(opts$factor)
    fd <- c(S %*% fd[seq_len(d)], fd[d + seq_len(d)] * 0.5 / pmax(1, opts$curvature * sd^2))
  }
  se <- apply(G, 2, sd) / sqrt(nrow(G))
  expect_lt(max(abs((colMeans(G) - fd) / se)), 4)
  invisible(list(z = (colMeans(G) - fd) / se, se = se, fd = fd))
}

test_that("Bayes by Backprop's estimates are unbiased for the ELBO's gradient", {
  d <- small_data(n = 200)
  m <- model_linear(y ~ x1 + x2, data = d, prior = prior_nig())
  mu <- c(0.9, 0.4, -0.2, log(0.6))
  sd <- c(0.08, 0.06, 0.07, 0.15)
  # at one draw of w per minibatch (Bayes by Backprop proper), in the
  # model's coordinates
  r <- expect_unbiased(m, mu, sd, batch_size = 20, laplace = FALSE, local = FALSE)
  # a check with teeth: the entropy's gradient alone (1 per log sd) is many
  # standard errors
  expect_gt(min(1 / r$se[5:8]), 5)
  lg <- model_logistic(type ~ glu + bmi, data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_unbiased(lg, c(-0.8, 1.0, 0.6), c(0.25, 0.3, 0.2), batch_size = 10, laplace = FALSE,
                  local = FALSE)
  # in the Laplace coordinates, with the Laplace approximation's gradient as
  # a control variate: unbiased as well (half a posterior sd from the mode)
  for (model in list(m, lg)) {
    lap <- posterior_mode(model, covariance = TRUE)
    at <- unname(lap$sampler + 0.5 * sqrt(diag(lap$covariance)))
    scale <- unname(0.8 / sqrt(diag(solve(lap$covariance))))
    expect_unbiased(model, at, scale, batch_size = 20, local = FALSE)
  }
})

test_that("the control variate removes the noise of eps for a Gaussian posterior", {
  # the handout's linear model on full data: the log joint is nearly
  # quadratic, so with the Laplace approximation's gradient as control
  # variate the mean-field estimate is nearly exact
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  lap <- posterior_mode(m, covariance = TRUE)
  mu <- unname(lap$sampler)
  sd <- unname(1 / sqrt(diag(solve(lap$covariance))))
  set.seed(4)
  with_cv <- engine_gradients(m, mu, sd, m$n, 200, local = FALSE)$G
  without <- engine_gradients(m, mu, sd, m$n, 200, local = FALSE, laplace = FALSE)$G
  # measured: the scales' gradient sd 1.4 without, 0.004 with (in the
  # metric, halved)
  expect_lt(max(apply(with_cv[, 4:6], 2, sd)), 0.05)
  expect_gt(min(apply(without[, 4:6], 2, sd)), 0.5)
})

test_that("full-rank estimates are unbiased, in the Laplace coordinates too", {
  lg <- model_logistic(type ~ glu + bmi, data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  lap <- posterior_mode(lg, covariance = TRUE)
  # half a posterior sd from the mode, q a little narrower and rotated
  mu <- unname(lap$sampler + 0.5 * sqrt(diag(lap$covariance)))
  S <- 0.7 * unname(lap$covariance) + diag(0.1 * diag(lap$covariance))
  L <- t(chol(S))   # q's factor; in the Laplace coordinates M = C^-1 L
  set.seed(12)
  for (laplace in c(FALSE, TRUE)) {
    G <- do.call(rbind, lapply(1:4, function(r)
      engine_gradients(lg, mu, S, 50, 1000, family = "fullrank", laplace = laplace)$G))
    fit <- bbb(lg, lr = 1e-4, iter = 1, batch_size = 50, optimizer = "sgd", family = "fullrank",
               init = mu, init_scale = S, draws = 1, laplace = laplace)
    C <- fit$vi$plan$gradient$opts$factor
    if (is.null(C)) C <- diag(3)
    M <- solve(C, L)
    # theta = (mu, by columns log M_jj then M below it)
    th <- c(mu, unlist(lapply(1:3, function(j) c(log(M[j, j]), M[seq_len(3 - j) + j, j]))))
    expect_equal(unname(th[-(1:3)]), fit$vi$plan$gradient$opts$scale_init, tolerance = 1e-12)
    unpack <- function(th) {
      Mx <- matrix(0, 3, 3)
      at <- 3
      for (j in 1:3) {
        col <- th[at + seq_len(4 - j)]
        Mx[j:3, j] <- c(exp(col[1]), col[-1])
        at <- at + 4 - j
      }
      C %*% Mx
    }
    f <- function(t) elbo_quadrature(lg, t[1:3], unpack(t))
    fd <- central_difference(f, th, h = 1e-4)
    if (laplace) {
      diag_at <- 3 + c(1, 4, 6)
      fd[1:3] <- tcrossprod(C) %*% fd[1:3]
      fd[diag_at] <- fd[diag_at] * 0.5 / pmax(1, diag(M)^2)
    }
    se <- apply(G, 2, sd) / sqrt(nrow(G))
    expect_lt(max(abs((colMeans(G) - fd) / se)), 4)
  }
})

test_that("samples = K averages K estimates on one minibatch", {
  d <- small_data(n = 200)
  m <- model_linear(y ~ x1 + x2, data = d, prior = prior_nig())
  mu <- c(0.9, 0.4, -0.2, log(0.6))
  sd <- c(0.08, 0.06, 0.07, 0.15)
  set.seed(3)
  g1 <- engine_gradients(m, mu, sd, 200, 1000, laplace = FALSE, local = FALSE)$G
  g8 <- engine_gradients(m, mu, sd, 200, 1000, laplace = FALSE, local = FALSE, samples = 8)$G
  # full batches: only eps varies, so 8 draws cut the variance 8-fold. The
  # log of a ratio of sample variances has sd sqrt((k1 - 1) / N + (k8 - 1) / N)
  # for kurtoses k (g eps is far from normal: k up to 9 here); within 4 sds.
  kurt <- function(x) apply(x, 2, function(v) mean((v - mean(v))^4) / var(v)^2)
  ratio <- apply(g1, 2, var) / apply(g8, 2, var)
  sd_log <- sqrt((kurt(g1) - 1) / nrow(g1) + (kurt(g8) - 1) / nrow(g8))
  expect_lt(max(abs(log(ratio) - log(8)) / sd_log), 4)
})

# ------------------------------------------------ the fit and the engine --

test_that("a fit is an sgld_fit of draws from q, with ELBO, trajectory and state", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(4)
  fit <- bbb(m, iter = 2000, chains = 2, draws = 500, thin = 2, laplace = FALSE)
  expect_s3_class(fit, c("sgld_vi", "sgld_fit"))
  expect_equal(coda::nchain(fit$draws), 2)
  expect_equal(nrow(fit$draws[[1]]), 500)
  expect_equal(colnames(as.matrix(fit)), c(m$names, "sigma"))   # sigma derived from sigma2
  # the user's scale: sigma2 = exp(log sigma2) of the sampler's draws
  expect_true(all(as.matrix(fit)[, "sigma2"] > 0))
  expect_equal(dim(fit$variational$mean), c(2, 3))
  expect_equal(nrow(fit$elbo), 2)
  expect_equal(nrow(fit$khat), 2)
  expect_true(all(is.finite(fit$elbo$elbo)))
  expect_equal(nrow(fit$trajectory[[1]]), 1000)   # thin = 2
  out <- capture.output(print(fit))
  expect_true(any(grepl("variational approximation q, not from the posterior", out)))
  expect_true(any(grepl("no Laplace approximation \\(laplace = FALSE\\)", out)))
  s <- summary(fit)$statistics
  expect_equal(unname(s[, "mean"]), unname(colMeans(as.matrix(fit))))
  # the coefficients only (sigma2 is auxiliary), as rstanarm's
  expect_equal(coef(fit), colMeans(as.matrix(fit))[1:2])
  expect_equal(vcov(fit), cov(as.matrix(fit)[, 1:2]), ignore_attr = TRUE)
  expect_length(predict(fit, newdata = sgld::handout[1:3, ]), 3)
  skip_if_not_installed("posterior")
  expect_equal(dim(posterior::as_draws_df(fit)), c(1000, 7))
})

test_that("full rank runs at a few hundred parameters", {
  set.seed(12)
  n <- 2000
  X <- matrix(rnorm(n * 200), n, 200)
  y <- drop(X %*% rnorm(200, sd = 0.1)) + rnorm(n)
  m <- model_linear(X, y, prior = prior_nig())
  fit <- quiet(bbb(m, family = "fullrank", iter = 200, batch_size = 50, draws = 5))
  expect_equal(dim(fit$variational$cov[[1]]), c(201, 201))
  expect_true(all(is.finite(fit$variational$L[[1]])))
})

test_that("chains are independent streams: the same whatever the threads and chains", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(5)
  a <- bbb(m, iter = 500, chains = 3, threads = 1, draws = 1, local = FALSE)
  set.seed(5)
  b <- bbb(m, iter = 500, chains = 3, threads = 2, draws = 1, local = FALSE)
  expect_identical(a$state$w, b$state$w)
  expect_identical(a$state$update, b$state$update)
  expect_false(identical(a$state$w[1, ], a$state$w[2, ]))
})

test_that("init = fit continues: T + T iterations give the state of one run of 2T", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(6)
  one <- bbb(m, iter = 400, lr = lr_poly(0.01, 10), chains = 2, draws = 1, local = FALSE)
  set.seed(6)
  half <- bbb(m, iter = 200, lr = lr_poly(0.01, 10), chains = 2, draws = 1, local = FALSE)
  two <- bbb(m, iter = 200, lr = lr_poly(0.01, 10), chains = 2, init = half, draws = 1,
             init_scale = 5)   # ignored: the fit holds the scale
  expect_identical(two$state$w, one$state$w)
  expect_identical(two$state$update, one$state$update)
  expect_error(bbb(m, iter = 10, chains = 2, family = "fullrank", init = half),
               "same family")
  expect_error(bbb(m, iter = 10, init = sgd(m, lr = 1e-5, iter = 10)),
               "continues a fit of bbb\\(\\)")
})

test_that("bad input gets errors naming the argument and the rule", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  expect_error(bbb(m, init_scale = -1), "`init_scale` for Bayes by Backprop \\(mean-field Gaussian\\) must be positive")
  expect_error(bbb(m, init_scale = 0), "`init_scale` .* must be positive")
  expect_error(bbb(m, init_scale = c(1, 1)), "a vector of 3 positive numbers")
  expect_error(bbb(m, samples = 0), "`samples`")
  expect_error(bbb(m, samples = 1.5), "`samples`")
  expect_error(bbb(m, iter = 0), "`iter`")
  expect_error(bbb(m, family = "full"), "`family` must be one of \"meanfield\", \"fullrank\"")
  expect_error(bbb(m, optimizer = "natural"), "`optimizer` for Bayes by Backprop")
  expect_error(bbb(m, optimizer = precond_rmsprop()), "`optimizer` for Bayes by Backprop")
  expect_error(bbb(m, laplace = "yes"), "`laplace` must be")
  expect_error(bbb(model_mixture(mixture_data(50)), laplace = TRUE),
               "`laplace = TRUE`.*several modes")
  expect_error(bbb(m, iter = 100, elbo_every = 30), "`elbo_every` \\(30\\) must divide `iter`")
  expect_error(bbb(m, iter = 100, thin = 3), "`thin` \\(3\\) must divide the parts")
  S <- matrix(1, 3, 3)
  expect_error(bbb(m, family = "fullrank", init_scale = S),
               "`init_scale` for Bayes by Backprop \\(full-rank Gaussian\\) must be positive definite; .*rank-deficient")
  expect_error(bbb(m, family = "fullrank", init_scale = diag(2)), "3 x 3 covariance matrix")
  expect_error(bbb(m, family = "meanfield", init_scale = diag(3)), "positive number or a vector")
})

test_that("a diverging fit keeps what it has with a warning", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(8)
  res <- with_warnings(bbb(m, iter = 2000, lr = lr_constant(1e-3), optimizer = "sgd",
                           init_scale = 0.001, chains = 2, draws = 5, elbo_every = 5,
                           local = FALSE, laplace = FALSE, elbo_draws = 5))
  fit <- res$value
  expect_true(any(fit$status == "diverged"))
  expect_true(any(grepl("diverged at iteration", res$warnings)))
  # the ELBO trace up to the divergence, every 5 iterations
  tr <- fit$elbo_trace
  expect_gt(nrow(tr), 2)
  expect_true(all(diff(tr$iteration[tr$chain == 1]) == 5))
  expect_true(all(is.finite(tr$elbo[tr$iteration == 5])))
  expect_gt(nrow(fit$trajectory[[1]]), 0)
  expect_output(print(fit), "Stopped early")
  # every chain's last finite q is kept
  expect_true(all(is.finite(fit$variational$sd)))
})

test_that("model_custom(): the same fit as the built-in model, chains one after the other", {
  mc <- handout_custom()
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(9)
  a <- quiet(bbb(mc, iter = 3000, batch_size = 100, chains = 2, threads = 2, draws = 5))
  set.seed(9)
  b <- quiet(bbb(m, iter = 3000, batch_size = 100, chains = 2, draws = 5, local = FALSE))
  # the same arithmetic in R and in C (mode, Laplace factor, estimates): equal
  # up to rounding
  expect_equal(a$state$w, b$state$w, tolerance = 1e-6, ignore_attr = TRUE)
  expect_equal(a$state$update, b$state$update, tolerance = 1e-6)
  expect_equal(a$elbo$elbo, b$elbo$elbo, tolerance = 1e-6)
})

test_that("models without a Laplace approximation fall back to Adam from init", {
  x <- mixture_data(100)
  mm <- model_mixture(x)
  set.seed(5)
  fit <- quiet(bbb(mm, iter = 2000, init = c(0, 1), init_scale = 0.3))
  expect_false(fit$vi$laplace)
  expect_match(fit$vi$reason, "several modes")
  expect_output(print(fit), "no Laplace approximation \\(the posterior has several modes")
  expect_true(all(is.finite(fit$variational$mean)))
})

# -------------------------------------------------------------- k-hat --

test_that("psis_khat(): poor for mean-field on a correlated posterior, good for full rank", {
  set.seed(7)
  h <- sgld::handout
  h$z <- h$x + h$y + rnorm(nrow(h))
  m <- model_linear(z ~ x + y, data = h, prior = prior_nig())
  set.seed(1)
  mf <- quiet(bbb(m, draws = 10))
  fr <- quiet(bbb(m, family = "fullrank", draws = 10))
  set.seed(3)
  k_mf <- psis_khat(mf, draws = 2000, method = "own")
  set.seed(3)
  k_fr <- psis_khat(fr, draws = 2000, method = "own")
  # measured 0.99 against 0.3-0.5
  expect_gt(k_mf$khat, 0.7)
  expect_lt(k_fr$khat, 0.7)
  expect_equal(k_mf$tail, 135L)
  skip_if_not_installed("loo")
  set.seed(3)
  expect_equal(psis_khat(mf, draws = 2000, method = "loo")$khat, k_mf$khat, tolerance = 1e-10)
})

test_that("the package's Pareto smoothing is loo's; the shape estimate recovers known shapes", {
  set.seed(1)
  # 2000 exceedances: the estimate's sd is about (1 + k) / sqrt(2000) = 0.03
  for (k in c(0.2, 0.5, 0.9)) {
    x <- (runif(2000)^(-k) - 1) / k
    expect_equal(sgld:::gpd_shape(x), k, tolerance = 0.12 / k)
  }
  expect_error(psis_khat(sgd(model_linear(y ~ x, data = sgld::handout), lr = 1e-5, iter = 5)),
               "`fit` must be a fit of bbb\\(\\)")
  skip_if_not_installed("loo")
  for (seed in 1:3) {
    set.seed(seed)
    lr <- rnorm(1000) + rexp(1000, seed)
    own <- sgld:::psis_smooth(lr)
    ref <- suppressWarnings(loo::psis(lr, r_eff = 1))
    expect_equal(own$khat, ref$diagnostics$pareto_k, tolerance = 1e-12)
    expect_equal(own$log_weights, as.vector(ref$log_weights), tolerance = 1e-12)
  }
})

test_that("an interrupt stops bbb() with its q so far, and the fit continues", {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  out <- interrupted_run(function(flag) {
    m <- model_linear(y ~ x, data = handout, prior = prior_nig())
    set.seed(1)
    bbb(m, lr = 1e-3, batch_size = 10, iter = 1e9, chains = 2, threads = 2, thin = 1e5,
        elbo_every = 1e8, draws = 50, elbo_draws = 10, local = FALSE, laplace = FALSE)
  }, settle = 2)
  fit <- out$fit
  expect_identical(fit$status, rep("interrupted", 2))
  expect_true(any(grepl("interrupted by the user", out$warnings)))
  expect_equal(nrow(fit$draws[[1]]), 50)
  expect_true(all(is.finite(fit$variational$sd)))
  expect_true(all(is.finite(fit$elbo$elbo)))
  more <- bbb(fit$model, lr = 1e-3, batch_size = 10, iter = 100, chains = 2,
              init = fit, draws = 5)
  expect_identical(more$status, rep("done", 2))
  expect_identical(more$state$iteration, fit$state$iteration + 100)
})
