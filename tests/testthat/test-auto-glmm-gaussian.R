# The collapsed sampler of gaussian multilevel models (R/auto-glmm-gaussian.R):
# its log marginal against a dense computation, its prior against the C
# model's, and its draws against an exact reference computed on a grid.
skip_if_not_installed("lme4")
skip_if_not_installed("Matrix")

# A tiny data set: 4 groups of 6 rows, one slope, offsets (so every part of
# the residual is used).
tiny_data <- function(seed = 1) {
  set.seed(seed)
  d <- data.frame(g = factor(rep(1:4, each = 6)), h = factor(rep(1:3, 8)), x = rnorm(24))
  d$y <- 1 + 0.5 * d$x + rnorm(4, 0, 0.7)[d$g] + rnorm(3, 0, 0.4)[d$h] + rnorm(24, 0, 0.5)
  d$o <- runif(24, -0.2, 0.2)
  d
}

# log N(y; X m0 + o, sigma^2 I + X S0 X' + Z blockdiag(Sigma_k) Z') densely,
# from lme4's own Z and the model's user-scale covariances.
dense_log_marginal <- function(m, formula, data, theta) {
  w <- c(m$prior_loc, numeric(length(m$b_names)), theta)
  U <- sgld:::glmm_draws(m, matrix(w, 1))
  parsed <- lme4::lFormula(formula, data)
  Z <- t(as.matrix(parsed$reTrms$Zt))
  cov_b <- matrix(0, ncol(Z), ncol(Z))
  pos <- 0
  for (k in seq_len(m$K)) {
    r <- m$r[k]
    S <- sgld:::glmm_sigma_matrix(U[1, m$sigma_names[m$sigma_term == k]], r)
    for (g in seq_len(m$G[k])) {
      cov_b[pos + 1:r, pos + 1:r] <- S
      pos <- pos + r
    }
  }
  X <- t(m$x)
  sigma <- exp(theta[length(theta)])
  V <- sigma^2 * diag(nrow(X)) + X %*% diag(m$prior_scale^2, m$p) %*% t(X) + Z %*% cov_b %*% t(Z)
  r <- m$y - m$obs_offset - drop(X %*% m$prior_loc)
  R <- chol(V)
  -nrow(X) / 2 * log(2 * pi) - sum(log(diag(R))) - sum(backsolve(R, r, transpose = TRUE)^2) / 2
}

test_that("the log marginal of theta matches the dense formula to 1e-8", {
  d <- tiny_data()
  f <- y ~ x + (1 + x | g) + (1 | h)
  m <- model_glmer(f, d, offset = o)
  sys <- sgld:::glmm_gaussian_system(m)
  set.seed(2)
  for (i in 1:3) {
    theta <- c(rnorm(2, -0.5, 0.5), rnorm(1, 0, 0.8), rnorm(1, -1, 0.5), log(0.6) + rnorm(1, 0, 0.3))
    got <- sgld:::glmm_conditional(sys, theta)$loglik
    expect_equal(got, dense_log_marginal(m, f, d, theta), tolerance = 1e-8 / abs(got))
  }
  # scalar terms only: T'C0T from C0's values (no sparse product)
  f <- y ~ x + (1 | g) + (1 | h)
  m <- model_glmer(f, d, offset = o)
  sys <- sgld:::glmm_gaussian_system(m)
  expect_false(is.null(sys$scaled))
  for (i in 1:3) {
    theta <- c(rnorm(2, -0.5, 0.5), log(0.6) + rnorm(1, 0, 0.3))
    got <- sgld:::glmm_conditional(sys, theta)$loglik
    expect_equal(got, dense_log_marginal(m, f, d, theta), tolerance = 1e-8 / abs(got))
  }
})

test_that("the prior of theta is the C model's, the other parameters' parts removed", {
  d <- tiny_data()
  m <- model_glmer(y ~ x + (1 + x | g) + (1 | h), d)
  sys <- sgld:::glmm_gaussian_system(m)
  ti <- sgld:::glmm_theta_index(m)
  set.seed(3)
  w <- rnorm(m$d, 0, 0.5)   # any fixed and group effects
  e <- .Call(sgld:::C_sgld_model_eval, m, w)
  rest <- sum(dnorm(w[1:m$p], m$prior_loc, m$prior_scale, log = TRUE)) +
    sum(dnorm(w[(m$p + 1):(min(ti) - 1)], log = TRUE))
  expect_equal(sgld:::glmm_theta_logprior(sys, w[ti]), e$logprior - rest, tolerance = 1e-12)
})

