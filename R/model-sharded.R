# Regressions on data in shards (R/shards.R): a model written in R functions
# (type "r", src/model_r.c) whose likelihood is summed over the workers that
# hold the rows, and whose prior is the one-machine model's own, evaluated in
# C from a model of the same type built on the shards' X'X (as a file-backed
# model's is): so the posterior is the one-machine posterior exactly.

#' @rdname shards
#' @param x For the model constructors: an `sgld_shards` object.
#' @param y For the model constructors: the response, one column of the
#'   shards, by name or number.
#' @param prior,prior_intercept The coefficients' priors, as for
#'   [model_logistic()] (autoscaled from the shards' column sds, which need
#'   an `"(Intercept)"` column).
#' @param sparse,storage Not used: the rows stay on the workers.
#' @export
model_logistic.sgld_shards <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                       prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                       sparse = NULL, storage = "double", ...) {
  check_dots_empty(...)
  sharded_model(x, if (missing(y)) stop_missing_y() else y, "logistic", prior, prior_intercept)
}

#' @rdname shards
#' @export
model_poisson.sgld_shards <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                      prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                      ...) {
  check_dots_empty(...)
  sharded_model(x, if (missing(y)) stop_missing_y() else y, "poisson", prior, prior_intercept)
}

sharded_model <- function(x, y, family, prior, prior_intercept) {
  k <- length(x$columns)
  ycol <- if (is.character(y) && length(y) == 1L) match(y, x$columns)
          else if (is.numeric(y) && length(y) == 1L && y == floor(y) && y >= 1 && y <= k) y
          else NA
  if (is.na(ycol))
    abort("`y` must name the response's column of the shards (one of ",
          paste(x$columns, collapse = ", "), ", or its number); not ", describe(y), ".")
  if (k < 2L) abort("the shards must have at least one covariate besides `y`.")
  key <- shard_key()
  got <- shard_call(x, "columns", lapply(seq_along(x$paths), function(s)
    list(key = x$key, model = key, y = as.integer(ycol), family = family)))
  gram <- Reduce(`+`, lapply(got, `[[`, "gram"))
  largest <- do.call(pmax, lapply(got, `[[`, "largest"))
  ys <- Reduce(`+`, lapply(got, `[[`, "y"))
  n <- sum(x$n)
  names <- x$columns[-ycol]
  if (ys[["nonfinite"]] > 0) abort("the response `y` has NA or infinite values.")
  design <- design_of_file(gram, largest, names, n)
  check_file_moments(design, prior, prior_intercept)
  if (family == "logistic") {
    if (ys[["other"]] > 0 || (ys[["zero"]] > 0 && ys[["minus"]] > 0))
      abort("the response `y` must be 0/1 or -1/+1 in every shard.")
    if (ys[["one"]] == 0 || ys[["one"]] == n)
      abort("the response `y` must have two classes; it is all ",
            if (ys[["one"]] > 0) 1 else if (ys[["zero"]] > 0) 0 else -1, ".")
    labels <- if (ys[["zero"]] > 0) c("0", "1") else c("-1", "1")
    prior_model <- new_model_logistic(design, structure(c(-1, 1), labels = labels), prior,
                                      prior_intercept, sparse = FALSE)
  } else {
    if (ys[["negative"]] > 0 || ys[["fraction"]] > 0)
      abort("the response `y` must be counts: non-negative whole numbers.")
    if (ys[["sum"]] == 0)
      abort("the response is 0 in every row: a Poisson regression needs some non-zero counts.")
    labels <- NULL
    prior_model <- new_model_poisson(design, c(1, 1), prior, prior_intercept)
  }
  model <- structure(list(
    type = "r", d = length(names), n = as.double(n), names = names, sampler_names = names,
    transform = NULL, family = family, labels = labels, shards = x, key = key,
    y = x$columns[ycol], prior = prior, prior_intercept = prior_intercept,
    prior_model = prior_model, default_init = prior_model$default_init,
    numerical = c(loglik = FALSE, logprior = FALSE)
  ), class = c("sgld_model_sharded", "sgld_model_custom", "sgld_model"))
  model$prior_terms <- sharded_prior(prior_model)
  model$bridge <- new.env(parent = emptyenv())
  model$callers <- sharded_callers(model)
  # what model_custom()'s checks ask for: the densities are given
  model[c("grad_loglik", "loglik", "grad_logprior", "logprior")] <- model$callers
  model
}

