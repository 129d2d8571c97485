# predict() on Adult's 16,281 test rows from 10,000 posterior draws of the
# logistic regression (124 coefficients, one-hot so mostly zeros): time of the
# C prediction against the R reference (a matrix product and plogis, a block of
# draws at a time, as predict() computed it before), and their largest
# difference. Target: under 1 s, equal to 1e-12.
# Run with `make bench` or `Rscript bench/predict.R [reps]`.
suppressPackageStartupMessages(library(sgld))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 5L

tr <- adult[adult$set == "train", ]
te <- adult[adult$set == "test", ]
X <- cbind("(Intercept)" = 1, adult_design(tr))
Xte <- cbind("(Intercept)" = 1, adult_design(te))
m <- model_logistic(X, adult_response(tr), prior = prior_laplace(0, 1), prior_intercept = NULL)
set.seed(1)
fit <- sgld(m, lr = 1e-5, batch_size = 10, iter = 2e5, burnin = 0, thin = 40, chains = 2)
W <- as.matrix(fit)
stopifnot(nrow(W) == 10000)

reference <- function(X, W) {
  total <- numeric(nrow(X))
  for (start in seq(1L, nrow(W), by = 1000L)) {
    rows <- start:min(nrow(W), start + 999L)
    total <- total + rowSums(plogis(X %*% t(W[rows, , drop = FALSE])))
  }
  total / nrow(W)
}
summarise <- function(x) sprintf("%.3f s [%.3f, %.3f]", median(x), min(x), max(x))
# CPU time too: on a machine shared with other jobs it moves less than the
# elapsed time
cpu <- replicate(reps, system.time(predict(fit, Xte))[["user.self"]])
t_c <- replicate(reps, system.time(p_c <<- predict(fit, Xte))[["elapsed"]])
t_r <- replicate(reps, system.time(p_r <<- reference(Xte, W))[["elapsed"]])
t_two <- replicate(reps, system.time(predict(fit, Xte, threads = 2))[["elapsed"]])
t_half <- replicate(reps, system.time(predict(fit, Xte, ndraws = 5000))[["elapsed"]])
cat(sprintf("Adult test rows %d, draws %d, coefficients %d; %d repetitions, median [min, max]\n",
            nrow(Xte), nrow(W), ncol(W), reps))
cat("predict() (C, 1 thread):  ", summarise(t_c), "elapsed;", summarise(cpu), "CPU\n")
cat("predict(threads = 2):     ", summarise(t_two), "\n")
cat("predict(ndraws = 5000):   ", summarise(t_half), "\n")
cat("R reference:              ", summarise(t_r), "\n")
cat(sprintf("largest |difference|: %.2e\n", max(abs(p_c - p_r))))
