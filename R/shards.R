# Data on several machines: shards that stay where they are.
#
# A sharded source is a list of files, one per worker process of an existing
# cluster engine (a `parallel` socket cluster, or the cluster of the current
# `future` plan); each worker opens its own file once and keeps it open, and
# every question the samplers ask of the rows (a minibatch's gradient, a full
# pass's log likelihood, gradient and Hessian, each row's log likelihood at
# many draws) is sent as a small call to the workers that hold the rows and
# answered by a small reply: rows never come to the leader.
#
# The model built on it (sharded_model()) is a model written in R functions
# (type "r", src/model_r.c) whose functions map-reduce over the workers, so
# every sampler, the automatic settings, continuation and interrupts work as
# they do on one machine; and the minibatch is drawn by the engine from all N
# rows at once, so the estimator is exactly the one-machine estimator.

#' Data held in shards on several worker processes
#'
#' Describes a data set split by rows into files that stay on the machines
#' that hold them: shard `k` is the file `paths[k]`, opened by worker `k` of a
#' socket cluster and read there only. The result is a small object to give
#' to [model_logistic()] or [model_poisson()] in place of a matrix, with the
#' response named as a column (`model_logistic(shards(paths), y = "y")`). The
#' model's full-data quantities (log posterior, gradient, Hessian, each row's
#' log likelihood) are sums over the shards computed where the rows are and
#' added on the calling process; each minibatch is drawn from all the rows,
#' and the workers that hold its rows return their sums (see "Sampling").
#'
#' Each file is a `bigmemory` descriptor file (`.desc`, of a file-backed
#' `big.matrix` of doubles or floats with column names), or an `.rds` file
#' holding a numeric matrix with column names. Every shard must have the same
#' columns; one of them is the response, the others the covariates (an
#' `"(Intercept)"` column of ones for an intercept, as for file-backed
#' matrices, whose sums give the columns' means and sds for autoscaled
#' priors).
#'
#' @section Workers:
#' `workers` is a `parallel` cluster (from [parallel::makePSOCKcluster()] or
#' [parallelly::makeClusterPSOCK()], on this machine, over SSH, or on the
#' nodes of a scheduler's allocation), whose node `k` holds shard `k`; or a
#' character vector of host names, one per shard, on which a socket cluster
#' is started; or `NULL`: the cluster of the current `future` plan when it is
#' `plan(cluster, workers = cl)` with a cluster `cl`, otherwise one local
#' worker per shard, started here. A cluster started here is stopped by
#' [close()] (or when the object is garbage collected); one given is left to
#' its owner. A worker must have 'sgld' installed and, for descriptor files,
#' 'bigmemory'.
#'
#' @section Sampling:
#' The engine draws each minibatch from all `N` rows, as on one machine;
#' the rows of each shard go to its worker, which returns their summed
#' gradient (with control variates, at the chain's point and at the mode in
#' the same call), and the leader adds the shards' sums. The estimator is
#' therefore the one-machine estimator exactly (to rounding in the order of
#' the sums), unbiased for the full-data gradient, and carries no
#' approximation beyond SGLD's own step-size bias. Each iteration costs one
#' round trip to the workers (an iteration's message carries the point, d
#' doubles, and the batch's row numbers, about 4 bytes a row, and each
#' reply d doubles), so sharding pays where a pass over the data costs
#' more than a round trip: large data on few machines, not small data on
#' loopback.
#'
#' @section Faults:
#' A worker that dies or whose connection breaks during a run ends the run
#' with the draws made so far and a warning naming the shard; the shards
#' are unusable afterwards (a later call says which shard was lost).
#'
#' @param paths The shards' files, one per worker, as the workers see them.
#' @param workers A cluster, host names, or `NULL` (see "Workers").
#' @return An object of class `sgld_shards`: the paths, each shard's number of
#'   rows, the columns, and the connection to the workers.
#' @seealso `vignette("large-data", package = "sgld")`.
#' @examples
#' \donttest{
#' if (requireNamespace("bigmemory", quietly = TRUE)) {
#'   set.seed(1)
#'   n <- 2000
#'   X <- cbind("(Intercept)" = 1, x1 = rnorm(n), x2 = rnorm(n))
#'   y <- rbinom(n, 1, plogis(X %*% c(-0.5, 1, -1)))
#'   dir <- tempfile("shards")
#'   dir.create(dir)
#'   paths <- vapply(1:2, function(k) {
#'     rows <- seq(k, n, by = 2)
#'     b <- bigmemory::as.big.matrix(cbind(X[rows, ], y = y[rows]), backingpath = dir,
#'                                   backingfile = paste0("shard", k, ".bin"),
#'                                   descriptorfile = paste0("shard", k, ".desc"))
#'     file.path(dir, paste0("shard", k, ".desc"))
#'   }, "")
#'   s <- shards(paths)
#'   m <- model_logistic(s, y = "y")
#'   posterior_mode(m)$mode
#'   close(s)
#' }
#' }
#' @export
shards <- function(paths, workers = NULL) {
  if (!is.character(paths) || !length(paths) || anyNA(paths) || any(!nzchar(paths)))
    abort("`paths` must be the shards' file paths, a character vector without NA or ",
          "empty strings; not ", describe(paths), ".")
  if (anyDuplicated(paths))
    abort("`paths` must name each shard once; '", paths[anyDuplicated(paths)],
          "' is given twice.")
  handle <- shard_cluster(workers, length(paths))
  x <- structure(list(paths = paths, key = shard_key(), handle = handle),
                 class = "sgld_shards")
  # a cluster started here is stopped when a shard cannot be opened
  opened <- withCallingHandlers(
    shard_call(x, "open", lapply(seq_along(paths), function(k)
      list(key = x$key, path = paths[k]))),
    error = function(e) if (handle$owned) stop_cluster(handle))
  x$n <- vapply(opened, `[[`, 0, "n")
  handle$pids <- vapply(opened, `[[`, 0, "pid")
  handle$hosts <- vapply(opened, `[[`, "", "host")
  x$columns <- opened[[1]]$columns
  for (k in seq_along(paths)[-1])
    if (!identical(opened[[k]]$columns, x$columns))
      abort("`paths`: every shard must have the same columns; shard ", k, " ('", paths[k],
            "') has ", paste(opened[[k]]$columns, collapse = ", "), ", shard 1 has ",
            paste(x$columns, collapse = ", "), ".")
  x
}

