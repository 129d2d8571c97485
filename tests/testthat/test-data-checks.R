# Data problems named before sampling, by the argument and the rule, never
# reported later as a sampler's problem.

test_that("all-zero and all-equal responses are named before sampling", {
  set.seed(1)
  d <- data.frame(x = rnorm(40), zero = 0, three = 3)
  expect_error(model_negbin(zero ~ x, data = d),
               "response is 0 in every row: a negative-binomial regression needs some non-zero")
  expect_error(model_poisson(zero ~ x, data = d),
               "response is 0 in every row: a Poisson regression needs some non-zero")
  expect_error(sgld(zero ~ x, data = d, family = poisson()), "response is 0 in every row")
  expect_error(model_linear(three ~ x, data = d),
               "response is 3 in every row: a linear regression needs a response that varies")
  expect_error(model_linear(cbind(1, d$x), rep(2.5, 40)), "response is 2.5 in every row")
  # one non-zero count is data
  d$zero[7] <- 1
  expect_s3_class(model_poisson(zero ~ x, data = d), "sgld_model_poisson")
  skip_if_not_installed("bigmemory")
  skip_on_os("windows")
  old <- options(sgld.cache_dir = tempfile("sgld-cache-"))
  on.exit(options(old), add = TRUE)
  dir <- tempfile("fbm")
  dir.create(dir)
  bm <- bigmemory::as.big.matrix(cbind(1, x = d$x, y = 3), backingfile = "m.bin",
                                 descriptorfile = "m.desc", backingpath = dir)
  expect_error(model_linear(bm, y = "y"), "response is 3 in every row")
})

test_that("counts are whole numbers a double holds exactly, shown as they are", {
  X <- cbind(1, x = c(-1, 0, 1, 2))
  expect_error(model_poisson(X, c(1 + 1e-12, 2, 3, 4)),
               "non-negative whole numbers; it has 1.000000000001 at position 1")
  expect_error(model_negbin(X, c(1, 2, 3, 4 - 1e-9)), "it has 3.999999999 at position 4")
  expect_error(model_poisson(X, c(1, 1e300, 3, 4)),
               "counts a double holds exactly \\(at most 2\\^53 = 9,007,199,254,740,992\\); it has 1e\\+300 at position 2")
  expect_error(model_negbin(X, c(1, 2, 2^53 + 2, 4)), "it has 9007199254740994 at position 3")
  expect_s3_class(model_poisson(X, c(1, 2, 2^53, 4)), "sgld_model_poisson")
})

test_that("a prior scale whose square underflows is refused", {
  expect_error(prior_laplace(0, 1e-300), "`scale` must be at least 1.5e-154 .*not 1e-300")
  expect_error(prior_normal(0, c(1, 1e-200)), "`sd` must be at least 1.5e-154 .*not 1e-200")
  expect_s3_class(prior_laplace(0, 1e-150), "sgld_prior")
  d <- data.frame(x = c(-1, 0, 1, 2, 0.5), y = c(0, 0, 1, 1, 1))
  expect_error(model_logistic(y ~ x, data = d, prior = prior_laplace(0, 1e-300)), "`scale`")
})

test_that("a formula with no columns is an error naming `formula`", {
  d <- data.frame(x = c(-1, 0, 1, 2), y = c(0, 1, 1, 0), n = c(1, 2, 0, 3))
  for (f in list(y ~ 0, y ~ -1)) {
    expect_error(model_linear(f, data = d), "`formula` y ~ [0-] ?1? ?gives no columns")
    expect_error(model_logistic(f, data = d), "`formula` .* gives no columns")
  }
  expect_error(model_poisson(n ~ 0, data = d), "`formula` n ~ 0 gives no columns")
  expect_error(model_negbin(n ~ 0, data = d), "`formula` n ~ 0 gives no columns")
  expect_error(sgld(n ~ 0, data = d, family = poisson()),
               "`formula` n ~ 0 gives no columns: no intercept and no predictors")
})

test_that("methods on a fit that stored no draws, and emptied states, name the cause", {
  m <- model_logistic(type ~ ., data = pima())
  set.seed(1)
  fit <- quietly_checked(sgld(m, lr = 1e-3, iter = 200, pars = FALSE))
  no_draws <- "this fit stored no draws \\(`pars = FALSE` was given\\).*`pars = TRUE`"
  if (requireNamespace("rstantools", quietly = TRUE))
    expect_error(rstantools::posterior_interval(fit), paste0("posterior_interval\\(\\): ", no_draws))
  expect_error(confint(fit), paste0("confint\\(\\): ", no_draws))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_error(plot(fit), paste0("plot\\(\\): ", no_draws))
  # a state emptied after the run, of a fit by hand and of an automatic one
  emptied <- fit
  emptied$state <- list()
  expect_error(sgld(m, lr = 1e-3, iter = 10, init = emptied),
               "the fit's state \\(`fit\\$state`\\) has no `w`, `update`, `rng`, `iteration`, `rule`")
  set.seed(1)
  auto <- quietly_checked(sgld(m, iter = 300))
  auto$state$rule <- NULL
  expect_error(sgld(m, init = auto), "has no `rule`: it was emptied or altered.*init = fit\\$last")
})

test_that("bbb()'s variational family is named as given", {
  expect_error(bbb(type ~ ., data = pima(), family = binomial(), vi_family = "nonsense"),
               "`vi_family` must be one of \"meanfield\", \"fullrank\"; not \"nonsense\"")
})
