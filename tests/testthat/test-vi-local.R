# bbb()'s local reparameterisation (Kingma, Salimans and Welling 2015: each
# observation's linear combinations of the weights drawn from their exact
# distribution under q) and the per-iteration minibatch ELBO, in the model's
# own coordinates (laplace = FALSE): the estimates are plain gradients
# there. The expectations themselves (local = "expected") are in
# test-vi-expected.R.

# A logistic regression with five covariates, and its mean-field optimum:
# the mode and 1 / sqrt(H_jj) (n = 5000: the posterior is close to Gaussian)
logistic5 <- function() {
  set.seed(21)
  n <- 5000
  X <- matrix(rnorm(n * 5), n, 5)
  y <- as.integer(runif(n) < plogis(drop(X %*% c(1, -1, 0.5, 0, 0.25))))
  m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
  pm <- posterior_mode(m, covariance = TRUE)
  list(m = m, mu = unname(pm$sampler), sd = unname(1 / sqrt(diag(solve(pm$covariance)))))
}

quiet_bbb <- function(...) quietly_checked(bbb(...))

test_that("local reparameterisation on and off reach the same mean-field optimum (logistic)", {
  lg <- logistic5()
  fits <- lapply(c(FALSE, TRUE), function(local) {
    set.seed(1)
    quiet_bbb(lg$m, iter = 20000, batch_size = 100, chains = 4, local = local,
              laplace = FALSE, draws = 2)
  })
  expect_identical(fits[[1]]$variational$local, "w")
  expect_identical(fits[[2]]$variational$local, "draw")
  mu <- lapply(fits, function(f) colMeans(sweep(f$variational$mean, 2, lg$mu)) / lg$sd)
  s <- lapply(fits, function(f) colMeans(f$variational$sd) / lg$sd)
  # Measured: one chain's averaged iterate scatters by 0.07 sd in the means and
  # 2.5% in the sds around the optimum (either estimator), so the mean of 4
  # chains by 0.035 sd and 1.3%, and the difference of two such means by 0.05
  # sd and 1.8%: each within 4 of those.
  expect_lt(max(abs(mu[[2]] - mu[[1]])), 0.2)
  expect_lt(max(abs(s[[2]] / s[[1]] - 1)), 0.07)
  # and both at the optimum itself
  for (k in 1:2) {
    expect_lt(max(abs(mu[[k]])), 0.15)
    expect_lt(max(abs(s[[k]] - 1)), 0.05)
  }
})

test_that("MLP without hidden layer, local reparameterisation: the linear model's optimum", {
  set.seed(5)
  n <- 2000
  X <- matrix(rnorm(n * 3), n, 3)
  y <- drop(X %*% c(1, -0.5, 0.25)) + rnorm(n, sd = 0.5)
  # the same model twice: vague priors (N(0, 1000^2) weights; the linear
  # model's N(0, 10^6 sigma^2)) and 1 / sigma^2 ~ Gamma(1, 1) in both
  ml <- model_linear(y ~ X1 + X2 + X3, data = data.frame(X, y = y), prior = prior_nig(V = 1e6))
  mm <- model_mlp(X, y, hidden = integer(0), prior = prior_normal(0, 1000), standardize = FALSE)
  ex <- linear_exact_posterior(ml)
  mf_sd <- sqrt(1 / diag(solve(ex$V_n) * ex$a_n / ex$b_n))
  set.seed(1)
  a <- quiet_bbb(ml, iter = 20000, batch_size = 200, chains = 4, local = TRUE,
                 laplace = FALSE, draws = 2)
  set.seed(2)
  b <- quiet_bbb(mm, iter = 20000, batch_size = 200, chains = 4, local = TRUE,
                 laplace = FALSE, draws = 2)
  ord <- c(4, 1, 2, 3, 5)   # the network's (W, b, log sigma2) as (intercept, slopes, log sigma2)
  am <- colMeans(a$variational$mean)
  bm <- colMeans(b$variational$mean)[ord]
  as <- colMeans(a$variational$sd)
  bs <- colMeans(b$variational$sd)[ord]
  # measured: 2-chain means 0.02 sd apart and sds within 3%; 4 chains each
  expect_lt(max(abs(am - bm)[1:4] / mf_sd), 0.05)
  expect_lt(max(abs(bs / as - 1)), 0.05)
  # the optimum itself: the exact means and sqrt(1 / Lambda_jj)
  expect_lt(max(abs(bm[1:4] - ex$mu_n) / mf_sd), 0.05)
  expect_lt(max(abs(bs[1:4] / mf_sd - 1)), 0.05)
})

# N one-iteration runs of plain gradient ascent at learning rate 1e-4: each
# moves theta = (mu, log sd) by 1e-4 times one independent gradient
# estimate (a step of 1 could leave the range of the log sds, which stops
# the chain where it started)
one_step_gradients <- function(model, mu, sd, batch_size, N, local) {
  init <- sgld:::to_user_scale(model, matrix(mu, 1))[1, ]
  fit <- bbb(model, lr = 1e-4, iter = 1, batch_size = batch_size, optimizer = "sgd",
             local = local, init = init, init_scale = sd, chains = N, draws = 1,
             laplace = FALSE)
  expect_true(all(fit$status == "done"))
  t(vi_theta_of(fit) - c(mu, log(sd))) / 1e-4
}

