#' Bayesian logistic regression
#'
#' The model \eqn{P(y_i = 1 \mid x_i, \beta) = 1 / (1 + e^{-x_i^\top \beta})}{P(y_i = 1 | x_i, beta) = 1 / (1 + e^(-x_i' beta))}
#' with normal or Laplace priors on the coefficients. The default is
#' rstanarm's `stan_glm()` default: each coefficient
#' \eqn{N(0, (2.5 / s_j)^2)}{N(0, (2.5 / s_j)^2)} (\eqn{s_j}{s_j} the sd of
#' column \eqn{j}{j} of the design) and the intercept at centred predictors
#' \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}; see [prior_normal()] and
#' [prior_summary()][prior_summary.sgld_fit]. Welling and Teh (2011) use a
#' Laplace prior of scale 1 (`prior = prior_laplace(1), prior_intercept = NULL`).
#'
#' The response may be 0/1 numbers, `TRUE`/`FALSE`, \eqn{\pm 1}{+/- 1}, or a factor
#' with two levels, whose second level is the event (as in [glm()]). In the
#' formula face it may also be `cbind(events, nonevents)`, two columns of
#' counts: the binomial likelihood with `events + nonevents` trials, which
#' gives the same posterior as the data expanded to one 0/1 row per trial
#' (without the binomial coefficient, a constant). As with
#' [model_linear()] there is a formula face and a matrix face; with a matrix
#' no intercept is added, and `prior_intercept` applies to a column named
#' `"(Intercept)"`.
#'
#' The log likelihood and its gradient are computed without overflow for
#' linear predictors of any size.
#'
#' @inheritParams model_linear
#' @param y The response, for the matrix face; for a big.matrix also the name
#'   or number of one of its columns (the other columns are then the
#'   covariates).
#' @param prior Prior of the coefficients: [prior_normal()] (the default,
#'   `prior_normal(0, 2.5, autoscale = TRUE)`) or [prior_laplace()].
#' @param prior_intercept The prior of the intercept at centred predictors
#'   (of \eqn{\alpha + \bar x^\top\beta}{alpha + xbar' beta}, rstanarm's
#'   convention; the draws are of the intercept \eqn{\alpha}{alpha} of the
#'   predictors as given), a [prior_normal()]: by default
#'   `prior_normal(NULL, 2.5, autoscale = TRUE)`, \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}.
#'   `NULL` gives the intercept `prior`, on the predictors as given (the
#'   fixed priors of earlier versions: `prior = prior_normal(0, 10),
#'   prior_intercept = NULL`). Used when the design has a column named
#'   `"(Intercept)"`.
#' @param sparse Store only the non-zero covariates of each observation? `NULL`
#'   (the default) does so when at most a quarter of the design is non-zero,
#'   as with one-hot encoded factors; the results are the same either way, up
#'   to the order of floating-point sums.
#' @param storage `"double"` (the default) or `"float"`: with `"float"`, dense
#'   storage also keeps a single-precision copy of the covariates, which the
#'   minibatch gradient reads (half the memory traffic per row; the arithmetic
#'   stays in double precision). Each covariate is then rounded to 24
#'   significant bits, so coordinate \eqn{j}{j} of row \eqn{i}{i}'s gradient changes
#'   by at most about \eqn{2^{-24} |x_{ij}| (|c_i| + \frac14 \sum_k |x_{ik} \beta_k|)}{2^-24 |x_ij| (|c_i| + sum_k |x_ik beta_k| / 4)}
#'   (\eqn{c_i}{c_i} the row's derivative in its linear predictor). Log
#'   likelihoods, the monitor and gradients with offsets or counts use the
#'   double-precision data.
#' @return An object of class `sgld_model_logistic` (and `sgld_model`).
#' @inheritSection model_linear Data in a file
#' @section Starting values:
#' Unless `init` is given, samplers start every chain at the prior's centre
#' (the intercept where the centred intercept is at its prior's centre).
#' @examples
#' m <- model_logistic(type ~ glu + bmi + age, data = MASS::Pima.tr)
#' m
#' @export
model_logistic <- function(x, ...) UseMethod("model_logistic")

