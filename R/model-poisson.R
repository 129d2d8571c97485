#' Bayesian Poisson regression
#'
#' The model \eqn{y_i \sim \mathrm{Poisson}(e^{\eta_i})}{y_i ~ Poisson(exp(eta_i))},
#' \eqn{\eta_i = x_i^\top \beta + o_i}{eta_i = x_i' beta + o_i}, with the log link,
#' an optional offset \eqn{o_i}{o_i} (the logarithm of each row's exposure,
#' such as `offset = log(Holders)` or a term `offset(log(time))` in the
#' formula) and normal priors on the coefficients, by default rstanarm's
#' `stan_glm()` default: each coefficient \eqn{N(0, (2.5 / s_j)^2)}{N(0, (2.5 / s_j)^2)}
#' (\eqn{s_j}{s_j} the sd of column \eqn{j}{j} of the design) and the
#' intercept at centred predictors \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}; see
#' [prior_normal()] and [prior_summary()][prior_summary.sgld_fit].
#'
#' The response must be counts: non-negative whole numbers. As with
#' [model_linear()] there is a formula face (with `weights`, `offset` and
#' `subset` as in [glm()]) and a matrix face, to which no intercept is added.
#' The pointwise log likelihood (for [log_lik()][posterior_predict.sgld_fit]
#' and `loo::loo()`) includes \eqn{-\log y_i!}{-log y_i!}, as
#' [dpois()] does.
#'
#' @inheritParams model_logistic
#' @param y The counts, for the matrix face.
#' @param prior Prior of the coefficients: [prior_normal()] (the default,
#'   `prior_normal(0, 2.5, autoscale = TRUE)`).
#' @return An object of class `sgld_model_poisson` (and `sgld_model`).
#' @section Starting values:
#' Unless `init` is given, samplers start every chain at the prior's centre
#' (the intercept where the centred intercept is at its prior's centre).
#' @seealso [model_negbin()] for counts more variable than Poisson.
#' @examples
#' m <- model_poisson(Claims ~ District + Group + Age, data = MASS::Insurance,
#'                    offset = log(Holders))
#' m
#' @export
model_poisson <- function(x, ...) UseMethod("model_poisson")

#' @rdname model_poisson
#' @export
model_poisson.formula <- function(x, data, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                  prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                  subset, weights, offset, na.action = na.fail, ...) {
  check_dots_empty(...)
  design <- design_from_formula(x, data, frame_extras(match.call()), na.action)
  y <- count_response(design$y, "the response of `x`")
  count_model_parts(new_model_poisson(design$X, y, prior, prior_intercept), design)
}

#' @rdname model_poisson
#' @export
model_poisson.default <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                  prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                  ...) {
  check_dots_empty(...)
  x <- check_design_matrix(x, keep_sparse = TRUE)
  check_response_length(y, x)
  new_model_poisson(x, count_response(y, "`y`"), prior, prior_intercept)
}

new_model_poisson <- function(X, y, prior, prior_intercept) {
  m <- new_count_model("poisson", X, y, prior, prior_intercept)
  m$names <- m$sampler_names <- colnames(X)
  m$d <- ncol(X)
  class(m) <- c("sgld_model_poisson", "sgld_model")
  set_model_data(m, X, y)
}

# A count response as doubles, or an error naming `what` and the rule.
count_response <- function(y, what) {
  if (is.matrix(y) || !(is.numeric(y) || is.logical(y)))
    abort(what, " must be counts (a numeric vector), not ", class(y)[1], ".")
  bad <- which(is.na(y) | !is.finite(y) | y < 0 | y != round(y))
  if (length(bad))
    abort(what, " must be counts, non-negative whole numbers; it has ", exact_value(y[bad[1]]),
          " at position ", bad[1], ".")
  # beyond 2^53 a double no longer holds every whole number: such a count
  # is a value read wrongly (or a sum that overflowed), not a count
  big <- which(y > 2^53)
  if (length(big))
    abort(what, " must be counts a double holds exactly (at most 2^53 = ",
          "9,007,199,254,740,992); it has ", exact_value(y[big[1]]), " at position ",
          big[1], ".")
  as.double(y)
}

