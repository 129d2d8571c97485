# The multilevel face (R/multilevel-formula.R, R/multilevel-priors.R,
# R/model-glmm-methods.R): lme4's syntax gives lme4's designs, the default
# priors are stan_glmer's (data-raw/multilevel-face-reference.R stored
# rstanarm's prior_summary() and as.matrix() names), the two scales are one
# to one, and the methods agree with the draws they summarise. Fits here are
# short runs with a small step: the methods are checked against the draws
# the fit holds, whatever their quality (accuracy is test-model-glmm.R's).
skip_if_not_installed("lme4")

face_ref <- readRDS(test_path("multilevel-face-reference.rds"))

face_data <- function(n = 120, seed = 3) {
  set.seed(seed)
  d <- data.frame(a = factor(sample(sprintf("a%d", 1:6), n, TRUE)),
                  b = factor(sample(sprintf("b%d", 1:4), n, TRUE)),
                  x = rnorm(n), expo = runif(n, 0.5, 2), trials = sample(2:5, n, TRUE))
  eta <- 0.2 + 0.5 * d$x + rnorm(6, 0, 0.5)[d$a] + rnorm(4, 0, 0.3)[d$b]
  d$y <- eta + rnorm(n, 0, 0.5)
  d$k <- rpois(n, d$expo * exp(eta))
  d$s <- rbinom(n, d$trials, plogis(eta))
  d
}

# Z (rows x group effects, lme4's column order) rebuilt from the model's
# compact per-row groups and columns.
face_Z <- function(m) {
  Z <- matrix(0, m$n, sum(m$r * m$G))
  u <- matrix(m$u, sum(m$r))
  grp <- matrix(m$group, m$K)
  off <- 0
  roff <- 0
  for (k in seq_len(m$K)) {
    for (j in seq_len(m$r[k]))
      Z[cbind(seq_len(m$n), off + grp[k, ] * m$r[k] + j)] <- u[roff + j, ]
    off <- off + m$r[k] * m$G[k]
    roff <- roff + m$r[k]
  }
  Z
}

test_that("lme4's syntax gives lme4's fixed design and Z for every variant and family", {
  d <- face_data()
  forms <- c("(1 | a)", "(1 + x | a)", "(x || a)", "(1 | a) + (1 | b)", "(1 | a/b)",
             "(1 + x | a) + (1 | b)")
  lhs <- c(gaussian = "y", binomial = "cbind(s, trials - s)", poisson = "k")
  for (fam in names(lhs)) for (re in forms) {
    f <- as.formula(paste(lhs[[fam]], "~ x +", re, if (fam == "poisson") "+ offset(log(expo))"))
    m <- model_glmer(f, d, family = fam)
    lf <- lme4::lFormula(f, d)
    label <- paste(fam, re)
    expect_equal(face_Z(m), t(as.matrix(lf$reTrms$Zt)), ignore_attr = TRUE, label = label)
    # the model holds the centred design; the user's is lme4's
    expect_equal(t(m$x + m$x_means), unclass(lf$X), ignore_attr = TRUE, label = label)
    expect_identical(m$G, unname(vapply(lf$reTrms$cnms, length, 1L) * 0L +
                                   vapply(lf$reTrms$flist[attr(lf$reTrms$flist, "assign")],
                                          nlevels, 1L)), label = label)
    if (fam == "poisson") expect_equal(m$obs_offset, log(d$expo), label = label)
    if (fam == "binomial") expect_equal(m$trials, as.double(d$trials), label = label)
  }
})

test_that("`subset` fits the rows lme4 fits, dropping levels left without rows", {
  d <- face_data()
  keep <- d$x > 0 & d$a != levels(d$a)[1]
  f <- k ~ x + (1 + x | a) + (1 | b) + offset(log(expo))
  m <- model_glmer(f, d, family = poisson(), subset = x > 0 & a != levels(a)[1])
  lf <- lme4::lFormula(f, d, subset = x > 0 & a != levels(a)[1])
  expect_equal(m$n, sum(keep))
  expect_equal(face_Z(m), t(as.matrix(lf$reTrms$Zt)), ignore_attr = TRUE)
  expect_equal(t(m$x + m$x_means), unclass(lf$X), ignore_attr = TRUE)
  expect_equal(m$obs_offset, log(d$expo[keep]))
  # the same model as on the rows taken out by hand
  expect_identical(m$names, model_glmer(f, droplevels(d[keep, ]), family = poisson())$names)
  expect_false(any(grepl(paste0(" a:", levels(d$a)[1], "]"), m$names, fixed = TRUE)))
  # through the formula face, row numbers
  rows <- which(keep)
  fit <- quietly_checked(sgld(f, data = d, family = poisson(), subset = rows, lr = 1e-4,
                               iter = 20, chains = 1, progress = FALSE))
  expect_equal(nobs(fit), length(rows))
  expect_error(model_glmer(f, d, family = poisson(), subset = x > 100), "`subset` leaves no rows")
  expect_error(model_glmer(f, d, family = poisson(), subset = c(TRUE, NA)),
               "`subset` must be TRUE/FALSE for each of the")
})

