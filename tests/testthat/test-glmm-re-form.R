# `re.form` with a subset of the random-effect terms (R/model-glmm-methods.R),
# against lme4's predict.merMod(): with the model's parameters set to
# lmer's estimates, the linear predictor of each re.form is lme4's.
skip_if_not_installed("lme4")

re_form_data <- function(n = 90, seed = 21) {
  set.seed(seed)
  d <- data.frame(a = factor(sample(sprintf("a%d", 1:6), n, TRUE)),
                  b = factor(sample(sprintf("b%d", 1:5), n, TRUE)),
                  c = factor(sample(sprintf("c%d", 1:3), n, TRUE)), x = rnorm(n))
  d$y <- 0.5 + 0.8 * d$x + rnorm(6, 0, 0.8)[d$a] + rnorm(6, 0, 0.4)[d$a] * d$x +
    rnorm(5, 0, 1.5)[d$b] + rnorm(15, 0, 0.7)[d$b:d$c] + rnorm(n, 0, 0.4)
  d
}

# lmer's estimates as one draw on the model's sampler scale: the
# coefficients, lme4's group effects (Zt's order is the model's), each
# term's covariance (lower triangle, column by column) and sigma.
lmer_point <- function(m, fit) {
  vc <- lme4::VarCorr(fit)
  sig <- unlist(lapply(vc, function(S) { S <- unclass(S)
                                          as.vector(S[lower.tri(S, diag = TRUE)]) }))
  u <- c(lme4::fixef(fit), as.numeric(lme4::getME(fit, "b")), stats::sigma(fit), sig)
  sgld:::to_sampler_scale.sgld_model_glmm(m, matrix(u, 1))
}

re_form_linpred <- function(m, W, re.form, newdata) {
  obj <- sgld:::with_group_options(list(model = m), re.form = re.form)
  sgld:::glmm_linpred(obj$model, W, newdata)[1, ]
}

test_that("re.form with a subset of the terms is lme4's predict.merMod()", {
  d <- re_form_data()
  nd <- d[c(3, 17, 40, 41, 88), ]
  cases <- list(
    list(f = y ~ x + (1 + x | a) + (1 | b),
         forms = list(~ (1 | b), ~ (1 + x | a), ~ (1 | a), ~ (0 + x | a), ~ (1 | a) + (1 | b))),
    list(f = y ~ x + (x || a) + (1 | b),
         forms = list(~ (1 | a), ~ (0 + x | a), ~ (x || a), ~ (1 | b))),
    list(f = y ~ x + (1 | b/c),
         forms = list(~ (1 | b), ~ (1 | c:b), ~ (1 | b/c))))
  for (case in cases) {
    fit <- suppressMessages(lme4::lmer(case$f, d, REML = FALSE))
    m <- model_glmer(case$f, d)
    W <- lmer_point(m, fit)
    # every effect: lme4's fitted linear predictor
    expect_equal(unname(re_form_linpred(m, W, NULL, nd)),
                 unname(predict(fit, newdata = nd)), tolerance = 1e-8)
    for (rf in case$forms) {
      lab <- paste(deparse1(case$f), deparse1(rf))
      want <- predict(fit, newdata = nd, re.form = rf)
      expect_equal(unname(re_form_linpred(m, W, rf, nd)), unname(want), tolerance = 1e-8,
                   label = lab)
      # the training rows (newdata NULL) too
      expect_equal(unname(re_form_linpred(m, W, rf, NULL)), unname(predict(fit, re.form = rf)),
                   tolerance = 1e-8, label = lab)
    }
    # and the subsets do differ from every effect and from none
    expect_false(isTRUE(all.equal(re_form_linpred(m, W, case$forms[[1]], nd),
                                  re_form_linpred(m, W, NULL, nd))))
  }
})

test_that("re.form subsets through the public methods, and what they need of newdata", {
  d <- re_form_data()
  set.seed(22)
  fit <- quietly_checked(mala(y ~ x + (1 + x | a) + (1 | b), data = d, chains = 1, iter = 200,
                              lr = 1e-3))
  U <- as.matrix(fit)
  nd <- d[1:4, ]
  fixed <- U[, c("(Intercept)", "x")] %*% rbind(1, nd$x)
  ba <- sapply(seq_len(nrow(nd)), function(i) U[, paste0("b[(Intercept) a:", nd$a[i], "]")])
  bb <- sapply(seq_len(nrow(nd)), function(i) U[, paste0("b[(Intercept) b:", nd$b[i], "]")])
  expect_equal(posterior_linpred(fit, newdata = nd, re.form = ~ (1 | a)), fixed + ba,
               ignore_attr = TRUE, tolerance = 1e-10)
  expect_equal(posterior_epred(fit, newdata = nd, re.form = ~ (1 | b)), fixed + bb,
               ignore_attr = TRUE, tolerance = 1e-10)
  # a term's grouping variable is needed only when the term is kept
  expect_identical(dim(posterior_linpred(fit, newdata = nd[, c("x", "b")], re.form = ~ (1 | b))),
                   c(nrow(U), 4L))
  expect_error(posterior_linpred(fit, newdata = nd[, c("x", "b")], re.form = ~ (1 | a)),
               "no column named 'a'")
  # a new level of a kept term gets a drawn effect; one of a dropped term is not looked at
  nd2 <- data.frame(x = 0, a = "new", b = "b1")
  expect_identical(dim(predict(fit, newdata = nd2, re.form = ~ (1 | b))), NULL)
  expect_equal(unname(posterior_linpred(fit, newdata = nd2, re.form = ~ (1 | b),
                                        allow.new.levels = FALSE)[, 1]),
               unname(U[, "(Intercept)"] + U[, "b[(Intercept) b:b1]"]), tolerance = 1e-10)
  # errors name re.form
  expect_error(predict(fit, re.form = ~ (1 | c)), "`re.form`: the term \\(1 \\| c\\) groups by `c`")
  expect_error(predict(fit, re.form = ~ (1 + x | b)),
               "`re.form`: the term \\(1 \\+ x \\| b\\) has group effects the model does not .`x` by `b`")
  expect_error(predict(fit, re.form = ~ x), "`re.form` ~x has no random-effect term")
  expect_error(predict(fit, re.form = "a"), "`re.form` must be NULL")
})
