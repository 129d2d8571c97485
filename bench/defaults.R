# The time and accuracy of each default call, sgld(model) with nothing else
# given (issue 16), on one thread: the handout data, mtcars (unscaled), Pima
# (7 unscaled predictors), Adult (a9a design with an intercept, the default
# normal(0, 10) prior) and a simulated logistic regression with n = 10^6,
# d = 20. Accuracy: the largest |mean error| / sd and |sd ratio - 1| over
# the parameters, against the exact posterior (linear models), a long MALA
# run (Pima; Adult's stored 150,000-draw reference) or the Laplace approximation (n = 10^6, where it is
# accurate to O(n^-1/2) sd).
#   Rscript bench/defaults.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
accuracy <- function(fit, mean, sd) {
  x <- as.matrix(fit)
  c(mean_err = max(abs(colMeans(x) - mean) / sd), sd_err = max(abs(apply(x, 2, sd) / sd - 1)))
}
row <- function(name, model, ref_mean, ref_sd, seed = 1) {
  set.seed(seed)
  t <- system.time(fit <- sgld(model))[["elapsed"]]
  a <- accuracy(fit, ref_mean, ref_sd)
  data.frame(data = name, n = model$n, d = model$d, seconds = round(t, 2),
             setup = round(fit$auto$setup_time, 2), iter = fit$settings$iter,
             batch = fit$settings$batch_size, max_mean_err_sd = round(a[[1]], 3),
             max_sd_err = round(a[[2]], 3))
}
mala_ref <- function(model, iter) {
  set.seed(99)
  r <- as.matrix(mala(model, iter = iter, burnin = 2000))
  list(mean = colMeans(r), sd = apply(r, 2, sd))
}
out <- list()
m <- model_linear(y ~ x, data = handout)
ex <- linear_exact_posterior(m)
out$handout <- row("handout", m, ex$mean, ex$sd)
m <- model_linear(mpg ~ wt + hp, data = mtcars)
ex <- linear_exact_posterior(m)
out$mtcars <- row("mtcars", m, ex$mean, ex$sd)
m <- model_logistic(type ~ npreg + glu + bp + skin + bmi + ped + age, data = MASS::Pima.tr)
ref <- mala_ref(m, 200000)
out$pima <- row("Pima.tr", m, ref$mean, ref$sd)
d <- adult[adult$set == "train", ]
m <- suppressWarnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d)))
# 150,000 MALA iterations (data-raw/adult-reference.R)
ref <- readRDS("tests/testthat/adult-reference.rds")
out$adult <- row("Adult (a9a)", m, ref$mean, ref$sd)
set.seed(42)
n <- 1e6
X <- cbind(1, matrix(rnorm(n * 19), n))
y <- rbinom(n, 1, plogis(drop(X %*% rnorm(20, 0, 0.3))))
m <- model_logistic(X, y)
rm(X, y)
pm <- posterior_mode(m, covariance = TRUE)
out$sim <- row("simulated logistic", m, pm$mode, sqrt(diag(pm$covariance)))
res <- do.call(rbind, out)
rownames(res) <- NULL
print(res)