# The calls data-raw/multilevel-face-reference.R ran stan_glmer on: data and
# family by case, and the model of each with the stored formula.
face_cases <- list(sleepstudy = list(lme4::sleepstudy, gaussian()),
                   sleepstudy_uncorrelated = list(lme4::sleepstudy, gaussian()),
                   cbpp = list(lme4::cbpp, binomial()),
                   grouseticks = list(lme4::grouseticks, poisson()),
                   cbpp_offset = list(lme4::cbpp, poisson()))
face_model <- function(case)
  model_glmer(face_ref[[case]]$formula, face_cases[[case]][[1]], face_cases[[case]][[2]])

test_that("the default priors are stan_glmer's, to 1e-10, and print in its layout", {
  for (case in names(face_cases)) {
    ref <- face_ref[[case]]
    m <- face_model(case)
    icpt <- m$intercept
    expect_equal(m$prior_loc[icpt], as.vector(ref$intercept$location), tolerance = 1e-10,
                 label = case)
    expect_equal(m$prior_scale[icpt], as.vector(ref$intercept$scale), tolerance = 1e-10,
                 label = case)
    expect_equal(m$prior_loc[-icpt], rep_len(as.vector(ref$coef$location), m$p - 1), tolerance = 1e-10,
                 label = case)
    expect_equal(m$prior_scale[-icpt], as.vector(ref$coef$scale), tolerance = 1e-10, label = case)
    if (!is.null(ref$aux_rate)) expect_equal(m$aux_rate, as.vector(ref$aux_rate), tolerance = 1e-10)
    expect_equal(c(m$decov_regularization[1], m$decov_concentration[1], m$decov_shape[1],
                   m$decov_scale[1]), unname(unlist(ref$covariance)), label = case)
    # rstanarm's section titles, in its order
    printed <- capture.output(print(prior_summary(m)))
    titles <- c("Intercept (after predictors centered)", "Coefficients", "Auxiliary (sigma)",
                "Covariance")
    expect_identical(intersect(printed, titles), intersect(ref$print, titles), label = case)
    # the group counts rstanarm reports
    expect_identical(m$n, as.double(ref$nobs))
  }
  # the adjusted sleepstudy prior, as rstanarm prints it
  printed <- capture.output(print(prior_summary(
    model_glmer(Reaction ~ Days + (Days | Subject), lme4::sleepstudy))))
  expect_true(any(grepl("normal(location = 298.5, scale = 140.8)", printed, fixed = TRUE)))
  expect_true(any(grepl("decov(reg. = 1, conc. = 1, shape = 1, scale = 1)", printed,
                        fixed = TRUE)))
})

test_that("the parameters are named as stan_glmer's as.matrix() names them", {
  for (case in names(face_cases)) {
    ref <- face_ref[[case]]
    m <- face_model(case)
    expect_identical(m$names, ref$names, label = case)
  }
})

test_that("the user's scale and the sampler's are one to one", {
  d <- face_data()
  set.seed(4)
  for (f in list(y ~ x + (1 + x | a) + (1 | b), y ~ x + (1 + x + expo | a),
                 cbind(s, trials - s) ~ x + (1 | a/b))) {
    m <- model_glmer(f, d, family = if (identical(f[[2]], quote(y))) "gaussian" else "binomial")
    W <- matrix(rnorm(3 * m$d, sd = 0.6), 3)
    U <- sgld:::to_user_scale.sgld_model_glmm(m, W)
    expect_identical(colnames(U), m$names)
    expect_equal(sgld:::to_sampler_scale.sgld_model_glmm(m, U), W, tolerance = 1e-9,
                 ignore_attr = TRUE)
    # b = L z with L the Cholesky factor of the reported Sigma
    k1 <- m$sigma_names[m$sigma_term == 1]
    S <- sgld:::glmm_sigma_matrix(U[1, k1], m$r[1])
    z <- matrix(W[1, m$p + seq_len(m$r[1] * m$G[1])], m$r[1])
    expect_equal(as.vector(t(chol(S)) %*% z), unname(U[1, m$p + seq_len(m$r[1] * m$G[1])]),
                 tolerance = 1e-10)
  }
  # the intercept is the user's, not the centred one C sees
  m <- model_glmer(y ~ x + (1 | a), d)
  U <- sgld:::to_user_scale.sgld_model_glmm(m, matrix(c(1, 2, rep(0, m$d - 2)), 1))
  expect_equal(unname(U[1, 1:2]), c(1 - 2 * mean(d$x), 2))
})

