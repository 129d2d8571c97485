# Sparse designs: the Matrix package's classes (dgCMatrix from
# Matrix::sparseMatrix(), glmnet's and xgboost's inputs, dgRMatrix, dgTMatrix,
# ...) taken as they are. Every step here costs O(non-zeros), or O(d^2) for
# the rank check; nothing makes the n x d dense matrix.

# Is `x` one of Matrix's sparse matrices? (S4 objects only, so that nothing
# loads Matrix for a plain matrix.)
is_sparse_design <- function(x) isS4(x) && methods::is(x, "sparseMatrix")

# A sparse design as a checked column-compressed double matrix (dgCMatrix)
# with column names, or an error naming `arg` and the rule.
check_sparse_design <- function(x, arg = "x") {
  # a pattern matrix records where the non-zeros are, not their values;
  # reading them as 1 would be a guess about the user's data
  if (methods::is(x, "nsparseMatrix"))
    abort("`", arg, "` is a pattern matrix (", class(x)[1], "): it says where the non-zeros ",
          "are but not their values. If they are indicators, give `1 * ", arg, "` (or ",
          "as(", arg, ", \"dMatrix\")) to use them as 1.")
  x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
  if (nrow(x) < 1L || ncol(x) < 1L)
    abort("`", arg, "` must have at least one row and one column.")
  bad <- which(!is.finite(x@x))
  if (length(bad)) {
    k <- bad[1]
    abort("`", arg, "` must be finite; it has ", format(x@x[k]), " in row ", x@i[k] + 1L,
          ", column ", findInterval(k - 1, x@p), ".")
  }
  # stored zeros are not non-zeros: the row storage and the dense path agree
  if (any(x@x == 0)) x <- Matrix::drop0(x)
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  x
}

# The fraction of a design's entries that are not zero.
design_density <- function(X) {
  if (is_sparse_design(X)) return(length(X@x) / (as.double(nrow(X)) * ncol(X)))
  mean(X != 0)
}

# A design as a base matrix (for the storages and methods that need one).
dense_design <- function(X) {
  if (!is_sparse_design(X)) return(X)
  D <- as.matrix(X)
  storage.mode(D) <- "double"
  D
}

# The row storage of a checked sparse design: for observation i the non-zero
# values val[k] in the 0-based columns col[k], k in start[i] .. start[i+1]-1,
# columns in increasing order within a row (the order the dense path finds
# them, so sums, and draws, are the same); `binary` when every value is 1.
sparse_rows <- function(X) {
  R <- methods::as(X, "RsparseMatrix")
  list(start = as.double(R@p), col = R@j, val = R@x, binary = all(R@x == 1))
}

# Linear dependence among a sparse design's columns, as check_rank() does for
# a dense one. Up to auto_max_d columns (R/auto.R): the Gram matrix X'X
# summed from the rows in C and its columns scaled, then LAPACK's pivoted
# Cholesky factorisation in place (src/gram.c), d^2 doubles in all (the
# Matrix package's sparse X'X, then its dense copy and the scaled one, took
# 112 MB of peak memory beside a 23 MB design of 10^5 x 2,000; this 32 MB
# and 1.4 s). Beyond: d x d would cost more than the model, so only
# all-zero and identical columns are found, in O(non-zeros).
check_rank_sparse <- function(X, max_d = auto_max_d) {
  names <- colnames(X)
  if (ncol(X) <= max_d) {
    R <- methods::as(X, "RsparseMatrix")
    g <- .Call(C_sgld_sparse_gram_rank, R@p, R@j, R@x, ncol(X), 1e-10)
    rm(R)
    largest <- if (any(!is.finite(g$ss))) column_largest(X)
    return(check_gram(NULL, names, largest, ss = g$ss, ranked = g))
  }
  ss <- column_sums_of_squares(X)
  if (any(ss == 0)) return(check_gram(NULL, names, ss = ss))   # the warning, no d x d
  same <- identical_columns(X)$later
  if (!length(same)) return(invisible(NULL))
  dependent <- names[same]
  sgld_warn("design", sprintf(paste0(
    "the design matrix has identical columns: %s %s a copy of an earlier column. Only the ",
    "prior tells those coefficients apart, and samplers move slowly along that direction. ",
    "Drop %s. (With more than %d columns, only identical and all-zero columns are looked ",
    "for.)"), name_list(dependent), if (length(dependent) > 1) "are each" else "is",
    if (length(dependent) > 1) "those columns" else "that column", max_d))
  invisible(dependent)
}

# Pairs of identical columns of a sparse design, in O(non-zeros): `later`
# the second of each pair, `earlier` the first. Identical columns have equal
# projections on two random vectors and equal sums of squares; candidates
# are then compared exactly.
identical_columns <- function(X) {
  proj <- with_seed_kept({
    set.seed(1)
    as.matrix(Matrix::crossprod(X, matrix(stats::runif(2 * nrow(X)), ncol = 2)))
  })
  key <- paste(proj[, 1], proj[, 2], Matrix::colSums(X^2))
  dup <- which(duplicated(key))
  first <- match(key[dup], key)
  same <- vapply(seq_along(dup), function(k) identical(X[, first[k]], X[, dup[k]]), NA)
  list(later = dup[same], earlier = first[same])
}

