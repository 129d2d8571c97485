# Models on file-backed matrices (bigmemory's big.matrix, or its descriptor).
# The model reads its rows from a memory map of a file (src/mmap.c): a copy
# of the design in the model's own layout, one observation's covariates and
# response together, written once into the package's cache directory and
# named by what it derives from, so models on the same content share it and
# no model reads another's. The model object holds the copy's path and key
# and its source's identity, not the data, so it is small, can be saved, and
# can go to another process that sees the same files.

is_file_matrix <- function(x) {
  inherits(x, "big.matrix") || inherits(x, "big.matrix.descriptor")
}

# The backing file of a big.matrix or descriptor, checked: its path, size,
# type and column names. Every rule a matrix must meet is said by name.
file_matrix_info <- function(x) {
  if (!requireNamespace("bigmemory", quietly = TRUE))
    abort("`x` is a big.matrix, which needs the package 'bigmemory'.")
  desc <- if (inherits(x, "big.matrix")) bigmemory::describe(x) else x
  info <- desc@description
  if (!identical(info$sharedType, "FileBacked"))
    abort("`x` must be a file-backed big.matrix (made by filebacked.big.matrix() or ",
          "as.big.matrix(backingfile = ...)), not one in shared memory: the model reads ",
          "the backing file.")
  if (isTRUE(info$separated))
    abort("`x` must not be a separated big.matrix (separated = TRUE keeps each column in ",
          "its own file); make it with separated = FALSE.")
  if (!info$type %in% c("double", "float"))
    abort("`x` must be a big.matrix of type \"double\" or \"float\", not \"", info$type, "\".")
  n <- info$totalRows
  k <- info$totalCols
  path <- file.path(info$dirname, info$filename)
  if (!file.exists(path))
    abort("`x`: its backing file '", path, "' does not exist.")
  width <- if (info$type == "float") 4 else 8
  size <- file.size(path)
  if (size != n * k * width)
    abort("`x`: its backing file '", path, "' has ", format(size, scientific = FALSE),
          " bytes, but a ", n, " x ", k, " matrix of ", info$type, "s needs ",
          format(n * k * width, scientific = FALSE), ": the file is truncated, or the ",
          "descriptor's dimensions disagree with it.")
  if (any(info$rowOffset != c(0, info$totalRows)) || any(info$colOffset != c(0, info$totalCols)))
    abort("`x` must be a whole big.matrix, not a sub.big.matrix view.")
  names <- info$colNames
  if (is.null(names)) names <- rep("", k)
  names[!nzchar(names)] <- paste0("x", seq_len(k))[!nzchar(names)]
  list(path = normalizePath(path), n = n, k = k, float = info$type == "float", names = names)
}

# The covariates and the response of a file-backed design: `y` is a response
# vector, or one column of `x` by name or number (the rest are covariates).
file_columns <- function(info, y) {
  if ((is.character(y) || is.numeric(y)) && length(y) == 1L && info$n != 1) {
    ycol <- if (is.character(y)) match(y, info$names) else y
    if (is.na(ycol) || ycol != floor(ycol) || ycol < 1 || ycol > info$k)
      abort("`y` must be a response vector of length ", info$n, " or one column of `x` ",
            "(a name or a number from 1 to ", info$k, "); ", describe(y), " is neither.")
    return(list(cols = setdiff(seq_len(info$k), ycol), ycol = ycol, y = NULL))
  }
  if (!is.null(dim(y)) || length(y) != info$n)
    abort("`y` has length ", length(y), " but `x` has ", info$n, " rows.")
  if (anyNA(y)) abort("`y` must not be NA; it is at position ", which(is.na(y))[1], ".")
  list(cols = seq_len(info$k), ycol = 0L, y = y)
}