# One short fit per family, shared by the tests of the methods.
face_fits <- local({
  d <- face_data()
  set.seed(61)
  quietly_checked(list(
    gaussian = mala(y ~ x + (1 + x | a), data = d, chains = 2, iter = 600, lr = 1e-3),
    poisson = mala(k ~ x + (1 | a) + (1 | b) + offset(log(expo)), data = d, family = poisson(),
                   chains = 2, iter = 600, lr = 1e-3),
    binomial = mala(cbind(s, trials - s) ~ x + (1 | a), data = d, family = binomial,
                    chains = 2, iter = 600, lr = 1e-3)
  ))
})

test_that("fixef, ranef, coef, VarCorr, ngrps, sigma and nobs summarise the draws", {
  fit <- face_fits$gaussian
  U <- as.matrix(fit)
  expect_identical(colnames(U), fit$model$names)
  expect_identical(colnames(as.data.frame(fit)), fit$model$names)
  med <- apply(U, 2, median)
  expect_equal(fixef(fit), med[c("(Intercept)", "x")])
  re <- ranef(fit)
  expect_s3_class(re, "ranef.mer")
  expect_identical(dimnames(re$a), list(sprintf("a%d", 1:6), c("(Intercept)", "x")))
  expect_equal(re$a["a3", "x"], med[["b[x a:a3]"]])
  cf <- coef(fit)
  expect_equal(as.matrix(cf$a), sweep(as.matrix(re$a), 2, fixef(fit), "+"))
  vc <- VarCorr(fit)
  expect_s3_class(vc, "VarCorr.merMod")
  expect_equal(vc$a[2, 1], mean(U[, "Sigma[a:x,(Intercept)]"]))
  expect_equal(attr(vc, "sc"), mean(U[, "sigma"]))
  expect_output(print(vc), "Residual")
  expect_identical(ngrps(fit), c(a = 6L))
  expect_identical(ngrps(face_fits$poisson), c(a = 6L, b = 4L))
  expect_equal(sigma(fit), median(U[, "sigma"]))
  expect_identical(sigma(face_fits$poisson), 1)
  expect_identical(nobs(fit), 120L)
  expect_identical(rownames(quietly_checked(summary(fit))$statistics), fit$model$names)
  flat <- quietly_checked(sgld(model_linear(y ~ x, data = face_data()), chains = 1,
                                iter = 100, lr = 1e-4, batch_size = 10))
  expect_error(fixef(flat), "for multilevel models")
})

test_that("predictions: the linear predictor is X beta + Z b per draw; re.form = NA the fixed part", {
  d <- face_data()
  for (fam in names(face_fits)) {
    fit <- face_fits[[fam]]
    m <- fit$model
    U <- as.matrix(fit)
    lf <- lme4::lFormula(m$formula, d)
    Zt <- as.matrix(lf$reTrms$Zt)
    off <- if (fam == "poisson") log(d$expo) else 0
    fixed <- U[, m$coef_names] %*% t(lf$X) + rep(off, each = nrow(U))
    full <- fixed + U[, m$b_names] %*% Zt
    expect_equal(posterior_linpred(fit), full, ignore_attr = TRUE, tolerance = 1e-10,
                 label = fam)
    expect_equal(posterior_linpred(fit, re.form = NA), fixed, ignore_attr = TRUE,
                 tolerance = 1e-10, label = fam)
    expect_equal(posterior_linpred(fit, re.form = ~0, newdata = d[1:7, ]), fixed[, 1:7],
                 ignore_attr = TRUE, tolerance = 1e-10, label = fam)
    # newdata of training rows: the same as the training rows
    expect_equal(posterior_linpred(fit, newdata = d[c(5, 2, 9), ]), full[, c(5, 2, 9)],
                 ignore_attr = TRUE, tolerance = 1e-10, label = fam)
    mu <- posterior_epred(fit)
    inv <- switch(fam, gaussian = identity, binomial = plogis, poisson = exp)
    expect_equal(mu, inv(full), ignore_attr = TRUE, tolerance = 1e-10, label = fam)
    expect_equal(unname(predict(fit)), unname(colMeans(mu)), tolerance = 1e-10)
    expect_equal(unname(predict(fit, type = "link", re.form = NA)), unname(colMeans(fixed)),
                 tolerance = 1e-10)
    expect_identical(dim(posterior_predict(fit, ndraws = 4)), c(4L, 120L))
    # log_lik of new rows (computed in R) equals the training rows' (in C)
    ll <- log_lik(fit)
    expect_equal(unname(log_lik(fit, newdata = d)), unname(ll), tolerance = 1e-9,
                 label = fam)
    expect_identical(dim(suppressWarnings(loo(fit))$pointwise)[1], 120L)
  }
})

