# posterior_mode() by Newton's method in C (src/mode.c): the Hessians of
# the models against central differences of their gradients, and the modes
# against glm() and the closed form of the conjugate linear model.

# The engine's log posterior gradient and Hessian at w (maxit = 0: evaluate only).
newton_at <- function(m, w) {
  .Call(sgld:::C_sgld_posterior_mode, m, list(init = as.double(w), maxit = 0L, tol = 0))
}

# max |H - central differences of the gradient| over max |H|
hessian_error <- function(m, w) {
  H <- newton_at(m, w)$hessian
  # steps of 1e-4 of the scale the Hessian gives each coordinate: the
  # differences' truncation error is then about 1e-8 of H
  fd <- vapply(seq_along(w), function(j) {
    h <- 1e-4 / sqrt(abs(H[j, j]))
    e <- replace(numeric(length(w)), j, h)
    gr <- function(v) { x <- log_posterior(m, v); x$grad_loglik + x$grad_logprior }
    (gr(w + e) - gr(w - e)) / (2 * h)
  }, numeric(length(w)))
  max(abs(H - fd)) / max(abs(H))
}

test_that("the logistic, linear and negative-binomial Hessians agree with differences of the gradients", {
  set.seed(41)
  d <- pima()
  d$wt <- rpois(nrow(d), 2) + 1
  d$k <- rbinom(nrow(d), 5, 0.3)
  X <- cbind(1, matrix(rnorm(300 * 6), 300) * rep(c(0.1, 1, 10, 100, 1000, 1), each = 300))
  y <- rbinom(300, 1, 0.4)
  sparse_x <- cbind(1, diag(300)[, 1:12] * 2.5, rbinom(300, 1, 0.3))
  models <- list(
    dense = model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL),
    many = model_logistic(cbind(X, matrix(rnorm(300 * 10), 300)), y, prior = prior_normal(0, 10), prior_intercept = NULL),
    float = model_logistic(X, y, storage = "float", prior = prior_normal(0, 10), prior_intercept = NULL),
    sparse = model_logistic(sparse_x, y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL),
    counts = model_logistic(cbind(k, 5 - k) ~ glu + bmi + offset(age / 10), data = d,
                            weights = wt, prior = prior_normal(0, 10), prior_intercept = NULL),
    weights = model_logistic(type ~ glu + bmi, data = d, weights = wt, prior = prior_normal(0, 10), prior_intercept = NULL),
    linear = model_linear(mpg ~ wt + hp + qsec, data = mtcars, prior = prior_nig()),
    linear_v = model_linear(mpg ~ wt + hp, data = mtcars,
                            prior = prior_nig(mean = c(30, -3, 0), V = matrix(c(4, 1, 0, 1, 2, 0.1,
                                                                             0, 0.1, 1), 3),
                                              shape = 2, rate = 3)),
    linear_wt = model_linear(mpg ~ wt + hp, data = mtcars, weights = cyl, prior = prior_nig()),
    # the negative binomial in (beta, log phi): rstanarm's priors (autoscaled,
    # the intercept's at centred predictors, exponential on phi), the
    # half-normal on 1/phi, weights and an offset, sparse rows, counts
    # above the summed steps' 32 (quine's reach 81)
    negbin = model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine),
    negbin_half = model_negbin(Days ~ Eth + Age, data = MASS::quine,
                               prior_overdispersion = 1),
    negbin_wt = model_negbin(count ~ spray + offset(log(1 + as.numeric(spray))),
                             data = transform(InsectSprays, wt = rep(1:3, 24)), weights = wt),
    negbin_sparse = local({
      Z <- matrix(rnorm(900), 300)
      model_negbin(Matrix::Matrix(Z * (abs(Z) > 0.7), sparse = TRUE), rpois(300, 3),
                   prior_intercept = NULL)
    })
  )
  for (nm in names(models)) {
    m <- models[[nm]]
    w <- rnorm(m$d, 0, 0.1) / pmax(1, apply(abs(sgld:::design_matrix(m)), 2, max))[seq_len(m$d)]
    if (inherits(m, "sgld_model_linear")) w <- c(w[-m$d], 2)
    if (inherits(m, "sgld_model_negbin"))
      w <- posterior_mode(m)$sampler + rnorm(m$d, 0, 0.05)
    expect_lt(hessian_error(m, w), 1e-7, label = nm)
    # the gradient returned is the engine's (whose minibatch gradient reads
    # the single-precision copy of rows stored as floats)
    e <- log_posterior(m, w)
    expect_equal(newton_at(m, w)$gradient, e$grad_loglik + e$grad_logprior,
                 tolerance = if (nm == "float") 1e-6 else 1e-12, ignore_attr = TRUE, label = nm)
  }
})

