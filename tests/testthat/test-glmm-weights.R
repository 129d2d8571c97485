# Prior weights in multilevel models (src/model_glmm.c's per-row weights,
# the collapsed gaussian route's weighted sums, model_glmer(weights =)):
# gradients against finite differences, integer weights against the rows
# repeated (the log posterior, the exact moves, the collapsed marginal and a
# sampler run), lme4's weighted fits as a check of the modes, binomial
# proportions with their trials as weights, and bad weights named.
skip_if_not_installed("lme4")

weights_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  d <- data.frame(a = factor(sample(letters[1:8], n, TRUE)), x = rnorm(n),
                  tr = sample(1:4, n, TRUE))
  eta <- 0.3 + d$x + rnorm(8)[d$a] + rnorm(8, 0, 0.5)[d$a] * d$x
  d$y <- eta + rnorm(n)
  d$k <- rpois(n, exp(0.2 + 0.3 * eta))
  d$s <- rbinom(n, d$tr, plogis(0.5 * eta))
  d$wi <- sample(1:3, n, TRUE)
  d
}

weights_formula <- function(family, rhs = "x + (1 + x | a)")
  stats::as.formula(paste(switch(family, gaussian = "y", binomial = "cbind(s, tr - s)",
                                 poisson = "k"), "~", rhs))

test_that("gradients with weights agree with finite differences", {
  d <- weights_data()
  set.seed(2)
  wt <- runif(nrow(d), 0, 3)
  for (family in c("gaussian", "binomial", "poisson"))
    for (rhs in c("x + (1 + x | a)", "x + (1 | a) + (0 + x | tr)")) {
      m <- sgld:::model_glmm(weights_formula(family, rhs), d, family, weights = wt)
      w <- rnorm(m$d, 0, 0.5)
      expect_lt(max(gradient_errors(m, w)), 1e-6, label = paste(family, rhs))
    }
})

test_that("integer weights give the log posterior of the rows repeated", {
  d <- weights_data()
  dd <- d[rep(seq_len(nrow(d)), d$wi), ]
  set.seed(3)
  for (family in c("gaussian", "binomial", "poisson")) {
    f <- weights_formula(family)
    mw <- sgld:::model_glmm(f, d, family, weights = d$wi)
    md <- sgld:::model_glmm(f, dd, family)
    for (i in 1:2) {
      w <- rnorm(mw$d, 0, 0.5)
      ew <- log_posterior(mw, w)
      ed <- log_posterior(md, w)
      expect_equal(ew$loglik + ew$logprior, ed$loglik + ed$logprior,
                   tolerance = 1e-10 / abs(ed$loglik), label = family)
      expect_equal(ew$grad_loglik, ed$grad_loglik, tolerance = 1e-10, label = family)
    }
    # log_lik() of the training rows is weighted: its sum is the log likelihood
    W <- matrix(rnorm(2 * mw$d, 0, 0.3), 2)
    expect_equal(rowSums(sgld:::model_loglik_rows(mw, W)),
                 rowSums(sgld:::model_loglik_rows(md, W)), tolerance = 1e-10, label = family)
  }
})

test_that("the exact moves with weights are the moves on the rows repeated", {
  # the group-wise Newton proposals and the acceptance sum over rows: with
  # the same random numbers, the two models make the same moves
  d <- weights_data()
  dd <- d[rep(seq_len(nrow(d)), d$wi), ]
  moves <- function(m, w) .Call(sgld:::C_sgld_model_moves, m, as.double(w), 30L)
  for (family in c("binomial", "poisson")) {
    f <- weights_formula(family)
    mw <- sgld:::model_glmm(f, d, family, weights = d$wi)
    md <- sgld:::model_glmm(f, dd, family)
    mw$exact_moves <- md$exact_moves <- 1L
    set.seed(4)
    w <- rnorm(mw$d, 0, 0.3)
    set.seed(5)
    rw <- moves(mw, w)
    set.seed(5)
    rd <- moves(md, w)
    expect_gt(mean(apply(rw$draws, 1, sd)), 0.1)   # they moved
    expect_equal(rw$draws, rd$draws, tolerance = 1e-10, label = family)
    expect_equal(rw$log_post, rd$log_post, tolerance = 1e-10, label = family)
  }
})

