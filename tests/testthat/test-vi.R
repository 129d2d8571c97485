# Bayes by Backprop (bbb()): the mean-field and full-rank oracles on a
# Gaussian posterior, the unbiasedness of the gradient estimator, the engine's
# shared machinery (chains, continuation, divergence) and bad input.

# A regression with two covariates correlated 0.9 (the handout's x and y), so
# the posterior of their slopes is correlated -0.9 and the mean-field sds are
# sqrt(1 - 0.81) = 0.44 of the marginal ones.
correlated_model <- function() {
  set.seed(7)
  h <- sgld::handout
  h$z <- h$x + h$y + rnorm(nrow(h))
  model_linear(z ~ x + y, data = h)
}

# The exact posterior's means, marginal sds and precision of the coefficients
# (the precision of beta given E_q[1 / sigma2] = a_n / b_n, which the
# mean-field optimum uses: q(log sigma2) is narrow, sd 0.014 here).
exact_coefficients <- function(model) {
  ex <- linear_exact_posterior(model)
  p <- length(ex$mu_n)
  list(mean = unname(ex$mu_n), sd = unname(ex$sd[seq_len(p)]),
       precision = solve(ex$V_n) * ex$a_n / ex$b_n, cov = ex$V_n * ex$b_n / ex$a_n, p = p)
}

test_that("mean-field BBB finds the exact means and the sds sqrt(1 / Lambda_jj)", {
  m <- correlated_model()
  ex <- exact_coefficients(m)
  oracle_sd <- sqrt(1 / diag(ex$precision))
  # the slopes' mean-field sds are 0.43 of their marginal sds (corr 0.9; the
  # handout's own sample correlation makes it 0.428, not 0.436)
  expect_equal(unname(oracle_sd[2:3] / ex$sd[2:3]), rep(0.428, 2), tolerance = 0.01)
  set.seed(1)
  fit <- bbb(m, iter = 50000, batch_size = 1000, lr = lr_exp(0.01, 1e-5), chains = 4,
             draws = 10, elbo_draws = 0)
  p <- ex$p
  mu <- fit$variational$mean[, seq_len(p)]
  s <- fit$variational$sd[, seq_len(p)]
  # Over 4 chains the final iterates scatter by 0.02 posterior sds in the mean
  # and 1.5% in the sd (measured over 4 chains of 10^5 iterations, batch 1000):
  # the average of 4 chains is within 0.05 sd (5 of its standard errors) and
  # each chain's sd within 5% (3 standard errors).
  expect_lt(max(abs(colMeans(mu) - ex$mean) / ex$sd), 0.05)
  expect_lt(max(abs(sweep(s, 2, oracle_sd, "/") - 1)), 0.05)
  # and far from the marginal sds it does not claim to match
  expect_true(all(s[, 2:3] < 0.5 * rep(ex$sd[2:3], each = 4)))
})

# Gauss-Hermite nodes and weights for E[f(Z)], Z ~ N(0, 1) (Golub-Welsch)
gauss_hermite <- function(k) {
  J <- matrix(0, k, k)
  b <- sqrt(seq_len(k - 1))
  J[cbind(1:(k - 1), 2:k)] <- b
  J[cbind(2:k, 1:(k - 1))] <- b
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = e$vectors[1, ]^2)
}

# The exact mean-field ELBO (up to its constant) at (mu, rho) by tensor
# Gauss-Hermite quadrature over the full-data log joint.
elbo_quadrature <- function(model, mu, rho, k = 8) {
  gh <- gauss_hermite(k)
  d <- length(mu)
  grid <- as.matrix(expand.grid(rep(list(seq_len(k)), d)))
  X <- matrix(gh$x[grid], ncol = d)
  wt <- apply(matrix(gh$w[grid], ncol = d), 1, prod)
  sigma <- log1p(exp(rho))
  W <- sweep(sweep(X, 2, sigma, "*"), 2, mu, "+")
  lp <- apply(W, 1, function(w) log_posterior(model, w)$logpost)
  sum(wt * lp) + sum(log(sigma))
}

