# sampler(formula, data, family, ...): the model built from the family, and
# the same draws as the model face for the same seed and settings.

face_data <- function(n = 80, seed = 3) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), expo = runif(n, 0.5, 2),
                  w = sample(1:3, n, TRUE))
  eta <- 0.3 + 0.6 * d$x1 - 0.4 * d$x2
  d$y <- eta + rnorm(n)
  d$b <- rbinom(n, 1, plogis(eta))
  d$k <- rpois(n, exp(eta + log(d$expo)))
  d$nb <- rnbinom(n, size = 3, mu = exp(eta))
  d
}

# each family: the formula face's arguments, the model it must equal, a step
face_families <- function(d) list(
  gaussian = list(family = gaussian(), formula = y ~ x1 + x2,
                  model = model_linear(y ~ x1 + x2, data = d), lr = 2e-3),
  binomial = list(family = binomial(), formula = b ~ x1 + x2,
                  model = model_logistic(b ~ x1 + x2, data = d), lr = 1e-2),
  poisson = list(family = "poisson", formula = k ~ x1 + x2,
                 model = model_poisson(k ~ x1 + x2, data = d), lr = 2e-3),
  negbin = list(family = "negbin", formula = nb ~ x1 + x2,
                model = model_negbin(nb ~ x1 + x2, data = d), lr = 2e-3))

same_fit <- function(a, b) {
  expect_identical(as.matrix(a$draws), as.matrix(b$draws))
  expect_identical(coef(a), coef(b))
}

test_that("every sampler gives the model face's draws for every family", {
  d <- face_data()
  samplers <- list(
    sgld = function(m, ...) sgld(m, ..., iter = 200, batch_size = 20, chains = 1),
    psgld = function(m, lr, ...) psgld(m, lr = lr / 10, ..., iter = 200, batch_size = 20, chains = 1),
    sghmc = function(m, lr, ...) sghmc(m, lr = lr / 10, ..., iter = 200, batch_size = 20, chains = 1),
    sgd = function(m, ...) sgd(m, ..., iter = 200, batch_size = 20),
    gd = function(m, ...) gd(m, ..., iter = 100),
    mala = function(m, ...) mala(m, ..., iter = 200, chains = 1),
    bbb = function(m, lr, ...) bbb(m, lr = lr, ..., iter = 200, batch_size = 20, draws = 50))
  for (fam in face_families(d)) for (s in names(samplers)) {
    run <- samplers[[s]]
    set.seed(7)
    # (200 iterations: the samplers' and bbb()'s checks may warn, the
    # optimisers' do not; the two faces are compared, not their runs)
    by_model <- quietly_checked(run(fam$model, lr = fam$lr))
    set.seed(7)
    by_formula <- quietly_checked(run(fam$formula, lr = fam$lr, data = d, family = fam$family))
    same_fit(by_formula, by_model)
    expect_identical(by_formula$model$names, fam$model$names)
  }
})

test_that("lr = \"auto\" and the fit's call follow the formula face", {
  d <- face_data()
  m <- model_logistic(b ~ x1 + x2, data = d)
  set.seed(2)
  by_model <- expect_run_warnings(sgld(m, iter = 400, chains = 1))
  set.seed(2)
  by_formula <- expect_run_warnings(sgld(b ~ x1 + x2, data = d, family = binomial, iter = 400, chains = 1))
  same_fit(by_formula, by_model)
  expect_identical(by_formula$auto$lr, by_model$auto$lr)
  # the call as match.call() gives it, as lm() and glm() keep theirs
  expect_identical(by_formula$call,
                   quote(sgld(model = b ~ x1 + x2, iter = 400, data = d, family = binomial, chains = 1)))
  # a data frame in second place is `data`, as in lm(y ~ x, d)
  set.seed(2)
  positional <- expect_run_warnings(sgld(b ~ x1 + x2, d, family = "binomial", iter = 400, chains = 1))
  same_fit(positional, by_model)
  # and glm()'s name for the formula
  set.seed(2)
  named <- expect_run_warnings(sgld(formula = b ~ x1 + x2, data = d, family = binomial,
                                 iter = 400, chains = 1))
  same_fit(named, by_model)
  # mala()'s automatic settings too
  set.seed(4)
  a <- expect_run_warnings(mala(m, iter = 300, chains = 1))
  set.seed(4)
  b <- expect_run_warnings(mala(b ~ x1 + x2, data = d, family = binomial(), iter = 300, chains = 1))
  same_fit(a, b)
})

test_that("family is taken as glm() takes it; the default is gaussian", {
  d <- face_data()
  m <- model_linear(y ~ x1 + x2, data = d)
  fits <- lapply(list(NULL, gaussian(), gaussian, "gaussian"), function(f) {
    set.seed(5)
    args <- list(y ~ x1 + x2, data = d, lr = 1e-3, iter = 100, chains = 1)
    if (!is.null(f)) args$family <- f
    expect_run_warnings(do.call(sgld, args))
  })
  set.seed(5)
  ref <- expect_run_warnings(sgld(m, lr = 1e-3, iter = 100, chains = 1))
  for (f in fits) same_fit(f, ref)
  # every negative binomial spelling, rstanarm's and MASS's families included
  nb <- model_negbin(nb ~ x1 + x2, data = d)
  set.seed(5)
  ref <- expect_run_warnings(sgld(nb, lr = 1e-3, iter = 100, chains = 1))
  fams <- list("neg_binomial_2", "negative_binomial", MASS::negative.binomial(2),
               structure(list(family = "neg_binomial_2", link = "log"), class = "family"))
  for (f in fams) {
    set.seed(5)
    same_fit(expect_run_warnings(sgld(nb ~ x1 + x2, data = d, family = f, lr = 1e-3,
                                   iter = 100, chains = 1)), ref)
  }
})