test_that("the collapsed gaussian marginal with weights is the rows repeated", {
  d <- weights_data()
  dd <- d[rep(seq_len(nrow(d)), d$wi), ]
  f <- y ~ x + (1 + x | a)
  sw <- sgld:::glmm_gaussian_system(sgld:::model_glmm(f, d, "gaussian", weights = d$wi))
  sd1 <- sgld:::glmm_gaussian_system(sgld:::model_glmm(f, dd, "gaussian"))
  set.seed(6)
  for (i in 1:2) {
    th <- c(rnorm(2, -0.5, 0.3), rnorm(1, 0, 0.5), log(0.9))
    cw <- sgld:::glmm_conditional(sw, th)
    cd <- sgld:::glmm_conditional(sd1, th)
    expect_equal(cw$loglik, cd$loglik, tolerance = 1e-10 / abs(cd$loglik))
    expect_equal(cw$mean, cd$mean, tolerance = 1e-10)
  }
  # the prior of theta is read on a one-row copy, its weight included
  expect_equal(sgld:::glmm_theta_logprior(sw, th), sgld:::glmm_theta_logprior(sd1, th),
               tolerance = 1e-12)
})

test_that("lme4's weighted fits are modes of the weighted model", {
  d <- weights_data()
  # gaussian: lmer's precision weights give, at its (theta, sigma), the
  # fixed and group effects of the weighted least squares that the
  # collapsed route's conditional mean solves (flat priors on beta)
  f <- y ~ x + (1 + x | a)
  fit <- lme4::lmer(f, d, weights = wi, REML = FALSE)
  m <- sgld:::model_glmm(f, d, "gaussian", weights = d$wi, prior_scale = 1e6)
  sig <- stats::sigma(fit)
  L <- sig * t(as.matrix(lme4::getME(fit, "Lambdat")))[1:2, 1:2]
  cond <- sgld:::glmm_conditional(sgld:::glmm_gaussian_system(m), c(sgld:::glmm_theta(L), log(sig)))
  beta <- m$prior_loc + m$prior_scale * cond$mean[1:2]
  b <- as.vector(L %*% matrix(cond$mean[-(1:2)], 2))
  expect_equal(unname(beta), unname(lme4::fixef(fit)), tolerance = 1e-8)
  expect_equal(b, as.numeric(lme4::getME(fit, "b")), tolerance = 1e-8)
  # binomial and poisson: glmer(nAGQ = 0) maximises the weighted log
  # likelihood minus |u|^2 / 2 in (beta, u) at its theta, so the model's
  # gradient there (z = u, flat on beta) is zero; unweighted it is not
  for (family in c("binomial", "poisson")) {
    f <- weights_formula(family, "x + (1 | a)")
    gf <- lme4::glmer(f, d, family = family, weights = wi, nAGQ = 0)
    z <- as.numeric(lme4::getME(gf, "u"))
    w <- c(lme4::fixef(gf), z, log(lme4::getME(gf, "theta")))
    expect_true(all(is.finite(w)))
    score <- function(m) log_posterior(m, w)$grad_loglik[seq_len(2 + length(z))] - c(0, 0, z)
    expect_lt(max(abs(score(sgld:::model_glmm(f, d, family, weights = d$wi)))), 1e-4,
              label = family)
    expect_gt(max(abs(score(sgld:::model_glmm(f, d, family)))), 0.5, label = family)
  }
})

test_that("sgld(f, data, weights) samples the rows repeated", {
  # both runs exact (the default collapsed route, 2 chains); fixed priors,
  # since autoscaling reads the data, which repeating rows changes
  d <- weights_data()
  dd <- d[rep(seq_len(nrow(d)), d$wi), ]
  pr <- list(prior = prior_normal(0, 5), prior_intercept = NULL, prior_aux = prior_exponential(1),
             chains = 2)
  set.seed(7)
  fw <- do.call(sgld, c(list(y ~ x + (1 | a), d, weights = quote(wi)), pr))
  set.seed(8)
  fd <- do.call(sgld, c(list(y ~ x + (1 | a), dd), pr))
  expect_identical(fw$auto$route, "collapsed")
  cols <- c("(Intercept)", "x", "sigma", "Sigma[a:(Intercept),(Intercept)]", "b[(Intercept) a:a]")
  Uw <- as.matrix(fw)[, cols]
  Ud <- as.matrix(fd)[, cols]
  se2 <- function(U) apply(U, 2, var) / coda::effectiveSize(U)
  z <- (colMeans(Uw) - colMeans(Ud)) / sqrt(se2(Uw) + se2(Ud))
  expect_lt(max(abs(z)), 4)
  # and the weights matter: the unweighted posterior is elsewhere
  set.seed(9)
  fu <- do.call(sgld, c(list(y ~ x + (1 | a), d), pr))
  expect_gt(abs(mean(as.matrix(fu)[, "sigma"]) - mean(Uw[, "sigma"])) /
              sqrt(se2(Uw)[["sigma"]]), 5)
})