#' @export
print.sgld_shards <- function(x, ...) {
  cat("Data in ", length(x$paths), " shards: ", format(sum(x$n), big.mark = ","),
      " rows (", paste(format(x$n, big.mark = ","), collapse = " + "), "), columns ",
      paste(x$columns, collapse = ", "), "\n", sep = "")
  for (k in seq_along(x$paths))
    cat(sprintf("  shard %d: %s on worker %d (host %s, pid %s)%s\n", k, x$paths[k], k,
                x$handle$hosts[k], format(x$handle$pids[k]),
                if (k %in% x$handle$lost) ", lost" else ""))
  invisible(x)
}

#' @rdname shards
#' @param con An `sgld_shards` object.
#' @param ... Not used.
#' @export
close.sgld_shards <- function(con, ...) {
  h <- con$handle
  if (!h$closed) {
    if (length(h$alive) && all(!h$lost %in% seq_along(con$paths)))
      try(shard_call(con, "close", rep(list(list(key = con$key)), length(con$paths))),
          silent = TRUE)
    h$closed <- TRUE
    if (h$owned) stop_cluster(h)
  }
  invisible(NULL)
}

# ---- the connection to the workers ---------------------------------------------

# A random name under which the workers keep this object's open files.
shard_key <- function() {
  paste0("s", paste(sample(c(letters, 0:9), 16, replace = TRUE), collapse = ""))
}