# The engine's estimates of the ELBO's gradient in (mu, rho): one iteration of
# plain gradient ascent at learning rate 1 moves theta by exactly the
# estimate; each chain is an independent draw (its own eps and minibatch).
engine_gradients <- function(model, mu, rho, batch_size, chains, samples = 1, local = FALSE) {
  fit <- bbb(model, lr = 1, iter = 1, batch_size = batch_size, optimizer = "sgd",
             samples = samples, local = local, init = to_user(model, mu), init_scale = log1p(exp(rho)),
             chains = chains, draws = 1, elbo_draws = 0)
  d <- length(mu)
  state <- matrix(fit$state$update, ncol = chains)
  cbind(sweep(fit$state$w, 2, mu), t(state[seq_len(d), , drop = FALSE] - rho))
}

to_user <- function(model, w) sgld:::to_user_scale(model, matrix(w, 1))[1, ]

expect_unbiased <- function(model, mu, rho, batch_size, reps = 4, local = FALSE) {
  set.seed(11)
  G <- do.call(rbind, lapply(seq_len(reps), function(r)
    engine_gradients(model, mu, rho, batch_size, chains = 1000, local = local)))
  theta <- c(mu, rho)
  d <- length(mu)
  f <- function(th) elbo_quadrature(model, th[seq_len(d)], th[d + seq_len(d)])
  fd <- central_difference(f, theta, h = 1e-4)
  se <- apply(G, 2, sd) / sqrt(nrow(G))
  z <- (colMeans(G) - fd) / se
  # 4000 independent estimates: each mean within 4 standard errors (all 2d
  # of them together fail by chance with probability 2d * 6e-5)
  expect_lt(max(abs(z)), 4)
  # a check with teeth: the entropy's gradient alone is many standard errors
  sig <- 1 / (1 + exp(-rho))
  expect_gt(min(sig / log1p(exp(rho)) / se[d + seq_len(d)]), 5)
  invisible(z)
}

test_that("the gradient estimates are unbiased for the ELBO (linear model)", {
  d <- small_data(n = 200)
  m <- model_linear(y ~ x1 + x2, data = d)
  mu <- c(0.9, 0.4, -0.2, log(0.6))
  rho <- log(expm1(c(0.08, 0.06, 0.07, 0.15)))
  expect_unbiased(m, mu, rho, batch_size = 20)
  # local reparameterisation (the slopes' predictor drawn per observation,
  # log sigma2 once per batch): unbiased too
  expect_unbiased(m, mu, rho, batch_size = 20, local = TRUE)
})

test_that("the gradient estimates are unbiased for the ELBO (logistic model)", {
  m <- model_logistic(type ~ glu + bmi, data = pima())
  mu <- c(-0.8, 1.0, 0.6)
  rho <- log(expm1(c(0.25, 0.3, 0.2)))
  expect_unbiased(m, mu, rho, batch_size = 10)
  expect_unbiased(m, mu, rho, batch_size = 10, local = TRUE)
})

test_that("samples = K averages K estimates on one minibatch", {
  d <- small_data(n = 200)
  m <- model_linear(y ~ x1 + x2, data = d)
  mu <- c(0.9, 0.4, -0.2, log(0.6))
  rho <- log(expm1(c(0.08, 0.06, 0.07, 0.15)))
  set.seed(3)
  g1 <- engine_gradients(m, mu, rho, batch_size = 200, chains = 1000)
  g8 <- engine_gradients(m, mu, rho, batch_size = 200, chains = 1000, samples = 8)
  # full batches: only eps varies, so 8 draws cut the variance 8-fold. The
  # log of a ratio of sample variances has sd sqrt((k1 - 1) / N + (k8 - 1) / N)
  # for kurtoses k (g eps is far from normal: k up to 9 here); within 4 sds.
  kurt <- function(x) apply(x, 2, function(v) mean((v - mean(v))^4) / var(v)^2)
  ratio <- apply(g1, 2, var) / apply(g8, 2, var)
  sd_log <- sqrt((kurt(g1) - 1) / nrow(g1) + (kurt(g8) - 1) / nrow(g8))
  expect_lt(max(abs(log(ratio) - log(8)) / sd_log), 4)
})

