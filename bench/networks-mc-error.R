# The stated Monte Carlo error of a default network fit's predictive mean
# (fit$auto$precision, R/auto-mlp.R: mlp_precision()) against repeat runs:
# R independent default fits `sgld(model_mlp(y ~ ., d, hidden = 50))`
# (seeds 501..), and for each pair the root mean square over the checked
# training rows of z = difference of the two fits' predictive means over the
# root sum of squares of their stated errors (about 1 if the errors are a
# repeat run's), beside the same with batch means within chains (10 a
# chain, all chains together), the earlier rule's error, for contrast.
#
#   Rscript bench/networks-mc-error.R airquality 4     (or faithful, boston300)
suppressPackageStartupMessages(library(sgld))
a <- commandArgs(TRUE); set <- a[1]; R <- as.integer(a[2])
main <- function() {
data <- switch(set, airquality = list(d = stats::na.omit(datasets::airquality), f = Ozone ~ .),
  faithful = list(d = datasets::faithful, f = eruptions ~ .),
  boston300 = { set.seed(11); list(d = MASS::Boston[sample(nrow(MASS::Boston), 300), ], f = medv ~ .) })
m <- model_mlp(data$f, data$d, hidden = 50)
res <- lapply(seq_len(R), function(r) {
  set.seed(500 + r)
  fit <- suppressWarnings(sgld(m, threads = 1))
  p <- mlp_precision(m, fit)
  # batch means over every chain's 10 batches, for contrast (the earlier rule)
  K <- coda::niter(fit$draws); use <- unique(round(seq(1, K, length.out = min(K, 200))))
  X <- design_matrix(m)[p$rows, , drop = FALSE]
  bm <- do.call(cbind, lapply(fit$draws, function(ch) {
    mu <- mlp_outputs(m, X, to_sampler_scale(m, unclass(ch)[use, , drop = FALSE]))[[1]]
    sz <- floor(ncol(mu) / 10); sapply(1:10, function(b) rowMeans(mu[, (b - 1) * sz + seq_len(sz)])) }))
  cat(sprintf("run %d: iter %d stopped %s error %.3f\n", r, fit$auto$iter, fit$auto$stopped, p$mean_error))
  list(p = p, bm_se = sqrt(apply(bm, 1, var) / ncol(bm)))
})
for (i in 1:(R - 1)) for (j in (i + 1):R) {
  a <- res[[i]]$p; b <- res[[j]]$p
  z <- (a$mean - b$mean) / sqrt(a$mean_se^2 + b$mean_se^2)
  zb <- (a$mean - b$mean) / sqrt(res[[i]]$bm_se^2 + res[[j]]$bm_se^2)
  cat(sprintf("%s runs %d,%d: rms z %.2f (chain means); %.2f (batch means)\n", set, i, j, sqrt(mean(z^2)), sqrt(mean(zb^2))))
}}
environment(main) <- asNamespace("sgld"); main()
