# The R half of the bridge between the engine and model_custom()'s functions
# (the C half is src/model_r.c).
#
# The engine calls one "caller" per function, in a top-level context of its
# own (R_ToplevelExec). A caller builds the minibatch from 1-based row indices
# (NULL: all rows) and calls the user's function. Its calling handlers record
# an error or an interrupt in the model's `bridge` environment and leave by
# the abort restart, which ends silently at that top level, where C finds the
# record. C holds interrupts until the handlers are set; the caller then
# allows them (sgld_allow_interrupts()). Warnings are muffled and counted
# there, to be re-issued when the engine returns (report_callbacks()).

make_callers <- function(model) {
  take <- batch_taker(model$data)
  bridge <- model$bridge
  d <- model$d
  grad_loglik <- model$grad_loglik
  grad_logprior <- model$grad_logprior
  grad_loglik_name <- "grad_loglik"
  grad_logprior_name <- "grad_logprior"
  if (is.null(grad_loglik)) {
    grad_loglik <- central_difference_gradient(model$loglik, "loglik")
    grad_loglik_name <- "loglik (numerical gradient)"
  }
  if (is.null(grad_logprior)) {
    grad_logprior <- central_difference_gradient(model$logprior, "logprior")
    grad_logprior_name <- "logprior (numerical gradient)"
  }
  list(grad_loglik = data_caller(grad_loglik, grad_loglik_name, take, bridge),
       loglik = data_caller(model$loglik, "loglik", take, bridge),
       grad_logprior = prior_caller(grad_logprior, grad_logprior_name, bridge),
       logprior = prior_caller(model$logprior, "logprior", bridge))
}

data_caller <- function(f, name, take, bridge) {
  if (is.null(f)) return(NULL)
  force(take)
  on_warning <- warning_collector(name, bridge)
  failed <- failure_recorder(name, bridge)
  function(w, idx) withCallingHandlers({
    .Call(C_sgld_allow_interrupts)
    f(w, take(idx))
  }, warning = on_warning, error = failed, interrupt = failed)
}

prior_caller <- function(f, name, bridge) {
  if (is.null(f)) return(NULL)
  on_warning <- warning_collector(name, bridge)
  failed <- failure_recorder(name, bridge)
  function(w) withCallingHandlers({
    .Call(C_sgld_allow_interrupts)
    f(w)
  }, warning = on_warning, error = failed, interrupt = failed)
}

failure_recorder <- function(name, bridge) {
  force(name)
  force(bridge)
  # a second interrupt must not cut the record short; data_lost: rows on a
  # worker that died (R/shards.R), not a bug in the model
  function(e) suspendInterrupts({
    bridge$failure <- list(fun = name, message = conditionMessage(e),
                           interrupt = inherits(e, "interrupt"),
                           data_lost = inherits(e, "sgld_data_lost"))
    invokeRestart("abort")
  })
}

# Warnings become errors under options(warn = 2), as they would outside the
# engine; otherwise each distinct message is counted (up to 100 distinct ones,
# so a warning at every iteration costs little).
warning_collector <- function(name, bridge) {
  force(name)
  force(bridge)
  failed <- failure_recorder(name, bridge)
  function(w) {
    if (getOption("warn", 0) >= 2)
      failed(simpleError(paste("(converted from warning)", conditionMessage(w))))
    msg <- paste0("`", name, "`: ", conditionMessage(w))
    seen <- bridge$warnings
    if (msg %in% names(seen)) {
      seen[[msg]] <- seen[[msg]] + 1L
    } else if (length(seen) < 100L) {
      seen <- c(seen, stats::setNames(1L, msg))
    }
    bridge$warnings <- seen
    invokeRestart("muffleWarning")
  }
}

# The rows idx of data (NULL: all of it). A plain data frame is subset
# column by column, several times faster than `[.data.frame`; row names are
# not kept.
batch_taker <- function(data) {
  force(data)
  plain_frame <- identical(class(data), "data.frame") &&
    all(vapply(data, function(col) is.null(dim(col)), logical(1)))
  if (!plain_frame)
    return(function(idx) if (is.null(idx)) data else data[idx, , drop = FALSE])
  cols <- as.list(data)
  function(idx) {
    if (is.null(idx)) return(data)
    out <- lapply(cols, `[`, idx)
    attr(out, "row.names") <- c(NA_integer_, -length(idx))
    class(out) <- "data.frame"
    out
  }
}

# The gradient of f(w, ...) by central differences, with steps of about the
# cube root of the machine epsilon relative to each coordinate (the best
# balance of truncation and rounding error for a smooth f).
central_difference_gradient <- function(f, name) {
  force(f)
  value <- function(w, ...) {
    v <- f(w, ...)
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v))
      stop("returned ", describe(v), " during a numerical gradient; it must return a ",
           "single finite number there.", call. = FALSE)
    v
  }
  function(w, ...) {
    g <- numeric(length(w))
    for (j in seq_along(w)) {
      h <- 6e-6 * max(1, abs(w[j]))
      up <- w
      down <- w
      up[j] <- w[j] + h
      down[j] <- w[j] - h
      g[j] <- (value(up, ...) - value(down, ...)) / (up[j] - down[j])
    }
    g
  }
}

# After an engine call: re-issue the warnings the model's functions gave and
# return the failure they recorded (NULL if none, and for built-in models).
report_callbacks <- function(model) {
  bridge <- model$bridge
  if (!is.environment(bridge)) return(NULL)
  seen <- bridge$warnings
  for (msg in names(seen))
    sgld_warn("callback", msg, if (seen[[msg]] > 1L) sprintf(" (%d times)", seen[[msg]]))
  bridge$warnings <- NULL
  bridge$failure
}

# For the entry points that evaluate the model without sampling. With
# allow_non_finite, a function that returned NA, NaN or an infinity is not an
# error; the answer is then TRUE (the evaluation is unusable), else FALSE.
stop_on_failure <- function(model, allow_non_finite = FALSE) {
  f <- report_callbacks(model)
  if (is.null(f)) return(FALSE)
  if (isTRUE(f$interrupt)) abort("interrupted by the user in `", f$fun, "`.")
  if (allow_non_finite && grepl("^returned (NA|NaN|Inf|-Inf)( |;)", f$message)) return(TRUE)
  abort("`", f$fun, "` ", failure_rule(f$message))
}

# an R error's message reads "failed: <message>"; a broken rule (from C)
# reads as it is ("returned NaN at ...")
failure_rule <- function(message) {
  if (grepl("^(returned|is needed|was left)", message)) message else paste0("failed: ", message)
}

# The error of a run stopped by a failing function, with the partial fit.
model_error <- function(fit, failure) {
  chain <- which(fit$status == "failed")[1]
  at <- fit$stop_iter[chain]
  where <- if (at > 0) sprintf("at iteration %s of chain %d", format(at, scientific = FALSE), chain)
           else sprintf("before the first iteration of chain %d", chain)
  msg <- sprintf(paste0(
    "`%s` %s (%s). The %s draws made before it are kept: get the fit with ",
    "tryCatch(..., sgld_model_error = function(e) e$fit)."),
    failure$fun, failure_rule(failure$message), where,
    format(fit$kept[chain], scientific = FALSE))
  structure(class = c("sgld_model_error", "error", "condition"),
            list(message = msg, call = NULL, fit = fit, failure = failure))
}