# Each column's largest absolute value, from the non-zeros.
column_largest <- function(X) {
  col <- rep.int(seq_len(ncol(X)), diff(X@p))
  out <- numeric(ncol(X))
  m <- tapply(abs(X@x), col, max)
  out[as.integer(names(m))] <- m
  out
}

# Each column's sum of squares, from the non-zeros (no squared copy of X).
column_sums_of_squares <- function(X) {
  ss <- numeric(ncol(X))
  count <- diff(X@p)
  ss[count > 0] <- rowsum(X@x^2, rep.int(seq_len(ncol(X)), count), reorder = TRUE)[, 1]
  ss
}

# A regression's rows, stored as model$sparse says: dense, (x_i, y_i)
# together (stack_data()); or sparse, per observation its non-zero
# covariates (0-based column, value; src/rows.h) and the responses apart,
# from a sparse design in O(non-zeros) or from a dense one.
store_rows <- function(model, X, y) {
  if (!isTRUE(model$sparse == 1L)) {
    model[c("sp_col", "sp_val", "sp_binary", "sp_start", "sp_y")] <- list(NULL)
    model$z <- stack_data(X, y)
    return(model)
  }
  model$z <- NULL
  model$sp_y <- as.double(y)
  if (is_sparse_design(X)) {
    rows <- sparse_rows(X)
  } else {
    tX <- t(unname(X))
    nz <- which(tX != 0)
    rows <- list(col = as.integer((nz - 1) %% nrow(tX)), val = as.double(tX[nz]),
                 start = c(0, cumsum(tabulate((nz - 1) %/% nrow(tX) + 1, nbins = nrow(X)))))
    rows$binary <- all(rows$val == 1)
  }
  model$sp_col <- rows$col
  model$sp_val <- rows$val
  model$sp_binary <- as.integer(rows$binary)
  model$sp_start <- rows$start
  model
}

# The response as the rows store it (dense or sparse).
stored_response <- function(model) {
  if (!is.null(model$sp_y)) model$sp_y else model$z[model$p + 1L, ]
}

# The design back from sparse storage, as a dense matrix.
sparse_design_matrix <- function(model) {
  X <- matrix(0, model$n, model$p, dimnames = list(NULL, model$names[seq_len(model$p)]))
  row <- rep(seq_len(model$n), diff(model$sp_start))
  X[cbind(row, model$sp_col + 1L)] <- model$sp_val
  X
}

# The rows where each coefficient j's covariate is not zero (R/model.R),
# from the sparse storage's non-zeros; NULL for a parameter that is no
# coefficient (it reads every row).
sparse_coordinate_rows <- function(model, j) {
  row <- rep(seq_len(model$n), diff(model$sp_start)) - 1
  # split once: a scan of the non-zeros per coordinate is O(d nnz) for all
  by_col <- split(row, factor(model$sp_col + 1L, levels = seq_len(model$p)))
  lapply(j, function(k) if (k <= model$p) by_col[[k]])
}

# Factors of many levels make a design mostly of zeros (one non-zero per
# factor in each row), which model.matrix() would write out dense: n x d
# doubles, 8 GB for 10^5 rows and a factor of 10,000 levels. Where a factor
# (or character) variable has more than formula_sparse_levels levels the
# design is built by Matrix::sparse.model.matrix(), whose columns, names,
# contrasts and "assign" are model.matrix()'s, and kept sparse when at most
# a quarter of it is non-zero (as the models store rows sparse then).
formula_sparse_levels <- 100

design_model_matrix <- function(tt, mf) {
  predictors <- mf[setdiff(names(mf), c(names(mf)[attr(tt, "response")], "(weights)",
                                        "(offset)"))]
  levels_of <- function(v) if (is.factor(v)) nlevels(v)
                           else if (is.character(v)) length(unique(v)) else 0L
  if (!length(predictors) || max(vapply(predictors, levels_of, 1L)) <= formula_sparse_levels)
    return(model.matrix(tt, mf))
  X <- Matrix::sparse.model.matrix(tt, mf)
  if (design_density(X) <= 0.25) return(X)
  D <- as.matrix(X)
  attr(D, "assign") <- attr(X, "assign")
  attr(D, "contrasts") <- attr(X, "contrasts")
  D
}

# check_design_columns() (R/design.R) for a sparse design, in O(non-zeros):
# a constant column beside the intercept, or two identical columns, from a
# formula.
check_design_columns_sparse <- function(X) {
  if (nrow(X) < 2L || ncol(X) < 2L) return(invisible())
  nm <- colnames(X)
  count <- diff(X@p)
  constant <- count == 0L
  full <- which(count == nrow(X))
  for (j in full) {
    v <- X@x[(X@p[j] + 1L):X@p[j + 1L]]
    constant[j] <- all(v == v[1])
  }
  if (sum(constant) > 1L) {
    j <- which(constant)[which(nm[constant] != "(Intercept)")[1]]
    abort("`data`: the formula gives the constant column '", nm[j], "', which adds ",
          "nothing to the intercept; drop it from the formula.")
  }
  same <- identical_columns(X)
  if (length(same$later))
    abort("`data`: the formula gives two identical columns, '", nm[same$earlier[1]], "' and '",
          nm[same$later[1]], "'; drop one of them.")
  invisible()
}
