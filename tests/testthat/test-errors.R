# Bad input gets an R error that names the argument and the rule.

test_that("the data are checked: missing, non-finite and non-numeric columns", {
  df <- small_data(20)
  bad <- df; bad$x1[4] <- NA
  expect_error(model_linear(y ~ x1, data = bad), "column 'x1' has missing values \\(first at row 4\\)")
  bad <- df; bad$y[2] <- Inf
  expect_error(model_linear(y ~ x1, data = bad), "column 'y' has non-finite values \\(first at row 2\\)")
  bad <- df; bad$x1[3] <- NaN
  expect_error(model_linear(y ~ x1, data = bad), "column 'x1' has missing values")
  bad <- df; bad$when <- as.Date("2020-01-01") + 1:20
  expect_error(model_linear(y ~ when, data = bad), "column 'when' \\(class Date\\) cannot be made numeric")
  bad <- df; bad$l <- I(as.list(1:20))
  expect_error(model_linear(y ~ l, data = bad), "column 'l' is a list and cannot be made numeric")
  expect_error(model_linear(y ~ nothere, data = df), "no column named 'nothere'")
  expect_error(model_linear(y ~ x1, data = as.matrix(df[1:3])), "`data` must be a data frame")
  expect_error(model_linear(y ~ x1, data = df[0, ]), "`data` has no rows")
  expect_error(model_linear(y ~ x1, data = df[1, ]), "at least 2 observations")
  bad <- df; bad$y <- as.character(bad$y)
  expect_error(model_linear(y ~ x1, data = bad), "response of `x` must be a numeric vector")
  expect_error(model_linear(~ x1, data = df), "formula with a response")
})

test_that("the matrix face is checked", {
  X <- cbind(1, rnorm(10))
  expect_error(model_linear(X, 1:9), "`y` has length 9 but `x` has 10 rows")
  expect_error(model_linear(X, c(1:9, NA)), "`y` must not be NA; it is at position 10")
  expect_error(model_linear(X, c(1:9, Inf)), "`y` must be a finite numeric vector; it has Inf at position 10")
  X2 <- X; X2[3, 2] <- Inf
  expect_error(model_linear(X2, 1:10), "`x` must be finite; it has Inf in row 3, column 2")
  expect_error(model_linear(X), "`y` is missing")
  expect_error(model_linear(list(1, 2), 1:2), "`x` must be a formula or a numeric design matrix")
  expect_error(model_linear(matrix("a", 2, 2), 1:2), "`x` must be a formula or a numeric design matrix")
  expect_error(model_linear(X, 1:10, prior = prior_nig(mean = c(1, 2, 3))),
               "`prior` mean has length 3 but the model has 2 coefficients")
  expect_error(model_linear(X, 1:10, prior = list()),
               "`prior` must be made by prior_normal\\(\\) or prior_nig\\(\\)")
  expect_error(model_linear(X, 1:10, prior = prior_laplace()),
               "`prior` must be made by prior_normal\\(\\) or prior_nig\\(\\), not a laplace prior")
  expect_error(model_linear(X, 1:10, prior = prior_nig(), prior_aux = prior_exponential(2)),
               "`prior_aux` cannot be given with `prior = prior_nig\\(\\)`")
  expect_error(model_linear(X, 1:10, prior_aux = prior_normal()),
               "`prior_aux` must be made by prior_exponential\\(\\)")
  expect_error(model_linear(X, 1:10, foo = 1), "unknown argument: `foo`")
})

test_that("priors are checked", {
  expect_error(prior_nig(V = -1), "`V` must be positive")
  expect_error(prior_nig(V = matrix(c(1, 2, 3, 4), 2)), "`V` must be a symmetric matrix")
  expect_error(prior_nig(V = matrix(c(1, 2, 2, 1), 2)), "`V` must be positive definite")
  expect_error(prior_nig(shape = 0), "`shape` must be greater than 0")
  expect_error(prior_nig(rate = NA), "`rate` must be a single finite number")
  expect_error(prior_nig(mean = c(1, NA)), "`mean` must be a numeric vector of finite values")
})

