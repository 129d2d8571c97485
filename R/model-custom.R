#' A model written as R functions
#'
#' Any model whose log likelihood is a sum over data items, written as R
#' functions of the parameter vector and a minibatch of data. The engine runs
#' it like a built-in model (every sampler, optimiser, control variates,
#' [mala()], diagnostics, continuing a run), calling the functions from C.
#'
#' The functions work on the sampler's scale, the unconstrained vector
#' \eqn{w}{w} of length `d` that the samplers move:
#' \describe{
#'   \item{`grad_loglik(w, batch)`}{the gradient of the log likelihood
#'     **summed** over the minibatch `batch` (the selected rows of `data`:
#'     a matrix, or a data frame without its row names), a numeric vector of
#'     length `d`. The engine scales it by \eqn{n/m}{n/m} itself.}
#'   \item{`loglik(w, batch)`}{the summed log likelihood, one number.}
#'   \item{`grad_logprior(w)`, `logprior(w)`}{the log prior density of
#'     \eqn{w}{w} and its gradient. With a `transform`, this is the prior of
#'     \eqn{w}{w}, i.e. it includes the log Jacobian of the map to the user's
#'     scale.}
#' }
#' `loglik` and `logprior` are optional for [sgld()], [psgld()], [sghmc()],
#' [sgd()] and [gd()], but needed by [mala()], [posterior_mode()] (so by
#' `control_variates = TRUE`), [log_posterior()], [diagnostics_every()] and
#' [monitor_every()]. A gradient may be left out (`NULL`) when its density is
#' given: it is then taken by central differences, at a cost of \eqn{2d}{2d}
#' evaluations of the density per gradient (a warning says so).
#'
#' @section Checks and failures:
#' Every value returned is checked: a gradient must be a finite numeric vector
#' of length `d`, a log density a single number that is not `NA`, `NaN` or
#' `Inf` (`-Inf`, a point of zero density, is allowed). An error inside a
#' function (also a warning when `options(warn = 2)`) or a value that breaks
#' these rules stops the whole run at once. The run then ends with an **error
#' of class `sgld_model_error`** that names the function and the rule, and
#' carries the fit with every draw made before the failure in its `fit`
#' element:
#' `fit <- tryCatch(sgld(m, ...), sgld_model_error = function(e) e$fit)`.
#' (A failure is a bug in the model's code, so it is an error rather than the
#' warning a divergence gives; the failed chain has status `"failed"` and
#' cannot be continued.) An interrupt (Ctrl-C) during a function ends the run
#' like any interrupt: a warning and the draws made so far.
#'
#' The functions run in a context of their own: handlers set around the
#' sampler call (`tryCatch()`, `withCallingHandlers()`) do not see the
#' conditions they raise. Warnings are collected and re-issued, each distinct
#' one once with its count, when the engine returns; messages are printed as
#' they come.
#'
#' @section Speed:
#' Each iteration calls two R functions and builds the minibatch in R, which
#' costs microseconds where the built-in models take nanoseconds (see
#' `vignette("custom-models", package = "sgld")`). Chains run one after the
#' other: R is single-threaded, so `threads` is ignored for these models.
#'
#' @param data The data: a matrix or a data frame, one row per data item.
#' @param grad_loglik,loglik,grad_logprior,logprior The model, as R functions
#'   (see Details); `loglik` and `logprior` may be `NULL`, and so may a
#'   gradient whose density is given.
#' @param n The number of data items: the number of rows of `data`.
#' @param d The number of parameters; by default the length of `names`.
#' @param names The parameters' names on the user's scale; by default
#'   `w1`, ..., `wd`.
#' @param transform `NULL` when the samplers move the user's parameters
#'   themselves, or a list of two functions `to_user(w)` and
#'   `to_sampler(theta)`, each mapping one numeric vector of length `d` to
#'   another, e.g. `sigma2 = exp(w[3])`. Draws are reported on the user's
#'   scale, row by row through `to_user`; `init` values are given on it.
#' @param init The default start of the chains on the user's scale; by default
#'   the point where \eqn{w = 0}{w = 0}.
#' @return An object of class `sgld_model_custom` (and `sgld_model`).
#' @seealso `vignette("custom-models", package = "sgld")` for worked examples.
#' @examples
#' # Poisson regression, log E(y) = b0 + b1 x
#' set.seed(1)
#' x <- rnorm(200)
#' d <- cbind(x = x, y = rpois(200, exp(0.5 + 0.3 * x)))
#' m <- model_custom(d,
#'   grad_loglik = function(w, batch) {
#'     r <- batch[, "y"] - exp(w[1] + w[2] * batch[, "x"])
#'     c(sum(r), sum(r * batch[, "x"]))
#'   },
#'   grad_logprior = function(w) -w / 100,
#'   names = c("b0", "b1"))
#' fit <- sgld(m, lr = 1e-4, batch_size = 20, iter = 2000)
#' coef(fit)
#' @export
model_custom <- function(data, grad_loglik = NULL, grad_logprior = NULL, loglik = NULL,
                         logprior = NULL, n = nrow(data), d = length(names),
                         names = paste0("w", seq_len(d)), transform = NULL, init = NULL) {
  if (missing(d) && missing(names))
    abort("give the number of parameters: `d` or `names`.")
  if (!(is.matrix(data) || is.data.frame(data)))
    abort("`data` must be a matrix or a data frame, one row per data item; not ",
          describe(data), ".")
  if (nrow(data) < 1L) abort("`data` has no rows.")
  check_count(n, "n", lower = 1, upper = .Machine$integer.max)
  if (n != nrow(data))
    abort("`n` must be the number of rows of `data` (", nrow(data), "), not ", n, ".")
  check_count(d, "d", lower = 1, upper = 1e5)
  check_parameter_names(names, d)
  fns <- list(grad_loglik = grad_loglik, loglik = loglik, grad_logprior = grad_logprior,
              logprior = logprior)
  for (nm in base::names(fns))
    if (!is.null(fns[[nm]]) && !is.function(fns[[nm]]))
      abort("`", nm, "` must be a function or NULL, not ", describe(fns[[nm]]), ".")
  for (part in c("loglik", "logprior")) {
    grad <- paste0("grad_", part)
    if (is.null(fns[[grad]]) && is.null(fns[[part]]))
      abort("`", grad, "` must be a function (it may be NULL only when `", part,
            "` is given, for a numerical gradient).")
  }
  transform <- check_transform(transform)
  model <- structure(list(
    type = "r",
    d = as.integer(d), n = as.double(n),
    names = names,
    sampler_names = if (is.null(transform)) names else paste0("w_", names),
    transform = transform,
    data = data,
    grad_loglik = grad_loglik, loglik = loglik,
    grad_logprior = grad_logprior, logprior = logprior
  ), class = c("sgld_model_custom", "sgld_model"))
  model$default_init <- custom_init(model, init)

  numerical <- c(loglik = is.null(grad_loglik), logprior = is.null(grad_logprior))
  for (part in base::names(numerical)[numerical])
    sgld_warn("numerical_gradient", sprintf(paste0("model_custom(): no `grad_%s`, so it is taken by central ",
                           "differences of `%s`: %d evaluations of `%s` per gradient."),
                    part, part, 2L * d, part))
  model$numerical <- numerical
  model$bridge <- new.env(parent = emptyenv())
  model$callers <- make_callers(model)
  model
}