test_that("MLP with a hidden layer: local and ordinary gradient estimates have one mean", {
  # Both are unbiased for the ELBO's gradient, so a slip in the network's
  # local backpropagation (the sd terms through the hidden layer) shows as a
  # difference in means. tanh and relu; Gaussian (with fixed and with
  # hierarchical priors, whose precisions the likelihood does not touch),
  # binomial and categorical.
  set.seed(6)
  n <- 200
  X <- matrix(rnorm(n * 2), n, 2)
  yr <- sin(X[, 1]) + 0.3 * rnorm(n)
  yb <- as.integer(X[, 1] * X[, 2] + 0.3 * rnorm(n) > 0)
  yc <- factor(1 + (X[, 1] > 0) + (X[, 2] > 0.5))
  for (case in list(list(y = yr, family = "gaussian", act = "tanh", prior = NULL),
                    list(y = yr, family = "gaussian", act = "relu", prior = prior_gamma(1, 1)),
                    list(y = yb, family = "binomial", act = "relu", prior = NULL),
                    list(y = yc, family = "categorical", act = "tanh", prior = NULL))) {
    m <- model_mlp(X, case$y, hidden = 3, activation = case$act, family = case$family,
                   prior = case$prior)
    set.seed(7)
    mu <- rnorm(m$d, sd = 0.5)
    sd <- runif(m$d, 0.1, 0.4)
    set.seed(8)
    G0 <- rbind(one_step_gradients(m, mu, sd, 50, 1000, FALSE),
                one_step_gradients(m, mu, sd, 50, 1000, FALSE))
    G1 <- rbind(one_step_gradients(m, mu, sd, 50, 1000, TRUE),
                one_step_gradients(m, mu, sd, 50, 1000, TRUE))
    se <- sqrt(apply(G0, 2, var) / nrow(G0) + apply(G1, 2, var) / nrow(G1))
    z <- (colMeans(G1) - colMeans(G0)) / se
    # 2d means (up to 46) from 2000 estimates each: all within 4.5 standard
    # errors (a false alarm has probability about 3e-4 per case)
    expect_lt(max(abs(z)), 4.5)
  }
})

test_that("a small network's BBB fit runs, is finite and its ELBO rises", {
  set.seed(5)
  n <- 1000
  X <- matrix(rnorm(n * 4), n, 4)
  y <- sin(X[, 1]) + 0.5 * X[, 2] * X[, 3] + rnorm(n, sd = 0.3)
  m <- model_mlp(X, y, hidden = 8)
  set.seed(3)
  fit <- quiet_bbb(m, iter = 4000, batch_size = 50, local = TRUE, elbo_every = 500,
                   elbo_draws = 50, draws = 100, thin = 10)
  expect_identical(fit$variational$local, "draw")
  expect_equal(fit$status, "done")
  expect_true(all(is.finite(fit$variational$mean)) && all(is.finite(fit$variational$sd)))
  expect_true(all(is.finite(as.matrix(fit))))
  tr <- fit$elbo_trace
  expect_equal(tr$iteration, 500 * (1:8))
  expect_true(all(is.finite(tr$elbo)))
  # measured: -767 at 500 iterations, -720 at 4000, standard errors about 2;
  # the rise beyond 4 of its standard errors
  expect_gt(tr$elbo[8] - tr$elbo[1], 4 * sqrt(tr$se[8]^2 + tr$se[1]^2))
  # the minibatch trace rises too: first tenth against last tenth
  eb <- fit$elbo_batch$elbo
  k <- length(eb) %/% 10
  expect_gt(mean(utils::tail(eb, k)), mean(utils::head(eb, k)))
})

test_that("the minibatch ELBO trace agrees with the full-data ELBO", {
  lg <- logistic5()
  for (local in c(FALSE, TRUE)) {
    set.seed(4)
    fit <- quiet_bbb(lg$m, iter = 20000, batch_size = 100, chains = 4, local = local,
                     elbo_batch = TRUE, draws = 400, thin = 20, laplace = FALSE)
    eb <- fit$elbo_batch
    expect_equal(nrow(eb), 4 * 1000)   # one per kept iterate (thin 20), per chain
    expect_true(all(is.finite(eb$elbo)))
    # the last quarter of the run: each entry the mean over 20 iterations'
    # minibatch estimates (measured lag-1 autocorrelation of the entries
    # within +-0.1), against the full-data estimate at the end (whose own
    # standard error is ~0.03)
    last <- eb$elbo[eb$iteration > 15000]
    se <- sqrt(stats::var(last) / length(last) + mean(fit$elbo$se^2))
    expect_lt(abs(mean(last) - mean(fit$elbo$elbo)) / se, 4)
    # teeth: the estimate is not merely noisy, it tracks the ELBO (the first
    # entries, at the start, are hundreds of nats lower)
    expect_lt(mean(eb$elbo[eb$iteration <= 100]), mean(fit$elbo$elbo) - 100)
  }
  expect_output(quietly_checked(print(fit)), "ELBO \\(minibatch, mean of the last tenth")
  # off by default without local reparameterisation: an extra pass per batch
  set.seed(4)
  f <- quiet_bbb(lg$m, iter = 200, local = FALSE, draws = 2)
  expect_null(f$elbo_batch)
})