# Draws V (one row each) of the effects against their exact conditional
# N(mu, A^-1) on the whitened scale (fixed effects less the prior's
# location, over its scale): means within 4 Monte Carlo sds, sds within 4
# sds of their estimate. Returns the whitened draws.
expect_exact_conditional <- function(V, m, A, mu) {
  s0 <- c(m$prior_scale, rep(1, ncol(V) - m$p))
  Vv <- sweep(sweep(V, 2, c(m$prior_loc, rep(0, ncol(V) - m$p))), 2, s0, "/")
  sd_exact <- sqrt(diag(solve(A)))
  n <- nrow(V)
  expect_lt(max(abs(colMeans(Vv) - mu) / (sd_exact / sqrt(n))), 4)
  expect_lt(max(abs(apply(Vv, 2, sd) / sd_exact - 1)), 4 / sqrt(2 * n))
  Vv
}

test_that("the fixed and group effects are drawn from their exact conditional", {
  d <- tiny_data()
  m <- model_glmer(y ~ x + (1 + x | g), d)
  sys <- sgld:::glmm_gaussian_system(m)
  theta <- c(log(0.7), log(0.3), 0.4, log(0.5))
  cond <- sgld:::glmm_conditional(sys, theta)
  # dense: v ~ N(A^-1 W'r / sigma^2, A^-1), A = I + W'W / sigma^2
  W <- t(as.matrix(sgld:::glmm_scaled_design(sys, theta)))
  A <- diag(ncol(W)) + crossprod(W) / 0.25
  mu <- solve(A, crossprod(W, sys$resid) / 0.25)
  expect_equal(cond$mean, drop(mu), tolerance = 1e-10)
  set.seed(4)
  V <- t(replicate(4000, sgld:::glmm_effects_draw(sys, cond)))
  expect_exact_conditional(V, m, A, mu)
})

# The exact posterior of y ~ x + (1 | g): theta = (log s, log sigma) on a
# grid, the prior written again here (r = 1: s | sigma ~ Exponential(rate 1 /
# sigma) by decov()'s defaults, sigma ~ Exponential(aux_rate)), and the
# effects' moments as mixtures of the dense Gaussian conditionals.
grid_reference <- function(m, d, size = 121) {
  X <- t(m$x)
  Z <- t(as.matrix(lme4::lFormula(y ~ x + (1 | g), d)$reTrms$Zt))
  W0 <- cbind(X %*% diag(m$prior_scale), Z)
  r <- m$y - drop(X %*% m$prior_loc)
  a <- seq(-4, 1.5, length.out = size)
  b <- seq(log(0.25), log(1.2), length.out = size)
  cells <- expand.grid(ls = a, lsig = b)
  out <- lapply(seq_len(nrow(cells)), function(i) {
    s <- exp(cells$ls[i])
    sigma <- exp(cells$lsig[i])
    W <- cbind(W0[, 1:m$p], s * Z)
    A <- diag(ncol(W)) + crossprod(W) / sigma^2
    R <- chol(A)
    mu <- backsolve(R, backsolve(R, crossprod(W, r) / sigma^2, transpose = TRUE))
    V <- chol2inv(R)
    ll <- -length(r) * log(sigma) - sum(log(diag(R))) - (sum(r^2) - sum(crossprod(W, r) * mu)) /
      (2 * sigma^2)
    lp <- stats::dexp(s, 1 / sigma, log = TRUE) + log(s) +
      stats::dexp(sigma, m$aux_rate, log = TRUE) + log(sigma)
    u <- c(m$prior_loc + m$prior_scale * mu[1:m$p], s * mu[-(1:m$p)])
    su <- c(m$prior_scale, rep(s, ncol(Z)))
    list(lw = ll + lp, mean = u, second = diag(V) * su^2 + u^2, s = s, sigma = sigma)
  })
  lw <- vapply(out, `[[`, 0, "lw")
  wt <- exp(lw - max(lw))
  wt <- wt / sum(wt)
  M <- sapply(out, `[[`, "mean") %*% wt
  S2 <- sapply(out, `[[`, "second") %*% wt
  s <- vapply(out, `[[`, 0, "s")
  sg <- vapply(out, `[[`, 0, "sigma")
  mean <- c(M, sum(wt * s), sum(wt * sg))
  sd <- sqrt(c(S2 - M^2, sum(wt * s^2) - sum(wt * s)^2, sum(wt * sg^2) - sum(wt * sg)^2))
  names(mean) <- names(sd) <- c(m$coef_names, m$b_names, "sd_g", "sigma")
  list(mean = mean, sd = sd)
}

