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
    loc <- if (is.null(x$location)) "the default (mean of y for gaussian, else 0)"
           else paste(format(x$location), collapse = ", ")
    cat(if (x$family == "normal") "Normal prior: mean " else "Laplace prior: location ",
        loc, if (x$family == "normal") ", sd " else ", scale ",
        paste(format(x$scale), collapse = ", "),
        if (isTRUE(x$autoscale)) ", autoscaled", "\n", sep = "")
    return(invisible(x))
  }
  if (x$family == "decov") {
    same <- function(v) paste(format(v), collapse = ", ")
    cat("decov prior: regularization ", same(x$regularization), ", concentration ",
        same(x$concentration), ", shape ", same(x$shape), ", scale ", same(x$scale), "\n",
        sep = "")
    return(invisible(x))
  }
  if (x$family == "exponential") {
    cat("Exponential prior: rate ", format(x$rate), if (isTRUE(x$autoscale)) ", autoscaled",
        "\n", sep = "")
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

#' Normal, Laplace and exponential priors for regression models
#'
#' Independent priors on the coefficients of the regressions
#' ([model_linear()], [model_logistic()], [model_poisson()],
#' [model_negbin()]): `prior_normal()` is
#' \eqn{\beta_j \sim N(\mathrm{mean}, \mathrm{sd}^2)}{beta_j ~ N(mean, sd^2)}, and
#' `prior_laplace()` is the double-exponential prior
#' \eqn{p(\beta_j) = \exp(-|\beta_j - \mathrm{location}| / \mathrm{scale}) / (2\,\mathrm{scale})}{p(beta_j) = exp(-|beta_j - location| / scale) / (2 scale)}
#' that Welling and Teh (2011) use with scale 1. Its gradient is taken as 0 at
#' the kink. `prior_exponential()` is the prior of an auxiliary parameter
#' (`prior_aux`): the residual sd \eqn{\sigma}{sigma} of [model_linear()], the
#' reciprocal dispersion \eqn{\phi}{phi} of [model_negbin()].
#'
#' @section Autoscaling:
#' With `autoscale = TRUE` the scales are adjusted to the data when the model
#' is built, as rstanarm's `stan_glm()` does (its priors vignette): a
#' coefficient's scale is divided by the sd of its column of the design
#' matrix (a constant column's by 1), and for the linear model every scale
#' (the coefficients', the intercept's, and \eqn{1/\mathrm{rate}}{1/rate} of
#' `prior_aux`) is multiplied by the sd of the response. The regression
#' models' defaults are rstanarm's: `prior_normal(0, 2.5, autoscale = TRUE)`
#' on the coefficients, `prior_normal(NULL, 2.5, autoscale = TRUE)` on the
#' intercept (centred at the response's mean for the linear model, at 0
#' otherwise), and `prior_exponential(1, autoscale = TRUE)` on
#' \eqn{\sigma}{sigma} (linear) or, not scaled, on \eqn{\phi}{phi} (negative
#' binomial). [prior_summary()][prior_summary.sgld_fit] prints the adjusted
#' scales. With `autoscale = FALSE` (the default of these functions) a prior
#' means exactly what it says.
#'
#' @param mean,location Centre of the prior: one number, or one per
#'   coefficient. `NULL` (for `prior_intercept` only) is rstanarm's default
#'   centre: the mean of the response for the linear model, 0 otherwise.
#' @param sd,scale Its spread: one positive number, or one per coefficient.
#' @param rate The exponential prior's rate, a positive number.
#' @param autoscale Adjust the scale to the data (section "Autoscaling")?
#' @return An object of class `sgld_prior`.
#' @examples
#' prior_normal(0, 10)
#' prior_normal(0, 2.5, autoscale = TRUE)   # the regressions' default
#' prior_laplace(scale = 1)
#' prior_exponential(1)
#' @export
prior_normal <- function(mean = 0, sd = 10, autoscale = FALSE) {
  new_coef_prior("normal", mean, sd, "mean", "sd", autoscale)
}

#' @rdname prior_normal
#' @export
prior_laplace <- function(location = 0, scale = 1, autoscale = FALSE) {
  new_coef_prior("laplace", location, scale, "location", "scale", autoscale)
}

#' @rdname prior_normal
#' @export
prior_exponential <- function(rate = 1, autoscale = FALSE) {
  check_number(rate, "rate", lower = 0, lower_open = TRUE)
  check_flag(autoscale, "autoscale")
  structure(list(family = "exponential", rate = as.double(rate), autoscale = autoscale),
            class = "sgld_prior")
}

new_coef_prior <- function(family, loc, scale, loc_arg, scale_arg, autoscale) {
  if (!is.null(loc) && (!is.numeric(loc) || length(loc) < 1L || any(!is.finite(loc))))
    abort("`", loc_arg, "` must be a numeric vector of finite values (or NULL, for the ",
          "intercept's default centre), not ",
          describe(loc), ".")
  if (!is.numeric(scale) || length(scale) < 1L || any(!is.finite(scale)) || any(scale <= 0))
    abort("`", scale_arg, "` must be positive and finite, not ", describe(scale), ".")
  # the models use 1 / scale^2 (normal) and the Laplace approximation the
  # prior's curvature: a scale whose square underflows is no prior they can use
  if (any(scale^2 < .Machine$double.xmin))
    abort("`", scale_arg, "` must be at least 1.5e-154 (its square must not underflow), not ",
          format(min(scale)), ".")
  check_flag(autoscale, "autoscale")
  structure(list(family = family, location = if (!is.null(loc)) as.double(loc),
                 scale = as.double(scale), autoscale = autoscale),
            class = "sgld_prior")
}

# The regression prior made concrete for the design X (response y, the
# response's raw values for the linear model's autoscaling), as the C models
# read it (src/prior_centred.h):
#   type, loc, scale    one per coefficient (type 0 normal, 1 Laplace); an
#                       infinite scale is a flat prior (the intercept whose
#                       prior is on centred predictors)
#   centre              NULL, or the row u with u[intercept] = 1 and the
#                       other columns' means, so that u'beta is the intercept
#                       at centred predictors, alpha + xbar'beta, whose prior
#                       is normal(centre_loc, centre_scale^2)
# The prior on centred predictors is a Gaussian prior on the raw (alpha,
# beta) with a unit-Jacobian change of variables: the design keeps its
# sparsity, draws stay on the user's scale. `adjusted` holds rstanarm's
# "Adjusted prior" scales for prior_summary().
resolve_coef_prior <- function(prior, prior_intercept, X, y = NULL, arg = "prior") {
  coef_names <- colnames(X)
  p <- length(coef_names)
  check_coef_prior(prior, arg)
  gaussian <- !is.null(y)
  moments_y <- if (gaussian) response_moments(y)
  sd_y <- if (gaussian) moments_y[2] else 1
  if (gaussian && !(is.finite(sd_y) && sd_y > 0) &&
      (isTRUE(prior$autoscale) || isTRUE(prior_intercept$autoscale)))
    abort("`", arg, "`: autoscaling divides by the sd of the response, which is 0; give ",
          "priors with `autoscale = FALSE`.")
  icpt <- which(coef_names == "(Intercept)")
  slopes <- setdiff(seq_len(p), icpt)
  stats <- if (isTRUE(prior$autoscale) || (length(icpt) && !is.null(prior_intercept)))
    column_stats(X)
  rep_to <- function(v, j, what, a) {
    if (length(v) == 1L) return(rep(v, length(j)))
    if (length(v) != length(j))
      abort("`", a, "` ", what, " has length ", length(v), " but it applies to ",
            length(j), " coefficient", if (length(j) > 1) "s", " (",
            paste(coef_names[j], collapse = ", "), ").")
    v
  }
  out <- list(type = integer(p), loc = numeric(p), scale = numeric(p), centre = NULL,
              centre_loc = 0, centre_scale = 1, adjusted = rep(NA_real_, p))
  fill <- function(out, pr, j, a) {
    if (!length(j)) return(out)
    locname <- if (pr$family == "laplace") "location" else "mean"
    if (is.null(pr$location))
      abort("`", a, "`: a NULL ", locname, " is the intercept's default centre; give ",
            "the coefficients' ", locname, ".")
    out$type[j] <- if (pr$family == "laplace") 1L else 0L
    out$loc[j] <- rep_to(pr$location, j, locname, a)
    s <- rep_to(pr$scale, j, if (pr$family == "laplace") "scale" else "sd", a)
    if (isTRUE(pr$autoscale)) {
      # rstanarm: a constant column keeps its scale (divided by 1)
      sx <- stats$sd[j]
      s <- pmax(1e-12, sd_y * s / ifelse(sx > 0, sx, 1))   # rstanarm floors at 1e-12
      out$adjusted[j] <- s
    }
    out$scale[j] <- s
    out
  }
  if (length(icpt) && !is.null(prior_intercept)) {
    check_coef_prior(prior_intercept, "prior_intercept")
    if (prior_intercept$family != "normal" || length(prior_intercept$scale) != 1L ||
        length(prior_intercept$location) > 1L)
      abort("`prior_intercept` must be one prior_normal(): the intercept's prior at ",
            "centred predictors.")
    out <- fill(out, prior, slopes, arg)
    loc <- if (is.null(prior_intercept$location)) {
      if (gaussian) moments_y[1] else 0
    } else prior_intercept$location
    s <- prior_intercept$scale * if (isTRUE(prior_intercept$autoscale)) sd_y else 1
    u <- stats$mean
    u[icpt] <- 1
    out$type[icpt] <- 0L
    out$scale[icpt] <- Inf
    out$loc[icpt] <- 0
    out$centre <- as.double(u)
    out$centre_loc <- loc
    out$centre_scale <- s
    if (isTRUE(prior_intercept$autoscale) && gaussian) out$adjusted[icpt] <- s
  } else {
    out <- fill(out, prior, seq_len(p), arg)
  }
  out
}

# The response's mean and sd, which autoscaling reads: of y, or as a model
# on a file gives them (attribute "moments", R/file-backed.R).
response_moments <- function(y) {
  if (!is.null(attr(y, "moments"))) return(attr(y, "moments"))
  c(mean(y), stats::sd(y))
}

# Column means and sds of a design (attribute "moments" for a model on a
# file, R/file-backed.R, whose rows stay there): a base matrix two passes (exact for a
# column such as a calendar year, whose sd is small beside its mean), a
# sparse Matrix by its sums, which keeps it sparse.
column_stats <- function(X) {
  if (!is.null(attr(X, "moments"))) return(attr(X, "moments"))
  n <- nrow(X)
  # Each column's non-zero values in row order, dense or sparse alike, so
  # that the same data give the same priors to the last bit whatever their
  # storage (and so the same draws); two passes over them, the squares taken
  # about the mean (a year-valued column loses nothing to cancellation).
  sparse <- inherits(X, "sparseMatrix")
  if (sparse) X <- methods::as(methods::as(X, "CsparseMatrix"), "generalMatrix")
  stats_of <- function(v) {
    v <- v[v != 0]
    mu <- sum(v) / n
    c(mu, sum((v - mu)^2) + (n - length(v)) * mu^2)
  }
  st <- vapply(seq_len(ncol(X)), function(j) {
    stats_of(if (sparse) X@x[seq.int(X@p[j] + 1L, length.out = X@p[j + 1L] - X@p[j])]
             else X[, j])
  }, numeric(2))
  mu <- st[1, ]
  sd <- sqrt(st[2, ] / (n - 1))
  # a constant column (whose mean may round) has sd 0: rstanarm's rule then
  # leaves its prior's scale as given
  sd[sd <= 1e-7 * abs(mu)] <- 0
  list(mean = mu, sd = sd)
}

# The raw coefficients at the prior's centre: each slope at its location,
# the intercept where the centred intercept is at its own.
prior_centre_point <- function(pr) {
  w <- pr$loc
  if (!is.null(pr$centre)) {
    icpt <- which(pr$centre == 1 & !is.finite(pr$scale))
    w[icpt] <- pr$centre_loc - sum(pr$centre[-icpt] * w[-icpt])
  }
  w
}

# The fields of the coefficient prior every regression model hands to C.
coef_prior_fields <- function(pr) {
  list(prior_type = pr$type, prior_loc = pr$loc, prior_scale = pr$scale,
       prior_centre = pr$centre, prior_centre_loc = as.double(pr$centre_loc),
       prior_centre_scale = as.double(pr$centre_scale), prior_adjusted = pr$adjusted)
}

# The auxiliary parameter's exponential prior made concrete: its rate,
# divided by sd(y) when autoscaled for the linear model.
resolve_aux_prior <- function(prior_aux, sd_y = 1, what) {
  if (!inherits(prior_aux, "sgld_prior") || !identical(prior_aux$family, "exponential"))
    abort("`prior_aux` must be made by prior_exponential() (the prior of ", what, "), not ",
          describe(prior_aux), ".")
  if (isTRUE(prior_aux$autoscale)) prior_aux$rate / sd_y else prior_aux$rate
}

check_coef_prior <- function(prior, arg) {
  if (!inherits(prior, "sgld_prior") || !prior$family %in% c("normal", "laplace"))
    abort("`", arg, "` must be made by prior_normal() or prior_laplace(), not ",
          describe(prior), ".")
}
