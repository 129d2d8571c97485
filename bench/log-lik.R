# log_lik() in C (src/model_contract.c: each row's log likelihood by the
# model's table, threaded over rows): 4,000 draws x 10,000 rows for the
# linear, logistic, Poisson and negative-binomial regressions (5
# coefficients), by 1 and 2 threads, medians of 3 runs, and the R
# computation it replaced for the first two; and the floor: filling a
# 4,000 x 10,000 matrix of doubles (320 MB) in R, which any log_lik() pays.
#   Rscript bench/log-lik.R
library(sgld)
set.seed(1)
n <- 10000; S <- 4000
d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n), x4 = rnorm(n))
eta <- 0.5 + 0.3 * d$x1 - 0.2 * d$x2
d$y <- eta + rnorm(n)
d$b <- rbinom(n, 1, plogis(eta))
d$k <- rpois(n, exp(eta))
models <- list(linear = model_linear(y ~ x1 + x2 + x3 + x4, data = d),
               logistic = model_logistic(b ~ x1 + x2 + x3 + x4, data = d),
               poisson = model_poisson(k ~ x1 + x2 + x3 + x4, data = d),
               negbin = model_negbin(k ~ x1 + x2 + x3 + x4, data = d))
r_reference <- function(m, W) {
  X <- cbind(1, as.matrix(d[, 1:4]))
  e <- W[, 1:m$p] %*% t(X)
  if (m$type == "linear") {
    y <- rep(m$z[m$p + 1, ], each = S)
    gam <- W[, m$d]
    return(matrix(-0.5 * (log(2 * pi) + gam) - 0.5 * exp(-gam) * (y - e)^2, S))
  }
  y <- rep(m$z[m$p + 1, ], each = S)
  matrix(ifelse(y == 1, plogis(e, log.p = TRUE), plogis(-e, log.p = TRUE)), S)
}
med <- function(f) median(replicate(3, system.time(f())[["elapsed"]]))
cat(format(Sys.time()), " load:", readLines("/proc/loadavg"), "\n")
cat(sprintf("floor: matrix(0, S, n) %.3f s\n", med(function() matrix(0, S, n))))
for (name in names(models)) {
  m <- models[[name]]
  W <- cbind(matrix(rnorm(S * m$p, 0, 0.1), S), if (m$d > m$p) rnorm(S, 0, 0.1))
  t1 <- med(function() sgld:::model_loglik_rows(m, W, threads = 1L))
  t2 <- med(function() sgld:::model_loglik_rows(m, W, threads = 2L))
  tr <- if (name %in% c("linear", "logistic")) med(function() r_reference(m, W)) else NA
  err <- if (name %in% c("linear", "logistic"))
    max(abs(sgld:::model_loglik_rows(m, W) - r_reference(m, W))) else NA
  cat(sprintf("%-9s C 1 thread %.3f s, 2 threads %.3f s; R %.3f s; max |C - R| %.1e\n",
              name, t1, t2, tr, err))
}
