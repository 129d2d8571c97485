# The exact moves of a multilevel model (src/model_glmm.c: each term's
# covariance parameters in the centred form, each group's effects by
# Metropolis-Hastings with Newton's proposal; the default route for
# non-gaussian families, R/auto-glmm.R): they carry the log posterior and
# its gradient, and each kind leaves its conditional exactly invariant.
skip_if_not_installed("lme4")

moves <- function(m, w, times) .Call(sgld:::C_sgld_model_moves, m, as.double(w), as.integer(times))

test_that("the moves update the cached log posterior and gradient", {
  set.seed(1)
  d <- data.frame(y = rpois(60, 2), x = rnorm(60), a = gl(6, 10), b = gl(5, 1, 60))
  m <- sgld:::model_glmm(y ~ x + (1 + x | a) + (1 | b), d, "poisson")
  m$exact_moves <- 1L
  w <- rnorm(m$d, sd = 0.3)
  r <- moves(m, w, 50)
  w1 <- r$draws[, 50]
  expect_gt(min(apply(r$draws[-(1:2), ], 1, stats::sd)), 0.05)   # z and theta moved
  expect_identical(r$draws[1:2, 50], w[1:2])                      # beta did not
  e <- .Call(sgld:::C_sgld_model_eval, m, w1)
  expect_equal(r$log_post, e$loglik + e$logprior, tolerance = 1e-10)
  expect_equal(r$grad, e$grad_loglik + e$grad_logprior, tolerance = 1e-10)
  # the covariance moves alone keep every group effect b = L z
  m$exact_moves <- 3L
  r <- moves(m, w, 5)
  U0 <- sgld:::glmm_draws(m, matrix(w, 1))
  U1 <- sgld:::glmm_draws(m, matrix(r$draws[, 5], 1))
  b <- grep("^b\\[", colnames(U0))
  expect_equal(U1[, b], U0[, b], tolerance = 1e-12)
  expect_false(isTRUE(all.equal(U1[, -b], U0[, -b])))
  # gaussian: the decov scale moves with sigma, which the moves do not carry
  g <- sgld:::model_glmm(Reaction ~ Days + (1 | Subject), lme4::sleepstudy, "gaussian")
  g$exact_moves <- 1L
  expect_error(.Call(sgld:::C_sgld_model_eval, g, rep(0, g$d)), "non-gaussian")
})

# Monte Carlo z-scores of the mean and of the sd of draws x against exact values
expect_draws_match <- function(x, mean, sd, label) {
  ess <- coda::effectiveSize(x)
  expect_gt(ess, 1000)
  expect_lt(abs(base::mean(x) - mean) / (sd / sqrt(ess)), 4.5, label = paste(label, "mean"))
  expect_lt(abs(stats::sd(x) / sd - 1) / sqrt(1 / (2 * ess)), 4.5, label = paste(label, "sd"))
}

test_that("a term's sd is drawn from its conditional given the group effects", {
  # (1 | g), decov at its defaults: s ~ Exponential(1) on the linear
  # predictor's scale; given b (G = 8 groups) the log sd's density is
  # proportional to s exp(-s) s^-G exp(-sum(b^2) / (2 s^2)) (s from the
  # Jacobian), integrated here on a grid. 20,000 covariance moves from one b.
  set.seed(2)
  d <- data.frame(y = rbinom(40, 1, 0.5), g = gl(8, 5))
  m <- sgld:::model_glmm(y ~ 1 + (1 | g), d, "binomial")
  m$exact_moves <- 3L
  w <- c(0, rnorm(8, sd = 1.3), log(0.7))
  b <- 0.7 * w[2:9]
  r <- moves(m, w, 20000)
  ls <- r$draws[m$d, ]
  expect_equal(r$draws[2:9, 20000] * exp(ls[20000]), b, tolerance = 1e-10)
  x <- seq(-6, 4, length.out = 20001)
  f <- exp(x - exp(x) - 8 * x - sum(b^2) / (2 * exp(2 * x)))
  f <- f / sum(f)
  mu <- sum(x * f)
  expect_draws_match(ls, mu, sqrt(sum((x - mu)^2 * f)), "log sd")
})

test_that("the moves alone sample a model without fixed effects exactly", {
  # y ~ 0 + (1 | g), poisson, 4 groups of 3: the moves move every parameter,
  # so alone they are an MCMC sampler; the exact posterior of the log sd and
  # of the first group's effect by quadrature (each group's effect
  # integrated on a grid for each sd). 100,000 moves (0.3 s).
  set.seed(3)
  d <- data.frame(y = rpois(12, 3), g = gl(4, 3))
  m <- sgld:::model_glmm(y ~ 0 + (1 | g), d, "poisson")
  m$exact_moves <- 1L
  set.seed(4)
  r <- moves(m, c(rnorm(4), 0), 100000)
  ls <- r$draws[5, ]
  b1 <- r$draws[1, ] * exp(ls)
  x <- seq(-7, 3, length.out = 401)
  grid <- seq(-6, 6, length.out = 1201)
  ys <- split(d$y, d$g)
  # log p(y_g | s) and p(b_g | y_g, s) for each sd on the grid
  cond <- lapply(ys, function(yy) {
    ll <- vapply(grid, function(b) sum(stats::dpois(yy, exp(b), log = TRUE)), 0)
    vapply(exp(x), function(s) {
      prior <- stats::dnorm(grid, 0, s, log = TRUE)
      prior <- prior - (max(prior) + log(sum(exp(prior - max(prior)))))
      l <- ll + prior
      c(max(l) + log(sum(exp(l - max(l)))), exp(l - max(l)) / sum(exp(l - max(l))))
    }, numeric(length(grid) + 1))
  })
  lp <- Reduce(`+`, lapply(cond, function(cc) cc[1, ])) + x - exp(x)   # prior and Jacobian
  f <- exp(lp - max(lp))
  f <- f / sum(f)
  mu <- sum(x * f)
  expect_draws_match(ls, mu, sqrt(sum((x - mu)^2 * f)), "log sd")
  fb <- drop(cond[[1]][-1, ] %*% f)
  mb <- sum(grid * fb)
  expect_draws_match(b1, mb, sqrt(sum((grid - mb)^2 * fb)), "b[1]")
})
