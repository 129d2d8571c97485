# The gaussian and Poisson faces with a factor of many levels (issue 49):
# the formula face (sgld(y ~ x + g, data, family = ...)) and the matrix face
# (model_linear(X, y), model_poisson(X, y) with X a dgCMatrix) take the wide
# recipe (R/auto-wide.R) and run; over the draws budget a default `pars`
# stores the common parameters' draws and running moments of all (R/pars.R).
# Their accuracy against exact references is test-wide-levels.R's and
# test-sparse-design.R's; the 10,000-level timings are in bench/sparse.md.

wide_face_fit <- function(family, face, budget = 1e5) {
  dat <- wide_levels_data(1100, 5000, family = family, coef = c(-0.5, 0.5))
  old <- options(sgld.draws_budget = budget)
  on.exit(options(old))
  set.seed(1)
  if (face == "formula")
    return(sgld(y ~ x + g, data = dat, family = get(family, mode = "function")()))
  X <- Matrix::sparse.model.matrix(~ x + g, dat)
  m <- switch(family, gaussian = model_linear(X, dat$y), poisson = model_poisson(X, dat$y))
  expect_s4_class(X, "dgCMatrix")
  sgld(m)
}

test_that("the gaussian and Poisson faces at 1,100 levels take the wide recipe and store the common draws", {
  session <- sgld:::session   # an environment: the once-a-session flag reset
  session$told_wide_storage <- NULL
  expect_message(fit <- wide_face_fit("gaussian", "formula"),
                 "draws were stored for the 3 .*`pars = TRUE` to store every draw")
  expect_s3_class(fit$model, "sgld_model_linear")
  expect_true(all(fit$status == "done"))
  expect_identical(fit$auto$strategy, "langevin-diagonal")
  expect_gt(fit$model$d, 1000)
  # intercept, x (on every row) and sigma2: the levels are on 0.07% of the rows
  expect_identical(fit$model$names[fit$pars], c("(Intercept)", "x", "sigma2"))
  expect_match(fit$storage, "stored for the 3 that are no coefficient")
  # summary(), coef() and print() cover every parameter from the moments
  s <- summary(fit)$statistics
  expect_identical(rownames(s), c(fit$model$names, "sigma"))
  expect_true(all(is.finite(s[, "mean"])) && all(s[, "sd"] > 0))
  mom <- sgld:::pooled_moments(fit$moments, fit$chain_ids)
  expect_equal(unname(coef(fit)), unname(mom$mean[seq_len(fit$model$p)]))
  expect_equal(unname(s[fit$model$names, "sd"]), unname(mom$sd))
  expect_true(all(is.na(s[setdiff(fit$model$names, fit$model$names[fit$pars]), "2.5%"])))
  # the simulation's slope 0.5 and residual sd 1, within 5 posterior sds
  expect_lt(abs(s["x", "mean"] - 0.5), 5 * s["x", "sd"])
  expect_lt(abs(s["sigma", "mean"] - 1), 5 * s["sigma", "sd"])
  expect_output(print(fit), "Draws stored for 3 of 1,?[0-9]{3} parameters")
  expect_identical(colnames(as.matrix(fit)), c("(Intercept)", "x", "sigma2", "sigma"))
  expect_message(pi <- rstantools::posterior_interval(fit), "intervals of the 4 parameters")
  expect_identical(rownames(pi), c("(Intercept)", "x", "sigma2", "sigma"))
  expect_error(rstantools::posterior_interval(fit, pars = "gL00007"),
               "stored no draws of 'gL00007'.*`pars = TRUE`")
  expect_error(predict(fit, newdata = data.frame(x = 0, g = "L00007")),
               "predict\\(\\) needs the draws of every parameter.*`pars = TRUE`")
  # the message is shown once a session
  expect_silent(sgld:::budget_storage(list(capacity = 1000), NULL, NULL, fit$model, 4, TRUE))

  fit <- wide_face_fit("poisson", "matrix")
  expect_s3_class(fit$model, "sgld_model_poisson")
  expect_true(all(fit$status == "done"))
  expect_identical(fit$auto$strategy, "langevin-diagonal")
  expect_identical(fit$model$names[fit$pars], c("(Intercept)", "x"))
  s <- summary(fit)$statistics
  expect_true(all(is.finite(s[, "mean"])) && all(s[, "sd"] > 0))
  expect_lt(abs(s["x", "mean"] - 0.5), 5 * s["x", "sd"])
})

test_that("levels half-flat on one side are drawn alone: the Poisson face at 4.5 rows a level", {
  # the Poisson formula face; 1,100 levels x 5,000 rows: with the levels' probes at independent
  # normal draws, a few levels on rows of zero counts were left to the
  # Langevin steps and every chain diverged (all four, seeds 1-3)
  dat <- wide_levels_data(1100, 5000, family = "poisson", coef = c(-0.5, 0.5))
  set.seed(1)
  fit <- sgld(y ~ x + g, data = dat, family = poisson(), pars = 1:2)
  expect_true(all(fit$status == "done"))
  expect_lt(abs(coef(fit)[["x"]] - 0.5), 5 * sd(as.matrix(fit)[, "x"]))
})

test_that("the gaussian matrix face takes the wide recipe", {
  dat <- wide_levels_data(1100, 5000, family = "gaussian", coef = c(-0.5, 0.5))
  X <- Matrix::sparse.model.matrix(~ x + g, dat)
  set.seed(1)
  fit <- sgld(model_linear(X, dat$y), pars = c("x", "sigma2"))
  expect_identical(fit$auto$strategy, "langevin-diagonal")
  expect_true(all(fit$status == "done"))
  s <- summary(fit)$statistics
  expect_lt(abs(s["x", "mean"] - 0.5), 5 * s["x", "sd"])
  expect_lt(abs(s["sigma", "mean"] - 1), 5 * s["sigma", "sd"])
})

test_that("the storage budget keeps the common columns and the parameters that are no coefficient", {
  # columns on 50%, 0.5% and 1% of 1,000 rows; sigma2 is no coefficient
  X <- Matrix::sparseMatrix(i = c(1:500, 1:5, 11:20), j = rep(1:3, c(500, 5, 10)), x = 1,
                            dims = c(1000, 3), dimnames = list(NULL, c("a", "b", "c")))
  m <- model_linear(X, stats::rnorm(1000), prior = prior_normal(0, 1))
  old <- options(sgld.draws_budget = 150)
  on.exit(options(old))
  # 10 draws x 4 chains x 4 parameters = 160 numbers > 150: a, c and sigma2 (120)
  expect_identical(sgld:::common_parameters(m, 10, 4)$keep, c(1L, 3L, 4L))
  # 60 a parameter: room for 2, sigma2 and the most common column
  expect_identical(sgld:::common_parameters(m, 10, 6)$keep, c(1L, 4L))
  expect_null(sgld:::common_parameters(m, 5, 4))   # 80 numbers: every draw
  options(sgld.draws_budget = "many")
  expect_error(sgld:::common_parameters(m, 10, 4), "sgld.draws_budget.*must be a number")
})
