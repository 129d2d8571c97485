#' Normal-inverse-gamma prior for linear regression
#'
#' The conjugate prior \eqn{\beta \mid \sigma^2 \sim N(\mu, \sigma^2 V)}{beta | sigma^2 ~ N(mu, sigma^2 V)},
#' \eqn{\sigma^2 \sim IG(\mathrm{shape}, \mathrm{rate})}{sigma^2 ~ IG(shape, rate)} of [model_linear()].
#' The defaults are the lecture handout's: \eqn{\mu = 0}{mu = 0}, \eqn{V = 100 I}{V = 100 I},
#' shape = rate = 1.
#'
#' @param mean Prior mean \eqn{\mu}{mu} of the coefficients: one number (used for
#'   all) or one per coefficient.
#' @param V Prior scale matrix of the coefficients (multiplied by \eqn{\sigma^2}{sigma^2}):
#'   one positive number (\eqn{V = vI}{V = vI}), a vector of positive numbers (a
#'   diagonal \eqn{V}{V}), or a symmetric positive definite matrix.
#' @param shape,rate Shape and rate of the inverse-gamma prior on \eqn{\sigma^2}{sigma^2}.
#' @return An object of class `sgld_prior`.
#' @examples
#' prior_nig(mean = 0, V = 100, shape = 1, rate = 1)
#' @export
prior_nig <- function(mean = 0, V = 100, shape = 1, rate = 1) {
  if (!is.numeric(mean) || length(mean) < 1L || any(!is.finite(mean)))
    abort("`mean` must be a numeric vector of finite values, not ", describe(mean), ".")
  if (!is.numeric(V) || length(V) < 1L || any(!is.finite(V)))
    abort("`V` must be a positive number, a vector of positive numbers or a ",
          "positive definite matrix, with finite values.")
  if (is.matrix(V) && !(nrow(V) == 1L && ncol(V) == 1L)) {
    if (nrow(V) != ncol(V) || !isSymmetric(unname(V)))
      abort("`V` must be a symmetric matrix.")
    if (inherits(try(chol(V), silent = TRUE), "try-error"))
      abort("`V` must be positive definite.")
  } else if (any(V <= 0)) {
    abort("`V` must be positive, not ", describe(V), ".")
  }
  check_number(shape, "shape", lower = 0, lower_open = TRUE)
  check_number(rate, "rate", lower = 0, lower_open = TRUE)
  structure(list(family = "nig", mean = as.double(mean), V = V,
                 shape = as.double(shape), rate = as.double(rate)),
            class = "sgld_prior")
}

#' @export
print.sgld_prior <- function(x, ...) {
  if (x$family %in% c("normal", "laplace")) {
    cat(if (x$family == "normal") "Normal prior: mean " else "Laplace prior: location ",
        paste(format(x$location), collapse = ", "),
        if (x$family == "normal") ", sd " else ", scale ",
        paste(format(x$scale), collapse = ", "), "\n", sep = "")
    return(invisible(x))
  }
  V <- x$V
  v <- if (is.matrix(V) && length(V) > 1L) sprintf("a %d x %d matrix", nrow(V), ncol(V))
       else paste(format(V), collapse = ", ")
  cat("Normal-inverse-gamma prior\n",
      "  beta | sigma2 ~ N(mean, sigma2 V), mean = ",
      paste(format(x$mean), collapse = ", "), ", V = ", v, "\n",
      "  sigma2 ~ IG(shape = ", format(x$shape), ", rate = ", format(x$rate), ")\n",
      sep = "")
  invisible(x)
}

# The prior made concrete for p coefficients: mean vector, V^{-1} (or its
# diagonal) and the log normalising constant, as the C model reads them.
resolve_prior_nig <- function(prior, p, coef_names) {
  if (!inherits(prior, "sgld_prior") || !identical(prior$family, "nig"))
    abort("`prior` must be made by prior_nig(), not ", describe(prior), ".")
  mu <- prior$mean
  if (length(mu) == 1L) mu <- rep(mu, p)
  if (length(mu) != p)
    abort("`prior` mean has length ", length(prior$mean), " but the model has ", p,
          " coefficients (", paste(coef_names, collapse = ", "), ").")
  V <- prior$V
  if (is.matrix(V) && length(V) > 1L) {
    if (nrow(V) != p)
      abort("`prior` V is ", nrow(V), " x ", ncol(V), " but the model has ", p,
            " coefficients.")
    R <- chol(V)
    vinv <- chol2inv(R)
    logdet <- 2 * sum(log(diag(R)))
    diag_only <- FALSE
  } else {
    v <- as.double(V)
    if (length(v) == 1L) v <- rep(v, p)
    if (length(v) != p)
      abort("`prior` V has length ", length(V), " but the model has ", p, " coefficients.")
    vinv <- 1 / v
    logdet <- sum(log(v))
    diag_only <- TRUE
  }
  list(mean = mu, vinv = as.double(vinv), vinv_diag = diag_only,
       V = if (diag_only) diag(1 / vinv, p) else V,
       shape = prior$shape, rate = prior$rate,
       const = -0.5 * p * log(2 * pi) - 0.5 * logdet +
         prior$shape * log(prior$rate) - lgamma(prior$shape))
}

