# Design matrices shared by the regression models: the formula + data frame
# face (through model.frame / model.matrix, keeping what predict() needs to
# rebuild the design for new data) and the checks of the matrix face.

design_from_formula <- function(formula, data, extras = list(), na.action = NULL) {
  if (missing(data) || !is.data.frame(data))
    abort("`data` must be a data frame holding the variables of the formula.")
  if (nrow(data) < 1L) abort("`data` has no rows.")
  # lme4's (1 | g) would read as a logical `or` here: only the multilevel
  # model takes group effects
  bars <- lme4::findbars(formula)
  if (!is.null(bars))
    abort("`x`: (", deparse1(bars[[1]]), ") is a random-effect term, which this model ",
          "cannot have; model_glmer() (gaussian, binomial, poisson) fits multilevel models.")
  vars <- all.vars(formula)
  missing_vars <- setdiff(vars, c(names(data), "."))
  if (length(missing_vars))
    abort("`data` has no column", if (length(missing_vars) > 1) "s", " named ",
          paste0("'", missing_vars, "'", collapse = ", "), ".")
  used <- if ("." %in% vars) names(data) else intersect(vars, names(data))
  for (v in used) check_data_column(data[[v]], v, values = FALSE)
  na_fun <- resolve_na_action(na.action)
  if (!is.null(extras$subset)) check_subset(extras$subset, data, formula)
  # subset, weights and offset are evaluated in `data` (then in the formula's
  # environment), as model.frame() does for lm() and glm()
  cl <- as.call(c(list(quote(stats::model.frame), formula = formula, data = quote(data),
                       na.action = quote(stats::na.pass), drop.unused.levels = TRUE),
                  extras))
  mf <- tryCatch(eval(cl),
                 error = function(e) abort("`x`", if (length(extras)) paste0(" (or `",
                   paste(names(extras), collapse = "`, `"), "`)"),
                   ": cannot be evaluated on `data`: ", conditionMessage(e)))
  if (nrow(mf) < 1L) abort("`subset` leaves no rows of `data`.")
  check_frame_predictors(mf, all_missing = TRUE)
  if (is.null(na_fun)) {
    check_frame_values(mf, na_fail = TRUE)
  } else {
    mf <- na_fun(mf)
    if (nrow(mf) < 1L) abort("`na.action` leaves no rows of `data`.")
    check_frame_values(mf, na_fail = FALSE)
  }
  # a regression needs two rows; said before the response's own checks,
  # which would otherwise blame the response of a one-row data set
  if (nrow(mf) < 2L)
    abort("`data` must have at least 2 observations",
          if ("subset" %in% names(extras) || !is.null(na_fun))
            " left after `subset` and `na.action`", ", not ", nrow(mf), ".")
  # after na.action: the levels of the rows the model uses
  mf <- drop_unused_levels(mf)
  check_frame_predictors(mf, all_missing = FALSE)
  y <- model.response(mf)
  if (is.null(y)) abort("`x` must be a formula with a response, such as y ~ x.")
  weights <- stats::model.weights(mf)
  if (!is.null(weights) && (!is.numeric(weights) || any(weights < 0)))
    abort("`weights` must be non-negative numbers; it has ",
          if (is.numeric(weights)) format(weights[weights < 0][1]) else class(weights)[1], ".")
  offset <- stats::model.offset(mf)
  tt <- terms(mf)
  # dense, or sparse for factors of many levels (R/design-sparse.R)
  X <- tryCatch(design_model_matrix(tt, mf),
                error = function(e) abort("`data`: a column cannot be made numeric: ",
                                          conditionMessage(e)))
  if (ncol(X) < 1L)
    abort("`formula` ", deparse1(formula), " gives no columns: no intercept and no ",
          "predictors; add an intercept (`~ 1`) or a predictor.")
  if (is_sparse_design(X)) check_design_columns_sparse(X) else check_design_columns(X)
  list(X = X, y = y, terms = tt, xlevels = .getXlevels(tt, mf),
       # the rows' names as the frame holds them (compact when automatic)
       row_names = attr(mf, "row.names"),
       contrasts = attr(X, "contrasts"), formula = formula,
       weights = if (!is.null(weights)) as.double(weights),
       offset = if (!is.null(offset)) as.double(offset),
       offset_expr = extras$offset)
}

