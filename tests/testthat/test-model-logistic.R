test_that("gradients equal central finite differences, for both priors", {
  d <- pima()
  for (pr in list(prior_normal(c(0.5, 0, 0, 0, 0, 0, -1), 2),
                  prior_laplace(0.2, 1.5))) {
    m <- model_logistic(type ~ ., data = d, prior = pr, prior_intercept = prior_normal(1, 3))
    set.seed(41)
    for (k in 1:20) {
      expect_lt(max(gradient_errors(m, rnorm(m$d))), 1e-6)
    }
  }
})

test_that("log densities are the model's and stay finite for huge linear predictors", {
  d <- pima()
  m <- model_logistic(type ~ glu + bmi, data = d, prior = prior_laplace(0, 2),
                      prior_intercept = prior_normal(0, 3))
  X <- cbind(1, d$glu, d$bmi)
  y <- as.numeric(d$type == "Yes")
  w <- c(-0.5, 1.2, 0.4)
  ll <- sum(dbinom(y, 1, plogis(X %*% w), log = TRUE))
  lp <- dnorm(w[1], 0, 3, log = TRUE) + sum(-abs(w[2:3]) / 2 - log(4))
  ev <- log_posterior(m, w)
  expect_equal(ev$loglik, ll, tolerance = 1e-12)
  expect_equal(ev$logprior, lp, tolerance = 1e-12)
  big <- log_posterior(m, c(0, 500, -500))
  expect_true(is.finite(big$loglik) && all(is.finite(big$grad_loglik)))
  expect_equal(big$loglik,
               sum(plogis((2 * y - 1) * (X %*% c(0, 500, -500)), log.p = TRUE)))
})

test_that("full-batch descent with a vague prior matches glm()", {
  d <- pima()
  m <- model_logistic(type ~ ., data = d, prior = prior_normal(0, 1e4), prior_intercept = NULL)
  fit <- gd(m, lr = 0.01, iter = 5000)
  g <- glm(type ~ ., data = d, family = binomial)
  expect_lt(max(abs(coef(fit) - coef(g))), 1e-3)
})

test_that("SGLD agrees with a long random-walk Metropolis reference", {
  d <- pima()
  m <- model_logistic(type ~ ., data = d, prior = prior_normal(0, 5))
  g <- glm(type ~ ., data = d, family = binomial)
  set.seed(51)
  ref <- rwm(m, coef(g), vcov(g), iter = 1.5e5)
  ref <- ref[-(1:5000), ]
  ref_mean <- colMeans(ref)
  ref_sd <- apply(ref, 2, sd)
  expect_true(all(coda::effectiveSize(coda::mcmc(ref)) > 1500))
  set.seed(52)
  fit <- sgld(m, lr = 2e-4, batch_size = 20, iter = 1e6, burnin = 2e4, thin = 20, chains = 2)
  s <- summary(fit)$statistics
  expect_true(all(s[, "n_eff"] > 500))
  z <- abs(s[, "mean"] - ref_mean) / ref_sd
  expect_true(all(z < 0.2), info = paste(format(z, digits = 2), collapse = " "))
  ratio <- s[, "sd"] / ref_sd
  expect_true(all(abs(ratio - 1) < 0.2), info = paste(format(ratio, digits = 3), collapse = " "))
})

