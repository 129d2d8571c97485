#' Predictions from a fit
#'
#' Predictions for new data (or the training data) that average over the
#' posterior draws. For [model_logistic()]: `type = "response"` gives the
#' posterior mean of the predictive probability of the event, `"link"` the
#' posterior mean of the linear predictor, `"class"` the label of the more
#' probable class. For [model_linear()]: the posterior mean of
#' \eqn{x^\top \beta}{x' beta}.
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
#' @param ... Not used.
#' @return A vector with one prediction per row of `newdata` (a factor for
#'   `"class"`), or with `draws = TRUE` a matrix of rows x draws.
#' @export
predict.sgld_fit <- function(object, newdata = NULL, type = c("response", "link", "class"),
                             draws = FALSE, ndraws = NULL,
                             threads = getOption("sgld.threads", 1L), ...) {
  check_dots_empty(...)
  check_count(threads, "threads", lower = 1, upper = 1024)
  type <- check_choice(type, c("response", "link", "class"), "type")
  check_flag(draws, "draws")
  model <- object$model
  if (inherits(model, "sgld_model_mlp")) return(predict_mlp(object, newdata, type, draws))
  if (!inherits(model, c("sgld_model_linear", "sgld_model_logistic", "sgld_model_mixture")))
    abort("predict() is not available for ", class(model)[1], ".")
  if (ndraws(object) == 0) abort("the fit has no kept draws to predict from.")
  if (is_sampler(object)) require_all_draws(object, "predict()")
  use <- draws_to_predict_with(object, ndraws)
  if (inherits(model, "sgld_model_mixture")) {
    if (type != "response") abort("`type` must be \"response\" (the predictive density) ",
                                  "for model_mixture().")
    x <- if (is.null(newdata)) model$z else newdata
    if (!is.numeric(x) || !is.null(dim(x)) || any(!is.finite(x)))
      abort("`newdata` must be a vector of finite numbers for model_mixture().")
    return(.Call(C_sgld_predict_mixture, as.double(x), use$chains, use$pick,
                 as.double(model$sigma2_x), draws))
  }
  linear <- inherits(model, "sgld_model_linear")
  if (linear && type == "class") abort("`type` = \"class\" is for logistic models.")
  X <- design_for_newdata(model, newdata)   # with the rows' offsets, if any
  off <- attr(X, "offset")
  storage.mode(X) <- "double"
  out <- .Call(C_sgld_predict, X, use$chains, use$pick, off, !linear && type != "link", draws,
               as.integer(threads))
  cls <- function(p) factor(model$labels[1 + (p > 0.5)], levels = model$labels)
  if (draws) {
    if (type != "class") return(out)
    return(matrix(as.character(cls(out)), nrow(out)))
  }
  if (type == "class") cls(out) else out
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