# The prior of the one-machine model, from C: its log density, and for
# normal priors its gradient as the affine map g0 + H w (H, constant, for
# Newton's steps), exact to rounding.
sharded_prior <- function(prior_model) {
  d <- prior_model$d
  eval_at <- function(w) .Call(C_sgld_model_eval, prior_model, as.double(w))
  smooth <- all(prior_model$prior_type == 0L)
  g0 <- eval_at(numeric(d))$grad_logprior
  H <- if (smooth) vapply(seq_len(d), function(j)
    eval_at(replace(numeric(d), j, 1))$grad_logprior - g0, numeric(d))
  if (smooth) H <- (H + t(H)) / 2
  list(smooth = smooth, g0 = g0, H = H,
       logprior = function(w) eval_at(w)$logprior,
       grad = if (smooth) function(w) g0 + drop(H %*% w)
              else function(w) eval_at(w)$grad_logprior)
}

# The sum over the shards of a pass at w: log likelihood, gradient and, with
# `hessian`, Hessian; each shard's part computed on its worker.
sharded_pass <- function(model, w, hessian = FALSE) {
  x <- model$shards
  parts <- shard_call(x, "pass", rep(list(list(model = model$key, w = as.double(w),
                                               hessian = hessian)), length(x$paths)))
  list(loglik = sum(vapply(parts, `[[`, 0, "loglik")),
       grad = Reduce(`+`, lapply(parts, `[[`, "grad")),
       hessian = if (hessian) Reduce(`+`, lapply(parts, `[[`, "hessian")))
}

# Rows 1..N of the concatenated shards, by shard: the shards holding them
# and each one's local row numbers.
split_rows <- function(x, idx, ranges = TRUE) {
  upper <- cumsum(x$n)
  m <- length(idx)
  # a run of consecutive rows (the engine's full passes, in chunks of 65,536
  # rows) goes as ranges, which R serialises in a few bytes (compact
  # sequences): as row numbers a pass over 1e5 rows sent 400 kB
  if (ranges && m > 1 && idx[m] - idx[1] == m - 1 && !is.unsorted(idx)) {
    lower <- c(0, upper[-length(upper)])
    which <- which(upper >= idx[1] & lower < idx[m])
    rows <- lapply(which, function(k)
      seq.int(max(idx[1], lower[k] + 1) - lower[k], min(idx[m], upper[k]) - lower[k]))
    return(list(which = which, rows = rows))
  }
  shard <- findInterval(idx - 1, upper[-length(upper)]) + 1L
  local <- as.integer(idx - c(0, upper)[shard])   # 4 bytes a row in the messages
  list(which = sort(unique(shard)), rows = split(local, shard), shard = shard)
}

# The engine's four functions. The minibatch gradient goes to the workers
# holding the batch's rows. With control variates the engine asks for the
# batch's gradient at w, then at the anchor for the same rows: once seen,
# the anchor is sent with every batch and its gradient kept for the second
# call, so an iteration costs one round trip; an anchor guessed wrong is
# only work lost, never a wrong value (the kept gradient is used only for
# the same rows at the same point).
sharded_callers <- function(model) {
  x <- model$shards
  key <- model$key
  prior <- model$prior_terms
  memo <- new.env(parent = emptyenv())
  batch <- function(w, idx, want) {
    if (want == "grad" && identical(idx, memo$idx) && !is.null(memo$anchor_value) &&
        identical(w, memo$anchor)) {
      out <- memo$anchor_value
      memo$anchor_value <- NULL
      return(out)
    }
    second <- identical(idx, memo$idx)
    if (second && want == "grad") memo$anchor <- w
    anchor <- if (!second && want == "grad") memo$anchor
    sp <- split_rows(x, idx)
    parts <- shard_call(x, "batch", lapply(sp$rows, function(r)
      list(model = key, w = w, rows = r, anchor = anchor)), which = sp$which)
    memo$idx <- idx + 0L   # a copy: the engine rewrites its index vector in place
    memo$anchor_value <- if (!is.null(anchor)) Reduce(`+`, lapply(parts, `[[`, "anchor"))
    if (want == "grad") Reduce(`+`, lapply(parts, `[[`, "grad"))
    else sum(vapply(parts, `[[`, 0, "loglik"))
  }
  grad_loglik <- function(w, idx) {
    if (is.null(idx)) sharded_pass(model, w)$grad else batch(w, idx, "grad")
  }
  loglik <- function(w, idx) {
    if (is.null(idx)) sharded_pass(model, w)$loglik else batch(w, idx, "loglik")
  }
  bridge <- model$bridge
  list(grad_loglik = data_caller(grad_loglik, "grad_loglik", identity, bridge),
       loglik = data_caller(loglik, "loglik", identity, bridge),
       grad_logprior = prior_caller(prior$grad, "grad_logprior", bridge),
       logprior = prior_caller(prior$logprior, "logprior", bridge))
}