test_that("full-rank BBB recovers the exact marginal sds and the correlation", {
  m <- correlated_model()
  ex <- exact_coefficients(m)
  set.seed(2)
  fit <- bbb(m, family = "fullrank", iter = 50000, batch_size = 1000,
             lr = lr_exp(0.01, 1e-5), chains = 2, draws = 10, elbo_draws = 0)
  p <- ex$p
  for (c in 1:2) {
    S <- fit$variational$cov[[c]][seq_len(p), seq_len(p)]
    expect_lt(max(abs(sqrt(diag(S)) / sqrt(diag(ex$cov)) - 1)), 0.05)
    expect_equal(cov2cor(S)[2, 3], cov2cor(ex$cov)[2, 3], tolerance = 0.02)
    expect_lt(max(abs(fit$variational$mean[c, seq_len(p)] - ex$mean) / ex$sd), 0.1)
  }
  expect_equal(unname(fit$variational$sd), unname(t(sapply(fit$variational$cov,
                                                          function(S) sqrt(diag(S))))))
})

test_that("a fit is an sgld_fit of draws from q, with ELBO, trajectory and state", {
  m <- model_linear(y ~ x, data = sgld::handout)
  set.seed(4)
  fit <- bbb(m, iter = 2000, chains = 2, draws = 500, elbo_draws = 50)
  expect_s3_class(fit, c("sgld_vi", "sgld_fit"))
  expect_equal(coda::nchain(fit$draws), 2)
  expect_equal(nrow(fit$draws[[1]]), 500)
  expect_equal(colnames(as.matrix(fit)), m$names)
  # the user's scale: sigma2 = exp(log sigma2) of the sampler's draws
  expect_true(all(as.matrix(fit)[, "sigma2"] > 0))
  expect_equal(dim(fit$variational$mean), c(2, 3))
  expect_equal(nrow(fit$elbo), 2)
  expect_true(all(is.finite(fit$elbo$elbo) & fit$elbo$se > 0))
  expect_equal(nrow(fit$trajectory[[1]]), 1000)   # thin = iter / 1000
  out <- capture.output(print(fit))
  expect_match(out[2], "variational approximation q, not from the posterior")
  s <- summary(fit)$statistics
  expect_equal(unname(s[, "mean"]), unname(colMeans(as.matrix(fit))))
  expect_equal(coef(fit), colMeans(as.matrix(fit)))
  expect_equal(vcov(fit), cov(as.matrix(fit)), ignore_attr = TRUE)
  expect_length(predict(fit, newdata = sgld::handout[1:3, ]), 3)
  skip_if_not_installed("posterior")
  expect_equal(dim(posterior::as_draws_df(fit)), c(1000, 6))
})

test_that("full rank runs at a few hundred parameters", {
  set.seed(12)
  n <- 2000
  X <- matrix(rnorm(n * 200), n, 200)
  y <- drop(X %*% rnorm(200, sd = 0.1)) + rnorm(n)
  m <- model_linear(X, y)
  fit <- bbb(m, family = "fullrank", iter = 200, batch_size = 50, draws = 5, elbo_draws = 0)
  expect_equal(dim(fit$variational$cov[[1]]), c(201, 201))
  expect_true(all(is.finite(fit$variational$L[[1]])))
})