# `subset`: logical (one per row of `data`, no NA) or row numbers, all
# positive or all negative; model.frame() turns anything else into rows of
# NA, which would be reported as missing values of the response
check_subset <- function(expr, data, formula) {
  s <- tryCatch(eval(expr, data, environment(formula)), error = function(e)
    abort("`subset` cannot be evaluated on `data`: ", conditionMessage(e)))
  n <- nrow(data)
  ok <- if (is.logical(s)) length(s) %in% c(1L, n) && !anyNA(s)
        else is.numeric(s) && !anyNA(s) && all(s == round(s)) && all(abs(s) <= n) &&
          (all(s >= 0) || all(s <= 0))
  if (!ok)
    abort("`subset` must be TRUE/FALSE for each of the ", n, " rows of `data` (no NA) or ",
          "row numbers between 1 and ", n, ", not ", describe(s), ".")
  invisible(s)
}

# subset, weights and offset as the caller wrote them (unevaluated), from the
# call of a model's formula face
frame_extras <- function(call) {
  as.list(call)[intersect(c("subset", "weights", "offset"), names(call))]
}

# NULL for na.fail (our own messages name the column and row), else a function
resolve_na_action <- function(na.action) {
  if (is.null(na.action)) return(NULL)
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action)) {
    if (!na.action %in% c("na.fail", "na.omit", "na.exclude"))
      abort("`na.action` must be na.fail, na.omit or na.exclude, not \"", na.action, "\".")
    na.action <- get(na.action, envir = asNamespace("stats"))
  }
  if (!is.function(na.action))
    abort("`na.action` must be a function such as na.omit, not ", describe(na.action), ".")
  if (identical(na.action, stats::na.fail)) NULL else na.action
}

# The predictors of a model frame (not the response, weights or offset) that
# no design can use, each named: a column with only missing values (before
# na.action, which would otherwise drop every row or stop at its first NA),
# and a factor, character or logical column with a single value among the
# rows used (model.matrix() would stop with "contrasts can be applied only to
# factors with 2 or more levels", naming no column).
check_frame_predictors <- function(mf, all_missing) {
  response <- attr(attr(mf, "terms"), "response")
  for (j in seq_along(mf)) {
    v <- names(mf)[j]
    if (j == response || v %in% c("(weights)", "(offset)")) next
    col <- mf[[j]]
    if (all_missing) {
      if (all(is.na(col)))
        abort("`data` column '", v, "' has only missing values; drop it from the formula.")
      next
    }
    if (!(is.factor(col) || is.character(col) || is.logical(col))) next
    # a factor's levels are those of the rows used (drop_unused_levels())
    values <- if (is.factor(col)) levels(col) else unique(as.character(col[!is.na(col)]))
    if (length(values) < 2L)
      abort("`data` column '", v, "' is a factor with the single level '", values[1],
            "' among the rows used: it has no contrasts and adds nothing to the ",
            "intercept; drop it from the formula.")
  }
}

# Factors keep only the levels present (the rows na.action left), as
# model.frame(drop.unused.levels = TRUE) did before it. droplevels() loses a
# factor's own contrasts (contrasts(f) <- ..., which glm() follows): a
# factor with every level present is left as it is, and one that lost levels
# keeps contrasts given by name.
drop_unused_levels <- function(mf) {
  for (j in seq_along(mf)) {
    f <- mf[[j]]
    if (!is.factor(f) || all(levels(f) %in% f)) next
    own <- attr(f, "contrasts")
    f <- droplevels(f)
    if (is.character(own)) attr(f, "contrasts") <- own
    mf[[j]] <- f
  }
  mf
}

# Missing and non-finite values among the rows the model uses.
check_frame_values <- function(mf, na_fail) {
  label <- function(v) if (v %in% c("(weights)", "(offset)")) paste0("`", gsub("[()]", "", v), "`")
                       else paste0("`data` column '", v, "'")
  for (v in names(mf)) {
    col <- mf[[v]]
    bad <- if (is.matrix(col)) rowSums(is.na(col)) > 0 else is.na(col)
    if (na_fail && any(bad))
      abort(label(v), " has missing values (first at row ", rownames(mf)[which(bad)[1]],
            "); remove or impute them first, or use na.action = na.omit.")
    if (is.numeric(col) && !is.factor(col)) {
      nf <- !is.finite(col) & !is.na(col)
      if (is.matrix(nf)) nf <- rowSums(nf) > 0
      if (any(nf)) abort(label(v), " has non-finite values (first at row ",
                         rownames(mf)[which(nf)[1]], ").")
    }
  }
}