test_that("sampler arguments are checked, each naming the argument", {
  m <- model_linear(y ~ x1, data = small_data(50), prior = prior_nig())
  cases <- list(
    list(list(batch_size = 0), "`batch_size` must be a whole number between 1 and 50"),
    list(list(batch_size = 51), "`batch_size` must be a whole number between 1 and 50"),
    list(list(batch_size = 2.5), "`batch_size` must be a single whole number"),
    list(list(batch_size = "10"), "`batch_size` must be a single whole number"),
    list(list(batch_size = c(1, 2)), "`batch_size` must be a single whole number"),
    list(list(lr = 0), "`lr` must be a positive finite learning rate"),
    list(list(lr = -1e-3), "`lr` must be a positive finite learning rate"),
    list(list(lr = Inf), "`lr` must be a positive finite learning rate"),
    list(list(lr = NaN), "`lr` must be a positive number or a schedule"),
    list(list(lr = "fast"), "`lr` must be a positive number or a schedule"),
    list(list(temperature = -0.1), "`temperature` must be at least 0"),
    list(list(temperature = NA), "`temperature` must be a single finite number"),
    list(list(init = c(1, 2)), "`init` must have length 3"),
    list(list(init = c(1, NA, 1)), "`init` must be finite"),
    list(list(init = c(1, Inf, 1)), "`init` must be finite"),
    list(list(init = c(1, 1, -1)), "sigma2 must be positive"),
    list(list(init = matrix(1, 3, 3)), "`init` must be a 4 x 3 matrix \\(one row per chain\\)"),
    list(list(init = list(1, 2, 3)), "`init` must be NULL, a numeric vector"),
    list(list(burnin = 100), "`burnin` must be smaller than `iter`"),
    list(list(burnin = -1), "`burnin` must be a whole number between 0"),
    list(list(thin = 0), "`thin` must be a whole number between 1"),
    list(list(thin = 1000), "`thin` must be at most iter - burnin"),
    list(list(iter = 0), "`iter` must be a whole number between 1"),
    list(list(iter = 1e300), "`iter` must be a whole number between 1"),
    list(list(chains = 0), "`chains` must be a whole number between 1 and 1,000"),
    list(list(replace = NA), "`replace` must be TRUE or FALSE"),
    list(list(clip = 5), "`clip` must be NULL, clip_norm\\(\\) or clip_value\\(\\)"),
    list(list(iter = 1e9, thin = 1, burnin = 0, chains = 2), "increase `thin`, reduce `iter`, or store fewer parameters with `pars`"),
    list(list(bacth_size = 10), "unknown argument: `bacth_size`"),
    list(list(foo = 1, bar = 2), "unknown arguments: `foo`, `bar`")
  )
  for (case in cases) {
    args <- utils::modifyList(list(model = m, lr = 1e-4, batch_size = 10, iter = 100), case[[1]])
    expect_error(do.call(sgld, args), case[[2]], info = case[[2]])
  }
  expect_error(sgld(m, 1e-4, 10, 100, 5, chains = 1), "unexpected unnamed argument")
  expect_error(sgld(list(), lr = 1e-4, chains = 1), "`model` must be a model made by model_linear()")
  expect_error(sgd(m, lr = 1e-4, batch_size = 10, temperature = 1), "unknown argument: `temperature`")
  expect_error(gd("m", lr = 1), "`model` must be a model")
  expect_error(log_posterior(m, c(1, 2)), "`w` must be a finite numeric vector of length 3")
  expect_error(linear_exact_posterior(list()), "`model` must be made by model_linear()")
})

test_that("clipping thresholds are checked", {
  expect_error(clip_norm(0), "`threshold` must be greater than 0")
  expect_error(clip_value(NA), "`threshold` must be a single finite number")
})