test_that("the one-pass log likelihood and gradient of mala() agree with the two passes", {
  expect_null(.Call(sgld:::C_sgld_model_fused, handout_model(), c(0, 1, 0)))
  set.seed(43)
  d <- pima()
  d$wt <- rpois(nrow(d), 2) + 1
  d$k <- rbinom(nrow(d), 5, 0.3)
  X <- cbind(1, matrix(rnorm(300 * 10), 300) * rep(c(0.1, 1, 10, 100, 1000), each = 600))
  y <- rbinom(300, 1, 0.4)
  models <- list(
    dense = model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL),
    float = model_logistic(X, y, storage = "float", prior = prior_normal(0, 10), prior_intercept = NULL),
    sparse = model_logistic(cbind(1, diag(300)[, 1:12] * 2.5, rbinom(300, 1, 0.3)), y,
                            sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL),
    binary = model_logistic(cbind(1, diag(300)[, 1:12]), y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL),
    counts = model_logistic(cbind(k, 5 - k) ~ glu + bmi + offset(age / 10), data = d,
                            weights = wt, prior = prior_normal(0, 10), prior_intercept = NULL),
    # negative binomials: counts tabled (quine: 146 rows, largest count 81;
    # 600 rows, in chunks of 256) or beyond the table (counts to 2,000 on 30
    # rows: lgammafn), with weights and an offset
    negbin = model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine),
    negbin_rows = model_negbin(k ~ glu + bmi + offset(age / 100), data = d[rep(1:200, 3), ],
                               weights = wt),
    negbin_large = model_negbin(y ~ x, data = data.frame(x = seq(0, 3, length.out = 30),
                                                         y = rpois(30, exp(seq(3, 7.5, length.out = 30))))))
  for (nm in names(models)) {
    m <- models[[nm]]
    for (scale in c(0.01, 3)) {
      w <- if (inherits(m, "sgld_model_negbin"))   # around the mode: no design_matrix()
        posterior_mode(m)$sampler + rnorm(m$d, 0, 0.05 * scale)
      else rnorm(m$d, 0, scale) / pmax(1, apply(abs(sgld:::design_matrix(m)), 2, max))
      e <- .Call(sgld:::C_sgld_model_eval, m, w)
      f <- .Call(sgld:::C_sgld_model_fused, m, w)
      expect_equal(f$loglik, e$loglik, tolerance = 1e-13, label = nm)
      # rows of floats: the minibatch gradient reads them, the one pass the doubles
      expect_equal(f$grad_loglik, e$grad_loglik, tolerance = if (nm == "float") 1e-6 else 1e-13,
                   label = nm)
    }
  }
})