# A formula that yields a constant column next to the intercept, or two
# identical columns, is a modelling mistake (the prior alone would then tell
# their coefficients apart). Matrices given directly are taken as they are:
# encodings such as the a9a version of Adult contain duplicates on purpose.
check_design_columns <- function(X) {
  if (nrow(X) < 2L || ncol(X) < 2L) return(invisible())
  nm <- colnames(X)
  constant <- vapply(seq_len(ncol(X)), function(j) all(X[, j] == X[1, j]), logical(1))
  if (sum(constant) > 1L) {
    j <- which(constant)[which(nm[constant] != "(Intercept)")[1]]
    abort("`data`: the formula gives the constant column '", nm[j], "', which adds ",
          "nothing to the intercept; drop it from the formula.")
  }
  sums <- colSums(X)
  for (j in seq_len(ncol(X))[-1]) {
    same <- which(sums[seq_len(j - 1L)] == sums[j])
    for (i in same) if (identical(unname(X[, i]), unname(X[, j])))
      abort("`data`: the formula gives two identical columns, '", nm[i], "' and '", nm[j],
            "'; drop one of them.")
  }
  invisible()
}

check_data_column <- function(v, name, values = TRUE) {
  if (is.list(v) && !is.data.frame(v))
    abort("`data` column '", name, "' is a list and cannot be made numeric.")
  ok_type <- is.numeric(v) || is.logical(v) || is.factor(v) || is.character(v)
  if (!ok_type || is.object(v) && !is.factor(v) && !inherits(v, "AsIs"))
    abort("`data` column '", name, "' (class ", class(v)[1],
          ") cannot be made numeric; convert it to a number or a factor first.")
  if (!values) return(invisible())
  if (anyNA(v))
    abort("`data` column '", name, "' has missing values (first at row ",
          which(is.na(v))[1], "); remove or impute them first.")
  if (is.numeric(v) && any(!is.finite(v)))
    abort("`data` column '", name, "' has non-finite values (first at row ",
          which(!is.finite(v))[1], ").")
}

# The matrix face: a finite numeric matrix (a vector is one column), named;
# or one of Matrix's sparse matrices (R/design-sparse.R), kept sparse when
# `keep_sparse` (for the models that store rows sparse), else made dense.
check_design_matrix <- function(x, keep_sparse = FALSE) {
  if (is_sparse_design(x)) {
    x <- check_sparse_design(x)
    return(if (keep_sparse) x else dense_design(x))
  }
  if (is.data.frame(x))
    abort("`x` is a data frame: give a formula and `data`, or a numeric matrix and `y`.")
  if (is.numeric(x) && is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !is.numeric(x))
    abort("`x` must be a formula or a numeric design matrix, not ", describe(x), ".")
  if (nrow(x) < 1L || ncol(x) < 1L) abort("`x` must have at least one row and one column.")
  if (any(!is.finite(x))) {
    bad <- which(!is.finite(x), arr.ind = TRUE)[1, ]
    abort("`x` must be finite; it has ", format(x[bad[1], bad[2]]), " in row ", bad[1],
          ", column ", bad[2], ".")
  }
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  storage.mode(x) <- "double"
  x
}

check_response_length <- function(y, x) {
  if (missing(y)) abort("`y` is missing: the matrix face needs a response vector.")
  if (!is.null(dim(y)) && !(length(dim(y)) == 2L && ncol(y) == 1L))
    abort("`y` must be a vector, not ", describe(y), ".")
  if (length(y) != nrow(x))
    abort("`y` has length ", length(y), " but `x` has ", nrow(x), " rows.")
  if (anyNA(y))
    abort("`y` must not be NA; it is at position ", which(is.na(y))[1], ".")
  invisible(y)
}

