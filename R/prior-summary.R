#' The priors of a fit, in words
#'
#' rstantools' `prior_summary()` for sgld's fits (and models): one row per
#' parameter with its prior as the model holds it, read from the prior
#' objects given to the model ([prior_nig()], [prior_normal()],
#' [prior_laplace()]; `prior_intercept`; the overdispersion's prior of
#' [model_negbin()]). sgld uses the priors as given: it neither rescales them
#' by the predictors' or the response's scale (rstanarm's `autoscale`) nor
#' centres the predictors, so the intercept's prior is that of the intercept
#' at predictors equal to 0.
#'
#' @param object An `sgld_fit`, or a model such as [model_logistic()].
#' @param ... Not used.
#' @return A data frame with columns `parameter` and `prior` (of class
#'   `sgld_prior_summary`, printed as a table), invisibly when printed.
#' @examples
#' m <- model_linear(y ~ x, data = handout, prior = prior_nig(V = 10, shape = 2))
#' if (requireNamespace("rstantools", quietly = TRUE)) rstantools::prior_summary(m)
#' @export
prior_summary.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  prior_summary.sgld_model(object$model)
}

#' @rdname prior_summary.sgld_fit
#' @export
prior_summary.sgld_model <- function(object, ...) {
  check_dots_empty(...)
  rows <- model_prior_rows(object)
  if (is.null(rows))
    abort("prior_summary() describes the priors of model_linear(), model_logistic(), ",
          "model_poisson() and model_negbin(); for ", class(object)[1], " see its help page.")
  structure(data.frame(parameter = object$names, prior = rows, stringsAsFactors = FALSE),
            class = c("sgld_prior_summary", "data.frame"))
}

#' @export
print.sgld_prior_summary <- function(x, ...) {
  cat("Priors (as given to the model: no rescaling by the data)\n")
  out <- data.frame(parameter = format(x$parameter), prior = x$prior)
  names(out) <- c("", "")
  print(out, row.names = FALSE, right = FALSE)
  invisible(x)
}

# One sentence per parameter, in the order of model$names; NULL when the
# model keeps no prior this reads.
model_prior_rows <- function(model) UseMethod("model_prior_rows")
model_prior_rows.default <- function(model) {
  if (is.null(model$prior_loc)) return(NULL)
  coef_prior_rows(model)
}

# The coefficients' independent priors (R/priors.R: prior_normal(),
# prior_laplace(), and the intercept's own).
coef_prior_rows <- function(model) {
  type <- if (is.null(model$prior_type)) rep(0L, model$p) else model$prior_type
  num <- function(v) format(v, digits = 4, trim = TRUE)
  ifelse(type == 1L,
         sprintf("laplace(location = %s, scale = %s)", num(model$prior_loc), num(model$prior_scale)),
         sprintf("normal(mean = %s, sd = %s)", num(model$prior_loc), num(model$prior_scale)))
}
