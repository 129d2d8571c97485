# vignette("rstanarm") reads rstanarm's posteriors from
# inst/extdata/rstanarm-reference.rds (data-raw/rstanarm-reference.R) and
# fits sgld to the data of inst/extdata/rstanarm-data.R: the two must be the
# same data. Exact MALA on those data agrees with the stored NUTS posterior
# within the two programs' Monte Carlo errors, which a change in the data's
# recipe (another subset of Adult moves the means by about a posterior sd)
# or in the stored file would break.
test_that("the stored rstanarm posterior is that of the vignette's data", {
  skip_on_cran()
  ref <- readRDS(system.file("extdata", "rstanarm-reference.rds", package = "sgld"))
  recipe <- new.env()
  sys.source(system.file("extdata", "rstanarm-data.R", package = "sgld"), recipe)
  sets <- recipe$rstanarm_datasets()
  expect_identical(as.integer(c(ref$small$n, ref$small$d)), dim(sets$small$X))
  expect_identical(as.integer(c(ref$large$n, ref$large$d)), dim(sets$large$X))
  expect_identical(names(ref$small$mean), colnames(sets$small$X))
  expect_identical(names(ref$large$mean), colnames(sets$large$X))

  m <- model_logistic(sets$small$X, sets$small$y)
  set.seed(7)
  s <- summary(mala(m))$statistics[names(ref$small$mean), ]
  ess <- cbind(s[, "ess"], ref$small$ess_bulk)
  # standard errors of the difference, in posterior sds: of a mean 1/sqrt(ESS),
  # of an sd 1/sqrt(2 ESS) relative (normal draws), from each program
  se_mean <- sqrt(rowSums(1 / ess))
  se_sd <- sqrt(rowSums(1 / (2 * ess)))
  expect_true(all(abs(s[, "mean"] - ref$small$mean) / ref$small$sd < 4 * se_mean))
  expect_true(all(abs(s[, "sd"] / ref$small$sd - 1) < 4 * se_sd))
})