test_that("a new group's effect is drawn from its term's distribution at each draw", {
  fit <- face_fits$gaussian
  U <- as.matrix(fit)
  nd <- data.frame(x = c(0.5, 0.5, -1), a = c("zz", "a2", "yy"))
  set.seed(8)
  eta <- posterior_linpred(fit, newdata = nd)
  fixed <- posterior_linpred(fit, newdata = nd, re.form = NA)
  # a seen group gets its own effect
  expect_equal(eta[, 2] - fixed[, 2], U[, "b[(Intercept) a:a2]"] + 0.5 * U[, "b[x a:a2]"],
               ignore_attr = TRUE)
  # a new one N(0, u' Sigma u) at each draw: standardised, mean 0 and sd 1
  # over 600 draws (to 4 standard errors)
  for (j in c(1, 3)) {
    x <- nd$x[j]
    v <- U[, "Sigma[a:(Intercept),(Intercept)]"] + 2 * x * U[, "Sigma[a:x,(Intercept)]"] +
      x^2 * U[, "Sigma[a:x,x]"]
    z <- (eta[, j] - fixed[, j]) / sqrt(v)
    expect_lt(abs(mean(z)), 4 / sqrt(length(z)))
    expect_lt(abs(sd(z) - 1), 4 / sqrt(2 * length(z)))
  }
  # two new groups get independent effects
  expect_lt(abs(cor(eta[, 1] - fixed[, 1], eta[, 3] - fixed[, 3])), 4 / sqrt(nrow(U)))
  expect_error(posterior_epred(fit, newdata = nd, allow.new.levels = FALSE),
               "group .zz. of \\(1 \\+ x \\| a\\) was not in the training data")
  # re.form's terms must be the model's (subsets: test-glmm-re-form.R)
  expect_error(posterior_epred(fit, newdata = nd, re.form = ~ (1 | b)),
               "`re.form`: the term \\(1 \\| b\\) groups by `b`, which no term")
  expect_error(posterior_epred(fit, newdata = nd, wrong = 1), "unknown argument")
  expect_error(posterior_epred(fit, newdata = data.frame(x = 1)), "no column named 'a'")
  # binomial trials come from the response's columns
  bin <- face_fits$binomial
  expect_error(posterior_predict(bin, newdata = face_data()[1:3, c("x", "a")]),
               "needs the columns of the response cbind\\(s, trials - s\\)")
  yrep <- posterior_predict(bin, newdata = face_data()[1:3, ])
  expect_true(all(yrep >= 0 & yrep <= rep(face_data()$trials[1:3], each = nrow(yrep))))
  # re.form = NA needs no grouping column
  expect_identical(dim(posterior_epred(fit, newdata = data.frame(x = 1), re.form = NA)),
                   c(nrow(U), 1L))
})

