# Chains as futures. Chains are independent given their random streams, so a
# run of C chains is C runs of one chain, each given its two streams: the
# main process draws all 2C streams from R's RNG exactly as the engine would
# (sgld_streams()), hands chain c its pair as `rng_init`, and binds the C
# engine results into the one result a local run returns. The draws are then
# bit-identical to the local run's, whatever plan the futures run on, and R's
# RNG is left where a local run leaves it.

# parallel = "threads" (the engine's OpenMP threads) or "future"
check_parallel <- function(parallel, model) {
  if (!is.character(parallel) || length(parallel) != 1L || !parallel %in% c("threads", "future"))
    abort("`parallel` must be \"threads\" or \"future\", not ", describe(parallel), ".")
  if (parallel == "future") {
    if (!requireNamespace("future", quietly = TRUE))
      abort("`parallel = \"future\"` needs the package 'future'; install it, or use ",
            "`parallel = \"threads\"`.")
    if (inherits(model, "sgld_model_compiled"))
      abort("`parallel = \"future\"`: a model from model_compiled() holds a pointer into ",
            "another package's compiled code, which cannot travel to another process; ",
            "run it with `parallel = \"threads\"`, or call your package's model constructor ",
            "inside future::future() and run one sgld() per future.")
  }
  parallel
}

# One chain's engine run, on a worker: its result, and the failure a model
# written in R functions recorded there (NULL if none).
future_chain <- function(model, settings) {
  res <- .Call(C_sgld_run, model, settings)
  list(res = res, failure = report_callbacks(model))
}

# Chain c's settings: its start, offset, the rule's state and its streams.
chain_settings <- function(settings, c, rng, d) {
  chains <- settings$chains
  s <- settings
  s$chains <- 1
  s$init <- settings$init[(c - 1) * d + seq_len(d)]
  s$t_offset <- settings$t_offset[c]
  if (!is.null(settings$state_init)) {
    len <- length(settings$state_init) / chains
    s$state_init <- settings$state_init[(c - 1) * len + seq_len(len)]
  }
  s$rng_init <- c(stream_of(rng, c, chains), stream_of(rng, chains + c, chains))
  s$order <- 1L
  s$threads <- 1L
  s$progress <- 0L
  s
}

# the k-th of the 2 x chains streams in a raw vector of them
stream_of <- function(rng, k, chains) {
  size <- length(rng) %/% (2L * chains)
  rng[(k - 1) * size + seq_len(size)]
}

# Every chain as a future on the current plan; returns the bound engine
# result, with the chains whose future failed marked (attribute `lost`: a
# named list of their error messages) and the first model failure recorded.
future_results <- function(model, settings) {
  chains <- settings$chains
  d <- model$d
  rng <- settings$rng_init
  if (is.null(rng)) rng <- .Call(C_sgld_streams, as.integer(chains))
  fs <- vector("list", chains)
  for (c in seq_len(chains)) {
    s <- chain_settings(settings, c, rng, d)
    fs[[c]] <- future::future(
      future_chain(model, s),
      globals = list(future_chain = future_chain, model = model, s = s),
      packages = "sgld", seed = FALSE, label = sprintf("sgld chain %d", c))
  }
  out <- vector("list", chains)
  interrupted <- FALSE
  for (c in seq_len(chains)) {
    if (interrupted && !future::resolved(fs[[c]])) {
      out[[c]] <- simpleError("interrupted by the user before its result arrived")
      next
    }
    out[[c]] <- tryCatch(future::value(fs[[c]]),
                         error = function(e) e,
                         interrupt = function(e) {
                           interrupted <<- TRUE
                           simpleError("interrupted by the user before its result arrived")
                         })
  }
  ok <- !vapply(out, inherits, NA, what = "error")
  if (!any(ok))
    abort("every chain failed on its worker; chain 1: ", conditionMessage(out[[1]]))
  template <- out[[which(ok)[1]]]$res
  res <- lapply(seq_len(chains), function(c)
    if (ok[c]) out[[c]]$res else lost_chain(template, settings, c, rng, d))
  failure <- NULL
  for (c in which(ok)) if (is.null(failure)) failure <- out[[c]]$failure
  lost <- lapply(out[!ok], conditionMessage)
  names(lost) <- which(!ok)
  structure(bind_results(res, chains), lost = lost, failure = failure)
}

# What a chain whose future failed leaves: nothing kept, its start, its
# streams as they were, and the status of a failed chain, so the fit holds
# the other chains and refuses to continue this one.
lost_chain <- function(template, settings, c, rng, d) {
  na_like <- function(x) {
    if (is.double(x)) x[] <- NA_real_
    x
  }
  r <- lapply(template, na_like)
  r$draws <- lapply(template$draws, na_like)
  r$status <- engine_status_code("model_failed")
  for (k in c("kept", "stop_iter", "clip_count", "monitored", "diagnosed", "accepted",
              "collect_from", "moment_weight", "moment_mean", "moment_m2", "moment_wmean"))
    r[[k]][] <- 0
  r$last <- matrix(settings$init[(c - 1) * d + seq_len(d)], d, 1)
  r$rng <- c(stream_of(rng, c, settings$chains), stream_of(rng, settings$chains + c, settings$chains))
  r$expected_seconds <- r$sampling_seconds <- 0
  r
}

engine_status_code <- function(name) {
  code <- match(name, engine_codes()$status) - 1L
  if (is.na(code)) abort("internal: no chain status '", name, "'")
  code
}

# One engine result of `chains` chains from `chains` results of one chain
# each, laid out as the engine lays out a multi-chain result (outputs.c):
# per-chain matrices side by side, per-chain blocks of monitor and
# diagnostics rows one after the other, and the streams as every chain's main
# stream, then every chain's diagnostics stream.
bind_results <- function(res, chains) {
  col <- function(name) matrix(unlist(lapply(res, `[[`, name), use.names = FALSE),
                               nrow(res[[1]][[name]]), chains)
  cat_of <- function(name) unlist(lapply(res, `[[`, name), use.names = FALSE)
  out <- res[[1]]
  out$draws <- lapply(res, function(r) r$draws[[1]])
  for (name in c("eta", "trace", "iteration", "last", "state", "moment_mean", "moment_m2", "moment_wmean"))
    out[[name]] <- col(name)
  for (name in c("kept", "stop_iter", "clip_count", "monitored", "diagnosed", "accepted",
                 "collect_from", "moment_weight", "monitor", "diagnostics"))
    out[[name]] <- cat_of(name)
  out$status <- as.integer(cat_of("status"))
  out$rng <- c(unlist(lapply(seq_len(chains), function(c) stream_of(res[[c]]$rng, 1, 1))),
               unlist(lapply(seq_len(chains), function(c) stream_of(res[[c]]$rng, 2, 1))))
  out$expected_seconds <- max(cat_of("expected_seconds"))
  out$sampling_seconds <- max(cat_of("sampling_seconds"))   # the workers run side by side
  out
}

# The warning of a run whose futures failed for some chains.
warn_lost_chains <- function(lost) {
  if (!length(lost)) return(invisible())
  warning(sprintf(paste0(
    "chain%s %s failed on %s worker (%s); the fit holds the other chains, and ",
    "the failed chain%s cannot be continued with `init = fit`."),
    if (length(lost) > 1) "s" else "", paste(names(lost), collapse = ", "),
    if (length(lost) > 1) "their" else "its",
    paste(sprintf("chain %s: %s", names(lost), unlist(lost)), collapse = "; "),
    if (length(lost) > 1) "s" else ""), call. = FALSE)
}
