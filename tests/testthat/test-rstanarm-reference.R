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

  m <- model_logistic(sets$small$X, sets$small$y, prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(7)
  s <- summary(mala(m, chains = 1))$statistics[names(ref$small$mean), ]
  ess <- cbind(s[, "n_eff"], ref$small$ess_bulk)
  # standard errors of the difference, in posterior sds: of a mean 1/sqrt(ESS),
  # of an sd 1/sqrt(2 ESS) relative (normal draws), from each program
  se_mean <- sqrt(rowSums(1 / ess))
  se_sd <- sqrt(rowSums(1 / (2 * ess)))
  expect_true(all(abs(s[, "mean"] - ref$small$mean) / ref$small$sd < 4 * se_mean))
  expect_true(all(abs(s[, "sd"] / ref$small$sd - 1) < 4 * se_sd))
})

# vignette("rstanarm"), "rstanarm's default priors in sgld": sgld's default
# priors are rstanarm's (autoscaled; the intercept's prior on centred
# predictors), so sgld() at its defaults gives rstanarm's posterior at its
# defaults (stored by data-raw/rstanarm-priors-reference.R); the same
# scales on the raw intercept (prior_intercept = NULL) do not. The bar is
# the package's 0.15 posterior sd and 10%; the Monte Carlo error of the
# difference is about 0.03 sd (rstanarm at least 2,990 effective draws,
# sgld() about 1,800).
test_that("sgld()'s default priors are rstanarm's and give its posterior", {
  ref <- readRDS(system.file("extdata", "rstanarm-priors-reference.rds", package = "sgld"))
  pima <- MASS::Pima.tr
  f <- type ~ npreg + glu + bp + skin + bmi + ped + age
  m <- model_logistic(f, data = pima)
  expect_equal(m$prior_scale[-1], as.numeric(ref$binomial$prior$coef_scale), tolerance = 1e-12)
  mg <- model_linear(mpg ~ wt + hp + am, data = mtcars)
  expect_equal(mg$prior_scale[-1], as.numeric(ref$gaussian$prior$coef_scale), tolerance = 1e-12)
  expect_equal(mg$prior_centre_loc, as.numeric(ref$gaussian$prior$intercept_location))
  expect_equal(mg$prior_centre_scale, as.numeric(ref$gaussian$prior$intercept_scale))
  expect_equal(mg$prior_sigma_rate, ref$gaussian$prior$aux$rate, tolerance = 1e-12)

  compare <- function(draws, ref) {
    nm <- names(ref$mean)[names(ref$mean) %in% colnames(draws)]
    cbind(z = (colMeans(draws)[nm] - ref$mean[nm]) / ref$sd[nm],
          ratio = apply(draws, 2, sd)[nm] / ref$sd[nm])
  }
  set.seed(1)
  tab <- compare(as.matrix(sgld(f, data = pima, family = binomial(), chains = 1)), ref$binomial)
  expect_equal(nrow(tab), 8L)
  expect_true(all(abs(tab[, "z"]) < 0.15), label = paste(round(tab[, "z"], 3), collapse = " "))
  expect_true(all(abs(tab[, "ratio"] - 1) < 0.10))
  set.seed(2)
  tab <- compare(as.matrix(sgld(mpg ~ wt + hp + am, data = mtcars, family = gaussian())),
                 ref$gaussian)
  expect_equal(nrow(tab), 5L)   # sigma included
  expect_true(all(abs(tab[, "z"]) < 0.15), label = paste(round(tab[, "z"], 3), collapse = " "))
  expect_true(all(abs(tab[, "ratio"] - 1) < 0.10))
  # the same scales on the raw intercept: the intercept's posterior is another one
  set.seed(1)
  wrong <- sgld(f, data = pima, family = binomial(), prior_intercept = NULL,
                prior = prior_normal(0, c(2.5, m$prior_scale[-1])), chains = 1)
  expect_gt(abs(compare(as.matrix(wrong), ref$binomial)["(Intercept)", "z"]), 1)
})