#' @rdname model_logistic
#' @export
model_logistic.formula <- function(x, data, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                   prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE), sparse = NULL, subset, weights,
                                   offset, na.action = na.fail, storage = "double", ...) {
  check_dots_empty(...)
  design <- design_from_formula(x, data, frame_extras(match.call()), na.action)
  y <- design$y
  counts <- is.matrix(y)
  if (counts) {
    if (ncol(y) != 2L || !is.numeric(y) || any(y < 0) || any(y != round(y)))
      abort("the response of `x`, when a matrix, must be cbind(events, nonevents): two ",
            "columns of non-negative whole numbers.")
    if (all(y[, 1] == 0) || all(y[, 2] == 0))
      abort("the response of `x` must have events and non-events; one column is all zeros.")
    yb <- structure(ifelse(y[, 1] >= y[, 2], 1, -1), labels = c("0", "1"))
  } else {
    yb <- binary_response(y, "the response of `x`")
  }
  m <- add_formula_parts(new_model_logistic(design$X, yb, prior, prior_intercept, sparse,
                                            storage), design)
  w <- if (is.null(design$weights)) 1 else design$weights
  # events and non-events of each row, weighted: the log likelihood of row i
  # is events_i log sigma(eta_i) + nonevents_i log sigma(-eta_i)
  if (counts) {
    m$obs_events <- w * as.double(y[, 1])
    m$obs_nonevents <- w * as.double(y[, 2])
    m$trials <- as.double(rowSums(y))
  } else if (!is.null(design$weights)) {
    m$obs_events <- w * (yb == 1)
    m$obs_nonevents <- w * (yb == -1)
  }
  m$obs_offset <- design$offset
  m
}

#' @rdname model_logistic
#' @export
model_logistic.default <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                   prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                   sparse = NULL, storage = "double", ...) {
  check_dots_empty(...)
  if (is_file_matrix(x)) return(file_model_logistic(x, y, prior, prior_intercept, sparse))
  x <- check_design_matrix(x, keep_sparse = TRUE)
  check_response_length(y, x)
  new_model_logistic(x, binary_response(y, "`y`"), prior, prior_intercept, sparse, storage)
}

# The response as -1 / +1, with the labels of the two classes.
binary_response <- function(y, what) {
  if (anyNA(y)) abort(what, " has missing values (first at ", which(is.na(y))[1], ").")
  if (is.factor(y)) {
    lev <- levels(droplevels(y))
    if (nlevels(y) != 2L || length(lev) != 2L)
      abort(what, " must have two classes; the factor has ", length(lev), " (",
            paste0("'", lev, "'", collapse = ", "), ").")
    return(structure(ifelse(y == levels(y)[2], 1, -1), labels = levels(y)))
  }
  if (is.logical(y)) {
    if (length(unique(y)) < 2L) abort(what, " must have two classes; it is all ", y[1], ".")
    return(structure(ifelse(y, 1, -1), labels = c("FALSE", "TRUE")))
  }
  if (is.numeric(y) && is.null(dim(y))) {
    u <- sort(unique(as.double(y)))   # integer 0/1 counts as 0/1
    if (length(u) < 2L && all(u %in% c(-1, 0, 1)))
      abort(what, " must have two classes; every value is ", u, ".")
    if (identical(u, c(0, 1)))
      return(structure(ifelse(y == 1, 1, -1), labels = c("0", "1")))
    if (identical(u, c(-1, 1)))
      return(structure(as.double(y), labels = c("-1", "1")))
    abort(what, " must be 0/1, -1/+1, logical or a two-level factor; it has the values ",
          paste(utils::head(format(u), 5), collapse = ", "), if (length(u) > 5) ", ...", ".")
  }
  abort(what, " must be 0/1, -1/+1, logical or a two-level factor, not ", class(y)[1], ".")
}

new_model_logistic <- function(X, y, prior, prior_intercept, sparse = NULL, storage = "double") {
  n <- nrow(X)
  if (n < 2L) abort("`data` must have at least 2 observations, not ", n, ".")
  if (!is.character(storage) || length(storage) != 1L || !storage %in% c("double", "float"))
    abort("`storage` must be \"double\" or \"float\".")
  if (is.null(sparse)) sparse <- storage == "double" && design_density(X) <= 0.25
  check_flag(sparse, "sparse")
  if (sparse && storage == "float")
    abort("`storage = \"float\"` needs dense storage (`sparse = FALSE`).")
  pr <- resolve_coef_prior(prior, prior_intercept, X)
  check_rank(X)  # R/design.R
  m <- structure(c(list(
    type = "logistic",
    p = ncol(X), n = as.double(n), sparse = as.integer(sparse), storage = storage),
    coef_prior_fields(pr),
    list(prior = prior, prior_intercept = prior_intercept,
    labels = attr(y, "labels"),
    d = ncol(X),
    names = colnames(X),
    sampler_names = colnames(X),
    default_init = prior_centre_point(pr)
  )), class = c("sgld_model_logistic", "sgld_model"))
  set_model_data(m, X, y)
}

