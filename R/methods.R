#' Posterior predictions, intervals and pointwise log likelihood
#'
#' The methods of rstantools' generics for fits of the regressions
#' ([model_linear()], [model_logistic()], [model_poisson()] and
#' [model_negbin()]), with rstanarm's meanings. Each returns one row per
#' posterior draw (all kept draws of every chain, chain after chain, or a random
#' subset of `ndraws` of them) and one column per observation of `newdata`
#' (the training data when `NULL`):
#' \describe{
#'   \item{`posterior_linpred()`}{the linear predictor \eqn{x^\top \beta}{x' beta}
#'     (with `transform = TRUE`, the same as `posterior_epred()`).}
#'   \item{`posterior_epred()`}{the expected response: \eqn{x^\top \beta}{x' beta}
#'     for the linear model, the probability of the event for the logistic one,
#'     the mean count \eqn{e^{x^\top \beta}}{exp(x' beta)} for the count models.}
#'   \item{`posterior_predict()`}{draws from the posterior predictive
#'     distribution: \eqn{N(x^\top \beta, \sigma^2)}{N(x' beta, sigma^2)}, 1
#'     for the event and 0 otherwise, or counts (Poisson or negative binomial).}
#'   \item{`log_lik()`}{the log likelihood of each observation under each draw;
#'     its row sums are the log likelihood of the data, and it is what
#'     `loo::loo()` and `loo::waic()` take. `loo(fit)` and `waic(fit)` call
#'     it. `loo(fit)` computes, in C and on threads, what
#'     `loo::loo(log_lik(fit), r_eff = loo::relative_eff(exp(log_lik(fit)),
#'     chain_id))` computes in R (the relative efficiency of each
#'     observation's draws over the chains, then Pareto-smoothed importance
#'     sampling), equal to it to rounding and several times faster; the
#'     result is loo's `psis_loo` object. Arguments of loo's own
#'     (`save_psis`, `is_method`, `cores`) hand the matrix to `loo::loo()`.}
#' }
#' `posterior_interval()` gives central intervals of the parameters from
#' quantiles of the draws (on the user's scale, e.g. `sigma2`), and
#' `predictive_interval()` central intervals of `posterior_predict()` for each
#' observation.
#'
#' The generics live in rstantools (`posterior_*`, `predictive_interval`,
#' `log_lik`, `prior_summary`, `bayes_R2`, `loo_R2`) and loo (`loo`, `waic`);
#' sgld imports and re-exports them, so `library(sgld)` alone is enough.
#' Every draw counts once: with a decaying learning rate, the step-weighted
#' estimates of [posterior_expectation()] may be preferable. The
#' matrices hold draws x observations numbers; for averages over the draws on
#' large data, [predict.sgld_fit()] needs memory only for its result.
#'
#' @param object,x A fit of a regression model by a
#'   sampler (not [sgd()] or [gd()], which give no posterior).
#' @param newdata A data frame with the formula's variables (for `log_lik()`,
#'   the response too), or a matrix for a model built from one; `NULL` for the
#'   training data.
#' @param ndraws `NULL` for every kept draw, or how many to take at random
#'   (without replacement; `set.seed()` makes the choice reproducible).
#' @param draws rstanarm's name for `ndraws`; give one or the other.
#' @param transform For `posterior_linpred()`: return the expected response
#'   instead of the linear predictor?
#' @param prob The probability mass of each central interval.
#' @param pars Names of the parameters, or `NULL` for all.
#' @param r_eff For `loo()`: the relative efficiency of the draws of each
#'   observation, or `NULL` to compute it from the chains (as
#'   `loo::relative_eff()` does).
#' @param ... For `loo()` and `waic()`, passed to loo's matrix methods; for
#'   the others, not used.
#' @return A matrix: draws x observations, parameters x 2 (`posterior_interval`)
#'   or observations x 2 (`predictive_interval`); for `loo()` and `waic()`,
#'   loo's objects.
#' @examples
#' set.seed(1)
#' fit <- sgld(model_linear(y ~ x, data = handout[1:500, ]))
#' posterior_interval(fit)
#' dim(posterior_predict(fit, newdata = handout[1:5, ], ndraws = 100))
#' rowSums(log_lik(fit, ndraws = 3))
#' loo(fit)
#' @name posterior_predict.sgld_fit
NULL

