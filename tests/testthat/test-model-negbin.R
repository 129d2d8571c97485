# Negative-binomial regression (model_negbin()): the log likelihood against
# dnbinom(), gradients against finite differences, sgld(), mala() and bbb()
# at their defaults against rstan NUTS (data-raw/count-references.R), and the
# prediction methods.

quine_model <- function() model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)
epil_model <- function() model_negbin(y ~ lbase * trt + lage + V4, data = MASS::epil, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)

test_that("the log likelihood is dnbinom's and the prior half-normal on 1/phi", {
  m <- quine_model()
  expect_s3_class(m, "sgld_model_negbin")
  expect_identical(m$sampler_names[m$d], "log_phi")
  g <- MASS::glm.nb(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
  w <- c(coef(g), log(g$theta))
  lp <- log_posterior(m, w)
  expect_equal(lp$loglik, as.numeric(logLik(g)), tolerance = 1e-12)
  # half-normal(0, 1) density of 1/phi, times |d(1/phi)/d log phi| = 1/phi
  a <- 1 / g$theta
  expect_equal(lp$logprior, sum(dnorm(coef(g), 0, 10, log = TRUE)) + log(2) +
                 dnorm(a, 0, 1, log = TRUE) + log(a), tolerance = 1e-12)
  expect_lt(max(abs(lp$grad_loglik)), 1e-3)   # glm.nb's maximum, to its tolerance
  # the log likelihood at large phi tends to the Poisson's
  mp <- model_poisson(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine, prior = prior_normal(0, 10), prior_intercept = NULL)
  b <- coef(g) / 2
  expect_equal(log_posterior(m, c(b, log(1e9)))$loglik, log_posterior(mp, b)$loglik,
               tolerance = 1e-6)
})

test_that("gradients agree with finite differences, offsets and weights included", {
  set.seed(1)
  d <- MASS::epil
  mo <- model_negbin(y ~ trt + lage, data = d, offset = log(d$base + 1),
                     weights = rep(1:2, length.out = nrow(d)), prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)
  for (m in list(quine_model(), epil_model(), mo)) {
    for (k in 1:3) expect_lt(max(gradient_errors(m, c(rnorm(m$p, 0, 0.1), rnorm(1)))), 1e-6)
  }
})

test_that("control variates from the stored slopes at the mode are exact and unbiased", {
  # the one-pass differences (src/model_negbin.c, negbin_cv_fill()): over
  # the whole data they give the full gradient to rounding; over batches
  # they average to it. Dense rows four at a time (quine, p = 8), the
  # scalar rows (p = 3), offsets and weights, a sparse design, and counts
  # beyond the digamma table (4,096) and beyond its sums (32)
  # (the table covers counts below 4,096 and is built where the batch has
  # at least half as many rows: over all 2,100 rows of `big`, whose count
  # of 5,000 then takes digamma() beside the table)
  set.seed(3)
  d <- MASS::epil
  n <- 2100
  X <- cbind(1, matrix(rnorm(n * 8), n))
  big <- rnbinom(n, size = 2, mu = exp(1 + X[, 2]))
  big[1:3] <- c(5000L, 40L, 33L)
  models <- list(
    quine = quine_model(),
    weighted = model_negbin(y ~ trt + lage, data = d, offset = log(d$base + 1),
                            weights = rep(1:2, length.out = nrow(d)),
                            prior = prior_normal(0, 10), prior_intercept = NULL,
                            prior_overdispersion = 1),
    sparse = model_negbin(Matrix::Matrix(X * (abs(X) > 0.7), sparse = TRUE), big),
    large_counts = model_negbin(X, big))
  for (nm in names(models)) {
    m <- models[[nm]]
    pm <- posterior_mode(m)
    w0 <- pm$mode
    ws <- pm$sampler + rnorm(m$d, 0, 0.05)       # the sampler's scale (log phi)
    w <- sgld:::to_user_scale.default(m, matrix(ws, 1))[1, ]
    exact <- log_posterior(m, ws)$grad_logpost
    all_rows <- stochastic_gradients(m, w, batch_size = m$n, times = 1, control_variates = w0)
    expect_equal(drop(all_rows), exact, tolerance = 1e-9, label = paste(nm, "over every row"))
    G <- stochastic_gradients(m, w, batch_size = floor(m$n / 4), times = 2000,
                              control_variates = w0)
    # within 4.5 Monte Carlo standard errors (times 2,000: d of them, so
    # about 1 in 10^4 per coordinate by chance)
    z <- (colMeans(G) - exact) / (apply(G, 2, sd) / sqrt(nrow(G)) + 1e-9 * abs(exact))
    expect_lt(max(abs(z)), 4.5, label = paste(nm, "over batches"))
  }
})

test_that("sgld(m) at its defaults is within 0.15 sd and 10% of NUTS on two data sets", {
  # measured (independence Metropolis-Hastings, seed 1, one chain): see
  # bench/imh.md
  for (case in list(list(m = quine_model(), ref = "quine"),
                    list(m = epil_model(), ref = "epil"))) {
    set.seed(1)
    fit <- sgld(case$m, chains = 1)
    # close to Gaussian: independence Metropolis-Hastings (R/auto-imh.R)
    expect_identical(fit$auto$strategy, "imh")
    err <- reference_errors(as.matrix(fit), count_reference(case$ref))
    expect_lt(err[["mean"]], 0.15)
    expect_lt(err[["sd"]], 0.10)
  }
  # init = fit continues it with its own proposal, as long again as its sample
  more <- sgld(case$m, init = fit)
  expect_identical(more$method, "mala")
  expect_identical(more$rule, fit$rule)
  expect_identical(nrow(more$draws[[1]]), as.integer(fit$auto$iter - fit$auto$burnin))
  expect_identical(more$settings$burnin, 0)
  expect_true(more$auto$continued)
})

test_that("sgld(m) at 5,000 rows subsamples with control variates and stays accurate", {
  # one row's noise averaged over the Laplace approximation sets the batch
  # (R/auto.R): here a fraction of the rows, where the whole data set
  # would cost twice as much per step. Against 120,000 MALA iterations
  # (data-raw/negbin-simulated-reference.R, smallest ESS 1,797); measured
  # seed 1: batch 381, 0.056 sd and 4.8%; seeds 2, 3: 0.094 sd and 7.2%,
  # 0.066 sd and 7.9%
  m <- model_negbin(y ~ ., data = negbin_simulated_data())
  set.seed(1)
  fit <- sgld(m)
  expect_true(fit$auto$control_variates)
  expect_lt(fit$auto$batch_size, m$n / 2)
  expect_lte(fit$auto$alpha, 0.01)
  err <- reference_errors(as.matrix(fit), readRDS(test_path("negbin-simulated-reference.rds")))
  expect_lt(err[["mean"]], 0.15)
  expect_lt(err[["sd"]], 0.10)
})

test_that("a batch's noise is one row's times (n - b) / ((n - 1) b)", {
  # drawn without replacement: at half the rows the finite-population
  # factor halves the variance, which 1 / b alone would miss
  # (a logistic regression on normal predictors: light-tailed row gradients,
  # whose variances 2,000 draws estimate to about 3%; the negative binomial's
  # heavy tails leave 10-15% in such estimates)
  set.seed(5)
  X <- matrix(rnorm(4000), 2000)
  m <- model_logistic(X, rbinom(2000, 1, plogis(X %*% c(1, -1))))
  at <- c(0.5, 0.5)
  one <- diag(cov(stochastic_gradients(m, at, batch_size = 1, times = 8000)))
  half <- diag(cov(stochastic_gradients(m, at, batch_size = 1000, times = 2000)))
  ratio <- half / (one * sgld:::auto_batch_alpha(1, 1000, 2000))
  # the ratio of two variance estimates within 15%, about 4 standard errors
  expect_true(all(abs(ratio - 1) < 0.15))
  expect_identical(sgld:::auto_batch_alpha(2, 2000, 2000), 0)
  expect_equal(sgld:::auto_batch_alpha(2, 10, 2000, replace = TRUE), 0.2)
  # the batch solved for meets the bar, one row fewer does not
  b <- sgld:::auto_batch_for(30, 5000, 0.01)
  expect_lte(sgld:::auto_batch_alpha(30, b, 5000), 0.01)
  expect_gt(sgld:::auto_batch_alpha(30, b - 1, 5000), 0.01)
})

test_that("mala(m) at its defaults matches NUTS", {
  # measured: 0.050 sd and 1.9%
  set.seed(2)
  fit <- mala(quine_model(), chains = 1)
  err <- reference_errors(as.matrix(fit), count_reference("quine"))
  expect_lt(err[["mean"]], 0.15)
  expect_lt(err[["sd"]], 0.10)
})

test_that("bbb(m) at its defaults: means near the posterior's", {
  # mean-field q: its means are the posterior's up to a fraction of an sd, its
  # sds no wider than the posterior's (measured: means within 0.080 sd, sds
  # 0.33 to 0.98 of the posterior's, narrowest for the correlated intercept)
  set.seed(3)
  fit <- suppressMessages(quietly_checked(bbb(quine_model())))
  ref <- count_reference("quine")
  draws <- as.matrix(fit)
  expect_lt(max(abs(colMeans(draws) - ref$mean) / ref$sd), 0.25)
  expect_true(all(apply(draws, 2, sd) < 1.1 * ref$sd))
})

test_that("log_lik, predict and posterior_predict follow from the draws", {
  skip_if_not_installed("rstantools")
  skip_if_not_installed("loo")
  m <- quine_model()
  set.seed(4)
  # (a short run: Metropolis-adjusted steps since issue 51, whose ESS may or may not warn)
  fit <- quietly_checked(sgld(m, iter = 2000, chains = 1))
  W <- as.matrix(fit, scale = "sampler")
  X <- model.matrix(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
  eta <- W[, seq_len(m$p)] %*% t(X)
  phi <- exp(W[, m$d])
  y <- MASS::quine$Days
  ref <- matrix(dnbinom(rep(y, each = nrow(W)), size = phi, mu = exp(eta), log = TRUE), nrow(W))
  ll <- rstantools::log_lik(fit)
  expect_equal(ll, ref, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(rstantools::log_lik(fit, newdata = MASS::quine), ll, ignore_attr = TRUE)
  expect_equal(predict(fit), colMeans(exp(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(fitted(fit), colMeans(exp(eta)), tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(family(fit)$family, "neg_binomial_2")
  set.seed(5)
  yrep <- rstantools::posterior_predict(fit)
  expect_true(all(yrep >= 0 & yrep == round(yrep)))
  set.seed(5)
  expect_equal(yrep, matrix(rnbinom(length(eta), size = phi, mu = exp(eta)), nrow(eta)),
               ignore_attr = TRUE)
  # (both sides may warn of large Pareto k, depending on the draws: the
  # test is that they agree)
  pareto <- function(expr) withCallingHandlers(expr, warning = function(w)
    if (grepl("Pareto k", conditionMessage(w))) invokeRestart("muffleWarning"))
  lo <- pareto(loo::loo(fit))
  r_eff <- loo::relative_eff(exp(ref), chain_id = sgld:::chain_of_draws(fit))
  expect_equal(lo$estimates, pareto(loo::loo(ref, r_eff = r_eff))$estimates)
})

test_that("bad input is a clear error", {
  q <- MASS::quine
  expect_error(model_negbin(Days ~ Eth, data = q, prior_overdispersion = 0),
               "`prior_overdispersion` must be")
  expect_error(model_negbin(I(Days + 0.5) ~ Eth, data = q), "non-negative whole numbers")
  expect_error(model_negbin(Days ~ Eth, data = q, prior_intercept = prior_laplace()),
               "prior_normal")
  m <- quine_model()
  expect_error(sgld(m, init = c(rep(0, m$p), -1), iter = 10, lr = 1e-5, chains = 1), "phi must be positive")
})