# Observation-contiguous storage: column i is (x_i, y_i), as
# rbind(t(X), y), written in C into memory that large data get in 2 MB pages
# (src/pages.c).
stack_data <- function(X, y) {
  X <- dense_design(X)
  if (!is.matrix(X)) X <- as.matrix(X)
  if (!is.double(X)) storage.mode(X) <- "double"
  .Call(C_sgld_stack_rows, X, as.double(y))
}

# Keep what predict() needs from a formula fit.
add_formula_parts <- function(model, design) {
  model$terms <- design$terms
  model$xlevels <- design$xlevels
  model$contrasts <- design$contrasts
  model$formula <- design$formula
  model$offset <- design$offset
  model$offset_expr <- design$offset_expr
  model$row_names <- design$row_names
  model
}

# One line on the per-observation fields a model carries, for print().
print_observation_fields <- function(x) {
  parts <- c(if (!is.null(x$obs_weight)) paste0("case weights summing to ", format(sum(x$obs_weight))),
             if (!is.null(x$trials)) paste0("binomial counts, ", format(sum(x$trials)), " trials"),
             if (!is.null(x$offset) || !is.null(x$obs_offset)) "an offset")
  if (length(parts)) cat("With ", paste(parts, collapse = ", "), "\n", sep = "")
}

# Per-observation fields of the likelihood (case weights, offsets, counts):
# they belong to the training rows, not to other data put in their place.
drop_observation_fields <- function(model) {
  for (f in c("obs_weight", "obs_offset", "obs_events", "obs_nonevents", "offset",
              "trials"))
    model[f] <- list(NULL)
  model
}

# A model holding other data of the same kind (held-out data for the monitor).
set_model_data <- function(model, X, y) UseMethod("set_model_data")

set_model_data.default <- function(model, X, y) {
  model <- drop_observation_fields(model)
  model$n <- as.double(nrow(X))
  store_rows(model, X, y)   # R/design-sparse.R
}

# The training design matrix, back from the model's storage.
design_matrix <- function(model) {
  check_in_memory(model)
  UseMethod("design_matrix")
}

design_matrix.default <- function(model) {
  if (isTRUE(model$sparse == 1L)) return(sparse_design_matrix(model))
  X <- t(model$z[seq_len(model$p), , drop = FALSE])
  colnames(X) <- model$names[seq_len(model$p)]
  X
}

# The design matrix of new data, with the training formula's levels and contrasts.
design_for_newdata <- function(model, newdata) {
  if (is.null(newdata)) {
    X <- design_matrix(model)
    # named by the training data's rows, as predict() and fitted() of glm()
    if (!is.null(model$row_names) && length(model$row_names) > 0L &&
        nrow(X) == .row_names_info(structure(list(), row.names = model$row_names), 2L))
      rownames(X) <- as.character(
        if (is.integer(model$row_names) && anyNA(model$row_names)) seq_len(nrow(X))
        else model$row_names)
    if (!is.null(model$offset)) attr(X, "offset") <- model$offset
    return(X)
  }
  if (is.null(model$terms)) {
    X <- check_design_matrix(newdata)
    if (ncol(X) != model$p)
      abort("`newdata` must have ", model$p, " columns like the training matrix, not ",
            ncol(X), ".")
    return(X)
  }
  if (!is.data.frame(newdata)) abort("`newdata` must be a data frame.")
  tt <- delete.response(model$terms)
  need <- setdiff(all.vars(tt), names(newdata))
  if (length(need))
    abort("`newdata` has no column", if (length(need) > 1) "s", " named ",
          paste0("'", need, "'", collapse = ", "), ".")
  for (v in intersect(all.vars(tt), names(newdata))) check_data_column(newdata[[v]], v)
  for (v in names(model$xlevels)) {
    if (!v %in% names(newdata)) next
    new <- setdiff(unique(as.character(newdata[[v]])), model$xlevels[[v]])
    if (length(new))
      abort("`newdata` column '", v, "' has level", if (length(new) > 1) "s", " ",
            paste0("'", new, "'", collapse = ", "), " not seen in the training data.")
  }
  mf <- model.frame(tt, newdata, na.action = na.pass, xlev = model$xlevels)
  X <- model.matrix(tt, mf, contrasts.arg = model$contrasts)
  # offsets: offset() terms of the formula, and the `offset` argument
  # evaluated in the new data, as predict.lm() does
  off <- stats::model.offset(mf)
  if (!is.null(model$offset_expr)) {
    extra <- eval(model$offset_expr, newdata, environment(model$formula))
    if (!is.numeric(extra) || !length(extra) %in% c(1L, nrow(X)) || any(!is.finite(extra)))
      abort("`newdata`: the model's `offset` must give finite numbers, one per row.")
    off <- (if (is.null(off)) 0 else off) + extra
  }
  if (!is.null(off)) attr(X, "offset") <- rep_len(as.double(off), nrow(X))
  X
}

