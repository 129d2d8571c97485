#' Predictions from a fit
#'
#' Predictions for new data (or the training data) that average over the
#' posterior draws. For [model_logistic()]: `type = "response"` gives the
#' posterior mean of the predictive probability of the event, `"link"` the
#' posterior mean of the linear predictor, `"class"` the label of the more
#' probable class. For [model_linear()]: the posterior mean of
#' \eqn{x^\top \beta}.
#'
#' For [sgd()] and [gd()] fits the prediction is that of the final iterate.
#'
#' @param object An `sgld_fit`.
#' @param newdata A data frame with the variables of the model's formula (or,
#'   for a model built from a matrix, a matrix with the same columns); `NULL`
#'   for the training data. Factor levels not seen in training are an error.
#' @param type `"response"`, `"link"` or `"class"`.
#' @param draws Return the prediction for every kept draw (a matrix with one
#'   column per draw) instead of its average?
#' @param ... Not used.
#' @return A vector with one prediction per row of `newdata` (a factor for
#'   `"class"`), or with `draws = TRUE` a matrix of rows x draws.
#' @export
predict.sgld_fit <- function(object, newdata = NULL, type = c("response", "link", "class"),
                             draws = FALSE, ...) {
  check_dots_empty(...)
  type <- check_choice(type, c("response", "link", "class"), "type")
  check_flag(draws, "draws")
  model <- object$model
  if (inherits(model, "sgld_model_mlp")) return(predict_mlp(object, newdata, type, draws))
  if (!inherits(model, c("sgld_model_linear", "sgld_model_logistic")))
    abort("predict() is not available for ", class(model)[1], ".")
  if (ndraws(object) == 0) abort("the fit has no kept draws to predict from.")
  if (is_sampler(object)) require_all_draws(object, "predict()")
  X <- design_for_newdata(model, newdata)
  # a sampler predicts by its draws, an optimiser by its final iterate (as coef())
  W <- if (is_sampler(object)) as.matrix(object, scale = "sampler")
       else matrix(colMeans(to_sampler_scale(model, object$last)), 1L)
  W <- W[, seq_len(ncol(X)), drop = FALSE]
  linear <- inherits(model, "sgld_model_linear")
  if (linear && type == "class") abort("`type` = \"class\" is for logistic models.")
  scale <- if (linear || type == "link") identity else stats::plogis
  cls <- function(p) factor(model$labels[1 + (p > 0.5)], levels = model$labels)
  if (draws) {
    out <- scale(unname(X %*% t(W)))
    if (type != "class") return(out)
    return(matrix(apply(out, 2, function(p) as.character(cls(p))), nrow(out)))
  }
  # the average over draws, a block of draws at a time, so that rows x draws
  # never has to fit in memory at once
  block <- max(1L, floor(2e6 / max(1L, nrow(X))))
  total <- numeric(nrow(X))
  for (start in seq(1L, nrow(W), by = block)) {
    rows <- start:min(nrow(W), start + block - 1L)
    total <- total + rowSums(scale(X %*% t(W[rows, , drop = FALSE])))
  }
  mean_pred <- unname(total / nrow(W))
  if (type == "class") cls(mean_pred) else mean_pred
}
