#' Multilevel (mixed) models: group effects with lme4's formula syntax
#'
#' A generalised linear model with group effects, as `lme4::glmer()` and
#' rstanarm's `stan_glmer()` write it: `y ~ x + (1 + x | g)`. Any sampler
#' takes the model, or the formula itself with `data` and `family`
#' ([sgld_formula]): `sgld(Reaction ~ Days + (Days | Subject), lme4::sleepstudy)`.
#'
#' The random-effect terms are read by lme4's own parser
#' (`lme4::lFormula()`): `(1 | g)` a group intercept, `(1 + x | g)`
#' correlated intercept and slope, `(x || g)` the same uncorrelated, `(1 | a) +
#' (1 | b)` crossed groups, `(1 | a/b)` groups `b` nested in `a` (the terms
#' `(1 | a)` and `(1 | a:b)`). Families: `gaussian()` (identity link),
#' `binomial()` (logit; 0/1, a factor or `cbind(events, nonevents)`),
#' `poisson()` (log; exposures as an `offset()` term or the `offset` argument)
#' and the negative binomial (NB2, log link, as rstanarm's `stan_glmer.nb()`:
#' `"negbin"`, rstanarm's `neg_binomial_2()` or [MASS::negative.binomial()],
#' whose fixed `theta` is not used; offsets and weights as for poisson). Its
#' reciprocal dispersion \eqn{\phi}{phi} (variance \eqn{\mu + \mu^2/\phi}{mu + mu^2/phi})
#' is a parameter, reported as `reciprocal_dispersion` as in rstanarm.
#'
#' The priors are rstanarm's `stan_glmer()` defaults, so that
#' `sgld(f, data, family)` and `stan_glmer(f, data, family)` target the same
#' posterior: `prior_normal(0, 2.5, autoscale = TRUE)` on the coefficients,
#' `prior_normal(NULL, 2.5, autoscale = TRUE)` on the intercept at centred
#' predictors, `prior_exponential(1, autoscale = TRUE)` on the residual sd
#' \eqn{\sigma}{sigma} (gaussian) or on \eqn{\phi}{phi} (negative binomial,
#' where rstanarm does not rescale it: exponential(1)), and [prior_decov()]
#' on each term's covariance (see [prior_normal()] for autoscaling). As in
#' rstanarm's code for `stan_glmer.nb()`, the negative binomial's decov scale
#' is multiplied by \eqn{\phi}{phi} (the gaussian's by \eqn{\sigma}{sigma});
#' [prior_summary()][prior_summary.sgld_fit] prints them as rstanarm does.
#'
#' Group effects are sampled non-centred (\eqn{b = L z}{b = L z}, \eqn{L}{L}
#' the Cholesky factor of the term's covariance, \eqn{z}{z} standard normal a
#' priori), the sds on the log scale and the correlations through their
#' canonical partial correlations; draws are reported on rstanarm's scale:
#' the coefficients, `b[(Intercept) Subject:308]`, each term's covariance
#' `Sigma[Subject:Days,(Intercept)]`, and `sigma` (or `reciprocal_dispersion`).
#' Every parameter's draws
#' are kept. Methods: [fixef()][fixef.sgld_fit], `ranef()`, `coef()`,
#' `VarCorr()`, `ngrps()`, `sigma()`, `nobs()`, `predict()`,
#' `posterior_predict()`, `posterior_epred()`, `posterior_linpred()`
#' (`re.form`, new levels), `log_lik()`, `loo()`, `summary()`.
#'
#' `sgld()` with no settings samples a gaussian model exactly: the
#' variance parameters from their marginal posterior (the fixed and group
#' effects integrated out through a sparse Cholesky factor, as lme4 does),
#' the effects given them (`fit$auto$route` is `"collapsed"`). Binomial,
#' poisson and negative-binomial models, and `mala()`, take
#' Metropolis-adjusted Langevin steps (with two or more terms, each followed
#' by exact moves of the sds and the group effects).
#'
#' @param formula A formula with at least one random-effect term.
#' @param data A data frame holding every variable of `formula`, without
#'   missing values.
#' @param family `gaussian()`, `binomial()` or `poisson()` (an object, the
#'   function or its name) with its canonical link, or the negative binomial
#'   with the log link (`"negbin"`, `"neg_binomial_2"`, rstanarm's
#'   `neg_binomial_2()` or `MASS::negative.binomial(theta)`).
#' @param prior,prior_intercept,prior_aux As for [model_linear()]:
#'   [prior_normal()] for the coefficients and for the intercept (stated at
#'   centred predictors; `NULL` puts independent `prior` on the raw
#'   intercept too), [prior_exponential()] for \eqn{\sigma}{sigma} or the
#'   negative binomial's \eqn{\phi}{phi}.
#' @param prior_covariance [prior_decov()]: the prior of each term's covariance.
#' @param offset Known terms of the linear predictor, one per row, as in
#'   [glm()]: evaluated in `data` (e.g. `offset = log(exposure)`), added to
#'   any `offset()` term of the formula, and evaluated again in `newdata`
#'   by the prediction methods.
#' @param weights Prior weights, one per row, evaluated in `data` as in
#'   [glm()] (`weights = n_obs`). For a binomial response of proportions
#'   they are the numbers of trials (successes `y * weights`), as in
#'   [glm()], `lme4::glmer()` and rstanarm; otherwise each row's log
#'   likelihood is multiplied by its weight, as rstanarm documents its
#'   `weights`: integer weights give the posterior of the data with each row
#'   repeated that many times. For gaussian models this is not lme4's
#'   precision weight (row variance \eqn{\sigma^2 / w_i}{sigma^2 / w_i}):
#'   both give the same fixed and group effects given the variances, but
#'   here the weights count rows, so \eqn{\sigma}{sigma} is the sd of one
#'   row, as for `lmer()` on the rows repeated. (rstanarm 2.21.3's
#'   `stan_glm()` ignores gaussian weights in its sampling, measured in
#'   bench/glmm-weights.md; sgld follows its documentation and its
#'   `log_lik()`.) `log_lik()` and `loo()` of the training rows are
#'   weighted; autoscaled priors read the unweighted data, as rstanarm's.
#' @param subset Rows of `data` to fit, as in [glm()]: a logical
#'   expression evaluated in `data` (`subset = year > 2000`) or row
#'   numbers; levels of a grouping factor left without rows are dropped, as
#'   `lme4::glmer()` drops them.
#' @return A model of class `sgld_model_glmm`.
#' @seealso [sgld_formula] for the formula face; [fixef.sgld_fit] for the methods.
#' @examples
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'   m <- model_glmer(Reaction ~ Days + (Days | Subject), lme4::sleepstudy)
#'   m
#'   prior_summary(m)
#' }
#' @export
model_glmer <- function(formula, data, family = stats::gaussian(),
                        prior = prior_normal(0, 2.5, autoscale = TRUE),
                        prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                        prior_aux = prior_exponential(1, autoscale = TRUE),
                        prior_covariance = prior_decov(), offset = NULL, subset = NULL,
                        weights = NULL) {
  if (missing(formula)) abort("`formula` is missing: give y ~ x + (1 | g).")
  if (missing(data)) abort("`data` is missing: give the data frame of the formula's variables.")
  # `weights` is evaluated in `data` (then where the formula was made), as
  # glm() does, before `subset` picks the rows of both
  weights_expr <- substitute(weights)
  weights <- if (!is.null(weights_expr)) {
    if (!is.data.frame(data)) abort("`data` must be a data frame, not ", describe(data), ".")
    tryCatch(eval(weights_expr, data, environment(formula)), error = function(e)
      abort("`weights` cannot be evaluated on `data`: ", conditionMessage(e)))
  }
  subset_expr <- substitute(subset)
  if (!is.null(subset_expr)) {
    if (!is.data.frame(data)) abort("`data` must be a data frame, not ", describe(data), ".")
    keep <- check_subset(subset_expr, data, formula)   # R/design.R
    if (!is.null(weights)) {
      if (length(weights) != nrow(data))
        abort("`weights` must have one value per row of `data` (", nrow(data), "), not ",
              length(weights), ".")
      weights <- weights[keep]
    }
    data <- data[keep, , drop = FALSE]
    if (nrow(data) < 1L) abort("`subset` leaves no rows of `data`.")
  }
  kind <- formula_family(family)
  if (!inherits(formula, "formula")) abort("`formula` must be a formula, not ", describe(formula), ".")
  glmer_check_groups(formula, data)
  if (!is.null(prior_intercept)) check_coef_prior(prior_intercept, "prior_intercept")
  resolve <- function(X, y) glmer_priors(prior, prior_intercept, prior_aux, prior_covariance, X, y,
                                         kind)
  # `offset` is evaluated in `data`, then where the formula was made, as glm() does
  offset_expr <- substitute(offset)
  offset <- tryCatch(eval(offset_expr, data, environment(formula)), error = function(e)
    abort("`offset` cannot be evaluated on `data`: ", conditionMessage(e)))
  m <- model_glmm(formula, data, kind, priors = resolve, offset = offset, weights = weights)
  m$offset_expr <- if (!is.null(offset)) offset_expr
  m$weights_expr <- if (!is.null(weights)) weights_expr
  # as given (lme4's start refits the formula with them, R/auto-glmm.R)
  m$lme4_weights <- weights
  m$prior <- prior
  m$prior_intercept <- prior_intercept
  m$prior_aux <- if (kind %in% c("gaussian", "negbin")) prior_aux
  m$prior_covariance <- prior_covariance
  m$call <- match.call()
  m
}

