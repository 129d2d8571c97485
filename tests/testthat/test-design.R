# The checks of a design matrix shared by the regression models (R/design.R).

test_that("a column whose squares overflow is an error naming it, in either face", {
  set.seed(1)
  X <- cbind(`(Intercept)` = 1, a = rnorm(50), b = rnorm(50))
  y <- rbinom(50, 1, 0.5)
  big <- X
  big[, "a"] <- big[, "a"] * 1e300
  expect_error(model_logistic(big, y),
               "column 'a' holds values so large \\(up to [0-9.]+e\\+300\\) that the sum of their squares overflows.*Rescale it")
  d <- data.frame(y = rnorm(50), a = X[, "a"] * 1e200, b = X[, "b"] * 1e250)
  expect_error(model_linear(y ~ a + b, data = d), "columns 'a', 'b' hold values so large")
  # large but within range: no error, and the rank is read as before
  d$a <- X[, "a"] * 1e150
  d$b <- X[, "b"]
  expect_silent(model_linear(y ~ a + b, data = d, prior = prior_nig()))
  d$b <- d$a * 3
  expect_warning(model_linear(y ~ a + b, data = d, prior = prior_nig()), "rank deficient \\(rank 2 with 3 columns\\): 'b'")
})

# Every model built from a formula goes through design_from_formula(), so the
# same data give every one of them the same message.
with_response <- function(f, name) {
  f[[2]] <- as.name(name)
  f
}
formula_models <- list(
  linear = function(f, d, ...) model_linear(f, data = d, ...),
  logistic = function(f, d, ...) model_logistic(with_response(f, "b"), data = d, ...),
  poisson = function(f, d, ...) model_poisson(with_response(f, "k"), data = d, ...),
  negbin = function(f, d, ...) model_negbin(with_response(f, "k"), data = d, ...),
  mlp = function(f, d, ...) model_mlp(f, data = d, hidden = 2, ...),
  mlp_classes = function(f, d, ...) model_mlp(with_response(f, "cls"), data = d, hidden = 2, ...),
  formula_face = function(f, d, ...) sgld(f, data = d, family = gaussian(), lr = 1e-3,
                                          iter = 10, chains = 2, ...)
)

design_data <- function(n = 30) {
  set.seed(47)
  data.frame(y = rnorm(n), b = rbinom(n, 1, 0.5), k = rpois(n, 2),
             cls = factor(sample(c("p", "q", "r"), n, TRUE)), x = rnorm(n),
             site = factor(rep("north", n), levels = c("north", "south")),
             flag = rep(TRUE, n), empty = NA_real_)
}

test_that("a factor with one level names its column, for every model with a formula", {
  d <- design_data()
  for (name in names(formula_models)) {
    build <- formula_models[[name]]
    expect_error(build(y ~ x + site, d), "`data` column 'site' is a factor with the single level 'north'",
                 label = name)
    # `y ~ .` reaches it too (the columns the response does not use)
    dd <- d[c("y", "b", "k", "cls", "x", "site")]
    expect_error(build(y ~ . - b - k - cls, dd), "column 'site' is a factor with the single level",
                 label = name)
    expect_error(build(y ~ x + flag, d), "column 'flag' is a factor with the single level 'TRUE'",
                 label = name)
    expect_error(build(y ~ x + empty, d), "`data` column 'empty' has only missing values",
                 label = name)
  }
})

test_that("levels absent from the rows used are dropped before the design is built", {
  d <- design_data()
  d$site <- factor(rep(c("north", "south"), length.out = nrow(d)), levels = c("north", "south", "west"))
  d$y[d$site == "south"] <- NA      # na.omit leaves only "north": one level
  expect_error(model_linear(y ~ x + site, data = d, na.action = na.omit),
               "column 'site' is a factor with the single level 'north' among the rows used")
  d <- design_data()
  d$site <- factor(rep(c("north", "south", "west"), length.out = nrow(d)))
  d$y[d$site == "west"] <- NA       # the rows of "west" go: two levels stay
  m <- model_linear(y ~ x + site, data = d, na.action = na.omit)
  expect_identical(m$xlevels$site, c("north", "south"))
  expect_identical(m$names[seq_len(m$p)], c("(Intercept)", "x", "sitesouth"))
  mm <- model_mlp(y ~ x + site, data = d[!is.na(d$y), ], hidden = 2)
  expect_identical(mm$input_names, c("x", "sitesouth"))
})

test_that("a factor's own contrasts are followed, as glm() follows them", {
  set.seed(1)
  d <- data.frame(g = factor(sample(c("a", "b", "c"), 60, TRUE)), x = rnorm(60))
  d$y <- rpois(60, 2)
  # a contrast matrix with the second level as base (AER's NMES1988 sets one)
  contrasts(d$g) <- contr.treatment(3, base = 2)
  m <- model_poisson(y ~ g + x, data = d)
  ref <- model.matrix(glm(y ~ g + x, poisson, d))
  expect_identical(m$names, colnames(ref))
  expect_equal(m$contrasts$g, attr(ref, "contrasts")$g)
  # by name
  contrasts(d$g) <- "contr.sum"
  m2 <- model_poisson(y ~ g + x, data = d)
  ref2 <- model.matrix(glm(y ~ g + x, poisson, d))
  expect_identical(m2$names, colnames(ref2))
  expect_identical(m2$contrasts$g, "contr.sum")
  # a level left unused by `subset`: the contrasts are dropped with a
  # warning, by model.frame() as in glm()
  expect_warning(m3 <- model_poisson(y ~ g + x, data = d, subset = g != "c"),
                 "contrasts dropped from factor g")
  expect_identical(m3$names, c("(Intercept)", "gb", "x"))
})