test_that("responses: 0/1, logical, +-1 and two-level factors give the same model", {
  d <- pima()
  X <- model.matrix(~ glu + bmi, d)
  yes <- d$type == "Yes"
  m_factor <- model_logistic(type ~ glu + bmi, data = d, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_identical(m_factor$labels, c("No", "Yes"))
  for (y in list(as.numeric(yes), yes, ifelse(yes, 1, -1), factor(yes))) {
    m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
    expect_identical(m$z, m_factor$z)
  }
  # the second level is the event, as in glm()
  flipped <- model_logistic(X, factor(d$type, levels = c("Yes", "No")), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_identical(flipped$z[4, ], -m_factor$z[4, ])
})

test_that("bad responses and priors are clear errors", {
  d <- pima()
  X <- model.matrix(~ glu, d)
  expect_error(model_logistic(X, rep(1, nrow(d))), "must have two classes; every value is 1")
  expect_error(model_logistic(X, rep(TRUE, nrow(d))), "must have two classes; it is all TRUE")
  expect_error(model_logistic(X, factor(rep("a", nrow(d)), levels = c("a", "b"))),
               "must have two classes; the factor has 1")
  three <- factor(sample(c("a", "b", "c"), nrow(d), replace = TRUE))
  expect_error(model_logistic(X, three), "must have two classes; the factor has 3")
  expect_error(model_logistic(X, c(NA, as.numeric(d$type == "Yes")[-1])), "`y` must not be NA")
  expect_error(model_logistic(X, seq_len(nrow(d))), "must be 0/1, -1/\\+1, logical or a two-level factor")
  expect_error(model_logistic(X, as.character(d$type)), "must be 0/1, -1/\\+1, logical or a two-level factor, not character")
  bad <- d; bad$type[3] <- NA
  expect_error(model_logistic(type ~ glu, data = bad), "column 'type' has missing values")
  bad <- d; bad$when <- as.POSIXct("2020-01-01") + seq_len(nrow(d))
  expect_error(model_logistic(type ~ when, data = bad), "column 'when' \\(class POSIXct\\) cannot be made numeric")
  expect_error(model_logistic(X, d$type, prior = prior_nig()), "`prior` must be made by prior_normal\\(\\) or prior_laplace\\(\\)")
  expect_error(model_logistic(X, d$type, prior = prior_normal(0, c(1, 2, 3))),
               "`prior` sd has length 3 but it applies to 1 coefficient \\(glu\\)")
  expect_error(model_logistic(X, d$type, prior = prior_normal(0, c(1, 2, 3)),
                              prior_intercept = NULL),
               "`prior` sd has length 3 but it applies to 2 coefficients")
  expect_error(prior_normal(0, -1), "`sd` must be positive and finite")
  expect_error(prior_laplace(NA), "`location` must be a numeric vector of finite values")
})

test_that("the intercept can have its own prior, on centred predictors or not", {
  d <- MASS::Pima.tr
  m <- model_logistic(type ~ glu + bmi, data = d, prior = prior_laplace(0, 1),
                      prior_intercept = prior_normal(0, 10))
  expect_identical(m$prior_type, c(0L, 1L, 1L))
  # the intercept's own term is flat: its prior is on alpha + xbar' beta
  expect_identical(m$prior_scale, c(Inf, 1, 1))
  expect_identical(m$prior_centre, c(1, mean(d$glu), mean(d$bmi)))
  expect_identical(c(m$prior_centre_loc, m$prior_centre_scale), c(0, 10))
  w <- c(-6, 0.03, 0.08)
  expect_equal(log_posterior(m, w)$logprior,
               dnorm(w[1] + w[2] * mean(d$glu) + w[3] * mean(d$bmi), 0, 10, log = TRUE) +
                 sum(-abs(w[2:3]) - log(2)), tolerance = 1e-12)
  # prior_intercept = NULL: `prior` on every raw coefficient
  m0 <- model_logistic(type ~ glu + bmi, data = d, prior = prior_laplace(0, 1),
                       prior_intercept = NULL)
  expect_identical(m0$prior_type, c(1L, 1L, 1L))
  expect_null(m0$prior_centre)
  # a prior_intercept on a design without an intercept is not used
  m1 <- model_logistic(type ~ 0 + glu + bmi, data = d, prior = prior_normal(0, 2))
  expect_null(m1$prior_centre)
  expect_identical(m1$prior_scale, c(2, 2))
})

test_that("integer 0/1 and -1/1 responses are accepted like doubles", {
  set.seed(8)
  X <- cbind(1, rnorm(50))
  y <- rbinom(50, 1, 0.5)
  expect_type(y, "integer")
  a <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
  b <- model_logistic(X, as.double(y), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_identical(log_posterior(a, c(0.1, 0.2)), log_posterior(b, c(0.1, 0.2)))
  expect_identical(log_posterior(model_logistic(X, 2L * y - 1L, prior = prior_normal(0, 10), prior_intercept = NULL), c(0.1, 0.2)),
                   log_posterior(b, c(0.1, 0.2)))
})

test_that("the blocked kernel for many covariates gives R's gradient", {
  # p >= 8 runs dense.h's blocks of 4 rows with four partial sums; n = 203
  # leaves 3 rows after the last block, and p = 4k + 3 leaves a tail of each
  # row after the vector lanes
  set.seed(7)
  for (p in c(8, 23, 64)) {
    n <- 203
    X <- matrix(rnorm(n * p), n, p)
    y <- rbinom(n, 1, 0.4)
    m <- model_logistic(X, y, prior = prior_normal(0, 3))
    w <- rnorm(p, sd = 0.3)
    s <- 2 * y - 1
    g <- drop(crossprod(X, s * plogis(-s * drop(X %*% w))))
    ev <- log_posterior(m, w)
    expect_equal(unname(ev$grad_loglik), g, tolerance = 1e-12)
    expect_equal(ev$loglik, sum(plogis(s * drop(X %*% w), log.p = TRUE)), tolerance = 1e-12)
  }
})

test_that("float storage agrees with double storage to the data's rounding", {
  # Each covariate is rounded to float (relative error <= 2^-24); y = +-1 is
  # exact. Row i's gradient c_i x_i then moves by at most
  # 2^-24 |x_i| (|c_i| + |dc_i/deta| sum_k |x_ik beta_k|), |dc/deta| <= 1/4,
  # plus the double arithmetic's own rounding (far smaller): the bound
  # tested, summed over rows, per coordinate.
  # p = 300, n = 1000: float rows over 1 kB in data over 1 MB, which take
  # the kernel that asks for the next block's rows as it sums (src/dense.h:
  # dense_spread())
  set.seed(9)
  for (p in c(3, 8, 37, 300)) {
    n <- if (p == 300) 1000 else 301
    X <- matrix(rnorm(n * p, sd = 3), n, p)
    y <- rbinom(n, 1, 0.5)
    md <- model_logistic(X, y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
    mf <- model_logistic(X, y, sparse = FALSE, storage = "float", prior = prior_normal(0, 10), prior_intercept = NULL)
    expect_null(md$zf)
    expect_length(mf$zf, 4 * (p + 1) * n)
    w <- rnorm(p, sd = 0.5)
    gd <- log_posterior(md, w)$grad_loglik
    gf <- log_posterior(mf, w)$grad_loglik
    s <- 2 * y - 1
    cabs <- abs(plogis(-s * drop(X %*% w)))
    bound <- 2^-24 * drop(crossprod(abs(X), cabs + 0.25 * drop(abs(X) %*% abs(w)))) * 1.01 +
      1e-12 * drop(crossprod(abs(X), cabs))
    expect_true(all(abs(gf - gd) <= bound), label = sprintf("p = %d within the bound", p))
    expect_true(any(gf != gd), label = "the float copy is what the gradient reads")
    # the same draws' distribution: a short run agrees with double storage
    set.seed(3)
    # (200 iterations: too few for the run checks, which warn)
    f1 <- expect_run_warnings(sgld(md, lr = 1e-4, batch_size = 50, iter = 200, chains = 1))
    set.seed(3)
    f2 <- expect_run_warnings(sgld(mf, lr = 1e-4, batch_size = 50, iter = 200, chains = 1))
    expect_lt(max(abs(as.matrix(f1$draws) - as.matrix(f2$draws))), 1e-3)
  }
  # the float kernel's draws do not depend on the number of threads
  set.seed(4)
  a <- expect_run_warnings(sgld(mf, lr = 1e-4, batch_size = 30, iter = 300, chains = 3,
                                threads = 1))
  set.seed(4)
  b <- expect_run_warnings(sgld(mf, lr = 1e-4, batch_size = 30, iter = 300, chains = 3,
                                threads = 2))
  expect_identical(lapply(a$draws, unclass), lapply(b$draws, unclass))
  expect_error(model_logistic(X, y, storage = "half"), "storage")
  expect_error(model_logistic(X, y, sparse = TRUE, storage = "float"), "dense")
})
