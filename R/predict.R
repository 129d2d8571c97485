#' Predictions from a fit
#'
#' Predictions for new data (or the training data) that average over the
#' posterior draws. For [model_logistic()]: `type = "response"` gives the
#' posterior mean of the predictive probability of the event, `"link"` the
#' posterior mean of the linear predictor, `"class"` the label of the more
#' probable class. For [model_linear()]: the posterior mean of
#' \eqn{x^\top \beta}{x' beta}. For [model_poisson()] and [model_negbin()]:
#' `"response"` the posterior mean of the expected count
#' \eqn{e^{x^\top \beta}}{exp(x' beta)} (offset included), `"link"` that of
#' the linear predictor.
#'
#' For [model_mixture()]: the posterior predictive density at each value
#' of `newdata` (a numeric vector), the average over the draws of
#' \eqn{\frac12 N(x; \theta_1, \sigma_x^2) + \frac12 N(x; \theta_1 + \theta_2, \sigma_x^2)}{1/2 N(x; theta_1, sigma_x^2) + 1/2 N(x; theta_1 + theta_2, sigma_x^2)}.
#' [model_ica()] has no prediction: its sources are identified only up to
#' order and sign, which can change from draw to draw, so their average has no
#' meaning (see [ica_unmixing()]).
#'
#' For [sgd()] and [gd()] fits the prediction is that of the final iterate.
#'
#' The computation is in C, blocked over draws: beyond the result it needs a
#' list of the design's non-zeros (at most 12 bytes each) and a few hundred
#' kilobytes, whatever the number of draws; the rows x draws matrix only when
#' `draws = TRUE` asks for it. For the
#' draws themselves, see also [posterior_predict.sgld_fit()].
#'
#' @param object An `sgld_fit`.
#' @param newdata A data frame with the variables of the model's formula (or,
#'   for a model built from a matrix, a matrix with the same columns; for
#'   [model_mixture()], a numeric vector); `NULL` for the training data.
#'   Factor levels not seen in training are an error.
#' @param type `"response"`, `"link"` or `"class"`.
#' @param draws Return the prediction for every kept draw (a matrix with one
#'   column per draw) instead of its average?
#' @param ndraws `NULL` to use every kept draw, or how many to choose at random
#'   (without replacement; `set.seed()` makes the choice reproducible).
#' @param threads Number of OpenMP threads sharing the rows; the results are
#'   the same for any number. The default is `getOption("sgld.threads", 1)`.
#' @param interval For the regressions' samplers' fits, as in [predict.lm()]:
#'   `"none"` (the default), `"confidence"` for a central credible interval
#'   of the expected response (or, with `type = "link"`, of the linear
#'   predictor): quantiles over the draws of [posterior_epred()][posterior_predict.sgld_fit]
#'   (or `posterior_linpred()`); or `"prediction"` for a central interval of
#'   a new observation: quantiles of `posterior_predict()`'s draws (random:
#'   `set.seed()` makes them reproducible).
#' @param level Probability of each interval.
#' @param se.fit Also return the posterior sd of the prediction?
#' @param ... Not used.
#' @return A vector with one prediction per row of `newdata` (a factor for
#'   `"class"`), or with `draws = TRUE` a matrix of rows x draws. With an
#'   `interval`, a matrix with columns `fit` (the posterior mean, as without
#'   it), `lwr` and `upr`, as [predict.lm()]. With `se.fit = TRUE`, a list
#'   as [predict.glm()]'s: `fit` (the vector or matrix above), `se.fit` (the
#'   posterior sd over the draws of the expected response, or of the linear
#'   predictor for `type = "link"`) and `residual.scale` (the posterior mean
#'   of \eqn{\sigma}{sigma} for [model_linear()], 1 for the others).
#' @export
predict.sgld_fit <- function(object, newdata = NULL, type = c("response", "link", "class"),
                             draws = FALSE, ndraws = NULL,
                             threads = getOption("sgld.threads", 1L),
                             interval = c("none", "confidence", "prediction"), level = 0.95,
                             se.fit = FALSE, ...) {
  object <- with_group_options(object, ...)   # re.form (R/model-glmm-methods.R)
  check_count(threads, "threads", lower = 1, upper = 1024)
  type <- check_choice(type, c("response", "link", "class"), "type")
  interval <- check_choice(interval, c("none", "confidence", "prediction"), "interval")
  check_flag(draws, "draws")
  check_flag(se.fit, "se.fit")
  if (interval != "none" || se.fit)
    return(predict_interval(object, newdata, type, interval, level, se.fit, draws, ndraws,
                            threads))
  model_predict(object$model, object, newdata, type, draws, ndraws, threads)
}