# The workers' connection: the cluster, whether it was started here (then
# stopped by close() or the finalizer), and which shards were lost.
shard_cluster <- function(workers, k) {
  h <- new.env(parent = emptyenv())
  h$owned <- FALSE
  h$closed <- FALSE
  h$lost <- integer(0)
  if (is.null(workers)) workers <- future_plan_cluster()
  if (inherits(workers, "cluster")) {
    if (length(workers) < k)
      abort("`workers` has ", length(workers), " worker", if (length(workers) != 1) "s",
            " but there are ", k, " shards; each shard needs a worker of its own.")
    h$cluster <- workers[seq_len(k)]
  } else if (is.null(workers) || is.character(workers)) {
    if (is.character(workers) && length(workers) != k)
      abort("`workers`: give one host per shard (", k, "), not ", length(workers), ".")
    spec <- if (is.null(workers)) k else workers
    # this end's sockets send small messages at once (TCP_NODELAY)
    old <- options(socketOptions = "no-delay")
    on.exit(options(old), add = TRUE)
    h$cluster <- if (requireNamespace("parallelly", quietly = TRUE))
      parallelly::makeClusterPSOCK(spec, autoStop = FALSE, verbose = FALSE)
    else parallel::makePSOCKcluster(spec)
    h$owned <- TRUE
    reg.finalizer(h, function(h) if (!h$closed) stop_cluster(h), onexit = TRUE)
  } else {
    abort("`workers` must be NULL, a cluster (parallel::makePSOCKcluster()) or host names; ",
          "not ", describe(workers), ".")
  }
  h$alive <- TRUE
  h
}

# The cluster of the current future plan, when it is plan(cluster, workers =
# cl) with a cluster object; else NULL (a worker per shard is started here:
# futures of other plans cannot be pinned to the worker holding a file).
future_plan_cluster <- function() {
  if (!requireNamespace("future", quietly = TRUE)) return(NULL)
  workers <- tryCatch(formals(future::plan("next"))$workers, error = function(e) NULL)
  if (inherits(workers, "cluster")) workers
}

stop_cluster <- function(h) {
  h$closed <- TRUE
  try(parallel::stopCluster(h$cluster), silent = TRUE)
}

# Calls the worker function `what` on the workers `which`, with each its
# arguments (a list per worker), in one round trip: every call is sent before
# any reply is read. A worker that fails to answer (it died, its connection
# broke) marks its shard lost and raises an error of class
# `sgld_data_lost` naming it.
shard_call <- function(x, what, args, which = seq_along(args)) {
  h <- x$handle
  if (h$closed) abort("these shards were closed; make them again with shards().")
  if (length(h$lost))
    stop(shard_lost_condition(x, h$lost[1], "it was lost earlier in this session"))
  # with interrupts suspended: Ctrl-C in the middle of reading the replies
  # would leave one unread, which the next call would take for its own
  # answer; it is taken when the round trip (milliseconds) ends
  out <- tryCatch(
    suspendInterrupts(parallel::clusterApply(h$cluster[which], args, shard_task, what = what)),
    error = function(e) e)
  if (!inherits(out, "error")) return(out)
  # which worker failed: a worker's own R error says so in its message; a
  # broken connection is found by asking each worker for its pid
  dead <- which[!vapply(which, function(k) shard_answers(h, k), NA)]
  if (!length(dead)) abort("shards: ", conditionMessage(out))
  h$lost <- dead
  stop(shard_lost_condition(x, dead[1], conditionMessage(out)))
}

# Does worker k still answer? (A reply left unread by a failed call may come
# first; any reply means the worker lives.)
shard_answers <- function(h, k) {
  ok <- tryCatch({
    parallel::clusterCall(h$cluster[k], Sys.getpid)
    TRUE
  }, error = function(e) FALSE)
  ok
}

