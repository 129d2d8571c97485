#' Predictions from a fit
#'
#' Predictions for new data (or the training data) that average over the
#' posterior draws. For [model_logistic()]: `type = "response"` gives the
#' posterior mean of the predictive probability of the event, `"link"` the
#' posterior mean of the linear predictor, `"class"` the label of the more
#' probable class. For [model_linear()]: the posterior mean of
#' \eqn{x^\top \beta}{x' beta}.
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
#'   for a model built from a matrix, a matrix with the same columns); `NULL`
#'   for the training data. Factor levels not seen in training are an error.
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
  if (!inherits(model, c("sgld_model_linear", "sgld_model_logistic")))
    abort("predict() is not available for ", class(model)[1], ".")
  if (ndraws(object) == 0) abort("the fit has no kept draws to predict from.")
  linear <- inherits(model, "sgld_model_linear")
  if (linear && type == "class") abort("`type` = \"class\" is for logistic models.")
  X <- design_for_newdata(model, newdata)   # with the rows' offsets, if any
  off <- attr(X, "offset")
  storage.mode(X) <- "double"
  attr(X, "offset") <- off
  pick <- NULL
  if (is_sampler(object)) {
    # the chains as they are (no pooled copy): their first p columns are the
    # coefficients, the same on the user's and the sampler's scale
    chains <- object$draws
    total <- ndraws(object) * length(chains)
    if (!is.null(ndraws)) {
      check_count(ndraws, "ndraws", lower = 1, upper = total)
      pick <- as.double(sort(sample.int(total, ndraws)))
    }
  } else {
    # an optimiser predicts by its final iterate (as coef())
    if (!is.null(ndraws)) abort("`ndraws` is for samplers' fits; ", object$method,
                                "() predicts from its final iterate.")
    chains <- list(matrix(colMeans(to_sampler_scale(model, object$last)), 1L))
  }
  out <- .Call(C_sgld_predict, X, chains, pick, attr(X, "offset"), !linear && type != "link", draws,
               as.integer(threads))
  cls <- function(p) factor(model$labels[1 + (p > 0.5)], levels = model$labels)
  if (draws) {
    if (type != "class") return(out)
    return(matrix(as.character(cls(out)), nrow(out)))
  }
  if (type == "class") cls(out) else out
}