test_that("the formula face builds the multilevel model and runs as on the model", {
  d <- face_data()
  set.seed(9)
  a <- quietly_checked(mala(y ~ x + (1 | a), data = d, chains = 1, iter = 200, lr = 1e-3))
  set.seed(9)
  b <- quietly_checked(mala(model_glmer(y ~ x + (1 | a), d), chains = 1, iter = 200,
                             lr = 1e-3))
  expect_identical(as.matrix(a), as.matrix(b))
  expect_s3_class(a$model, "sgld_model_glmm")
  expect_identical(a$call[[1]], quote(mala))
  # sgld() with a formula runs end to end (its automatic settings for this
  # model are the sampler's work, R/auto-glmm.R; here a small fixed step)
  fit <- quietly_checked(sgld(cbind(s, trials - s) ~ x + (1 | a), data = d,
                               family = binomial(), chains = 1, lr = 1e-4, iter = 200))
  expect_s3_class(fit, "sgld_fit")
  expect_true(all(is.finite(as.matrix(fit))))
  # an offset argument is the offset() term's equal, in new rows too
  set.seed(10)
  po1 <- quietly_checked(mala(k ~ x + (1 | a) + offset(log(expo)), data = d, family = poisson,
                               chains = 1, iter = 50, lr = 1e-3))
  set.seed(10)
  po2 <- quietly_checked(mala(k ~ x + (1 | a), data = d, family = poisson, offset = log(expo),
                               chains = 1, iter = 50, lr = 1e-3))
  expect_identical(as.matrix(po1), as.matrix(po2))
  expect_equal(posterior_linpred(po2, newdata = d[1:5, ]), posterior_linpred(po1)[, 1:5],
               ignore_attr = TRUE, tolerance = 1e-10)
  expect_error(model_glmer(k ~ x + (1 | a), d, poisson(), offset = 1:3),
               "`offset` must be finite numbers, one per row")
  # nested groups of a numeric variable: new rows' groups are lme4's
  d$bn <- as.integer(d$b)
  nest <- quietly_checked(mala(y ~ x + (1 | a/bn), data = d, chains = 1, iter = 50, lr = 1e-3))
  expect_identical(ngrps(nest), c("bn:a" = 24L, a = 6L))
  expect_equal(posterior_linpred(nest, newdata = d), posterior_linpred(nest),
               ignore_attr = TRUE, tolerance = 1e-10)
  # the model's priors are arguments of the face
  m <- quietly_checked(mala(y ~ x + (1 | a), data = d, chains = 1, iter = 20, lr = 1e-3,
                             prior = prior_normal(0, 1), prior_covariance = prior_decov(scale = 2)))
  expect_equal(m$model$prior_scale[2], 1)
  expect_equal(m$model$decov_scale, 2)
})

test_that("bad input is a clear error naming it", {
  d <- face_data(60)
  # a grouping factor with one level
  d$one <- factor("k")
  expect_error(model_glmer(y ~ x + (1 | one), d), "`formula`: grouping factors must have > 1")
  # a term on a variable missing from data
  expect_error(model_glmer(y ~ x + (1 | nothere), d), "groups by `nothere`, which is not a column")
  expect_error(model_glmer(y ~ x + (nothere | a), d), "`nothere`, which is not a column")
  # (x | g) with x a factor of many levels
  d$f <- factor(sample(letters[1:15], 60, TRUE))
  expect_error(model_glmer(y ~ x + (f | a), d), "factor `f` \\(15 levels\\)")
  # NA in a grouping variable
  d_na <- d
  d_na$a[7] <- NA
  expect_error(model_glmer(y ~ x + (1 | a), d_na),
               "grouping variable `a` of \\(1 \\| a\\) has 1 missing value \\(first in row 7\\)")
  # a random-effect term on a family that cannot have one (the negative
  # binomial can: test-glmm-negbin.R)
  expect_s3_class(model_glmer(k ~ x + (1 | a), d, family = "negbin"), "sgld_model_glmm")
  expect_error(model_glmer(y ~ x + (1 | a), d, family = binomial("probit")), "`family`")
  expect_error(model_poisson(k ~ x + (1 | a), data = d), "\\(1 \\| a\\) is a random-effect term")
  expect_error(model_mlp(y ~ x + (1 | a), data = d), "random-effect term")
  # every group with one row: indistinguishable from the residual (lme4's error)
  d$id <- factor(seq_len(60))
  expect_error(model_glmer(y ~ x + (1 | id), d), "number of levels of each grouping factor")
  # a group with one row is fitted, as lme4 and rstanarm fit it
  d$g2 <- factor(c(rep(c("p", "q"), 29), "r", "s"))
  expect_identical(model_glmer(y ~ x + (1 | g2), d)$G, 4L)
  # the face names arguments the multilevel model does not take, and bad weights
  expect_error(sgld(y ~ x + (1 | a), data = d, na.action = na.omit),
               "`na.action` is not an argument of model_glmer")
  expect_error(sgld(y ~ x + (1 | a), data = d, weights = x), "`weights` must be finite and non-negative")
  expect_error(model_glmer(y ~ x + (1 | a), d, prior = prior_laplace()), "prior_normal")
  expect_error(model_glmer(y ~ x + (1 | a), d, prior_covariance = prior_normal()),
               "`prior_covariance` must be made by prior_decov")
  expect_error(prior_decov(scale = -1), "`scale` must be positive")
  expect_error(model_glmer(y ~ x, d), "no random-effect term")
})