test_that("chains are independent streams: the same whatever the threads and chains", {
  m <- model_linear(y ~ x, data = sgld::handout)
  set.seed(5)
  a <- bbb(m, iter = 500, chains = 3, threads = 1, draws = 1, elbo_draws = 0)
  set.seed(5)
  b <- bbb(m, iter = 500, chains = 3, threads = 2, draws = 1, elbo_draws = 0)
  expect_identical(a$state$w, b$state$w)
  expect_identical(a$state$update, b$state$update)
  expect_false(identical(a$state$w[1, ], a$state$w[2, ]))
})

test_that("init = fit continues: T + T iterations give the state of one run of 2T", {
  m <- model_linear(y ~ x, data = sgld::handout)
  set.seed(6)
  one <- bbb(m, iter = 400, lr = lr_poly(0.01, 10), chains = 2, draws = 1, elbo_draws = 0)
  set.seed(6)
  # averaging from iteration 200 in both: the continued run keeps the first's
  half <- bbb(m, iter = 200, lr = lr_poly(0.01, 10), chains = 2, draws = 1, elbo_draws = 0,
              average = 0)
  two <- bbb(m, iter = 200, lr = lr_poly(0.01, 10), chains = 2, init = half, draws = 1,
             elbo_draws = 0, init_scale = 5)   # ignored: the fit holds the scale
  expect_identical(two$state$w, one$state$w)
  expect_identical(two$state$update, one$state$update)
  expect_identical(two$variational[c("mean", "sd", "L", "cov")], one$variational[c("mean", "sd", "L", "cov")])
  expect_error(bbb(m, iter = 10, chains = 2, family = "fullrank", init = half),
               "same rule")
  expect_error(bbb(m, iter = 10, init = sgd(m, lr = 1e-5, iter = 10)),
               "continues a fit of bbb\\(\\)")
})

test_that("bad input gets errors naming the argument and the rule", {
  m <- model_linear(y ~ x, data = sgld::handout)
  expect_error(bbb(m, init_scale = -1), "`init_scale` for Bayes by Backprop \\(mean-field Gaussian\\) must be positive")
  expect_error(bbb(m, init_scale = 0), "`init_scale` .* must be positive")
  expect_error(bbb(m, init_scale = c(1, 1)), "a vector of 3 positive numbers")
  expect_error(bbb(m, samples = 0), "`samples`")
  expect_error(bbb(m, samples = 1.5), "`samples`")
  expect_error(bbb(m, family = "full"), "`family` must be one of \"meanfield\", \"fullrank\"")
  expect_error(bbb(m, optimizer = "natural"), "`optimizer` for Bayes by Backprop")
  expect_error(bbb(m, optimizer = precond_rmsprop()), "`optimizer` for Bayes by Backprop")
  S <- matrix(1, 3, 3)
  expect_error(bbb(m, family = "fullrank", init_scale = S),
               "`init_scale` for Bayes by Backprop \\(full-rank Gaussian\\) must be positive definite; .*rank-deficient")
  expect_error(bbb(m, family = "fullrank", init_scale = diag(2)), "3 x 3 covariance matrix")
  expect_error(bbb(m, family = "meanfield", init_scale = diag(3)), "positive number or a vector")
})

test_that("a diverging fit keeps what it has with a warning", {
  m <- model_linear(y ~ x, data = sgld::handout)
  set.seed(8)
  res <- with_warnings(bbb(m, iter = 2000, lr = lr_constant(1e-3), optimizer = "sgd",
                           init_scale = 0.001, chains = 2, draws = 5, elbo_every = 5, local = FALSE,
                           elbo_draws = 5))
  fit <- res$value
  expect_true(any(fit$status == "diverged"))
  expect_true(any(grepl("diverged at iteration", res$warnings)))
  expect_true(any(grepl("the run stopped after .* `fit\\$elbo_trace` holds the ELBO trace so far",
                        res$warnings)))
  # the ELBO trace up to the divergence, every 5 iterations
  tr <- fit$elbo_trace
  expect_gt(nrow(tr), 2)
  expect_true(all(diff(tr$iteration[tr$chain == 1]) == 5))
  expect_true(all(is.finite(tr$elbo[tr$iteration == 5])))
  expect_gt(nrow(fit$trajectory[[1]]), 0)
  expect_output(print(fit), "Stopped early")
})