#' @export
print.sgld_model_sharded <- function(x, ...) {
  what <- if (x$family == "logistic") "Bayesian logistic regression" else
    "Bayesian Poisson regression"
  cat(what, " on ", length(x$shards$paths), " shards: ", format(x$n, big.mark = ","),
      " observations, ", x$d, " coefficient", if (x$d > 1) "s", "; response `", x$y, "`\n",
      sep = "")
  print_coef_priors(x$prior_model)
  invisible(x)
}

# ---- the model's contract (R/model.R) ---------------------------------------

model_capabilities.sgld_model_sharded <- function(model) {
  # a cluster's connections do not travel to another process
  utils::modifyList(NextMethod(), list(portable = FALSE, smooth_likelihood = model$prior_terms$smooth))
}

# Newton's method on the sums of the shards' passes (the one-machine
# search's steps, without its subsamples): each step one pass giving the log
# posterior, its gradient and Hessian; halved while the log posterior does
# not rise; it stops once the Newton decrement is below 1e-12, after
# taking that last step (so the mode is as accurate as rounding allows).
# Laplace priors have no Hessian at their kink: NULL, for BFGS.
model_newton.sgld_model_sharded <- function(model, init, maxit) {
  prior <- model$prior_terms
  if (!prior$smooth) return(NULL)
  passes <- 0
  at <- function(w) {
    e <- sharded_pass(model, w, hessian = TRUE)
    passes <<- passes + 1
    list(w = w, lp = e$loglik + prior$logprior(w), g = e$grad + prior$grad(w),
         H = e$hessian + prior$H)
  }
  cur <- at(as.double(init))
  converged <- FALSE
  it <- 0
  while (it < maxit && !converged) {
    it <- it + 1
    R <- tryCatch(chol(-cur$H), error = function(e) NULL)
    if (is.null(R)) break
    step <- backsolve(R, forwardsolve(t(R), cur$g))
    converged <- sum(cur$g * step) < 1e-12
    t <- 1
    repeat {
      nxt <- at(cur$w + t * step)
      if (converged || (is.finite(nxt$lp) && nxt$lp >= cur$lp) || t < 1e-10) break
      t <- t / 2
    }
    cur <- nxt
  }
  list(sampler = cur$w, gradient = cur$g, log_posterior = cur$lp, iterations = it,
       converged = converged, passes = passes, hessian = cur$H)
}

# settings$times minibatch estimates at settings$w: the batches drawn here,
# and each worker returns, per batch, the sum over its rows of the rows'
# gradients (minus their gradients at the control variates' anchor): a
# times x d matrix a worker, whatever the batch. The full data as the batch
# is one pass.
model_gradient_draws.sgld_model_sharded <- function(model, settings) {
  w <- settings$w
  n <- model$n
  b <- settings$batch_size
  times <- settings$times
  replace <- isTRUE(as.logical(settings$replace))
  anchor <- settings$cv_mode
  prior <- model$prior_terms$grad(w)
  if (b >= n && !replace && is.null(anchor))
    return(matrix(sharded_pass(model, w)$grad + prior, times, model$d, byrow = TRUE))
  idx <- as.vector(vapply(seq_len(times), function(i) sample.int(n, b, replace = replace),
                          numeric(b)))
  batch_of <- rep(seq_len(times), each = b)
  sp <- split_rows(model$shards, idx, ranges = FALSE)
  groups <- split(batch_of, sp$shard)
  # a shard's rows come batch after batch: each batch's count of them says
  # which rows are whose (times numbers, not one a row)
  parts <- shard_call(model$shards, "row_grads", lapply(seq_along(sp$which), function(k)
    list(model = model$key, w = w, rows = sp$rows[[k]], anchor = anchor,
         counts = tabulate(groups[[k]], times))), which = sp$which)
  sums <- Reduce(`+`, parts)
  base <- if (is.null(anchor)) prior else prior + sharded_pass(model, anchor)$grad
  sweep(n / b * sums, 2, base, `+`)
}

# Each row's log likelihood at each draw: the workers' columns side by side.
model_loglik_elsewhere.sgld_model_sharded <- function(model, W) {
  x <- model$shards
  W <- matrix(as.double(W), nrow(W))
  do.call(cbind, shard_call(x, "loglik_rows", rep(list(list(model = model$key, W = W)),
                                                   length(x$paths))))
}

# log_lik() and the parameters' intervals: the densities are all a fit has
# here (no rows to predict from on this process)
model_methods.sgld_model_sharded <- function(model) {
  out <- NextMethod()
  out$log_lik <- TRUE
  out
}