#' @rdname posterior_predict.sgld_fit
#' @export
posterior_linpred.sgld_fit <- function(object, transform = FALSE, newdata = NULL,
                                       ndraws = NULL, draws = NULL, ...) {
  object <- with_group_options(object, ...)   # re.form (R/model-glmm-methods.R)
  ndraws <- ndraws_or_draws(ndraws, draws)
  check_flag(transform, "transform")
  W <- prediction_draws(object, ndraws, "posterior_linpred()")
  # (R/predict.R: x'beta and its expected response for the regressions)
  model_prediction_draws(object$model, W, newdata, if (transform) "response" else "link")$mean
}

#' @rdname posterior_predict.sgld_fit
#' @export
posterior_epred.sgld_fit <- function(object, newdata = NULL, ndraws = NULL, draws = NULL,
                                     ...) {
  object <- with_group_options(object, ...)
  ndraws <- ndraws_or_draws(ndraws, draws)
  W <- prediction_draws(object, ndraws, "posterior_epred()")
  model_prediction_draws(object$model, W, newdata, "response")$mean
}

#' @rdname posterior_predict.sgld_fit
#' @export
posterior_predict.sgld_fit <- function(object, newdata = NULL, ndraws = NULL, draws = NULL,
                                       ...) {
  object <- with_group_options(object, ...)
  ndraws <- ndraws_or_draws(ndraws, draws)
  model_posterior_predict(object$model, object, newdata, ndraws)
}

# draws x observations draws of the response (R/model.R: model_response_draws())
model_posterior_predict <- function(model, object, newdata, ndraws) {
  UseMethod("model_posterior_predict")
}

model_posterior_predict.default <- function(model, object, newdata, ndraws) {
  W <- prediction_draws(object, ndraws, "posterior_predict()")
  eta <- linpred_draws(model, W, newdata)
  out <- model_response_draws(model, eta, W, newdata)
  dimnames(out) <- dimnames(eta)
  out
}

#' @rdname posterior_predict.sgld_fit
#' @export
log_lik.sgld_fit <- function(object, newdata = NULL, ndraws = NULL, draws = NULL, ...) {
  check_dots_empty(...)
  ndraws <- ndraws_or_draws(ndraws, draws)
  model_log_lik(object$model, object, newdata, ndraws)
}

# log_lik() for each kind of model: a method per model class, beside the
# model's own file; the default is the regressions' (each row's log
# likelihood from the model's C table, src/model_contract.c).
model_log_lik <- function(model, object, newdata, ndraws) UseMethod("model_log_lik")

model_log_lik.default <- function(model, object, newdata, ndraws) {
  W <- prediction_draws(object, ndraws, "log_lik()")
  if (!is.null(newdata)) {
    if (is.null(model$terms))
      abort("`newdata`: the log likelihood of new data needs a model built from a formula, ",
            "whose response it can read; this one was built from a matrix.")
    if (!is.data.frame(newdata)) abort("`newdata` must be a data frame.")
    need <- setdiff(all.vars(model$formula[[2L]]), names(newdata))
    if (length(need))
      abort("`newdata` has no column named ", paste0("'", need, "'", collapse = ", "),
            ": the response, which the log likelihood needs.")
  }
  # the training rows as the model holds them (in memory or on a file)
  out <- model_loglik_rows(if (is.null(newdata)) model else held_out_model(model, newdata), W)
  if (!is.null(newdata) || is.null(model$file))
    colnames(out) <- rownames(design_for_newdata(model, newdata))
  out
}

