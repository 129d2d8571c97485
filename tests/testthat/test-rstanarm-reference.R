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
  s <- summary(mala(m, chains = 1))$statistics[names(ref$small$mean), ]
  ess <- cbind(s[, "n_eff"], ref$small$ess_bulk)
  # standard errors of the difference, in posterior sds: of a mean 1/sqrt(ESS),
  # of an sd 1/sqrt(2 ESS) relative (normal draws), from each program
  se_mean <- sqrt(rowSums(1 / ess))
  se_sd <- sqrt(rowSums(1 / (2 * ess)))
  expect_true(all(abs(s[, "mean"] - ref$small$mean) / ref$small$sd < 4 * se_mean))
  expect_true(all(abs(s[, "sd"] / ref$small$sd - 1) < 4 * se_sd))
})

# vignette("rstanarm"), "rstanarm's default priors in sgld": rstanarm's
# autoscaled priors written with prior_normal() on centred predictors give
# rstanarm's posterior (stored by data-raw/rstanarm-priors-reference.R), and
# the same priors on uncentred predictors do not (the intercept's prior is on
# the centred intercept). The bar is the package's 0.15 posterior sd and 10%;
# the Monte Carlo error of the difference is about 0.03 sd (rstanarm at least
# 2,990 effective draws, sgld() about 1,800).
test_that("rstanarm's default priors, written for sgld, give rstanarm's posterior", {
  ref <- readRDS(system.file("extdata", "rstanarm-priors-reference.rds", package = "sgld"))
  pima <- MASS::Pima.tr
  X <- model.matrix(type ~ npreg + glu + bp + skin + bmi + ped + age, pima)[, -1]
  scales <- 2.5 / apply(X, 2, sd)
  expect_equal(unname(scales), as.numeric(ref$binomial$prior$coef_scale), tolerance = 1e-12)
  Xg <- model.matrix(mpg ~ wt + hp + am, mtcars)[, -1]
  expect_equal(unname(2.5 * sd(mtcars$mpg) / apply(Xg, 2, sd)),
               as.numeric(ref$gaussian$prior$coef_scale), tolerance = 1e-12)
  expect_equal(as.numeric(ref$gaussian$prior$intercept_location), mean(mtcars$mpg))

  compare <- function(draws, ref) {
    nm <- names(ref$mean)[names(ref$mean) %in% colnames(draws)]
    cbind(z = (colMeans(draws)[nm] - ref$mean[nm]) / ref$sd[nm],
          ratio = apply(draws, 2, sd)[nm] / ref$sd[nm])
  }
  centred <- data.frame(scale(X, scale = FALSE), type = pima$type)
  set.seed(1)
  fit <- sgld(type ~ ., data = centred, family = binomial(),
              prior = prior_normal(0, scales), prior_intercept = prior_normal(0, 2.5), chains = 1)
  draws <- as.matrix(fit)
  draws[, "(Intercept)"] <- draws[, "(Intercept)"] - draws[, colnames(X)] %*% colMeans(X)
  tab <- compare(draws, ref$binomial)
  expect_equal(nrow(tab), 8L)
  expect_true(all(abs(tab[, "z"]) < 0.15), label = paste(round(tab[, "z"], 3), collapse = " "))
  expect_true(all(abs(tab[, "ratio"] - 1) < 0.10))
  # uncentred predictors: the intercept's posterior is another one
  set.seed(1)
  wrong <- sgld(type ~ npreg + glu + bp + skin + bmi + ped + age, data = pima,
                family = binomial(), prior = prior_normal(0, scales),
                prior_intercept = prior_normal(0, 2.5), chains = 1)
  expect_gt(abs(compare(as.matrix(wrong), ref$binomial)["(Intercept)", "z"]), 1)
})
