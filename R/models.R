#' Bayesian normal linear regression
#'
#' The model \eqn{y_i \mid \beta, \sigma^2 \sim N(x_i^\top \beta, \sigma^2)} with
#' the conjugate prior of [prior_nig()]. The samplers move
#' \eqn{w = (\beta, \log \sigma^2)}; draws are reported as `(Intercept)`, the
#' covariate names and `sigma2`.
#'
#' There are two faces, as with [lm()] and [lm.fit()]: a formula with a data
#' frame (factors and character columns become indicator columns through
#' [model.matrix()]), or a numeric design matrix with a response vector (no
#' intercept is added: include a column of ones for one).
#'
#' The data are checked once here and stored observation by observation
#' (the transposed design with the response as its last row), so a minibatch
#' reads contiguous memory.
#'
#' @param x A formula `response ~ covariates`, or a numeric design matrix.
#' @param data A data frame holding the variables of the formula.
#' @param y The response, for the matrix face: a numeric vector with one value
#'   per row of `x`.
#' @param prior The prior, from [prior_nig()].
#' @param ... Not used; an error if given.
#' @return An object of class `sgld_model_linear` (and `sgld_model`) to pass to
#'   [sgld()], [sgd()] or [gd()].
#' @section Starting values:
#' Unless `init` is given, samplers start every chain at the prior mean of the
#' coefficients and at \eqn{\sigma^2} = the sample variance of the response.
#' @seealso [linear_exact_posterior()] for the exact posterior of this model.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' m
#' m2 <- model_linear(cbind(1, handout$x), handout$y)
#' @export
model_linear <- function(x, ...) UseMethod("model_linear")

#' @rdname model_linear
#' @export
model_linear.formula <- function(x, data, prior = prior_nig(), ...) {
  check_dots_empty(...)
  if (missing(data) || !is.data.frame(data))
    abort("`data` must be a data frame holding the variables of the formula.")
  if (nrow(data) < 1L) abort("`data` has no rows.")
  used <- intersect(all.vars(x), names(data))
  missing_vars <- setdiff(all.vars(x), c(names(data), "."))
  if (length(missing_vars))
    abort("`data` has no column", if (length(missing_vars) > 1) "s", " named ",
          paste0("'", missing_vars, "'", collapse = ", "), ".")
  if ("." %in% all.vars(x)) used <- names(data)
  for (v in used) check_data_column(data[[v]], v)
  mf <- tryCatch(model.frame(x, data = data, na.action = na.pass, drop.unused.levels = TRUE),
                 error = function(e) abort("`x`: the formula cannot be evaluated on `data`: ",
                                           conditionMessage(e)))
  y <- model.response(mf)
  if (is.null(y)) abort("`x` must be a formula with a response, such as y ~ x.")
  if (!is.numeric(y) || is.matrix(y))
    abort("the response of `x` must be a numeric vector, not ", class(y)[1], ".")
  tt <- terms(mf)
  X <- tryCatch(model.matrix(tt, mf),
                error = function(e) abort("`data`: a column cannot be made numeric: ",
                                          conditionMessage(e)))
  m <- new_model_linear(X, as.double(y), prior)
  m$terms <- tt
  m$xlevels <- .getXlevels(tt, mf)
  m$contrasts <- attr(X, "contrasts")
  m$formula <- x
  m
}

#' @rdname model_linear
#' @export
model_linear.default <- function(x, y, prior = prior_nig(), ...) {
  check_dots_empty(...)
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
  if (missing(y)) abort("`y` is missing: the matrix face needs a response vector.")
  if (!is.numeric(y) || !is.null(dim(y)) && length(dim(y)) > 1L && ncol(y) != 1L)
    abort("`y` must be a numeric vector, not ", describe(y), ".")
  if (length(y) != nrow(x))
    abort("`y` has length ", length(y), " but `x` has ", nrow(x), " rows.")
  if (any(!is.finite(y)))
    abort("`y` must be finite; it has ", format(y[!is.finite(y)][1]), " at position ",
          which(!is.finite(y))[1], ".")
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  new_model_linear(x, as.double(y), prior)
}

