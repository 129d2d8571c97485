#' Posterior mode
#'
#' Maximises the full-data log posterior on the sampler's scale. For
#' [model_linear()] and [model_logistic()] with normal priors, by Newton's
#' method in C: each step is one pass over the data that gives the log
#' posterior, its gradient and its Hessian, in a trust region
#' (Levenberg-Marquardt) scaled by the Hessian's diagonal, so the predictors'
#' scales do not matter; on large data the first steps use subsamples (the
#' first of `max(16384, 64 d)` items spread over the data, each next
#' one 8 times larger), and only the last few pass over all the data. It
#' stops when the Newton decrement \eqn{g^	op H^{-1} g}{g' H^-1 g} (the
#' squared distance to the mode in posterior sds, for a Gaussian posterior)
#' is below \eqn{10^{-12}}{1e-12}, or where rounding stops the steps from
#' shrinking it. Other models (and Laplace priors, which have no Hessian at
#' their kink): quasi-Newton steps ([stats::optim()], method `"BFGS"`) with
#' the model's exact gradient, computed by the same C code the samplers use,
#' every evaluation a pass over all the data. Models with more than 1,000
#' parameters, unless `covariance = TRUE`: limited-memory quasi-Newton steps
#' (method `"L-BFGS-B"`), which store no d x d matrix.
#'
#' @param model A model, e.g. from [model_linear()].
#' @param init Starting point on the user's scale, or `NULL` for the model's
#'   default start.
#' @param maxit Largest number of Newton steps (of each subsample's search)
#'   or BFGS iterations.
#' @param covariance Also return the covariance of the Laplace approximation,
#'   the inverse of the negative Hessian of the log posterior at the mode (on
#'   the sampler's scale): Newton's own Hessian, or for the other models
#'   central differences of the exact gradient (2d more passes over the
#'   data). It makes a good fixed preconditioner for [sgld()] and [mala()]
#'   when the posterior is close to Gaussian.
#' @return A list with `mode` (the user's scale), `sampler` (the sampler's
#'   scale), `log_posterior` there, `gradient` (of the log posterior on the
#'   sampler's scale, near 0 at a mode), `iterations`, `converged`, `method`
#'   (`"newton"`, `"bfgs"` or `"lbfgs"`) and `passes` (the evaluations, counted in
#'   passes over the data); with `covariance = TRUE` also `covariance`
#'   (`NULL`, with a warning, if the Hessian is not negative definite).
#' @examples
#' posterior_mode(model_linear(y ~ x, data = handout))$mode
#' @export
posterior_mode <- function(model, init = NULL, maxit = 1000, covariance = FALSE) {
  check_model(model)
  check_count(maxit, "maxit", lower = 1, upper = .Machine$integer.max)
  check_flag(covariance, "covariance")
  check_densities(model, "posterior_mode()")
  w0 <- resolve_init(model, init, 1)[1, ]
  # Newton's steps build the d x d Hessian: for wide models only when its
  # inverse, the covariance, is asked for (R/auto-wide.R)
  wide <- model$d > auto_wide_limit() && !covariance
  newton <- if (!wide) model_newton(model, w0, maxit)
  if (!is.null(newton)) {
    w <- newton$sampler
    grad <- newton$gradient
    names(w) <- names(grad) <- model$sampler_names
    out <- list(mode = mode_on_user_scale(model, w), sampler = w,
                log_posterior = newton$log_posterior, gradient = grad,
                iterations = newton$iterations, converged = newton$converged,
                method = "newton", passes = newton$passes)
    if (covariance) out["covariance"] <- list(laplace_inverse(-newton$hessian, model))
    return(out)
  }
  search <- optim_mode(model, w0, maxit, if (wide) "L-BFGS-B" else "BFGS")
  w <- search$w
  e <- search$e
  grad <- search$grad
  gr <- search$gr
  passes <- search$passes
  opt <- search$opt
  out <- list(mode = mode_on_user_scale(model, w), sampler = w,
              log_posterior = e$loglik + e$logprior, gradient = grad,
              iterations = unname(opt$counts[["gradient"]]), converged = opt$convergence == 0,
              method = if (wide) "lbfgs" else "bfgs", passes = passes)
  if (covariance) {
    out["covariance"] <- list(laplace_covariance(model, w, gr))
    out$passes <- environment(gr)$passes
  }
  out
}

