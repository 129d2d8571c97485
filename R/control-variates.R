#' Posterior mode
#'
#' Maximises the full-data log posterior on the sampler's scale by
#' quasi-Newton steps ([stats::optim()], method `"BFGS"`) with the model's
#' exact gradient, computed by the same C code the samplers use. Every
#' evaluation passes over all the data; for data too large for that, run
#' [sgd()] (e.g. with `optimizer = "adam"`) and use its [coef()].
#'
#' @param model A model, e.g. from [model_linear()].
#' @param init Starting point on the user's scale, or `NULL` for the model's
#'   default start.
#' @param maxit Largest number of BFGS iterations.
#' @return A list with `mode` (the user's scale), `sampler` (the sampler's
#'   scale), `log_posterior` there, `gradient` (of the log posterior on the
#'   sampler's scale, near 0 at a mode), `iterations` and `converged`.
#' @examples
#' posterior_mode(model_linear(y ~ x, data = handout))$mode
#' @export
posterior_mode <- function(model, init = NULL, maxit = 1000) {
  check_model(model)
  check_count(maxit, "maxit", lower = 1)
  w0 <- resolve_init(model, init, 1)[1, ]
  # optim() asks for the value and the gradient at the same point separately;
  # one C call gives both, so keep the last one
  last_w <- NULL
  last <- NULL
  eval_at <- function(w) {
    if (!identical(w, last_w)) {
      last <<- .Call(C_sgld_model_eval, model, as.double(w))
      last_w <<- w
    }
    last
  }
  fn <- function(w) {
    e <- eval_at(w)
    v <- -(e$loglik + e$logprior)
    if (is.finite(v)) v else Inf
  }
  gr <- function(w) {
    e <- eval_at(w)
    -(e$grad_loglik + e$grad_logprior)
  }
  opt <- stats::optim(w0, fn, gr, method = "BFGS",
                      control = list(maxit = maxit, reltol = 1e-12))
  w <- opt$par
  e <- eval_at(w)
  grad <- e$grad_loglik + e$grad_logprior
  names(w) <- names(grad) <- model$sampler_names
  mode <- to_user_scale(model, matrix(w, 1))[1, ]
  names(mode) <- model$names
  list(mode = mode, sampler = w, log_posterior = e$loglik + e$logprior, gradient = grad,
       iterations = unname(opt$counts[["gradient"]]), converged = opt$convergence == 0)
}

#' Draws of the stochastic gradient
#'
#' Repeated minibatch estimates of the gradient of the log posterior at one
#' point, with or without control variates, from the estimator the samplers
#' use: their spread is the gradient noise that SGLD adds on top of its
#' injected noise (see [diagnostics_every()]).
#'
#' @inheritParams sgld
#' @param at The point, on the user's scale.
#' @param times Number of independent minibatches.
#' @param control_variates `FALSE`, `TRUE` (centre on [posterior_mode()]), or
#'   a mode on the user's scale; see [sgld()].
#' @return A `times` x d matrix, one estimate per row, on the sampler's scale.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' at <- posterior_mode(m)$mode
#' plain <- stochastic_gradients(m, at, batch_size = 10)
#' cv <- stochastic_gradients(m, at, batch_size = 10, control_variates = TRUE)
#' apply(plain, 2, var) / apply(cv, 2, var)
#' @export
stochastic_gradients <- function(model, at, batch_size = 100, times = 1000,
                                 control_variates = FALSE, replace = FALSE) {
  check_model(model)
  w <- resolve_point(model, at, "at")
  check_count(batch_size, "batch_size", lower = 1, upper = min(model$n, .Machine$integer.max))
  check_count(times, "times", lower = 1, upper = 1e7)
  check_flag(replace, "replace")
  out <- .Call(C_sgld_gradient_draws, model, list(
    w = w, batch_size = batch_size, times = times, replace = as.integer(replace),
    cv_mode = resolve_control_variates(control_variates, model)))
  colnames(out) <- model$sampler_names
  out
}

# One point on the user's scale, checked, on the sampler's scale.
resolve_point <- function(model, x, arg) {
  d <- model$d
  if (!is.numeric(x) || is.object(x) || is.matrix(x) || length(x) != d || any(!is.finite(x)))
    abort("`", arg, "` must be a finite numeric vector of length ", d, " (",
          paste(model$names, collapse = ", "), "), not ", describe(x), ".")
  x <- matrix(as.double(x), 1)
  check_user_values(model, x, arg)
  w <- to_sampler_scale(model, x)[1, ]
  if (any(!is.finite(w))) abort("`", arg, "` is outside the parameter space.")
  w
}

# The centre of the control variates on the sampler's scale, or NULL for none.
resolve_control_variates <- function(control_variates, model) {
  if (isFALSE(control_variates) || is.null(control_variates)) return(NULL)
  if (isTRUE(control_variates)) {
    m <- posterior_mode(model)
    if (!m$converged)
      warning("control variates: the search for the posterior mode did not converge ",
              "in its iteration limit; the estimator stays unbiased, only less effective.",
              call. = FALSE)
    return(unname(m$sampler))
  }
  if (inherits(control_variates, "sgld_fit")) control_variates <- coef(control_variates)
  if (!is.numeric(control_variates))
    abort("`control_variates` must be TRUE, FALSE, a fit, or a point (a mode) of length ",
          model$d, " on the user's scale; not ", describe(control_variates), ".")
  unname(resolve_point(model, control_variates, "control_variates"))
}
