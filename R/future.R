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
    if (!model_capabilities(model)$portable)
      abort("`parallel = \"future\"`: a model from model_compiled() holds a pointer into ",
            "another package's compiled code (and a model on shards() its workers' ",
            "connections), which cannot travel to another process; ",
            "run it with `parallel = \"threads\"`, or call your package's model constructor ",
            "inside future::future() and run one sgld() per future.")
  }
  parallel
}

# One chain's engine run, on a worker: its result, and the failure a model
# written in R functions recorded there (NULL if none).
future_chain <- function(model, settings) {
  res <- .Call(C_sgld_run, model, settings)
  list(res = res, failure = report_callbacks(model), rows_lost = .Call(C_sgld_rows_lost_since))
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
#
# Ctrl-C reaches this session; in a terminal it also reaches workers on this
# machine (one process group), whose chains then stop as an interrupted
# local run does and return what they have. For the workers it does not
# reach (an interrupt from an IDE, other machines), this session creates the
# run's stop file, which every chain polls between chunks as it polls for an
# interrupt (src/chunks.c): each worker then ends its chain within a chunk
# and returns its draws. A chain whose future had not been made yet is run
# here with the stop file in place, which stops it before its first
# iteration ("not run": its start, state and streams, so the fit can be
# continued). A second Ctrl-C while waiting gives up on the chains still out
# (marked lost; the stop file is left in place so that their workers still
# stop, as they do once this session has ended and its tempdir() is gone).
# Workers that do not see this machine's file system run their chains to
# the end.
#
# An interrupt that cut this session's reading of a worker's message would
# leave the connection mid-message (the next read then waits for ever: seen
# with Ctrl-C sent to a session and its multisession workers at once). So,
# but on plans that run a future in this session as it is made, every call
# into future that may read a worker's result runs with interrupts
# suspended, and Ctrl-C is taken only in the pauses between polls.
future_results <- function(model, settings) {
  chains <- settings$chains
  d <- model$d
  rng <- settings$rng_init
  if (is.null(rng)) rng <- .Call(C_sgld_streams, as.integer(chains))
  stop_file <- tempfile("sgld-stop-")
  settings$stop_file <- c(stop_file, dirname(stop_file))
  run <- future_run(stop_file)
  on.exit(if (!run$gave_up) unlink(stop_file), add = TRUE)
  fs <- launch_chains(run, model, settings, rng, d)
  # a chain whose future was not made runs here: before a stop it ends at
  # its start; otherwise (its future could not be made) it runs whole
  out <- collect_chains(run, fs, function(c)
    tryCatch(future_chain(model, chain_settings(settings, c, rng, d)), error = function(e) e))
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
  rows_lost <- any(vapply(out[ok], function(o) isTRUE(o$rows_lost), NA))
  structure(bind_results(res, chains), lost = lost, failure = failure, rows_lost = rows_lost)
}

# The state of one run's futures: its stop file, whether a stop was asked
# (`stopping`) or the run gave up on chains still out (`gave_up`), and how
# calls into future are made (`guard`). A plan is eager when it runs a
# future in this session as it is made: one worker (multisession with 1
# falls back to it), or multicore where forking is not supported; the chain
# then takes Ctrl-C itself, and nothing may suspend interrupts around it.
future_run <- function(stop_file) {
  run <- new.env(parent = emptyenv())
  run$stop_file <- stop_file
  run$stopping <- FALSE
  run$gave_up <- FALSE
  strategy <- future::plan("next")
  run$workers <- future::nbrOfWorkers()
  run$eager <- inherits(strategy, "uniprocess") || run$workers <= 1 ||
    (inherits(strategy, "multicore") && !future::supportsMulticore())
  run$guard <- if (run$eager) function(expr) expr else suspendInterrupts
  run
}

request_stop <- function(run) {
  if (!run$stopping && !run$eager)
    message("sgld: stopping the chains' futures and collecting their draws; interrupt ",
            "again to give up on the chains still out.")
  run$stopping <- TRUE
  file.create(run$stop_file)
}

# A pause between polls, growing with k up to 0.1 s.
poll_pause <- function(k) Sys.sleep(min(0.1, 0.002 * 2^k))

# Makes each chain's future, until a stop; returns them (NULL for those not
# made). A plan with workers may block making a future until one is free, so
# this waits for one first, taking Ctrl-C; a worker is free when fewer of
# the chains' futures run than there are workers (the plan's own count of
# free workers can lag: on multicore it counts futures not yet read). Each
# future is stored within the guard, so that an interrupt taken as it ends
# cannot lose it.
launch_chains <- function(run, model, settings, rng, d) {
  fs <- vector("list", settings$chains)
  guard <- run$guard
  worker_free <- function() {
    running <- vapply(fs, function(f) !is.null(f) && !guard(resolved_or_failed(f)), NA)
    sum(running) < run$workers
  }
  tryCatch(for (c in seq_len(settings$chains)) {
    k <- 0
    while (!run$eager && !worker_free()) poll_pause(k <- k + 1)
    s <- chain_settings(settings, c, rng, d)
    # a future that cannot be made (its worker died under an earlier chain)
    # is left unmade: the chain then runs in this session, with its streams
    guard(fs[c] <- list(tryCatch(future::future(
      future_chain(model, s),
      globals = list(future_chain = future_chain, model = model, s = s),
      packages = "sgld", seed = FALSE, label = sprintf("sgld chain %d", c)),
      FutureError = function(e) NULL)))
    if (is.null(fs[[c]])) next
    # an eager plan ran the chain: if Ctrl-C stopped it, make no more
    if (guard(resolved_or_failed(fs[[c]])) && guard(chain_interrupted(fs[[c]]))) {
      request_stop(run)
      break
    }
  }, interrupt = function(e) request_stop(run))
  fs
}

# Every chain's result: its future's value, or `local(c)` for a chain whose
# future was not made. An interrupt suspended while a worker's message was
# read is taken when the guard ends, wherever the loop then is: so the loop
# is retried from the first chain not yet collected (a future keeps its
# value once read). Ctrl-C asks every chain to stop; a second gives up on
# the chains still out.
collect_chains <- function(run, fs, local) {
  out <- vector("list", length(fs))
  have <- logical(length(fs))
  repeat {
    finished <- tryCatch({
      for (c in which(!have)) {
        out[[c]] <- if (is.null(fs[[c]])) local(c) else collect_chain(run, fs[[c]])
        have[c] <- TRUE
      }
      TRUE
    }, interrupt = function(e) FALSE)
    if (finished) return(out)
    if (run$stopping) run$gave_up <- TRUE else request_stop(run)
  }
}

collect_chain <- function(run, f) {
  k <- 0
  while (!run$guard(resolved_or_failed(f))) {
    if (run$gave_up)
      return(simpleError("given up after a second interrupt, before its result arrived"))
    poll_pause(k <- k + 1)
  }
  tryCatch(run$guard(future::value(f)), error = function(e) e)
}

# Has the chain's future finished? A future whose worker died raises an
# error when asked (future's FutureError): that one has finished too, and
# value() gives its error, which costs only its own chain.
resolved_or_failed <- function(f) tryCatch(future::resolved(f), error = function(e) TRUE)

# Did this resolved chain's future return a chain stopped by an interrupt?
chain_interrupted <- function(f) {
  v <- tryCatch(future::value(f), error = function(e) NULL)
  !is.null(v) && identical(as.integer(v$res$status), engine_status_code("interrupted"))
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
              "collect_from", "moment_weight", "moment_count", "moment_mean", "moment_m2",
              "moment_wmean"))
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
                 "collect_from", "moment_weight", "moment_count", "monitor", "diagnostics"))
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
  sgld_warn("lost_chains", sprintf(paste0(
    "chain%s %s failed on %s worker (%s); the fit holds the other chains' draws, ",
    "`fit$status` says \"lost\" for the lost one%s, which cannot be continued with `init = fit`."),
    if (length(lost) > 1) "s" else "", paste(names(lost), collapse = ", "),
    if (length(lost) > 1) "their" else "its",
    paste(sprintf("chain %s: %s", names(lost), unlist(lost)), collapse = "; "),
    if (length(lost) > 1) "s" else ""))
}