mode_on_user_scale <- function(model, w) {
  mode <- to_user_scale(model, matrix(w, 1))[1, ]
  names(mode) <- model$names
  mode
}

# The inverse of minus the Hessian at w, by central differences of the
# gradient of minus the log posterior, gr.
laplace_covariance <- function(model, w, gr) {
  d <- length(w)
  H <- vapply(seq_len(d), function(j) {
    h <- 1e-5 * max(1, abs(w[j]))
    e <- replace(numeric(d), j, h)
    (gr(w + e) - gr(w - e)) / (2 * h)
  }, numeric(d))
  laplace_inverse((H + t(H)) / 2, model)   # the Hessian of minus the log posterior
}

# The Laplace covariance from the Hessian H of minus the log posterior, or
# NULL with a warning where H is not positive definite.
laplace_inverse <- function(H, model) {
  R <- tryCatch(chol(H), error = function(e) NULL)
  if (is.null(R)) {
    sgld_warn("mode", "the Hessian at the mode is not negative definite; no covariance returned.")
    return(NULL)
  }
  S <- chol2inv(R)
  dimnames(S) <- list(model$sampler_names, model$sampler_names)
  S
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
  out <- model_gradient_draws(model, list(
    w = w, batch_size = batch_size, times = times, replace = as.integer(replace),
    cv_mode = resolve_control_variates(control_variates, model)))
  stop_on_failure(model)
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
      sgld_warn("mode", "control variates: the search for the posterior mode did not converge ",
              "in its iteration limit; the estimator stays unbiased, only less effective.")
    return(unname(m$sampler))
  }
  if (inherits(control_variates, "sgld_fit")) control_variates <- parameter_means(control_variates)
  if (!is.numeric(control_variates))
    abort("`control_variates` must be TRUE, FALSE, a fit, or a point (a mode) of length ",
          model$d, " on the user's scale; not ", describe(control_variates), ".")
  unname(resolve_point(model, control_variates, "control_variates"))
}

# The mode by a quasi-Newton search in R, each evaluation one pass over the
# data in C: BFGS, or L-BFGS-B for models too wide for its d x d matrix
# (R/auto-wide.R). `gr` is kept for the Laplace covariance.
optim_mode <- function(model, w0, maxit, method) {
  passes <- 0
  # optim() asks for the value and the gradient at the same point separately;
  # one C call gives both, so keep the last one
  last_w <- NULL
  last <- NULL
  eval_at <- function(w) {
    if (!identical(w, last_w)) {
      last <<- .Call(C_sgld_model_eval, model, as.double(w))
      passes <<- passes + 1
      # a line search may probe points where a model's R function gives
      # non-finite values: such a point is rejected, like a built-in model's
      if (stop_on_failure(model, allow_non_finite = TRUE)) last$loglik <<- NA_real_
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
  # The log posterior grows with n; divided by n, BFGS's first steps (it
  # starts from the identity as its Hessian estimate) are of a sensible size
  # instead of overshooting and backtracking through many line-search passes.
  control <- list(maxit = maxit, fnscale = model$n)
  # L-BFGS-B stops when a step gains less than factr machine epsilons of
  # the objective: 2e-13 relative, as BFGS's reltol
  if (method == "BFGS") control$reltol <- 1e-12 else control[c("factr", "lmm")] <- list(1e3, 20)
  opt <- stats::optim(w0, fn, gr, method = method, control = control)
  w <- opt$par
  e <- eval_at(w)
  grad <- e$grad_loglik + e$grad_logprior
  names(w) <- names(grad) <- model$sampler_names
  list(w = w, e = e, grad = grad, gr = gr, opt = opt, passes = passes)
}