#' Normal and Laplace priors for regression coefficients
#'
#' Independent priors on each coefficient of [model_logistic()]:
#' `prior_normal()` is \eqn{\beta_j \sim N(\mathrm{mean}, \mathrm{sd}^2)}{beta_j ~ N(mean, sd^2)}, and
#' `prior_laplace()` is the double-exponential prior
#' \eqn{p(\beta_j) = \exp(-|\beta_j - \mathrm{location}| / \mathrm{scale}) / (2\,\mathrm{scale})}{p(beta_j) = exp(-|beta_j - location| / scale) / (2 scale)}
#' that Welling and Teh (2011) use with scale 1. Its gradient is taken as 0 at
#' the kink.
#'
#' @param mean,location Centre of the prior: one number, or one per coefficient.
#' @param sd,scale Its spread: one positive number, or one per coefficient.
#' @return An object of class `sgld_prior`.
#' @examples
#' prior_normal(0, 10)
#' prior_laplace(scale = 1)
#' @export
prior_normal <- function(mean = 0, sd = 10) {
  new_coef_prior("normal", mean, sd, "mean", "sd")
}

#' @rdname prior_normal
#' @export
prior_laplace <- function(location = 0, scale = 1) {
  new_coef_prior("laplace", location, scale, "location", "scale")
}

new_coef_prior <- function(family, loc, scale, loc_arg, scale_arg) {
  if (!is.numeric(loc) || length(loc) < 1L || any(!is.finite(loc)))
    abort("`", loc_arg, "` must be a numeric vector of finite values, not ", describe(loc), ".")
  if (!is.numeric(scale) || length(scale) < 1L || any(!is.finite(scale)) || any(scale <= 0))
    abort("`", scale_arg, "` must be positive and finite, not ", describe(scale), ".")
  # the models use 1 / scale^2 (normal) and the Laplace approximation the
  # prior's curvature: a scale whose square underflows is no prior they can use
  if (any(scale^2 < .Machine$double.xmin))
    abort("`", scale_arg, "` must be at least 1.5e-154 (its square must not underflow), not ",
          format(min(scale)), ".")
  structure(list(family = family, location = as.double(loc), scale = as.double(scale)),
            class = "sgld_prior")
}

# Per-coefficient prior codes and parameters as the C models read them; the
# intercept (by name) may have a prior of its own.
resolve_coef_prior <- function(prior, prior_intercept, coef_names, arg = "prior") {
  p <- length(coef_names)
  check_coef_prior(prior, arg)
  out <- list(type = integer(p), loc = numeric(p), scale = numeric(p))
  fill <- function(out, pr, j, arg) {
    rep_to <- function(v, what) {
      if (length(v) == 1L) return(rep(v, length(j)))
      if (length(v) != length(j))
        abort("`", arg, "` ", what, " has length ", length(v), " but it applies to ",
              length(j), " coefficient", if (length(j) > 1) "s", ".")
      v
    }
    out$type[j] <- if (pr$family == "laplace") 1L else 0L
    out$loc[j] <- rep_to(pr$location, if (pr$family == "laplace") "location" else "mean")
    out$scale[j] <- rep_to(pr$scale, if (pr$family == "laplace") "scale" else "sd")
    out
  }
  icpt <- which(coef_names == "(Intercept)")
  if (!is.null(prior_intercept) && length(icpt)) {
    check_coef_prior(prior_intercept, "prior_intercept")
    out <- fill(out, prior_intercept, icpt, "prior_intercept")
    out <- fill(out, prior, setdiff(seq_len(p), icpt), arg)
  } else {
    out <- fill(out, prior, seq_len(p), arg)
  }
  out
}

check_coef_prior <- function(prior, arg) {
  if (!inherits(prior, "sgld_prior") || !prior$family %in% c("normal", "laplace"))
    abort("`", arg, "` must be made by prior_normal() or prior_laplace(), not ",
          describe(prior), ".")
}