# NULL, or the list(to_user, to_sampler) of two functions
check_transform <- function(transform) {
  if (is.null(transform)) return(NULL)
  ok <- is.list(transform) && !is.object(transform) && length(transform) == 2L &&
    setequal(base::names(transform), c("to_user", "to_sampler")) &&
    all(vapply(transform, is.function, logical(1)))
  if (!ok)
    abort("`transform` must be NULL or list(to_user = , to_sampler = ) of two functions, ",
          "not ", describe(transform), ".")
  transform[c("to_user", "to_sampler")]
}

# The default start on the user's scale, checked to survive the round trip
# through the transform (which catches to_user and to_sampler swapped).
custom_init <- function(model, init) {
  d <- model$d
  if (is.null(init)) {
    w0 <- matrix(0, 1, d)
    return(to_user_scale(model, w0)[1, ])
  }
  if (!is.numeric(init) || is.object(init) || length(init) != d || any(!is.finite(init)))
    abort("`init` must be NULL or a finite numeric vector of length ", d, ", not ",
          describe(init), ".")
  init <- matrix(as.double(init), 1)
  check_user_values(model, init, "init")
  back <- to_user_scale(model, to_sampler_scale(model, init))
  if (any(abs(back - init) > 1e-8 * pmax(1, abs(init))))
    abort("`transform`: to_user(to_sampler(init)) does not give `init` back; ",
          "the two functions must be inverses of each other.")
  init[1, ]
}