#' @export
print.sgld_model_logistic <- function(x, ...) {
  cat("Bayesian logistic regression: ", format(x$n, big.mark = ","), " observations, ",
      x$p, " coefficient", if (x$p > 1) "s", "; event: y = '", x$labels[2], "'\n", sep = "")
  if (!is.null(x$formula)) cat("Formula: ", deparse(x$formula), "\n", sep = "")
  print_observation_fields(x)
  print_coef_priors(x)
  invisible(x)
}

# Dense storage keeps (x_i, y_i) together; sparse storage keeps, per
# observation, the non-zero covariates (0-based column, value) and y apart.
# A cbind(events, nonevents) response becomes the rows' counts.
set_model_data.sgld_model_logistic <- function(model, X, y) {
  model <- drop_observation_fields(model)
  if (is.matrix(y)) {
    model$obs_events <- as.double(y[, 1])
    model$obs_nonevents <- as.double(y[, 2])
    y <- ifelse(y[, 1] >= y[, 2], 1, -1)
  }
  model$n <- as.double(nrow(X))
  model <- store_rows(model, X, y)   # R/design-sparse.R
  if (!model$sparse && identical(model$storage, "float")) model$zf <- float_copy(model$z)
  model
}

# A double vector's single-precision copy, as the raw bytes C reads as floats
# (native byte order), written in C (src/pages.c).
float_copy <- function(x) .Call(C_sgld_float_rows, as.double(x))

# ---- the model's contract (R/model.R) ------------------------------------------

model_capabilities.sgld_model_logistic <- function(model) {
  # the Laplace prior has a kink at its location
  utils::modifyList(NextMethod(), list(regression = TRUE,
                                smooth_likelihood = all(model$prior_type == 0L)))
}
model_family.sgld_model_logistic <- function(model) stats::binomial()
model_link.sgld_model_logistic <- function(model) "logit"
model_mean.sgld_model_logistic <- function(model, eta, W) stats::plogis(eta)
# bayes_R2(): p (1 - p), or n p (1 - p) with mu = n p for binomial counts
model_residual_variance.sgld_model_logistic <- function(model, mu, W, trials) {
  if (is.null(trials)) return(rowMeans(mu * (1 - mu)))
  rowMeans(mu * (1 - mu / rep(trials, each = nrow(mu))))
}
# events out of each row's trials: 1 unless the response gave counts
model_response_draws.sgld_model_logistic <- function(model, eta, W, newdata) {
  trials <- logistic_trials(model, newdata)
  matrix(stats::rbinom(length(eta), rep(trials, each = nrow(eta)), stats::plogis(eta)),
         nrow(eta))
}
# the response is the proportion of events: 1 for the event, 0 otherwise, or
# events / trials for a cbind(events, nonevents) response
model_observed.sgld_model_logistic <- function(model) {
  if (!is.null(model$obs_events))
    return(model$obs_events / (model$obs_events + model$obs_nonevents))
  as.double(NextMethod() == 1)
}

# Each row's binomial trials: of the training rows, or of `newdata` when its
# response is cbind(events, nonevents); 1 otherwise.
logistic_trials <- function(model, newdata) {
  if (is.null(newdata)) return(if (is.null(model$trials)) 1 else model$trials)
  resp <- if (!is.null(model$terms)) model$formula[[2L]]
  if (is.null(resp) || !all(all.vars(resp) %in% names(newdata))) return(1)
  y <- eval(resp, newdata, environment(model$formula))
  if (is.matrix(y)) rowSums(y) else 1
}

# held-out responses coded with the training labels (the event is
# labels[2]), or a cbind(events, nonevents) matrix as it is
response_like.sgld_model_logistic <- function(model, y) {
  if (anyNA(y)) abort("`newdata`: the response has missing values.")
  if (is.matrix(y)) {
    if (ncol(y) != 2L || !is.numeric(y) || any(y < 0))
      abort("`newdata`: the response must be cbind(events, nonevents).")
    return(y)
  }
  yy <- as.character(if (is.factor(y)) y else as.vector(y))
  unknown <- setdiff(unique(yy), model$labels)
  # numbers coded as training would code them (0/1 or -1/+1)
  if (length(unknown) && is.numeric(y) && all(y %in% c(0, 1))) return(2 * as.double(y) - 1)
  if (length(unknown) && is.numeric(y) && all(y %in% c(-1, 1))) return(as.double(y))
  if (length(unknown))
    abort("`newdata`: the response has value", if (length(unknown) > 1) "s", " ",
          paste0("'", utils::head(unknown, 3), "'", collapse = ", "),
          " not among the training classes (", paste0("'", model$labels, "'", collapse = ", "), ").")
  ifelse(yy == model$labels[2], 1, -1)
}