test_that("sgld(f, data) at the defaults matches the exact posterior (grid)", {
  d <- tiny_data(5)[1:24, ]
  f <- y ~ x + (1 | g)
  m <- model_glmer(f, d)
  ref <- grid_reference(m, d)
  set.seed(1)
  fit <- sgld(f, d)
  expect_identical(fit$auto$route, "collapsed")
  x <- as.matrix(fit, scale = "sampler")
  U <- sgld:::glmm_draws(m, x)
  # the sampler's intercept is the one at centred predictors, as the grid's
  Q <- cbind(U[, c(m$coef_names, m$b_names)], sd_g = exp(x[, "log_sd[g:(Intercept)]"]),
             sigma = U[, "sigma"])
  ess <- vapply(seq_len(ncol(Q)), function(j) sum(vapply(fit$chain_ids, function(c) {
    rows <- (c - 1) * fit$auto$iter + seq_len(fit$auto$iter)
    coda::effectiveSize(Q[rows, j])
  }, 0)), 0)
  se <- ref$sd / sqrt(ess)
  # the means within 4 Monte Carlo standard errors, the sds within 4 of
  # theirs (sd(sd-hat) ~ sd / sqrt(2 ess) for a near-normal quantity; the
  # sd of a variance parameter is skewed: 1.5 times that)
  expect_lt(max(abs(colMeans(Q) - ref$mean[colnames(Q)]) / se), 4)
  expect_lt(max(abs(apply(Q, 2, sd) / ref$sd[colnames(Q)] - 1) * sqrt(2 * ess) / 1.5), 4)
})

test_that("a given iter and chains are run as given, never extended", {
  d <- tiny_data(6)
  set.seed(2)
  fit <- quietly_checked(sgld(y ~ x + (1 | g), d, iter = 150, chains = 2))
  expect_identical(fit$auto$route, "collapsed")
  expect_equal(fit$auto$iter, 150)
  expect_equal(fit$auto$extended, 0L)
  expect_equal(dim(as.matrix(fit)), c(300L, fit$model$d))
  expect_identical(fit$status, c("done", "done"))
  expect_error(sgld(y ~ x + (1 | g), d, chains = 0), "chains")
  # no fixed effects: every group effect still drawn
  none <- quietly_checked(sgld(y ~ 0 + (1 | g), d, iter = 50, chains = 1))
  expect_true(all(is.finite(as.matrix(none))))
  expect_equal(ncol(as.matrix(none)), 6L)
})

test_that("the chains' draws are the same on one worker or several, the session's RNG kept", {
  skip_on_os("windows")
  d <- tiny_data(7)
  m <- model_glmer(y ~ x + (1 | g), d)
  sys <- sgld:::glmm_gaussian_system(m)
  ti <- sgld:::glmm_theta_index(m)
  post <- function(th) sgld:::glmm_theta_logpost(sys, th)
  prop <- sgld:::glmm_t_proposal(sgld:::glmm_start(m)[ti], diag(0.1, length(ti)))
  bar <- sgld:::glmm_progress(FALSE, 1, "")
  runs <- lapply(1:2, function(workers) {
    RNGkind("Mersenne-Twister")
    set.seed(11)
    warmed <- sgld:::glmm_collapsed_warmup(sys, post, prop, chains = 3, warm = 10,
                                           progress = FALSE, workers = workers)
    run <- sgld:::glmm_collapsed_chains(sys, post, warmed, iter = 20, keep = NULL,
                                        progress = FALSE, workers = workers)
    list(run = run, kind = RNGkind(), after = runif(1))
  })
  a <- runs[[1]]$run
  b <- runs[[2]]$run
  expect_identical(a$draws, b$draws)      # 3 chains on 2 workers: one runs two
  expect_identical(a$theta, b$theta)
  expect_identical(a$status, c(0L, 0L, 0L))
  expect_identical(b$status, c(0L, 0L, 0L))
  expect_equal(a$sum, b$sum)
  expect_false(identical(a$draws[[1]], a$draws[[2]]))   # streams differ by chain
  # the session's generator: its kind kept, advanced by the one seed drawn
  expect_identical(runs[[1]]$kind[1], "Mersenne-Twister")
  expect_identical(runs[[1]]$after, runs[[2]]$after)
})

test_that("a model the sampler cannot start is a named error, not an endless loop", {
  prop <- sgld:::glmm_t_proposal(c(0, 0), diag(2))
  calls <- 0
  post <- function(th) {
    calls <<- calls + 1
    list(value = -Inf)
  }
  expect_error(sgld:::glmm_collapsed_start(prop, post), "no start", class = "sgld_collapsed_start_error")
  expect_equal(calls, sgld:::auto_glmm_gaussian_start_tries)
})