test_that("the logistic mode and covariance are glm()'s under a vague prior", {
  fit_glm <- function(...) glm(..., family = binomial, control = glm.control(epsilon = 1e-14,
                                                                                maxit = 100))
  check <- function(m, g, label) {
    pm <- posterior_mode(m, covariance = TRUE)
    expect_identical(pm$method, "newton")
    expect_true(pm$converged)
    sdv <- sqrt(diag(vcov(g)))
    # a prior sd of 1e4 moves the mode by about (sd / 1e4)^2 of itself
    expect_lt(max(abs(pm$mode - coef(g)) / sdv), 1e-6, label = label)
    expect_lt(max(abs(pm$covariance - vcov(g)) / tcrossprod(sdv)), 1e-6, label = label)
  }
  d <- MASS::Pima.tr
  check(model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = d,
                       prior = prior_normal(0, 1e4), prior_intercept = NULL),
        fit_glm(type ~ npreg + glu + bp + skin + bmi + ped + age, data = d), "Pima")
  d$wt <- rep(1:4, 50)
  d$k <- rep(0:5, length.out = 200)
  check(model_logistic(cbind(k, 5 - k) ~ glu + bmi + offset(age / 50), data = d,
                       prior = prior_normal(0, 1e4), prior_intercept = NULL),
        fit_glm(cbind(k, 5 - k) ~ glu + bmi + offset(age / 50), data = d), "counts")
  # 70,000 rows: subsamples of 16,384 first, then the full data; predictors
  # on scales from 0.01 to 1000
  set.seed(42)
  n <- 70000
  X <- matrix(rnorm(n * 4), n) * rep(c(0.01, 1, 100, 1000), each = n)
  y <- rbinom(n, 1, plogis(0.5 + X %*% c(20, -0.5, 0.004, 1e-4)))
  m <- model_logistic(cbind(1, X), y, prior = prior_normal(0, 1e4), prior_intercept = NULL)
  pm <- posterior_mode(m)
  expect_lt(pm$passes, 6)
  check(m, fit_glm(y ~ X), "n = 70,000")
  Xs <- cbind(1, diag(40)[rep(1:40, 50), -1], rbinom(2000, 1, 0.5))
  ys <- rbinom(2000, 1, plogis(Xs[, 41] - 0.5 + rep(rnorm(40, 0, 0.5), 50)))
  check(model_logistic(Xs, ys, sparse = TRUE, prior = prior_normal(0, 1e4), prior_intercept = NULL),
        fit_glm(ys ~ Xs[, -1]), "sparse")
})

test_that("the linear mode is the conjugate model's closed form", {
  V <- matrix(c(4, 1, 0, 1, 2, 0.1, 0, 0.1, 1), 3)
  mu <- c(30, -3, 0)
  a <- 2
  b <- 3
  for (weighted in c(FALSE, TRUE)) {
    c_i <- if (weighted) mtcars$cyl else rep(1, nrow(mtcars))
    m <- if (weighted) model_linear(mpg ~ wt + hp, data = mtcars, weights = cyl,
                                    prior = prior_nig(mean = mu, V = V, shape = a, rate = b))
         else model_linear(mpg ~ wt + hp, data = mtcars,
                           prior = prior_nig(mean = mu, V = V, shape = a, rate = b))
    X <- cbind(1, mtcars$wt, mtcars$hp)
    y <- mtcars$mpg
    Vi <- solve(V)
    beta <- solve(crossprod(X, c_i * X) + Vi, crossprod(X, c_i * y) + Vi %*% mu)
    r <- y - X %*% beta
    q <- t(beta - mu) %*% Vi %*% (beta - mu)
    sigma2 <- (sum(c_i * r^2) / 2 + q / 2 + b) / (sum(c_i) / 2 + 3 / 2 + a)
    pm <- posterior_mode(m)
    expect_identical(pm$method, "newton")
    expect_equal(unname(pm$mode), c(beta, sigma2), tolerance = 1e-9)
  }
})

test_that("models without a Hessian keep the quasi-Newton search", {
  m <- model_logistic(type ~ glu + bmi, data = pima(), prior = prior_laplace(0, 1), prior_intercept = NULL)
  pm <- posterior_mode(m)
  expect_identical(pm$method, "bfgs")
  expect_true(pm$converged)
  x <- matrix(c(1, 2, 3, 4, 5), 5)
  mc <- model_custom(x, grad_loglik = function(w, data) sum(data[, 1] - w),
                     grad_logprior = function(w) -w / 100,
                     loglik = function(w, data) sum(dnorm(data[, 1], w, 1, log = TRUE)),
                     logprior = function(w) dnorm(w, 0, 10, log = TRUE), names = "mu")
  pc <- posterior_mode(mc)
  expect_identical(pc$method, "bfgs")
  expect_equal(unname(pc$mode), 15 / 5.01, tolerance = 1e-6)
})
