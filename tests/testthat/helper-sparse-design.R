# A text-like sparse binary classification design, with the statistics of
# a9a / rcv1: indicator (or tf-idf-like positive) features whose document
# frequencies follow a power law (a few common words, many rare ones), an
# intercept, and labels from a logistic model whose coefficients are mostly
# small. `d` columns in all, the intercept's included. Used by
# test-sparse-design.R and bench/sparse.R.
sparse_text_design <- function(n, d, density, seed = 1, values = c("binary", "tfidf")) {
  values <- match.arg(values)
  set.seed(seed)
  d <- d - 1L
  # document frequency of word j proportional to 1 / j^0.8, scaled so that
  # the mean density is `density`, capped at 0.5
  f <- 1 / seq_len(d)^0.8
  f <- pmin(0.5, f * density * d / sum(f))
  nnz_col <- stats::rbinom(d, n, f)
  i <- unlist(lapply(nnz_col, function(k) sample.int(n, k)))
  j <- rep.int(seq_len(d), nnz_col)
  x <- if (values == "binary") rep(1, length(i)) else stats::rexp(length(i)) / 2
  X <- Matrix::sparseMatrix(i = i, j = j, x = x, dims = c(n, d),
                            dimnames = list(NULL, paste0("w", seq_len(d))))
  X <- cbind("(Intercept)" = 1, X)
  beta <- c(-1, stats::rnorm(d, 0, 0.3) * (stats::runif(d) < 0.3))
  eta <- drop(as.matrix(X %*% beta))
  list(X = X, beta = beta, eta = eta,
       y = stats::rbinom(n, 1, stats::plogis(eta)),
       counts = stats::rpois(n, exp(pmin(eta, 3))),
       response = eta + stats::rnorm(n))
}