test_that("a binomial response of proportions takes its trials from the weights", {
  d <- weights_data()
  d$p <- d$s / d$tr
  mp <- model_glmer(p ~ x + (1 | a), d, family = binomial(), weights = tr)
  mc <- model_glmer(cbind(s, tr - s) ~ x + (1 | a), d, family = binomial())
  expect_identical(mp$y, mc$y)
  expect_identical(mp$trials, mc$trials)
  expect_null(mp$obs_weight)
  set.seed(10)
  w <- rnorm(mp$d, 0, 0.5)
  expect_equal(log_posterior(mp, w)$loglik, log_posterior(mc, w)$loglik, tolerance = 1e-12)
  # 0/1 responses keep the weights as multipliers of each row's log likelihood
  d$b01 <- as.integer(d$s > 0)
  m01 <- model_glmer(b01 ~ x + (1 | a), d, family = binomial(), weights = wi)
  expect_identical(m01$obs_weight, as.double(d$wi))
  expect_error(model_glmer(p ~ x + (1 | a), d, family = binomial()),
               "proportions with the trials as `weights`")
  expect_error(model_glmer(p ~ x + (1 | a), d, family = binomial(), weights = tr + 0.5),
               "`weights`: with a binomial response of proportions")
})

test_that("bad weights are a clear error naming `weights`", {
  d <- weights_data()
  f <- y ~ x + (1 | a)
  expect_error(model_glmer(f, d, weights = -wi), "`weights` must be finite and non-negative; row 1")
  expect_error(model_glmer(f, d, weights = replace(wi, 3, NA)), "`weights` has 1 missing value .first in row 3")
  expect_error(model_glmer(f, d, weights = 1:5), "`weights` must have one value per row of `data` .60., not 5")
  expect_error(model_glmer(f, d, weights = as.character(wi)), "`weights` must be numbers")
  expect_error(model_glmer(f, d, weights = wi * 0), "`weights` are all zero")
  expect_error(model_glmer(f, d, weights = no_such_column), "`weights` cannot be evaluated")
  expect_error(sgld(f, d, weights = -wi), "`weights` must be finite and non-negative")
  # weights go with `subset`: evaluated on all rows, then subset with them
  m <- model_glmer(f, d, weights = wi, subset = x > 0)
  expect_identical(m$obs_weight, as.double(d$wi[d$x > 0]))
})

test_that("a proportions fit is the cbind() fit, and its methods read the weights", {
  d <- lme4::cbpp
  d$p <- d$incidence / d$size
  set.seed(11)
  fp <- sgld(p ~ period + (1 | herd), d, family = binomial(), weights = size, chains = 2)
  set.seed(11)
  fc <- sgld(cbind(incidence, size - incidence) ~ period + (1 | herd), d, family = binomial(),
             chains = 2)
  expect_identical(as.matrix(fp), as.matrix(fc))
  # log_lik of new rows (in R, the weights' expression evaluated in newdata)
  # is the training rows' (in C)
  expect_equal(unname(log_lik(fp, newdata = d)), unname(log_lik(fp)), tolerance = 1e-10)
  yrep <- posterior_predict(fp, newdata = d[1:3, ], ndraws = 50)
  expect_true(all(yrep <= rep(d$size[1:3], each = 50)) && any(yrep > 1))
  # prior weights on a poisson model: the same, each row's term times its weight
  d2 <- data.frame(k = rpois(40, 3), g = gl(5, 8), w = rep(c(0.5, 2), 20))
  m <- model_glmer(k ~ 1 + (1 | g), d2, family = poisson(), weights = w)
  set.seed(12)
  fw <- quietly_checked(mala(m, chains = 1, iter = 50, lr = 1e-3))
  expect_equal(unname(log_lik(fw, newdata = d2)), unname(log_lik(fw)), tolerance = 1e-10)
  expect_error(log_lik(fw, newdata = d2[, c("k", "g")]), "`newdata`: the weights `w`")
})