check_data_column <- function(v, name) {
  if (is.list(v) && !is.data.frame(v))
    abort("`data` column '", name, "' is a list and cannot be made numeric.")
  ok_type <- is.numeric(v) || is.logical(v) || is.factor(v) || is.character(v)
  if (!ok_type || is.object(v) && !is.factor(v) && !inherits(v, "AsIs"))
    abort("`data` column '", name, "' (class ", class(v)[1],
          ") cannot be made numeric; convert it to a number or a factor first.")
  if (anyNA(v))
    abort("`data` column '", name, "' has missing values (first at row ",
          which(is.na(v))[1], "); remove or impute them first.")
  if (is.numeric(v) && any(!is.finite(v)))
    abort("`data` column '", name, "' has non-finite values (first at row ",
          which(!is.finite(v))[1], ").")
}

new_model_linear <- function(X, y, prior) {
  n <- nrow(X)
  p <- ncol(X)
  coef_names <- colnames(X)
  pr <- resolve_prior_nig(prior, p, coef_names)
  if (n < 2L) abort("`data` must have at least 2 observations, not ", n, ".")
  z <- rbind(t(unname(X)), y)
  storage.mode(z) <- "double"
  dimnames(z) <- NULL
  structure(list(
    type = "linear",
    z = z, p = p, n = as.double(n),
    prior_mean = pr$mean, prior_vinv = pr$vinv, prior_vinv_diag = as.integer(pr$vinv_diag),
    prior_shape = pr$shape, prior_rate = pr$rate, prior_const = pr$const,
    prior = prior, prior_V = pr$V,
    d = p + 1L,
    names = c(coef_names, "sigma2"),
    sampler_names = c(coef_names, "log_sigma2"),
    default_init = c(pr$mean, var(y))
  ), class = c("sgld_model_linear", "sgld_model"))
}

#' @export
print.sgld_model_linear <- function(x, ...) {
  cat("Bayesian linear regression: ", format(x$n, big.mark = ","), " observations, ",
      x$p, " coefficient", if (x$p > 1) "s", " (", paste(x$names[seq_len(x$p)], collapse = ", "),
      ") and sigma2\n", sep = "")
  if (!is.null(x$formula)) cat("Formula: ", deparse(x$formula), "\n", sep = "")
  print(x$prior)
  invisible(x)
}

# ---- the model's two scales ------------------------------------------------
# Samplers move unconstrained parameters; users see them on their natural
# scale. Each model says how to go from one to the other, one draw per row.

to_user_scale <- function(model, w) UseMethod("to_user_scale")
to_sampler_scale <- function(model, w) UseMethod("to_sampler_scale")

to_user_scale.sgld_model_linear <- function(model, w) {
  w[, model$d] <- exp(w[, model$d])
  w
}

to_sampler_scale.sgld_model_linear <- function(model, w) {
  w[, model$d] <- log(w[, model$d])
  w
}

# Stops unless every row of w is a valid point on the user scale (for init).
check_user_values <- function(model, w, arg) UseMethod("check_user_values")

check_user_values.sgld_model_linear <- function(model, w, arg) {
  if (any(w[, model$d] <= 0)) abort("`", arg, "`: sigma2 must be positive.")
}

#' Log posterior and its gradient
#'
#' Evaluates a model's log likelihood, log prior and their gradients over the
#' full data at one point on the sampler's (unconstrained) scale, by the same
#' C code the samplers use. The log prior includes the Jacobian of the
#' transformation to the sampler's scale (for [model_linear()],
#' \eqn{\sigma^2 = e^\gamma}).
#'
#' @param model A model, e.g. from [model_linear()].
#' @param w A numeric vector: one point on the sampler's scale, in the order of
#'   `model$sampler_names`.
#' @return A list with `loglik`, `logprior`, `logpost` (their sum), and the
#'   gradients `grad_loglik`, `grad_logprior` and `grad_logpost`.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' log_posterior(m, c(0, 0.9, log(0.19)))$grad_logpost
#' @export
log_posterior <- function(model, w) {
  check_model(model)
  if (!is.numeric(w) || length(w) != model$d || any(!is.finite(w)))
    abort("`w` must be a finite numeric vector of length ", model$d, " (",
          paste(model$sampler_names, collapse = ", "), ").")
  r <- .Call(C_sgld_model_eval, model, as.double(w))
  names(r$grad_loglik) <- names(r$grad_logprior) <- model$sampler_names
  list(loglik = r$loglik, logprior = r$logprior, logpost = r$loglik + r$logprior,
       grad_loglik = r$grad_loglik, grad_logprior = r$grad_logprior,
       grad_logpost = r$grad_loglik + r$grad_logprior)
}

check_model <- function(model, arg = "model") {
  if (!inherits(model, "sgld_model"))
    abort("`", arg, "` must be a model made by model_linear() or another model_*() ",
          "function, not ", describe(model), ".")
  invisible(model)
}