# A design whose columns are linearly dependent (perfectly collinear
# predictors): the likelihood is flat along some direction, only the prior
# tells those coefficients apart, and samplers crawl along it. Read off the
# Gram matrix X'X; a model on a file computes it in its pass over the file,
# and gives it here as X's attribute "gram" (design_of_file() in
# R/file-backed.R). `largest` is each column's largest absolute value, for
# the message when its squares overflow.
check_rank <- function(X) {
  if (!is.null(attr(X, "gram")))
    return(check_gram(attr(X, "gram"), colnames(X), attr(X, "largest")))
  if (is_sparse_design(X)) return(check_rank_sparse(X))  # R/design-sparse.R
  check_gram(crossprod(X), colnames(X), largest = apply(abs(X), 2, max))
}

# The rank from a pivoted QR of the scaled Gram matrix, or given as
# `ranked` (list(rank, pivot)) with the sums of squares `ss` and no G: a
# sparse design's, from a pivoted Cholesky factorisation in C
# (check_rank_sparse()), where a column is dependent when the fraction of
# its sum of squares that the columns before it leave unexplained is below
# 1e-10 (rounding in the Gram matrix leaves about d times the machine
# epsilon, 4e-13 at d = 2,000).
check_gram <- function(G, names, largest = NULL, ss = diag(G), ranked = NULL) {
  p <- length(ss)
  if (is.null(names)) names <- paste0("x", seq_len(p))
  # the sum of squares of a column beyond the largest double: the model's
  # gradients and curvature (x_i x_i' terms) overflow too, whatever the
  # sampler; the rank cannot be read either
  if (any(!is.finite(ss))) {
    j <- which(!is.finite(ss))
    abort(sprintf(paste0(
      "the design matrix's column%s %s hold%s values so large (up to %s) that the sum of ",
      "their squares overflows (beyond %.3g): the model's gradients and curvature cannot be ",
      "computed. Rescale %s, e.g. with scale() or by a power of 10."),
      if (length(j) > 1) "s" else "", name_list(names[j]), if (length(j) > 1) "" else "s",
      if (is.null(largest)) "Inf" else format(max(largest[j]), digits = 3),
      .Machine$double.xmax, if (length(j) > 1) "them" else "it"))
  }
  if (p < 2L) return(invisible(NULL))
  if (any(ss == 0)) {
    j <- which(ss == 0)
    sgld_warn("design", sprintf(paste0("the design matrix has the all-zero column%s %s: the data say ",
                           "nothing about %s coefficient%s, only the prior does. Drop ",
                           "%s."), if (length(j) > 1) "s" else "", name_list(names[j]),
                    if (length(j) > 1) "their" else "its", if (length(j) > 1) "s" else "",
                    if (length(j) > 1) "them" else "it"))
    return(invisible(names[j]))
  }
  # the Gram matrix of the scaled columns: rank is read off a pivoted QR
  q <- if (!is.null(ranked)) ranked else qr(G / tcrossprod(sqrt(ss)), tol = 1e-9)
  if (q$rank == p) return(invisible(NULL))
  dependent <- names[q$pivot[(q$rank + 1):p]]
  sgld_warn("design", sprintf(paste0(
    "the design matrix is rank deficient (rank %d with %d columns): %s %s a linear ",
    "combination of other columns (perfectly collinear predictors). Only the prior tells ",
    "those coefficients apart, and samplers move slowly along that direction. Drop %s, or ",
    "for a factor, keep the intercept and its default contrasts."),
    q$rank, p, name_list(dependent), if (length(dependent) > 1) "are each" else "is",
    if (length(dependent) > 1) "those columns" else "that column"))
  invisible(dependent)
}