# A number shown with as many digits as it takes to tell it from its
# neighbours (1 + 1e-12 is "1.000000000001", not "1").
exact_value <- function(v) {
  if (!is.numeric(v) || !is.finite(v)) return(format(v))
  for (digits in 7:17) {
    shown <- format(v, digits = digits)
    if (as.numeric(shown) == v) return(shown)
  }
  shown
}

# The fields the count models share: sizes and the normal coefficient prior.
new_count_model <- function(type, X, y, prior, prior_intercept) {
  n <- nrow(X)
  if (n < 2L) abort("`data` must have at least 2 observations, not ", n, ".")
  pr <- resolve_coef_prior(prior, prior_intercept, X)
  if (any(pr$type != 0L))
    abort("`prior` and `prior_intercept` must be made by prior_normal() for model_", type,
          "().")
  # every count 0: the data push the log rate to -Inf (the intercept, or
  # log phi of a negative binomial, has no finite mode); the sampler would
  # only diverge or crawl
  if (all(y == 0))
    abort("the response is 0 in every row: a ", if (type == "negbin") "negative-binomial"
          else "Poisson", " regression needs some non-zero counts (with none the rate's ",
          "estimate is 0 and its logarithm has no finite value).")
  check_rank(X)  # R/design.R
  # a sparse design with at most a quarter non-zeros keeps its rows sparse
  # (src/rows.h): the same draws as dense rows, in O(non-zeros) memory
  sparse <- is_sparse_design(X) && design_density(X) <= 0.25
  c(list(type = type, p = ncol(X), n = as.double(n), sparse = as.integer(sparse)),
    coef_prior_fields(pr),
    list(prior = prior, prior_intercept = prior_intercept,
         default_init = prior_centre_point(pr)))
}

# The formula's parts, with the case weights and offsets of the rows.
count_model_parts <- function(model, design) {
  m <- add_formula_parts(model, design)
  m$obs_weight <- design$weights
  m$obs_offset <- design$offset
  m
}

print_count_model <- function(x, what) {
  cat(what, ": ", format(x$n, big.mark = ","), " observations, ", x$p, " coefficient",
      if (x$p > 1) "s", "\n", sep = "")
  if (!is.null(x$formula)) cat("Formula: ", deparse(x$formula), "\n", sep = "")
  print_observation_fields(x)
  print_coef_priors(x)
}

# The coefficients' priors as the model holds them: as given, and the
# adjusted scales where autoscaled (prior_summary() has every row).
print_coef_priors <- function(x) {
  cat("Prior: ")
  print(x$prior)
  if (!is.null(x$prior_intercept) && !is.null(x$prior_centre)) {
    cat("Intercept (centred predictors): ")
    print(x$prior_intercept)
  }
  if (any(!is.na(x$prior_adjusted)))
    cat("(autoscaled to the data: see prior_summary())\n")
}

#' @export
print.sgld_model_poisson <- function(x, ...) {
  print_count_model(x, "Bayesian Poisson regression (log link)")
  invisible(x)
}

model_capabilities.sgld_model_poisson <- function(model) {
  utils::modifyList(NextMethod(), list(regression = TRUE, smooth_likelihood = TRUE))
}
model_family.sgld_model_poisson <- function(model) stats::poisson()
model_link.sgld_model_poisson <- function(model) "log"
model_mean.sgld_model_poisson <- function(model, eta, W) exp(eta)
# bayes_R2(): the variance is the mean
model_residual_variance.sgld_model_poisson <- function(model, mu, W, trials) rowMeans(mu)
model_response_draws.sgld_model_poisson <- function(model, eta, W, rows) {
  matrix(stats::rpois(length(eta), exp(eta)), nrow(eta))
}
response_like.sgld_model_poisson <- function(model, y) count_response(y, "`newdata`: the response")