# predict() with an interval or standard errors: quantiles and sds over the
# draws of each row's prediction (the rows x draws matrix of
# predict(draws = TRUE)), or of posterior_predict() for new observations.
predict_interval <- function(object, newdata, type, interval, level, se.fit, draws, ndraws,
                             threads) {
  what <- "predict() with `interval` or `se.fit`"
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  if (draws) abort("`draws = TRUE` returns every draw's prediction; an `interval` or ",
                   "`se.fit` summarises them: give one or the other.")
  if (type == "class") abort("`type` = \"class\" has no interval or standard error; use ",
                             "type = \"response\".")
  if (interval == "prediction" && type == "link")
    abort("`interval` = \"prediction\" is an interval of a new observation, on the ",
          "response's scale: use type = \"response\" (or interval = \"confidence\" for ",
          "the linear predictor).")
  need_draws(object, what)
  require_all_draws(object, what)
  # the draws are chosen here, once, so that the fit, the interval and se.fit
  # (and posterior_predict() with the same seed) use the same ones
  W <- prediction_draws(object, ndraws, what)
  pred <- model_prediction_draws(object$model, W, newdata, type)
  mu <- pred$mean
  fit <- colMeans(mu)
  if (interval != "none") {
    spread <- if (interval == "confidence") mu else pred$replicate()
    q <- central_quantiles(spread, level)
    fit <- cbind(fit = fit, lwr = q[, 1], upr = q[, 2])
    rownames(fit) <- colnames(mu)
  }
  if (!se.fit) return(fit)
  # the residual sd of a Gaussian model (model_derived(): model_linear()'s sigma)
  extra <- model_derived(object$model, pooled(object))
  sigma <- if (!is.null(extra) && "sigma" %in% colnames(extra)) mean(extra[, "sigma"]) else 1
  list(fit = fit, se.fit = apply(mu, 2, stats::sd), residual.scale = sigma)
}

# The draws x rows matrix of each draw's prediction (`mean`: the linear
# predictor for type = "link", else the expected response), and a function
# that draws one new observation per entry (`replicate`), for predict()'s
# intervals and posterior_epred() / posterior_linpred(); the default is the
# regressions'.
model_prediction_draws <- function(model, W, newdata, type) UseMethod("model_prediction_draws")

model_prediction_draws.default <- function(model, W, newdata, type) {
  eta <- linpred_draws(model, W, newdata)
  list(mean = if (type == "link") eta else expected_response(model, eta, W),
       replicate = function() model_response_draws(model, eta, W, newdata))
}

# predict() for each kind of model; the default is the regressions'
model_predict <- function(model, object, newdata, type, draws, ndraws, threads) {
  UseMethod("model_predict")
}

# The fit's draws for predict(), after the checks every model shares.
predict_draws_of <- function(object, ndraws) {
  if (ndraws(object) == 0) abort("the fit has no kept draws to predict from.")
  if (is_sampler(object)) require_all_draws(object, "predict()")
  draws_to_predict_with(object, ndraws)
}

model_predict.default <- function(model, object, newdata, type, draws, ndraws, threads) {
  need_method(object, "predict()")
  use <- predict_draws_of(object, ndraws)
  link <- model_link(model)
  if (link != "logit" && type == "class") abort("`type` = \"class\" is for logistic models.")
  X <- design_for_newdata(model, newdata)   # with the rows' offsets, if any
  off <- attr(X, "offset")
  storage.mode(X) <- "double"
  inverse_link <- if (type == "link") "identity" else link
  out <- .Call(C_sgld_predict, X, use$chains, use$pick, off, inverse_link, draws,
               as.integer(threads))
  if (type == "class") {
    cls <- function(p) factor(model$labels[1 + (p > 0.5)], levels = model$labels)
    out <- if (draws) matrix(as.character(cls(out)), nrow(out)) else cls(out)
  }
  # named by the rows of the data, as predict.glm()'s
  if (draws) rownames(out) <- rownames(X) else names(out) <- rownames(X)
  out
}

# The draws predict() uses: the chains as they are (no pooled copy; their first
# columns are the coefficients, the same on the user's and the sampler's
# scale) and the 1-based pooled indices of a random subset, or NULL for all;
# an optimiser's final iterate (as coef()).
draws_to_predict_with <- function(object, ndraws) {
  if (!is_sampler(object)) {
    if (!is.null(ndraws)) abort("`ndraws` is for samplers' fits; ", object$method,
                                "() predicts from its final iterate.")
    w <- colMeans(to_sampler_scale(object$model, object$last))
    return(list(chains = list(matrix(w, 1L)), pick = NULL))
  }
  total <- ndraws(object) * length(object$draws)
  pick <- NULL
  if (!is.null(ndraws)) {
    check_count(ndraws, "ndraws", lower = 1, upper = total)
    pick <- as.double(sort(sample.int(total, ndraws)))
  }
  list(chains = object$draws, pick = pick)
}
