# SGLD throughput on Adult (32,561 rows, 124 coefficients, one-hot so sparse),
# batch size 10, one chain; and the speed-up of 2 chains on 2 threads.
# Run with `make bench` or `Rscript bench/logistic-adult.R [reps]`.
suppressPackageStartupMessages(library(sgld))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 7L

tr <- adult[adult$set == "train", ]
X <- cbind("(Intercept)" = 1, adult_design(tr))
y <- adult_response(tr)
sparse <- model_logistic(X, y, prior = prior_laplace(0, 1))
dense <- model_logistic(X, y, prior = prior_laplace(0, 1), sparse = FALSE)

rate <- function(model, iter, chains = 1, threads = 1) {
  set.seed(1)
  fit <- sgld(model, lr = 1e-5, batch_size = 10, iter = iter, burnin = 0, thin = 100,
              chains = chains, threads = threads)
  c(engine = iter * chains / fit$time)
}
summarise <- function(x) sprintf("%8.0f [%8.0f, %8.0f]", median(x), min(x), max(x))

cat(sprintf("Adult logistic SGLD, batch 10, %d repetitions; iterations per second, median [min, max]\n\n", reps))
s <- replicate(reps, rate(sparse, 1e6))
d <- replicate(reps, rate(dense, 2e5))
cat("one chain, sparse storage:", summarise(s), "\n")
cat("one chain, dense storage: ", summarise(d), "\n")
cat(sprintf("sparse / dense: %.2f\n\n", median(s) / median(d)))

wall <- function(threads) {
  set.seed(1)
  system.time(sgld(sparse, lr = 1e-5, batch_size = 10, iter = 1e6, burnin = 0, thin = 100,
                   chains = 2, threads = threads))[["elapsed"]]
}
t1 <- replicate(reps, wall(1))
t2 <- replicate(reps, wall(2))
cat(sprintf("2 chains: threads = 1 %.3f s, threads = 2 %.3f s (medians); speed-up %.2f [%.2f, %.2f]\n",
            median(t1), median(t2), median(t1) / median(t2), min(t1) / max(t2), max(t1) / min(t2)))