# The directory of the copies: getOption("sgld.cache_dir"), by default the
# user's cache directory for the package (tools::R_user_dir()), created if
# needed.
cache_dir <- function() {
  dir <- getOption("sgld.cache_dir", tools::R_user_dir("sgld", which = "cache"))
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) || !nzchar(dir))
    abort("`options(sgld.cache_dir)` must be one directory path, not ", describe(dir), ".")
  if (!dir.exists(dir)) dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  if (!dir.exists(dir))
    abort("cannot create the cache directory '", dir, "' for the copy of a file-backed ",
          "matrix's rows; set `options(sgld.cache_dir = )` to a directory you can write.")
  normalizePath(dir)
}

# Writes (or finds) the model's copy of its rows and returns what the model
# needs from it: the copy's environment, the covariates' names, the
# response's mean, variance and binary values, and the covariates' Gram
# matrix X'X with their largest absolute values (for the checks of the
# design, which read it as they would read X: design_of_file()).
file_design <- function(x, y, binary) {
  info <- file_matrix_info(x)
  cols <- file_columns(info, y)
  if (length(cols$cols) < 1L) abort("`x` must have at least one covariate besides `y`.")
  if (info$n < 2L) abort("`x` must have at least 2 rows, not ", info$n, ".")
  copy <- .Call(C_sgld_file_rows, list(
    source = info$path, cache = cache_dir(), float = as.integer(info$float), n = info$n,
    ncol = as.integer(info$k), cols = as.integer(cols$cols - 1L),
    ycol = as.integer(cols$ycol - 1L), y = if (is.null(cols$y)) NULL else as.double(cols$y),
    binary = as.integer(binary)))
  file <- new.env(parent = emptyenv())
  file$path <- copy$path
  file$key <- copy$key
  file$source <- info$path
  file$source_id <- copy$source_id   # size, modification time (s, ns) when built
  file$source_sum <- copy$source_sum # checksum of its content then (src/mmap.c)
  file$source_ncol <- as.integer(info$k)
  file$layout <- "observation-contiguous (p + 1) x n doubles: covariates, then the response"
  file$offset <- copy$offset         # bytes of the copy's header, before its rows
  file$ptr <- NULL
  names <- info$names[cols$cols]
  stats <- copy$stats
  list(file = file, names = names, n = info$n, p = length(cols$cols),
       design = design_of_file(copy$gram, copy$largest, names, info$n),
       y_mean = stats[1], y_var = stats[2], zero = stats[3] > 0, minus = stats[4] > 0,
       one = stats[5] > 0, ycol = cols$ycol)
}

# What the model constructors are given for X when the rows stay in the
# file: two rows (the constructors keep only names and sizes from it) that
# carry the file's X'X and largest values, which check_rank() (R/design.R)
# reads in place of X's own.
# With an intercept column its row of X'X holds the columns' sums, from
# which the columns' means and sds follow (attribute "moments", for
# autoscaled priors, R/priors.R: column_stats()).
design_of_file <- function(gram, largest, names, n) {
  X <- matrix(1, 2, length(names), dimnames = list(NULL, names))
  attr(X, "gram") <- gram
  attr(X, "largest") <- largest
  k <- match("(Intercept)", names)
  if (!is.na(k)) {
    mu <- gram[k, ] / n
    sd <- sqrt(pmax(diag(gram) - n * mu^2, 0) / (n - 1))
    sd[sd <= 1e-7 * abs(mu)] <- 0
    attr(X, "moments") <- list(mean = as.double(mu), sd = as.double(sd))
  }
  X
}

# A model whose data are in memory, from one on a file (for held-out data).
in_memory <- function(model) {
  model$file <- NULL
  model
}

# The design matrix of a model on a file is not brought into memory.
check_in_memory <- function(model) {
  if (!is.null(model$file))
    abort("this needs the design matrix in memory, but the model reads it from the file '",
          model$file$source, "'; for predictions give `newdata`.")
  invisible()
}

