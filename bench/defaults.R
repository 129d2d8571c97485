# The time and accuracy of each default call, sgld(model) with nothing else
# given, on one thread: the handout data, mtcars (unscaled), Pima (7
# unscaled predictors), a nearly separated simulation whose Laplace
# approximation is far off (tests/testthat/helper-auto.R), Adult (a9a
# design with an intercept, normal(0, 10) on every raw coefficient: the
# default prior when these figures were measured), and simulated
# logistic regressions with n = 10^6: d = 20 standard normal predictors, and
# d = 31 with predictors on scales from 0.1 to 1000.
# Times: `wall`, the whole sgld(model) call (the model is built before);
# `sampling`, the iterations of every phase (pilots, warm-up, run), timed
# in the engine; `run`, the iterations of the run proper; `setup`, the
# rest before the run (mode, Hessian, checks of the Laplace approximation,
# the batch's sampling threshold). Accuracy: the largest |mean error| / sd
# and |sd ratio - 1| over the parameters, against the exact posterior
# (linear models), a long MALA run (Pima; the stored references of the
# nearly separated simulation and Adult) or the Laplace approximation (n =
# 10^6, where it is accurate to O(n^-1/2) sd). With SGLD_BENCH_GLM=1 it also
# times glm() on the d = 31 data.
#   Rscript bench/defaults.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
source("tests/testthat/helper-auto.R")
accuracy <- function(fit, mean, sd) {
  x <- as.matrix(fit)[, seq_along(mean), drop = FALSE]   # a linear fit adds sigma
  c(mean_err = max(abs(colMeans(x) - mean) / sd), sd_err = max(abs(apply(x, 2, sd) / sd - 1)))
}
row <- function(name, model, ref_mean, ref_sd, seed = 1) {
  set.seed(seed)
  tm <- system.time(fit <- sgld(model))
  wall <- tm[["elapsed"]]
  cpu <- tm[["user.self"]] + tm[["sys.self"]]
  a <- accuracy(fit, ref_mean, ref_sd)
  data.frame(data = name, n = model$n, d = model$d, strategy = fit$auto$strategy,
             iter = fit$settings$iter, batch = fit$settings$batch_size,
             wall = round(wall, 2), cpu = round(cpu, 2), sampling = round(fit$auto$sampling_time, 2),
             run = round(fit$sampling_time, 2), setup = round(fit$auto$setup_time, 2),
             wall_over_sampling = round(wall / fit$auto$sampling_time, 2),
             max_mean_err_sd = round(a[[1]], 3), max_sd_err = round(a[[2]], 3))
}
mala_ref <- function(model, iter) {
  set.seed(99)
  r <- as.matrix(mala(model, iter = iter, burnin = 2000))
  list(mean = colMeans(r), sd = apply(r, 2, sd))
}
out <- list()
m <- model_linear(y ~ x, data = handout, prior = prior_nig())
ex <- linear_exact_posterior(m)
out$handout <- row("handout", m, ex$mean, ex$sd)
m <- model_linear(mpg ~ wt + hp, data = mtcars, prior = prior_nig())
ex <- linear_exact_posterior(m)
out$mtcars <- row("mtcars", m, ex$mean, ex$sd)
m <- model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)
ref <- mala_ref(m, 200000)
out$pima <- row("Pima.tr", m, ref$mean, ref$sd)
m <- nearly_separated_model()
# 2,020,000 MALA iterations (data-raw/nearly-separated-reference.R)
ref <- readRDS("tests/testthat/nearly-separated-reference.rds")
out$separated <- row("nearly separated", m, ref$mean, ref$sd)
d <- adult[adult$set == "train", ]
m <- suppressWarnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL))
# 150,000 MALA iterations (data-raw/adult-reference.R)
ref <- readRDS("tests/testthat/adult-reference.rds")
out$adult <- row("Adult (a9a)", m, ref$mean, ref$sd)
set.seed(42)
n <- 1e6
X <- cbind(1, matrix(rnorm(n * 19), n))
y <- rbinom(n, 1, plogis(drop(X %*% rnorm(20, 0, 0.3))))
m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
rm(X, y)
pm <- posterior_mode(m, covariance = TRUE)
out$sim <- row("simulated, d = 20", m, pm$mode, sqrt(diag(pm$covariance)))
rm(m)
set.seed(43)
p <- 30
scales <- 10^seq(-1, 3, length.out = p)
X <- cbind(1, sweep(matrix(rnorm(n * p), n), 2, scales, "*"))
beta <- c(-0.5, rnorm(p, 0, 0.3) / scales)
y <- rbinom(n, 1, plogis(drop(X %*% beta)))
m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)
if (identical(Sys.getenv("SGLD_BENCH_GLM"), "1"))
  cat("glm() on the d = 31 data:", system.time(glm.fit(X, y, family = binomial()))[["elapsed"]],
      "s\n")
rm(X, y)
pm <- posterior_mode(m, covariance = TRUE)
out$scales <- row("simulated, d = 31, scales 0.1-1000", m, pm$mode, sqrt(diag(pm$covariance)))
res <- do.call(rbind, out)
rownames(res) <- NULL
print(res, right = FALSE)