#' @rdname posterior_predict.sgld_fit
#' @export
posterior_interval.sgld_fit <- function(object, prob = 0.9, pars = NULL, ...) {
  check_dots_empty(...)
  check_number(prob, "prob", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  need_draws(object, "posterior_interval()")
  x <- as.matrix.sgld_fit(object)   # with sigma for model_linear(), as rstanarm's
  if (!is.null(pars)) {
    # a parameter whose draws the fit did not store has no quantiles
    unstored <- setdiff(intersect(pars, object$model$names), colnames(x))
    if (is.character(pars) && length(unstored))
      abort("`pars`: the fit stored no draws of ", name_list(unstored), " (",
            if (is.null(object$storage)) "`pars` of the run" else object$storage,
            "); their means and sds are in summary(). Rerun with `pars = TRUE`, or `pars` ",
            "naming them, for their intervals.")
    if (!is.character(pars) || !all(pars %in% colnames(x)))
      abort("`pars` must name parameters of the fit (",
            paste0("'", colnames(x), "'", collapse = ", "), "); ",
            paste0("'", setdiff(pars, colnames(x)), "'", collapse = ", "), " is not one.")
    x <- x[, pars, drop = FALSE]
  } else if (!all_kept(object)) {
    message("posterior_interval(): intervals of the ", ncol(x), " parameters whose draws ",
            "were stored, of ", object$model$d, "; rerun with `pars = TRUE` for all.")
  }
  central_quantiles(x, prob)
}

#' @rdname posterior_predict.sgld_fit
#' @export
predictive_interval.sgld_fit <- function(object, newdata = NULL, ndraws = NULL,
                                         prob = 0.9, draws = NULL, ...) {
  object <- with_group_options(object, ...)
  ndraws <- ndraws_or_draws(ndraws, draws)
  check_number(prob, "prob", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  need_method(object, "predictive_interval()")
  yrep <- posterior_predict.sgld_fit(object, newdata = newdata, ndraws = ndraws)
  central_quantiles(yrep, prob)
}

#' @rdname posterior_predict.sgld_fit
#' @export
loo.sgld_fit <- function(x, ..., r_eff = NULL) {
  # the log likelihood and PSIS on the idle processors (R/loo.R)
  threads <- loo_threads()
  old <- options(sgld.threads = threads)
  on.exit(options(old))
  ll <- log_lik.sgld_fit(x)
  chain <- chain_of_draws(x)
  # loo's own options (save_psis, is_method, cores): its matrix method
  if (length(list(...))) {
    if (is.null(r_eff)) r_eff <- fast_psis_loo(ll, chain)$pointwise[, "r_eff"]
    return(loo::loo(ll, r_eff = r_eff, ...))
  }
  # PSIS and the relative efficiencies in C (R/loo.R, src/loo.c)
  psis_loo_object(fast_psis_loo(ll, chain, r_eff), dim(ll))
}

#' @rdname posterior_predict.sgld_fit
#' @export
waic.sgld_fit <- function(x, ...) loo::waic(log_lik.sgld_fit(x), ...)

# ---- shared by the prediction methods ---------------------------------------

# rstanarm calls the number of draws `draws`, posterior's and rstantools'
# generics `ndraws`: either is taken, not both.
ndraws_or_draws <- function(ndraws, draws) {
  if (is.null(draws)) return(ndraws)
  if (!is.null(ndraws))
    abort("give `ndraws` or `draws` (rstanarm's name for it), not both (`ndraws` = ",
          describe(ndraws), ", `draws` = ", describe(draws), ").")
  check_count(draws, "draws", lower = 1)
  # so that a later check of the count names the argument the user wrote
  structure(draws, argument = "draws")
}

# Only a sampler's fit of a regression model has draws to predict from.
need_draws <- function(object, what) {
  regression_only(object, what)
  if (!is_sampler(object))
    abort(what, " needs posterior draws; `object` is a run of ", object$method,
          "(), an optimiser. Use sgld() or another sampler.")
  if (ndraws(object) == 0) abort("the fit has no kept draws.")
  require_stored_draws(object, what)   # pars = FALSE: no parameter stored
  invisible(object)
}

# The draws to predict with, on the sampler's scale: all, or `ndraws` at random.
prediction_draws <- function(object, ndraws, what) {
  need_draws(object, what)
  require_all_draws(object, what)
  W <- as.matrix(object, scale = "sampler")
  if (!is.null(ndraws)) {
    arg <- if (is.null(attr(ndraws, "argument"))) "ndraws" else attr(ndraws, "argument")
    check_count(ndraws, arg, lower = 1, upper = nrow(W))
    W <- W[sort(sample.int(nrow(W), as.vector(ndraws))), , drop = FALSE]
  }
  W
}

# The chain of each row of as.matrix(fit).
chain_of_draws <- function(fit) rep(seq_along(fit$draws), each = ndraws(fit))

# draws x observations linear predictors
linpred_draws <- function(model, W, newdata) {
  X <- design_for_newdata(model, newdata)
  eta <- W[, seq_len(model$p), drop = FALSE] %*% t(X)
  off <- attr(X, "offset")
  if (!is.null(off)) eta <- eta + rep(off, each = nrow(eta))
  dimnames(eta) <- list(NULL, rownames(X))
  eta
}

expected_response <- function(model, eta, W) {
  eta[] <- model_mean(model, eta, W)
  eta
}

# Quantiles of each column at (1 - prob) / 2 and (1 + prob) / 2, one row per column.
central_quantiles <- function(x, prob) {
  p <- c((1 - prob) / 2, (1 + prob) / 2)
  out <- t(apply(x, 2, stats::quantile, probs = p, names = FALSE))
  if (ncol(x) == 1L) out <- matrix(out, 1L)
  dimnames(out) <- list(colnames(x), paste0(format(100 * p, trim = TRUE, drop0trailing = TRUE), "%"))
  out
}

# ---- the methods of base R's generics ----------------------------------------

#' Methods for fitted models: fitted values, residuals, intervals and more
#'
#' The methods that [glm()] and rstanarm users reach for, with Bayesian
#' meanings:
#' \describe{
#'   \item{`fitted()`}{the posterior mean of the expected response of each
#'     training observation (the mean over draws of `posterior_epred()`),
#'     computed by [predict.sgld_fit()] without the draws x observations matrix,
#'     named by the rows of the data (as `residuals()` and `predict()`).}
#'   \item{`residuals()`}{the response minus `fitted()` (for the logistic
#'     model the proportion of events: 1 for the event, 0 otherwise, or
#'     events / trials for a `cbind(events, nonevents)` response).}
#'   \item{`confint()`}{central posterior intervals from quantiles of the draws
#'     (equal-tailed credible intervals), not normal approximations.}
#'   \item{`logLik()`}{the log likelihood of the training data at the posterior
#'     mean of the parameters (with the auxiliary one, unlike `coef(fit)`),
#'     with `df` the number of parameters; a plug-in value
#'     for reference. For comparing models use `loo::loo(fit)`.}
#'   \item{`nobs()`, `formula()`, `family()`}{the number of observations,
#'     the model's formula (for models built from one) and the family:
#'     [gaussian()] for [model_linear()], [binomial()] for [model_logistic()],
#'     [poisson()] for [model_poisson()], and for [model_negbin()] a `family`
#'     object named `"neg_binomial_2"` with the log link.}
#'   \item{`as.data.frame()`}{the draws of every chain, one row per draw
#'     (chain after chain) and one column per parameter on the user's scale
#'     (for [model_linear()], `sigma` too, as `as.matrix()` gives).}
#'   \item{`sigma()`}{for [model_linear()], the posterior median of the
#'     residual sd \eqn{\sigma = \sqrt{\sigma^2}}{sigma = sqrt(sigma2)}, as
#'     rstanarm's `sigma()` (for [sgd()] and [gd()], the square root of the
#'     final `sigma2`). `summary()`, `as.matrix()`, `as.array()` and
#'     posterior's `as_draws()` report `sigma` beside `sigma2`; `coef()` and
#'     `vcov()` hold the coefficients only, as rstanarm's.}
#'   \item{`coef(summary(fit))`}{the summary's statistics as a matrix.}
#'   \item{`tidy()`, `glance()`}{(generics' methods, registered when the
#'     generics package is loaded, as with broom) one row per parameter with its
#'     posterior mean, sd and optionally a central interval; one row describing
#'     the run.}
#' }
#' `df.residual()` stops: residual degrees of freedom have no meaning for
#' posterior draws.
#'
#' @param object,x An `sgld_fit` (for `coef()`, its summary).
#' @param parm Parameters, by name or position; all by default.
#' @param level,conf.level Probability of each central interval.
#' @param conf.int Add `conf.low` and `conf.high` to `tidy()`?
#' @param row.names,optional Not used (for the generic).
#' @param ... Not used.
#' @examples
#' set.seed(1)
#' fit <- sgld(model_linear(y ~ x, data = handout), lr = 2e-8, batch_size = 100,
#'             iter = 20000, thin = 20)
#' confint(fit)
#' head(fitted(fit))
#' coef(summary(fit))
#' @importFrom stats confint fitted residuals nobs formula family logLik df.residual na.fail
#' @name sgld_fit_methods
NULL

# (the model's declaration of the methods it answers: R/capabilities.R)
regression_only <- function(object, what) need_method(object, what)

#' @rdname sgld_fit_methods
#' @export
fitted.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  regression_only(object, "fitted()")
  predict.sgld_fit(object, type = "response")
}

#' @rdname sgld_fit_methods
#' @export
residuals.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  regression_only(object, "residuals()")
  mu <- fitted.sgld_fit(object)   # (stops for a model on a file)
  model_observed(object$model) - mu
}

