# The expected log likelihoods and log priors of models linear in their
# weights under a mean-field q (sgld.h: expected_loglik; src/model_logistic.c
# by quadrature, src/logistic_normal.c; src/model_linear.c in closed form),
# which bbb() uses by default for these models: against adaptive quadrature
# and Monte Carlo, their gradients against finite differences, and against
# the mean of local reparameterisation's draws.

expected <- function(model, mu, sd) .Call(sgld:::C_sgld_model_expected, model, mu, sd)

test_that("the reference quadrature agrees with adaptive quadrature", {
  # helper-vi.R's expectations, on which the optima of test-vi.R rest:
  # Hermite for narrow t, Legendre in t beyond
  worst <- 0
  for (a in c(-5, -1.3, 0, 0.7, 3, 12)) for (v in c(0.01, 0.5, 1, 1.3, 10, 65, 400)) {
    s <- sqrt(v)
    int <- function(h) integrate(function(x) h(a + s * x) * dnorm(x), -Inf, Inf,
                                 rel.tol = 1e-12, subdivisions = 1000)$value
    exact <- c(int(log_sigmoid), int(function(t) plogis(-t)), int(dlogis))
    e <- logistic_expectations(a, v)
    worst <- max(worst, abs(c(e$f, e$f1, e$f2) - exact))
  }
  # measured 1.8e-12
  expect_lt(worst, 1e-10)
})

test_that("the logistic model's expectations: quadrature, Monte Carlo, finite differences", {
  ex <- pima_natural()
  X <- ex$X
  p <- ncol(X)
  set.seed(1)
  mu <- c(-9, rnorm(p - 1, 0, 0.01))
  # narrow (v ~ 0.3) and wide (v up to 200: rare levels of a one-hot design)
  for (sd in list(exp(runif(p, -6, -1)), 3 / c(1, 5, 100, 60, 30, 30, 1, 30))) {
    e <- expected(ex$model, mu, sd)
    r <- logistic_expectations(ex$y * drop(X %*% mu), drop(X^2 %*% sd^2))
    expect_equal(e$loglik, sum(r$f), tolerance = 1e-12)
    expect_equal(e$grad_mu_loglik, unname(drop(crossprod(X, ex$y * r$f1))), tolerance = 1e-10)
    expect_equal(e$grad_sd_loglik, unname(-drop(crossprod(X^2, r$f2)) * sd), tolerance = 1e-10)
    expect_equal(e$logprior, sum(dnorm(mu, 0, 10, log = TRUE) - sd^2 / 200), tolerance = 1e-12)
  }
  # Monte Carlo of the package's own log likelihood at draws from q
  W <- sweep(matrix(rnorm(20000 * p), ncol = p) %*% diag(sd), 2, mu, "+")
  ll <- apply(W, 1, function(w) log_posterior(ex$model, w)$loglik)
  expect_lt(abs(e$loglik - mean(ll)) / (sd(ll) / sqrt(length(ll))), 4)
})

test_that("gradients against finite differences: storage, counts, offsets, priors, linear", {
  fd_check <- function(model, mu, sd, h = 1e-6) {
    f <- function(th) {
      r <- expected(model, th[seq_along(mu)], th[length(mu) + seq_along(sd)])
      r$loglik + r$logprior
    }
    e <- expected(model, mu, sd)
    an <- c(e$grad_mu_loglik + e$grad_mu_logprior, e$grad_sd_loglik + e$grad_sd_logprior)
    fd <- central_difference(f, c(mu, sd), h = h)
    max(abs(an - fd) / pmax(1, abs(fd)))
  }
  set.seed(9)
  n <- 300
  X <- matrix(rbinom(n * 6, 1, 0.2), n, 6)
  y <- rbinom(n, 1, 0.4)
  mu <- c(0.3, -0.2, 0.1, 0, 0.5, -0.4)
  sd <- c(0.2, 0.1, 1.3, 0.15, 2.5, 0.05)      # some v above 1: the wide quadrature
  dense <- model_logistic(X, y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  sparse <- model_logistic(X, y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_equal(expected(sparse, mu, sd), expected(dense, mu, sd), tolerance = 1e-12)
  expect_lt(fd_check(dense, mu, sd), 1e-6)
  expect_lt(fd_check(model_logistic(X, y, prior = prior_laplace(0, 2), prior_intercept = NULL), mu, sd), 1e-6)
  d <- pima()
  set.seed(12)
  d$w <- sample(1:3, nrow(d), replace = TRUE)
  d$o <- rnorm(nrow(d), sd = 0.3)
  counts <- model_logistic(type ~ glu + bmi, data = d, weights = w, offset = o, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_lt(fd_check(counts, c(-0.8, 1.0, 0.6), c(0.25, 1.5, 0.2)), 1e-6)
  lin <- model_linear(y ~ x1 + x2, data = small_data(n = 200), weights = rep(1:2, 100), prior = prior_nig())
  expect_lt(fd_check(lin, c(0.9, 0.4, -0.2, log(0.6)), c(0.08, 0.06, 0.07, 0.15)), 1e-6)
})

test_that("the linear model's expected log joint agrees with Monte Carlo", {
  m <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  mu <- c(0.01, 0.9, log(0.19))
  sd <- c(0.005, 0.004, 0.015)
  e <- expected(m, mu, sd)
  set.seed(2)
  W <- sweep(matrix(rnorm(3 * 20000), ncol = 3) %*% diag(sd), 2, mu, "+")
  lj <- apply(W, 1, function(w) log_posterior(m, w)$logpost)
  expect_lt(abs(e$loglik + e$logprior - mean(lj)) / (sd(lj) / sqrt(20000)), 4)
})

test_that("the expectation is the mean of local reparameterisation's draws", {
  # one step from (mu, sd) with local = "expected" is the mean of the steps
  # of local = TRUE, which draws each observation's linear predictor
  d <- pima()
  m <- model_logistic(type ~ glu + bmi, data = d, prior = prior_normal(0, 10), prior_intercept = NULL)
  mu <- c(-0.8, 1.0, 0.6)
  sd <- c(0.25, 0.3, 0.2)
  step <- function(local, N) {
    fit <- bbb(m, lr = 1e-4, iter = 1, batch_size = m$n, optimizer = "sgd", local = local,
               init = mu, init_scale = sd, chains = N, draws = 1, laplace = FALSE)
    t(vi_theta_of(fit) - c(mu, log(sd))) / 1e-4
  }
  set.seed(3)
  exact <- step("expected", 2)
  expect_equal(exact[1, ], exact[2, ])   # no draws: the same step in every chain
  G <- step(TRUE, 1000)
  z <- (colMeans(G) - exact[1, ]) / (apply(G, 2, sd) / sqrt(nrow(G)))
  expect_lt(max(abs(z)), 4)
  # teeth: the scales' steps are many standard errors from zero
  expect_gt(max(abs(exact[1, 4:6]) / (apply(G[, 4:6], 2, sd) / sqrt(nrow(G)))), 5)
})

test_that("local = \"expected\" refuses what it cannot do, by name", {
  expect_error(bbb(model_mixture(mixture_data(50)), iter = 10, local = "expected"),
               "`local = \"expected\"`.*expected log likelihoods \\(model_linear\\(\\), model_logistic\\(\\), model_poisson\\(\\)\\)")
  m <- model_logistic(type ~ glu + bmi, data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_error(bbb(m, iter = 10, family = "fullrank", local = "expected"),
               "`local = \"expected\"`.*mean-field")
  expect_error(bbb(m, iter = 10, local = "expected", control_variates = TRUE),
               "`local = \"expected\"`.*control_variates = FALSE")
})