file_model_linear <- function(x, y, prior, prior_intercept, prior_aux) {
  f <- file_design(x, if (missing(y)) stop_missing_y() else y, binary = FALSE)
  if (f$y_var == 0) stop_constant_response(f$y_mean)
  check_file_moments(f$design, prior, prior_intercept)
  y2 <- structure(c(f$y_mean, f$y_mean), moments = c(f$y_mean, sqrt(f$y_var)))
  m <- new_model_linear(f$design, y2, prior, prior_intercept, prior_aux, y2)
  m$z <- NULL
  m$n <- as.double(f$n)
  m$default_init[m$d] <- f$y_var
  m$file <- f$file
  m
}

file_model_logistic <- function(x, y, prior, prior_intercept, sparse) {
  if (isTRUE(sparse)) abort("`sparse`: a model on a file-backed matrix reads dense rows.")
  f <- file_design(x, if (missing(y)) stop_missing_y() else y, binary = TRUE)
  if (f$zero && f$minus)
    abort("the response must be 0/1 or -1/+1, not a mixture: it has 0, -1 and 1.")
  if (!f$one || !(f$zero || f$minus))
    abort("the response must have two classes; it is all ", if (f$one) 1 else if (f$zero) 0 else -1, ".")
  labels <- if (f$zero) c("0", "1") else c("-1", "1")
  check_file_moments(f$design, prior, prior_intercept)
  m <- new_model_logistic(f$design, structure(c(-1, 1), labels = labels), prior,
                          prior_intercept, sparse = FALSE)
  m$z <- NULL
  m$n <- as.double(f$n)
  m$file <- f$file
  m
}

# The error of a run whose file copy was shortened under it (src/mmap.c):
# the chains stopped before keeping anything read from the lost rows; the
# fit of the draws made before rides on the error.
rows_lost_error <- function(fit, model) {
  at <- fit$stop_iter[fit$status == "failed"]
  msg <- sprintf(paste0(
    "the model's copy of its rows '%s' was truncated during the run (by another process, ",
    "or a disk that filled): the chains stopped at iteration%s %s, before keeping any draw ",
    "made from the lost rows. The %s draws made before are kept: get the fit with ",
    "tryCatch(..., sgld_data_error = function(e) e$fit). Build the model again from its ",
    "file-backed matrix for another run."),
    if (is.null(model$file)) "?" else model$file$path, if (length(unique(at)) > 1) "s" else "",
    paste(unique(format(at, scientific = FALSE)), collapse = ", "),
    format(sum(fit$kept), scientific = FALSE))
  structure(class = c("sgld_data_error", "error", "condition"),
            list(message = msg, call = NULL, fit = fit))
}

# The copy is checked again after a run (as every later call into C would):
# one written to or extended under the run may have given some of its draws,
# which come back on the error rather than being lost with it.
check_copy_after_run <- function(fit, model) {
  why <- tryCatch({
    .Call(C_sgld_model_info, model)
    NULL
  }, error = conditionMessage)
  if (is.null(why)) return(invisible())
  stop(structure(class = c("sgld_data_error", "error", "condition"), list(
    message = paste0("the model's copy of its rows changed during the run, so some draws ",
                     "may come from the changed rows: ", why, ". The ",
                     format(sum(fit$kept), scientific = FALSE), " draws are kept: get the fit ",
                     "with tryCatch(..., sgld_data_error = function(e) e$fit)."),
    call = NULL, fit = fit)))
}

# a response that never varies: sigma2's mode is 0, outside its range
stop_constant_response <- function(value)
  abort("the response is ", exact_value(value), " in every row: a linear regression needs ",
        "a response that varies (with none, the noise variance sigma2 has its mode at 0).")

# Autoscaling reads the columns' means and sds, which a file's X'X gives
# only with an intercept column.
check_file_moments <- function(design, prior, prior_intercept) {
  if (is.null(attr(design, "moments")) && isTRUE(prior$autoscale))
    abort("`prior`: autoscaling needs the columns' sds, which a file-backed matrix gives ",
          "only with an \"(Intercept)\" column; add one, or give `prior` with ",
          "`autoscale = FALSE`.")
}

stop_missing_y <- function() abort("`y` is missing: give a response vector or one column of `x`.")
