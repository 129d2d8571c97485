# The cost of one full pass (the gradient of the log likelihood over all
# rows) with the design stored sparse or dense, against the design's
# density: what model_logistic()'s rule `sparse = NULL` (sparse when at most
# a quarter of the design is non-zero) rests on. Adult's a9a design (n =
# 32,561, d = 124, 0/1 indicators, density 0.12), then simulated designs of
# the same shape whose rows hold k indicators at random columns plus the
# intercept, and the same with non-binary values (N(0, 1) non-zeros).
# Medians of 3 rounds, sparse and dense interleaved, one thread.
#   Rscript bench/sparse-density.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
pass_ms <- function(model, passes = 100) {
  w <- seq(-0.1, 0.1, length.out = model$d)
  spec <- list(w = w, batch_size = model$n, times = as.integer(passes), replace = 0L,
               cv_mode = NULL)
  1000 * system.time(.Call(sgld:::C_sgld_gradient_draws, model, spec))[["elapsed"]] / passes
}
compare <- function(label, X, y) {
  sp <- model_logistic(X, y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL)
  de <- model_logistic(X, y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  t <- replicate(3, c(sparse = pass_ms(sp), dense = pass_ms(de)))
  med <- apply(t, 1, median)
  data.frame(design = label, density = round(mean(X != 0), 3), sparse_ms = round(med[[1]], 3),
             dense_ms = round(med[[2]], 3), dense_over_sparse = round(med[[2]] / med[[1]], 2))
}
d <- adult[adult$set == "train", ]
X <- cbind("(Intercept)" = 1, adult_design(d))
y <- adult_response(d)
rows <- list(compare("Adult (a9a)", X, y))
n <- nrow(X)
p <- ncol(X)
set.seed(1)
for (values in c("indicators", "normal")) {
  for (k in c(6, 14, 30, 45, 61, 92)) {
    Z <- matrix(0, n, p)
    Z[, 1] <- 1
    cols <- t(replicate(n, sample(2:p, k)))
    Z[cbind(rep(seq_len(n), k), as.vector(cols))] <- if (values == "indicators") 1 else rnorm(n * k)
    yy <- rbinom(n, 1, 0.3)
    rows[[length(rows) + 1]] <- compare(sprintf("%s, %d per row", values, k), Z, yy)
  }
}
cat(format(Sys.time(), "%Y-%m-%d %H:%M"), "load:", readLines("/proc/loadavg"), "\n")
print(do.call(rbind, rows), right = FALSE, row.names = FALSE)