test_that("local reparameterisation refuses what it cannot do, by name", {
  lg <- logistic5()
  expect_error(bbb(lg$m, iter = 10, family = "fullrank", local = TRUE),
               "`local = TRUE`.*mean-field")
  expect_error(bbb(lg$m, iter = 10, local = TRUE, control_variates = TRUE),
               "`local = TRUE`.*control_variates = FALSE")
  expect_error(bbb(lg$m, iter = 10, local = TRUE, clip = clip_norm(10)),
               "`local = TRUE`.*clip = NULL")
  expect_error(bbb(model_mixture(mixture_data(50)), iter = 10, local = TRUE),
               "`local = TRUE`.*linear in its weights")
  expect_error(bbb(lg$m, iter = 10, local = "yes"), "`local` must be")
  expect_error(bbb(lg$m, iter = 10, elbo_batch = NA), "`elbo_batch` must be")
  # auto: off where it cannot run
  f <- quiet_bbb(lg$m, iter = 10, family = "fullrank", draws = 2)
  expect_identical(f$variational$local, "w")
})

test_that("local = \"auto\": on for networks at large batches only", {
  set.seed(5)
  X <- matrix(rnorm(600 * 2), 600, 2)
  mm <- model_mlp(X, X[, 1] + rnorm(600), hidden = 2)
  lg <- logistic5()
  on <- function(m, b) quiet_bbb(m, iter = 2, batch_size = b, draws = 2)$variational$local
  expect_identical(on(mm, 500), "draw")
  expect_identical(on(mm, 100), "w")
  # a regression takes the expectations themselves (test-vi-expected.R)
  expect_identical(on(lg$m, 1000), "expected")
  # and the minibatch ELBO follows it (free with local reparameterisation)
  f <- quiet_bbb(mm, iter = 40, batch_size = 500, draws = 2, thin = 1)
  expect_equal(nrow(f$elbo_batch), 40)
})

test_that("sparse and dense storage give the same local-reparameterisation gradients", {
  # the same draws in the same order (one normal per observation): equal up
  # to rounding, so the sparse path is as unbiased as the dense one (test-vi.R)
  set.seed(9)
  n <- 300
  X <- matrix(rbinom(n * 6, 1, 0.2), n, 6)
  y <- rbinom(n, 1, 0.4)
  md <- model_logistic(X, y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  ms <- model_logistic(X, y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL)
  mu <- c(0.3, -0.2, 0.1, 0, 0.5, -0.4)
  sd <- c(0.2, 0.1, 0.3, 0.15, 0.25, 0.05)
  set.seed(10)
  gd <- one_step_gradients(md, mu, sd, 30, 50, TRUE)
  set.seed(10)
  gs <- one_step_gradients(ms, mu, sd, 30, 50, TRUE)
  expect_equal(gs, gd, tolerance = 1e-10)
  # and not the ordinary estimator's numbers
  set.seed(10)
  expect_false(isTRUE(all.equal(one_step_gradients(md, mu, sd, 30, 50, FALSE), gd)))
})

test_that("logistic with offsets and case weights: local and ordinary gradients have one mean", {
  # the counts path of the local estimator (events, non-events, offsets)
  d <- pima()
  set.seed(12)
  d$w <- sample(1:3, nrow(d), replace = TRUE)
  d$o <- rnorm(nrow(d), sd = 0.3)
  m <- model_logistic(type ~ glu + bmi, data = d, weights = w, offset = o, prior = prior_normal(0, 10), prior_intercept = NULL)
  mu <- c(-0.8, 1.0, 0.6)
  sd <- c(0.25, 0.3, 0.2)
  set.seed(13)
  G0 <- rbind(one_step_gradients(m, mu, sd, 20, 1000, FALSE),
              one_step_gradients(m, mu, sd, 20, 1000, FALSE))
  G1 <- rbind(one_step_gradients(m, mu, sd, 20, 1000, TRUE),
              one_step_gradients(m, mu, sd, 20, 1000, TRUE))
  se <- sqrt(apply(G0, 2, var) / nrow(G0) + apply(G1, 2, var) / nrow(G1))
  expect_lt(max(abs(colMeans(G1) - colMeans(G0)) / se), 4)
  # teeth: the scales' gradients are many standard errors from zero, so the
  # comparison above resolves them
  expect_gt(max(abs(colMeans(G1)[4:6]) / se[4:6]), 5)
})