#' @rdname sgld_fit_methods
#' @export
confint.sgld_fit <- function(object, parm, level = 0.95, ...) {
  check_dots_empty(...)
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  if (!is_sampler(object))
    abort("confint() needs posterior draws; `object` is a run of ", object$method,
          "(), an optimiser.")
  if (ndraws(object) == 0) abort("the fit has no kept draws.")
  require_stored_draws(object, "confint()")
  x <- as.matrix.sgld_fit(object)   # with sigma for model_linear()
  if (!missing(parm)) {
    ok <- if (is.numeric(parm)) all(parm %in% seq_len(ncol(x))) else
          is.character(parm) && all(parm %in% colnames(x))
    if (!ok) abort("`parm` must be names or positions of the fit's parameters (",
                   paste0("'", colnames(x), "'", collapse = ", "), ").")
    x <- x[, parm, drop = FALSE]
  }
  out <- central_quantiles(x, level)
  a <- c((1 - level) / 2, (1 + level) / 2)
  # stats::confint's column names, e.g. "2.5 %"
  colnames(out) <- paste(format(100 * a, trim = TRUE, scientific = FALSE, digits = 3), "%")
  out
}

#' @rdname sgld_fit_methods
#' @export
logLik.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  model <- object$model
  w <- to_sampler_scale(model, matrix(parameter_means(object), 1L))
  ll <- log_posterior(model, as.vector(w))$loglik
  structure(ll, df = model$d, nobs = nobs.sgld_fit(object), class = "logLik")
}

