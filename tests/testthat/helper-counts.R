# The count models' exact references (rstan NUTS, data-raw/count-references.R).
count_reference <- function(name) readRDS(test_path("count-reference.rds"))[[name]]

# largest error of the draws' means in reference sds, and of their sds as a ratio
reference_errors <- function(draws, ref) {
  c(mean = max(abs(colMeans(draws) - ref$mean) / ref$sd),
    sd = max(abs(apply(draws, 2, sd) / ref$sd - 1)))
}

# A negative-binomial regression of 5,000 rows (6 normal predictors, a
# four-level factor, size 1.5): large enough that sgld(model) subsamples
# with control variates. Its reference: data-raw/negbin-simulated-reference.R.
negbin_simulated_data <- function(n = 5000) {
  set.seed(10)
  X <- matrix(stats::rnorm(n * 6), n, dimnames = list(NULL, paste0("x", 1:6)))
  d <- data.frame(X, f = factor(sample(letters[1:4], n, TRUE)))
  mu <- exp(0.5 + X %*% c(0.3, -0.2, 0.1, 0, 0.4, -0.1) + c(0, 0.2, -0.3, 0.1)[d$f])
  d$y <- stats::rnbinom(n, size = 1.5, mu = mu)
  d
}
