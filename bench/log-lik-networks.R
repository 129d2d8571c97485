# log_lik() of a network (src/model_mlp.c: mlp_loglik_rows(), the samplers'
# blocked forward pass, 16 rows per pass, threaded over rows by
# src/model_contract.c) against what it replaced or could have been: the
# table's one-row loglik (each row a forward pass of its own, as
# sgld_pointwise_loglik's fallback did before the network had loglik_rows),
# and a forward pass in R (matrix products per draw, R/model-mlp.R:
# mlp_outputs()). A regression network of 13 inputs and 50 tanh units,
# 1,000 rows x 500 draws; elapsed seconds, medians of 3 runs.
#   Rscript bench/log-lik-networks.R
library(sgld)
set.seed(1)
n <- 1000; S <- 500
X <- matrix(rnorm(n * 13), n)
d <- data.frame(X, y = sin(X[, 1]) + X[, 2] * X[, 3] + rnorm(n, sd = 0.3))
m <- model_mlp(y ~ ., data = d, hidden = 50, activation = "tanh")
W <- matrix(rnorm(S * m$d, sd = 0.3), S)
W[, m$d] <- log(0.5)
Wt <- t(W)
median_time <- function(f) median(replicate(3, system.time(f())[["elapsed"]]))
c_rows <- function(threads) function() sgld:::model_loglik_rows(m, W, threads = threads)
one_row_each <- function() vapply(seq_len(n), function(i)
  .Call(sgld:::C_sgld_loglik_draws, m, Wt, as.double(i)), numeric(S)) - log(m$y_sd)
r_forward <- function() {
  f <- sgld:::mlp_outputs(m, sgld:::design_for_newdata(m, NULL), W)[[1]]
  y <- m$y_mean + m$y_sd * m$z[m$p + 1, ]
  t(dnorm(y, m$y_mean + m$y_sd * f, rep(sqrt(exp(W[, m$d])) * m$y_sd, each = n), log = TRUE))
}
ll <- c_rows(1L)()
cat("largest difference, C against one row at a time:", max(abs(ll - one_row_each())),
    "; against R:", max(abs(ll - r_forward())), "\n")
times <- c(`C, 1 thread` = median_time(c_rows(1L)), `C, 2 threads` = median_time(c_rows(2L)),
           `one row per pass (before)` = median_time(one_row_each),
           `R forward pass` = median_time(r_forward))
print(round(times, 3))
cat("load average:", readLines("/proc/loadavg"), "\n")
