# The wide models' lr = "auto" recipe (R/auto-wide.R) on data not used while
# designing it (issue 49): the recipe forced at small d
# (options(sgld.auto_wide_d)), the default sgld(model) against long MALA
# runs (Adult: the plan only). Results: bench/sparse.md.
#   Rscript bench/sparse-heldout.R
suppressPackageStartupMessages(library(sgld))
source("tests/testthat/helper-sparse-design.R")   # run from the package's root
options(sgld.auto_wide_d = 30)
compare <- function(label, m, ref) {
  t <- system.time({
    set.seed(1)
    fit <- sgld(m)
  })
  a <- as.matrix(fit)
  z <- abs(colMeans(a) - ref$mean) / ref$sd
  r <- apply(a, 2, sd) / ref$sd
  cat(sprintf(paste0("%-34s d %4d: %s; %5d iterations, %5.1f s CPU; means within %.3f sd ",
                     "(median %.3f), sds %.3f-%.3f of MALA's\n"), label, m$d, fit$auto$strategy,
              fit$auto$iter, t[["user.self"]] + t[["sys.self"]], max(z), stats::median(z),
              min(r), max(r)))
}
mala_reference <- function(m, iter = 20000) {
  set.seed(2)
  r <- as.matrix(suppressWarnings(mala(m, iter = iter)))
  list(mean = colMeans(r), sd = apply(r, 2, sd))
}
# 1. Adult's a9a design (real, 32,561 rows, stored sparse) with one column
# per factor dropped and education_num (a bucketing of education) left out,
# so that it has full rank: the recipe's plan (a short run with `iter`
# given, so that it stops) beside the spectrum of the diagonally
# preconditioned precision S H S at the mode (exact, d = 106). The full run
# is not made: it plans millions of steps (bench/sparse.md).
d <- adult[adult$set == "train", ]
A <- adult_design(d)
group <- sub("=.*", "", colnames(A))
A <- A[, duplicated(group) & group != "education_num", drop = FALSE]
X <- Matrix::Matrix(cbind("(Intercept)" = 1, A), sparse = TRUE)
m <- model_logistic(X, adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL)
stopifnot(m$sparse == 1L)
fit <- suppressWarnings(sgld(m, iter = 300, burnin = 10, thin = 1))
pm <- posterior_mode(m, covariance = TRUE)
H <- solve(pm$covariance)
s <- 1 / sqrt(diag(H))
ev <- eigen(H * tcrossprod(s), symmetric = TRUE, only.values = TRUE)$values
cat(sprintf(paste0("Adult (a9a, full rank), logistic, d %d: curvatures after the correction ",
                   "%.2g-%.2g (floor 1e-3 of the top), autocorrelation time %.0f; exact S H S ",
                   "eigenvalues %.2g-%.2g, %d below 1/1.5\n"), m$d, fit$auto$curvature[1],
            fit$auto$curvature[2], fit$auto$autocorrelation_time, min(ev), max(ev),
            sum(ev < 1 / 1.5)))
# 2. the text generator's tf-idf-like values (not its indicators), another seed
g <- sparse_text_design(3000, 80, 0.05, seed = 4, values = "tfidf")
for (face in c("logistic", "poisson", "linear", "negbin")) {
  m <- switch(face, logistic = model_logistic(g$X, g$y), poisson = model_poisson(g$X, g$counts),
              linear = model_linear(g$X, g$response), negbin = model_negbin(g$X, g$counts))
  compare(paste("tf-idf 3,000 x 80,", face), m, mala_reference(m))
}
# 3. Matrix::rsparsematrix(): uniform density, normal values (no power law)
set.seed(5)
Z <- Matrix::rsparsematrix(3000, 79, density = 0.1)
colnames(Z) <- paste0("z", seq_len(79))
Z <- cbind("(Intercept)" = 1, Z)
eta <- drop(as.matrix(Z %*% c(-0.5, stats::rnorm(79, 0, 0.4))))
m <- model_logistic(Z, stats::rbinom(3000, 1, stats::plogis(eta)))
compare("rsparsematrix 3,000 x 80, logistic", m, mala_reference(m))
m <- model_poisson(Z, stats::rpois(3000, exp(pmin(eta, 3))))
compare("rsparsematrix 3,000 x 80, poisson", m, mala_reference(m))