test_that("model_custom(): the same fit as the built-in model, chains one after the other", {
  mc <- handout_custom()
  m <- model_linear(y ~ x, data = sgld::handout)
  set.seed(9)
  a <- bbb(mc, iter = 3000, batch_size = 100, chains = 2, threads = 2, draws = 5, elbo_draws = 5)
  set.seed(9)
  b <- bbb(m, iter = 3000, batch_size = 100, chains = 2, draws = 5, elbo_draws = 5,
           local = FALSE)
  # the same arithmetic in R and in C: equal up to rounding
  expect_equal(a$state$w, b$state$w, tolerance = 1e-6, ignore_attr = TRUE)
  expect_equal(a$state$update, b$state$update, tolerance = 1e-6)
  expect_equal(a$elbo$elbo, b$elbo$elbo, tolerance = 1e-6)
})

test_that("psis_khat(): poor for mean-field on a correlated posterior, good for full rank", {
  m <- correlated_model()
  set.seed(1)
  mf <- bbb(m, iter = 20000, batch_size = 1000, lr = lr_exp(0.01, 1e-5), draws = 10,
            elbo_draws = 0)
  fr <- bbb(m, family = "fullrank", iter = 20000, batch_size = 1000,
            lr = lr_exp(0.01, 1e-5), draws = 10, elbo_draws = 0)
  set.seed(3)
  k_mf <- psis_khat(mf, draws = 2000, method = "own")
  set.seed(3)
  k_fr <- psis_khat(fr, draws = 2000, method = "own")
  # measured 0.92 and 0.95 (two chains) against 0.06 and 0.21
  expect_gt(k_mf$khat, 0.7)
  expect_lt(k_fr$khat, 0.5)
  expect_equal(k_mf$tail, 135L)
  skip_if_not_installed("loo")
  set.seed(3)
  expect_equal(psis_khat(mf, draws = 2000, method = "loo")$khat, k_mf$khat, tolerance = 1e-10)
})

test_that("the generalised Pareto shape estimate recovers known shapes", {
  set.seed(1)
  # 2000 exceedances: the estimate's sd is about (1 + k) / sqrt(2000) = 0.03
  for (k in c(0.2, 0.5, 0.9)) {
    x <- (runif(2000)^(-k) - 1) / k
    expect_equal(sgld:::gpd_shape(x), k, tolerance = 0.12 / k)
  }
  expect_error(psis_khat(sgd(model_linear(y ~ x, data = sgld::handout), lr = 1e-5, iter = 5)),
               "`fit` must be a fit of bbb\\(\\)")
})

test_that("an interrupt stops bbb() with its q so far, and the fit continues", {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  out <- interrupted_run(function(flag) {
    m <- model_linear(y ~ x, data = handout)
    set.seed(1)
    bbb(m, lr = 1e-3, batch_size = 10, iter = 1e9, chains = 2, threads = 2, thin = 1e5,
        draws = 50, elbo_draws = 10)
  }, settle = 2)
  fit <- out$fit
  expect_identical(fit$status, rep("interrupted", 2))
  expect_true(any(grepl("interrupted by the user", out$warnings)))
  expect_equal(nrow(fit$draws[[1]]), 50)
  expect_true(all(is.finite(fit$variational$sd)))
  expect_true(all(is.finite(fit$elbo$elbo)))
  more <- bbb(fit$model, lr = 1e-3, batch_size = 10, iter = 100, chains = 2,
              init = fit, draws = 5, elbo_draws = 0)
  expect_identical(more$status, rep("done", 2))
  expect_identical(more$state$iteration, fit$state$iteration + 100)
})