#' @rdname sgld_fit_methods
#' @export
nobs.sgld_fit <- function(object, ...) {
  n <- object$model$n
  if (is.null(n)) abort("this model does not record a number of observations.")
  if (n <= .Machine$integer.max) as.integer(n) else n
}

#' @rdname sgld_fit_methods
#' @export
formula.sgld_fit <- function(x, ...) {
  if (is.null(x$model$formula))
    abort("the model was built from a matrix, so it has no formula.")
  x$model$formula
}

#' @rdname sgld_fit_methods
#' @export
family.sgld_fit <- function(object, ...) {
  need_method(object, "family()")
  model_family(object$model)
}

#' @rdname sgld_fit_methods
#' @export
df.residual.sgld_fit <- function(object, ...) {
  abort("df.residual() has no meaning for posterior draws: there are no residual ",
        "degrees of freedom to report. Use nobs(), or loo::loo() for model comparison.")
}

#' @rdname sgld_fit_methods
#' @export
as.data.frame.sgld_fit <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots_empty(...)
  data.frame(as.matrix.sgld_fit(x), check.names = FALSE)
}

#' @rdname sgld_fit_methods
#' @importFrom stats sigma
#' @export
sigma.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  own <- model_fit_sigma(object$model, object)
  if (!is.null(own)) return(own)
  # the residual sd is one of the model's derived quantities (model_derived())
  derived <- function(x) {
    extra <- model_derived(object$model, x)
    if (!is.null(extra) && "sigma" %in% colnames(extra)) extra[, "sigma"]
  }
  if (is.null(derived(object$last)))
    abort("sigma() is the residual sd of a Gaussian model (model_linear()); this fit is of ",
          class(object$model)[1], ".")
  if (!is_sampler(object)) return(mean(derived(object$last)))
  s <- if (ndraws(object) > 0) derived(pooled(object))
  if (is.null(s))
    abort("sigma() needs the draws of sigma2, which this fit did not store (`pars`).")
  stats::median(s)
}

#' @rdname sgld_fit_methods
#' @export
coef.summary.sgld_fit <- function(object, ...) object$statistics

#' @rdname sgld_fit_methods
#' @exportS3Method generics::tidy
tidy.sgld_fit <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
  check_dots_empty(...)
  check_flag(conf.int, "conf.int")
  x_draws <- as.matrix.sgld_fit(x)   # with sigma for model_linear()
  out <- data.frame(term = colnames(x_draws), estimate = colMeans(x_draws),
                    std.error = apply(x_draws, 2, stats::sd), row.names = NULL)
  if (conf.int) {
    ci <- confint.sgld_fit(x, level = conf.level)
    out$conf.low <- unname(ci[, 1])
    out$conf.high <- unname(ci[, 2])
  }
  out
}

#' @rdname sgld_fit_methods
#' @exportS3Method generics::glance
glance.sgld_fit <- function(x, ...) {
  check_dots_empty(...)
  data.frame(algorithm = if (is.null(x$rule)) toupper(x$method) else x$rule,
             chains = length(x$draws), draws = ndraws(x) * length(x$draws),
             nobs = if (is.null(x$model$n)) NA_real_ else x$model$n,
             iterations = x$settings$iter, time = x$time)
}