# The bad inputs lme4 would take silently or answer obscurely, each named:
# a missing variable, NA in a grouping variable (lme4 drops the rows), a
# factor with many levels on the left of a bar (one coefficient per level
# per group).
glmer_check_groups <- function(formula, data) {
  if (!is.data.frame(data)) abort("`data` must be a data frame, not ", describe(data), ".")
  bars <- lme4::findbars(formula)
  if (is.null(bars)) abort("`formula` has no random-effect term such as (1 | g).")
  for (bar in bars) {
    term <- paste0("(", deparse1(bar), ")")
    for (v in all.vars(bar[[3]])) {
      if (!v %in% names(data))
        abort("`formula`: the term ", term, " groups by `", v, "`, which is not a column of ",
              "`data`.")
      na <- which(is.na(data[[v]]))
      if (length(na))
        abort("`data`: the grouping variable `", v, "` of ", term, " has ", length(na),
              " missing value", if (length(na) > 1) "s", " (first in row ", na[1], "); ",
              "remove those rows or give them a group.")
    }
    for (v in all.vars(bar[[2]])) {
      if (!v %in% names(data)) next   # named by model_glmm()'s check
      x <- data[[v]]
      if ((is.factor(x) || is.character(x)) && length(unique(x)) > 10)
        abort("`formula`: the term ", term, " gives every group one coefficient per level ",
              "of the factor `", v, "` (", length(unique(x)), " levels); put `", v, "` in ",
              "the fixed part, or group by it: (1 | ", v, ").")
    }
  }
  invisible()
}

#' @export
print.sgld_model_glmm <- function(x, ...) {
  cat("Multilevel model (", x$family, "), ", format(x$n, big.mark = ","), " rows\n", sep = "")
  cat("  formula: ", deparse1(x$formula), "\n", sep = "")
  if (!is.null(x$obs_weight))
    cat("  prior weights summing to ", format(sum(x$obs_weight)), "\n", sep = "")
  if (isTRUE(x$trials_from_weights)) cat("  trials: the weights\n")
  cat("  fixed effects: ", paste(x$coef_names, collapse = ", "), "\n", sep = "")
  for (k in seq_len(x$K))
    cat("  group effects: ", paste(x$cnms[[k]], collapse = ", "), " | ", x$group_names[k],
        " (", x$G[k], " groups)\n", sep = "")
  invisible(x)
}