test_that("weights, offset, subset and na.action are honoured as glm() takes them", {
  d <- face_data()
  d$x2[c(3, 17)] <- NA
  keep <- !is.na(d$x2) & d$x1 > -1.5
  # weights and offset evaluated in `data`, subset too, na.action as given
  m <- model_poisson(k ~ x1 + x2, data = d[keep, ], weights = d$w[keep],
                     offset = log(d$expo[keep]))
  set.seed(9)
  ref <- expect_run_warnings(sgld(m, lr = 1e-3, iter = 200, batch_size = 20, chains = 1))
  set.seed(9)
  got <- expect_run_warnings(sgld(k ~ x1 + x2, data = d, family = poisson(), weights = w,
                               offset = log(expo), subset = x1 > -1.5, na.action = na.omit,
                               lr = 1e-3, iter = 200, batch_size = 20, chains = 1))
  same_fit(got, ref)
  expect_equal(got$model$obs_weight, d$w[keep])
  expect_equal(got$model$obs_offset, log(d$expo[keep]))
  # variables of the calling function's frame, as for glm() inside a function
  inside <- function(dat) {
    wts <- rep(2, nrow(dat))
    set.seed(9)
    sgd(y ~ x1, data = dat, weights = wts, lr = 1e-3, iter = 50)
  }
  dd <- face_data()
  set.seed(9)
  ref <- sgd(model_linear(y ~ x1, data = dd, weights = rep(2, nrow(dd))), lr = 1e-3, iter = 50)
  same_fit(inside(dd), ref)
  # with na.fail (the default) the missing values are an error naming the column
  expect_error(sgld(k ~ x1 + x2, data = d, family = poisson, lr = 1e-3, chains = 1),
               "`data` column 'x2' has missing values")
  # the binomial's priors and storage go to model_logistic()
  set.seed(1)
  a <- sgd(b ~ x1, data = d, family = binomial, prior = prior_normal(0, 1),
           prior_intercept = prior_normal(0, 5), lr = 1e-2, iter = 50)
  set.seed(1)
  b <- sgd(model_logistic(b ~ x1, data = d, prior = prior_normal(0, 1),
                          prior_intercept = prior_normal(0, 5)),
           lr = 1e-2, iter = 50)
  same_fit(a, b)
})

test_that("bad families, links and model arguments are errors naming the argument", {
  d <- face_data()
  expect_error(sgld(b ~ x1, data = d, family = binomial("probit"), chains = 1),
               "`family`: the binomial family's link must be logit here, not probit")
  expect_error(sgld(y ~ x1, data = d, family = Gamma(), chains = 1), "`family` must be gaussian.*Gamma")
  expect_error(sgld(y ~ x1, data = d, family = "quasipoisson", chains = 1),
               "`family` must be .*poisson.*\"quasipoisson\"")
  expect_error(sgld(y ~ x1, data = d, family = 3, chains = 1), "`family` must be a family")
  expect_error(sgld(y ~ x1, data = d, family = gaussian, prior_overdispersion = 1, chains = 1),
               "`prior_overdispersion` is not an argument of model_linear\\(\\)")
  expect_error(sgld(y ~ x1, data = d, family = poisson, prior_aux = prior_exponential(1), chains = 1),
               "`prior_aux` is not an argument of model_poisson\\(\\)")
  expect_error(mala(y ~ x1, data = d, vi_family = "fullrank", chains = 1), "`vi_family`")
  expect_error(sgld(y ~ x1, data = d, lr = 1e-3, foo = 1, chains = 1), "unknown argument: `foo`")
  expect_error(sgld(y ~ x1, family = gaussian, chains = 1), "`data` must be a data frame")
  expect_error(sgld(), "`model` is missing: give a model made by a model_\\*\\(\\) function, or a formula")
  expect_error(bbb(data = d), "`model` is missing")
  expect_error(sgld(b ~ x1, data = d[1, ], family = binomial, chains = 1),
               "`data` must have at least 2 observations, not 1")
  expect_error(sgld(b ~ x1, data = d, family = binomial, subset = x1 > 10, chains = 1),
               "`subset` leaves no rows")
  # the builder's messages name the formula, the user's first argument
  expect_error(sgld(y ~ x1, data = d, family = binomial, chains = 1), "the response of the formula \\(`model`\\)")
})

test_that("bbb()'s variational family is vi_family with a formula", {
  d <- face_data()
  m <- model_logistic(b ~ x1, data = d)
  set.seed(3)
  # (200 iterations: bbb()'s checks may warn; the faces are compared)
  a <- quietly_checked(bbb(m, family = "fullrank", lr = 0.01, iter = 200, draws = 50))
  set.seed(3)
  b <- quietly_checked(bbb(b ~ x1, data = d, family = binomial(), vi_family = "fullrank",
                           lr = 0.01, iter = 200, draws = 50))
  same_fit(a, b)
  expect_identical(b$vi$family, a$vi$family)
})

test_that("tune_sgld() takes a formula too", {
  d <- face_data()
  m <- model_linear(y ~ x1 + x2, data = d)
  set.seed(6)
  a <- tune_sgld(m, step = 0.25, batch_size = 80, precondition = "laplace",
                 control_variates = FALSE, iter = 100, max_draws = 50)
  set.seed(6)
  b <- tune_sgld(y ~ x1 + x2, data = d, step = 0.25, batch_size = 80,
                 precondition = "laplace", control_variates = FALSE, iter = 100,
                 max_draws = 50)
  expect_identical(a$table$score, b$table$score)
  expect_identical(a$best$lr, b$best$lr)
})