# The cheap moves (R/auto-glmm-gaussian-schur.R), forced here on tiny
# systems (by default only systems of 1,000 or more effects have them).
test_that("the Schur complement's log marginal matches the factor's to 1e-8", {
  d <- tiny_data()
  f <- y ~ x + (1 | g) + (1 | h)
  m <- model_glmer(f, d, offset = o)
  expect_null(sgld:::glmm_gaussian_system(m)$schur)   # too small by default
  for (small in list(integer(), 2L, 1:2)) {
    sys <- sgld:::glmm_gaussian_system(m, schur = small)
    sc <- sys$schur
    theta_f <- c(log(0.6), log(0.3), log(0.5))
    cond <- sgld:::glmm_theta_logpost(sys, theta_f)
    st <- sgld:::glmm_schur_state(sys, cond, theta_f)
    set.seed(8)
    for (i in 1:3) {
      # sigma with the big terms' sds in proportion, and the small sds
      theta <- theta_f + rnorm(1, 0, 0.4) * sc$sigma_line
      theta[sc$theta_index] <- theta[sc$theta_index] + rnorm(length(sc$theta_index), 0, 0.7)
      exact <- sgld:::glmm_theta_logpost(sys, theta)$value
      expect_equal(sgld:::glmm_schur_logpost(sys, st, theta), exact,
                   tolerance = 1e-8 / abs(exact))
    }
  }
})

test_that("effects drawn through the Schur complement have the exact conditional", {
  d <- tiny_data()
  m <- model_glmer(y ~ x + (1 | g) + (1 | h), d)
  sys <- sgld:::glmm_gaussian_system(m, schur = 2L)
  theta_f <- c(log(0.7), log(0.2), log(0.5))
  theta <- c(log(0.7 * 1.3), log(0.6), log(0.5 * 1.3))   # sigma and the small sd moved
  s <- list(theta = theta, cond = sgld:::glmm_theta_logpost(sys, theta_f))
  s$schur <- sgld:::glmm_schur_state(sys, s$cond, theta_f)
  W <- t(as.matrix(sgld:::glmm_scaled_design(sys, theta)))
  s2 <- (0.5 * 1.3)^2
  A <- diag(ncol(W)) + crossprod(W) / s2
  mu <- drop(solve(A, crossprod(W, sys$resid) / s2))
  set.seed(9)
  V <- t(replicate(4000, sgld:::glmm_schur_effects_draw(sys, s)))
  Vv <- expect_exact_conditional(V, m, A, mu)
  # and their correlations: the covariance's off-diagonal within 4.5 Monte Carlo sds
  C <- solve(A)
  se <- sqrt((C^2 + outer(diag(C), diag(C))) / 4000)
  expect_lt(max(abs(cov(Vv) - C) / se), 4.5)
})

test_that("the sampler with cheap moves matches the exact posterior (grid)", {
  d <- tiny_data(5)
  m <- model_glmer(y ~ x + (1 | g), d)
  ref <- grid_reference(m, d)
  ti <- sgld:::glmm_theta_index(m)
  # the sd of g by the joint move and sigma by the cheap one; then both cheap
  for (small in list(integer(), 1L)) {
    sys <- sgld:::glmm_gaussian_system(m, schur = small)
    post <- function(th) sgld:::glmm_theta_logpost(sys, th)
    set.seed(3)
    mode <- sgld:::glmm_theta_mode(post, sgld:::glmm_start(m)[ti])
    prop <- sgld:::glmm_t_proposal(mode$par, mode$covariance)
    warmed <- sgld:::glmm_collapsed_warmup(sys, post, prop, chains = 2, warm = 50,
                                           progress = FALSE)
    run <- sgld:::glmm_collapsed_chains(sys, post, warmed, iter = 400, keep = NULL,
                                        progress = FALSE)
    x <- do.call(rbind, run$draws)
    U <- sgld:::glmm_draws(m, x)
    Q <- cbind(U[, c(m$coef_names, m$b_names)], sd_g = exp(x[, ti[1]]), sigma = U[, "sigma"])
    ess <- vapply(seq_len(ncol(Q)), function(j) sum(vapply(1:2, function(c)
      coda::effectiveSize(Q[(c - 1) * 400 + 1:400, j]), 0)), 0)
    se <- ref$sd / sqrt(ess)
    expect_lt(max(abs(colMeans(Q) - ref$mean[colnames(Q)]) / se), 4)
    expect_lt(max(abs(apply(Q, 2, sd) / ref$sd[colnames(Q)] - 1) * sqrt(2 * ess) / 1.5), 4)
  }
})