#' @export
print.sgld_model_custom <- function(x, ...) {
  cat("Model written in R functions: ", format(x$n, big.mark = ","), " data items, ", x$d,
      " parameter", if (x$d > 1) "s", " (", paste(x$names, collapse = ", "), ")\n", sep = "")
  given <- c("grad_loglik", "loglik", "grad_logprior", "logprior")
  given <- given[!vapply(x[given], is.null, logical(1))]
  cat("Functions: ", paste(given, collapse = ", "), "\n", sep = "")
  for (part in base::names(x$numerical)[x$numerical])
    cat("Numerical gradient of ", part, " (central differences)\n", sep = "")
  cat(if (is.null(x$transform)) "No transform: the samplers move these parameters\n"
      else "Transform: the samplers move w = to_sampler(parameters)\n")
  invisible(x)
}

# ---- the model's two scales ------------------------------------------------
# These read only model$transform and model$d, so any model that keeps its
# transform in this form (model_compiled() too) can use them.

to_user_scale.sgld_model_custom <- function(model, w) {
  map_rows(model$transform$to_user, w, model$d, "to_user")
}

to_sampler_scale.sgld_model_custom <- function(model, w) {
  map_rows(model$transform$to_sampler, w, model$d, "to_sampler")
}

map_rows <- function(f, w, d, which) {
  if (is.null(f)) return(w)
  out <- w
  for (i in seq_len(nrow(w))) {
    v <- f(as.double(w[i, ]))
    if (!is.numeric(v) || length(v) != d)
      abort("`transform$", which, "` must return a numeric vector of length ", d,
            ", not ", describe(v), ".")
    out[i, ] <- v
  }
  out
}

check_user_values.sgld_model_custom <- function(model, w, arg) {
  f <- model$transform$to_sampler
  if (is.null(f)) return(invisible())
  for (i in seq_len(nrow(w))) {
    # its warnings (log(-1): NaNs produced) would only repeat the error below
    v <- tryCatch(suppressWarnings(f(as.double(w[i, ]))), error = function(e)
      abort("`", arg, "`: transform$to_sampler failed on row ", i, ": ", conditionMessage(e)))
    if (!is.numeric(v) || length(v) != model$d)
      abort("`transform$to_sampler` must return a numeric vector of length ", model$d,
            ", not ", describe(v), ".")
    bad <- which(!is.finite(v))
    if (length(bad))
      abort("`", arg, "`: row ", i, " is outside the parameter space (transform$to_sampler ",
            "gives ", format(v[bad[1]]), " at position ", bad[1], ").")
  }
  invisible()
}

held_out_model.sgld_model_custom <- function(model, newdata) {
  abort("`monitor`: held-out data (`newdata`) are not available for model_custom(); ",
        "use monitor_every(every) without `newdata`.")
}

# ---- what a feature needs from the model -----------------------------------

# Stops unless the model can evaluate its log densities, which `what` needs.
check_densities <- function(model, what) UseMethod("check_densities")

check_densities.default <- function(model, what) invisible()

check_densities.sgld_model_custom <- function(model, what) {
  absent <- c("loglik", "logprior")[c(is.null(model$loglik), is.null(model$logprior))]
  if (length(absent))
    abort(what, " needs the log densities of the model, but model_custom() was given no ",
          paste0("`", absent, "`", collapse = " and "), ".")
  invisible()
}

# densities in R functions; a transform of the user's may mix the parameters
model_capabilities.sgld_model_custom <- function(model) {
  utils::modifyList(NextMethod(), list(calls_r = TRUE, mixing_transform = !is.null(model$transform)))
}

# The methods it answers (R/capabilities.R): the densities are all it knows,
# so log_lik() (given `loglik`) and the parameters' intervals.
model_methods.sgld_model_custom <- function(model) {
  densities_only <- "a model of densities alone has no response to predict"
  out <- utils::modifyList(NextMethod(), list(
    predict = densities_only, predict_interval = densities_only,
    posterior_predict = densities_only, predictive_interval = densities_only,
    pp_check = densities_only,
    posterior_epred = densities_only, fitted = densities_only))
  if (is.null(model$loglik) && !inherits(model, "sgld_model_compiled"))
    out$log_lik <- "model_custom() was given no `loglik`"
  out
}

# the data, one row per observation, when they are a matrix (log_lik() names
# its columns by these rows)
design_matrix.sgld_model_custom <- function(model) {
  if (is.matrix(model$data)) model$data
}