shard_lost_condition <- function(x, k, why) {
  msg <- sprintf("shard %d ('%s', worker %d on host %s, pid %s) was lost: %s", k,
                 x$paths[k], k, x$handle$hosts[k] %||% "?",
                 format(x$handle$pids[k] %||% NA), why)
  structure(class = c("sgld_data_lost", "error", "condition"),
            list(message = msg, call = NULL, shard = k))
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# ---- on the workers ---------------------------------------------------------------

# The open shards of this worker process, by key.
shard_registry <- new.env(parent = emptyenv())

# The function sent to the workers with every call: small, so that a call
# fits in one write of R's serialisation buffer (4 kB). A call of 9 kB (the
# whole shard_worker() in its bytecode) went out in pieces and met TCP's
# delayed acknowledgement: 50 ms a round trip on loopback against 1.4 ms.
shard_task <- function(a, what) shard_worker(a, what)

# What a worker does: `what` names the task, `a` holds its arguments.
shard_worker <- function(a, what) {
  switch(what,
    open = shard_open(a$key, a$path),
    columns = shard_columns(a$key, a$model, a$y, a$family),
    pass = shard_pass(shard_registry[[a$model]], a$w, a$hessian),
    batch = shard_batch(shard_registry[[a$model]], a$w, a$rows, a$anchor),
    row_grads = shard_row_grads(shard_registry[[a$model]], a$w, a$rows, a$anchor, a$counts),
    loglik_rows = shard_loglik_rows(shard_registry[[a$model]], a$W),
    close = {
      # the shard and every model made on it
      gone <- Filter(function(k) identical(shard_registry[[k]]$key, a$key),
                     ls(shard_registry))
      rm(list = gone, envir = shard_registry)
      TRUE
    },
    stop("internal: unknown shard task '", what, "'"))
}

shard_open <- function(key, path) {
  if (!file.exists(path)) stop("no file '", path, "' on this worker", call. = FALSE)
  data <- if (grepl("\\.rds$", path, ignore.case = TRUE)) {
    x <- readRDS(path)
    if (!is.matrix(x) || !is.numeric(x))
      stop("'", path, "' holds ", describe(x), ", not a numeric matrix", call. = FALSE)
    x
  } else {
    if (!requireNamespace("bigmemory", quietly = TRUE))
      stop("reading '", path, "' needs the package 'bigmemory' on this worker", call. = FALSE)
    bigmemory::attach.big.matrix(path)
  }
  columns <- colnames(data)
  if (is.null(columns) || any(!nzchar(columns)))
    stop("'", path, "' must have column names", call. = FALSE)
  shard_registry[[key]] <- list(key = key, data = data, n = nrow(data), columns = columns)
  list(n = as.double(nrow(data)), columns = columns, pid = Sys.getpid(),
       host = Sys.info()[["nodename"]])
}

# Fixes the response column and family of a model (kept under its own key
# beside the shard), and returns what the model needs of the shard: the
# covariates' X'X and largest absolute values, and the response's summaries.
shard_columns <- function(key, model, y, family) {
  s <- shard_registry[[key]]
  ycol <- if (is.character(y)) match(y, s$columns) else y
  s$ycol <- ycol
  s$cols <- setdiff(seq_along(s$columns), ycol)
  s$family <- family
  gram <- 0
  largest <- 0
  ysum <- c(n = 0, sum = 0, sumsq = 0, zero = 0, one = 0, minus = 0, other = 0,
            negative = 0, fraction = 0, nonfinite = 0)
  for (rows in shard_chunks(s$n)) {
    block <- s$data[rows, , drop = FALSE]
    X <- block[, s$cols, drop = FALSE]
    yv <- block[, ycol]
    gram <- gram + crossprod(X)
    largest <- pmax(largest, apply(abs(X), 2, max))
    ysum <- ysum + c(length(yv), sum(yv), sum(yv^2), sum(yv == 0), sum(yv == 1),
                     sum(yv == -1), sum(!yv %in% c(-1, 0, 1)), sum(yv < 0),
                     sum(yv != round(yv)), sum(!is.finite(yv)))
  }
  shard_registry[[model]] <- s
  list(gram = gram, largest = as.double(largest), y = ysum)
}

# Row ranges of at most 65,536 rows.
shard_chunks <- function(n, size = 65536) {
  starts <- seq(1, n, by = size)
  lapply(starts, function(a) a:min(n, a + size - 1))
}

# The covariates and the response (logistic: coded -1 / +1) of some rows.
shard_rows <- function(s, rows) {
  block <- s$data[rows, , drop = FALSE]
  y <- block[, s$ycol]
  if (s$family == "logistic") y <- ifelse(y == 1, 1, -1)
  list(X = block[, s$cols, drop = FALSE], y = y)
}

# Each row's log likelihood, its derivative in the linear predictor eta, and
# (with `hessian`) minus its second derivative: the logistic model with y in
# {-1, 1} (log sigma(y eta)) or the Poisson model with the log link.
glm_terms <- function(family, eta, y, hessian = FALSE) {
  if (family == "logistic") {
    u <- y * eta
    e <- exp(-abs(u))
    ll <- ifelse(u > 0, 0, u) - log1p(e)
    p_u <- ifelse(u > 0, 1 / (1 + e), e / (1 + e))   # sigma(u)
    list(ll = ll, r = y * (1 - p_u), v = if (hessian) p_u * (1 - p_u))
  } else {
    mu <- exp(eta)
    list(ll = y * eta - mu - lgamma(y + 1), r = y - mu, v = if (hessian) mu)
  }
}

# A pass over the shard's rows at w: the log likelihood, its gradient and,
# with `hessian`, its Hessian (negative semi-definite).
shard_pass <- function(s, w, hessian) {
  ll <- 0
  g <- numeric(length(w))
  H <- if (hessian) matrix(0, length(w), length(w))
  for (rows in shard_chunks(s$n)) {
    b <- shard_rows(s, rows)
    t <- glm_terms(s$family, drop(b$X %*% w), b$y, hessian)
    ll <- ll + sum(t$ll)
    g <- g + drop(crossprod(b$X, t$r))
    if (hessian) H <- H - crossprod(b$X * t$v, b$X)
  }
  list(loglik = ll, grad = g, hessian = H)
}

# The summed log-likelihood gradient over some rows at w, and at `anchor`
# when given (control variates: the second gradient of the same batch).
shard_batch <- function(s, w, rows, anchor) {
  b <- shard_rows(s, rows)
  g <- function(at) drop(crossprod(b$X, glm_terms(s$family, drop(b$X %*% at), b$y)$r))
  list(grad = g(w), anchor = if (!is.null(anchor)) g(anchor),
       loglik = sum(glm_terms(s$family, drop(b$X %*% w), b$y)$ll))
}

# The rows' log-likelihood gradients at w (minus their gradients at
# `anchor` when given), summed within each batch (the rows come batch after
# batch, `counts` of each): a batches x d matrix.
shard_row_grads <- function(s, w, rows, anchor, counts) {
  b <- shard_rows(s, rows)
  r <- glm_terms(s$family, drop(b$X %*% w), b$y)$r
  if (!is.null(anchor)) r <- r - glm_terms(s$family, drop(b$X %*% anchor), b$y)$r
  out <- matrix(0, length(counts), length(w))
  sums <- rowsum(b$X * r, rep.int(seq_along(counts), counts))
  out[as.integer(rownames(sums)), ] <- sums
  out
}

# Each row's log likelihood at each draw (a row of W): draws x rows.
shard_loglik_rows <- function(s, W) {
  out <- matrix(0, nrow(W), s$n)
  for (rows in shard_chunks(s$n)) {
    b <- shard_rows(s, rows)
    eta <- W %*% t(b$X)
    out[, rows] <- glm_terms(s$family, eta, rep(b$y, each = nrow(W)))$ll
  }
  out
}

# The warning of a run ended by a lost shard: which shard, where the chain
# stopped, what the fit holds.
data_lost_warning <- function(fit, failure) {
  chain <- which(fit$status == "failed")[1]
  at <- fit$stop_iter[chain]
  sprintf(paste0("%s. The run ended at iteration %s of chain %d; the fit holds the %s draws ",
                 "made before (chains not yet run have none)."),
          sub("^.*?(shard [0-9]+ )", "\\1", failure$message, perl = TRUE),
          format(at, scientific = FALSE), chain, format(sum(fit$kept), scientific = FALSE))
}
