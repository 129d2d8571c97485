#' The priors of a fit, in words
#'
#' rstantools' `prior_summary()` for sgld's fits (and models): one row per
#' parameter with its prior as the model uses it, and for the regressions'
#' priors a print in rstanarm's layout: for the intercept (whose prior is on
#' the intercept at centred predictors, when `prior_intercept` is given), the
#' coefficients and the auxiliary parameter, the prior as specified and,
#' where it was autoscaled ([prior_normal()]'s `autoscale = TRUE`, the
#' default of [model_linear()], [model_logistic()], [model_poisson()] and
#' [model_negbin()]), the "Adjusted prior", its scales adjusted to the data
#' as rstanarm's `stan_glm()` adjusts them. For [model_glmer()] the same,
#' as `stan_glmer()` prints them, with the covariances' [prior_decov()].
#'
#' @param object An `sgld_fit`, or a model such as [model_logistic()].
#' @param ... Not used.
#' @return A data frame with columns `parameter`, `prior` (the prior as used,
#'   adjusted scales included) and `specified` (as given), of class
#'   `sgld_prior_summary`, printed as described; invisibly when printed.
#' @examples
#' m <- model_linear(mpg ~ wt + hp, data = mtcars)
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
  sections <- if (!is.null(object$prior_scale)) prior_sections(object)
  structure(data.frame(parameter = object$names, prior = rows,
                       specified = if (is.null(sections)) rows else specified_rows(object),
                       stringsAsFactors = FALSE),
            sections = sections, class = c("sgld_prior_summary", "data.frame"))
}

#' @export
print.sgld_prior_summary <- function(x, ...) {
  sections <- attr(x, "sections")
  if (is.null(sections)) {
    cat("Priors\n")
    out <- data.frame(parameter = format(x$parameter), prior = x$prior)
    names(out) <- c("", "")
    print(out, row.names = FALSE, right = FALSE)
    return(invisible(x))
  }
  cat("Priors\n------\n")
  for (s in sections) {
    cat(s$title, "\n", sep = "")
    if (is.null(s$adjusted)) {
      cat("  ~ ", s$specified, "\n", sep = "")
    } else {
      cat("  Specified prior:\n    ~ ", s$specified, "\n", sep = "")
      cat("  Adjusted prior:\n    ~ ", s$adjusted, "\n", sep = "")
    }
    cat("\n")
  }
  cat("------\n")
  invisible(x)
}

# One sentence per parameter, in the order of model$names; NULL when the
# model keeps no prior this reads.
model_prior_rows <- function(model) UseMethod("model_prior_rows")
model_prior_rows.default <- function(model) {
  if (is.null(model$prior_loc)) return(NULL)
  coef_prior_rows(model)
}

num4 <- function(v) vapply(v, format, "", digits = 4, trim = TRUE)

# The coefficients' priors as the model uses them (R/priors.R:
# resolve_coef_prior()), the intercept's at centred predictors.
coef_prior_rows <- function(model) {
  type <- if (is.null(model$prior_type)) rep(0L, model$p) else model$prior_type
  rows <- ifelse(type == 1L,
                 sprintf("laplace(location = %s, scale = %s)", num4(model$prior_loc),
                         num4(model$prior_scale)),
                 sprintf("normal(mean = %s, sd = %s)", num4(model$prior_loc),
                         num4(model$prior_scale)))
  icpt <- centred_intercept(model)
  if (length(icpt))
    rows[icpt] <- sprintf("normal(mean = %s, sd = %s) at centred predictors",
                          num4(model$prior_centre_loc), num4(model$prior_centre_scale))
  rows
}

# The column of the intercept whose prior is on centred predictors, or none.
centred_intercept <- function(model) {
  if (is.null(model$prior_centre)) return(integer())
  which(!is.finite(model$prior_scale))
}

# The same rows as specified, before autoscaling.
specified_rows <- function(model) UseMethod("specified_rows")

specified_rows.default <- function(model) {
  rows <- model_prior_rows(model)
  icpt <- centred_intercept(model)
  slopes <- setdiff(seq_len(model$p), icpt)
  if (isTRUE(model$prior$autoscale)) {
    pr <- model$prior
    each <- function(v, i) if (length(v) == 1L) v else v[i]
    rows[slopes] <- vapply(seq_along(slopes), function(i)
      paste0(describe_prior(utils::modifyList(pr, list(location = each(pr$location, i),
                                                        scale = each(pr$scale, i))), 1L),
             ", autoscaled"), "")
  }
  if (length(icpt) && isTRUE(model$prior_intercept$autoscale))
    rows[icpt] <- paste0(describe_intercept_prior(model), " at centred predictors, autoscaled")
  if (!is.null(model$prior_aux) && isTRUE(model$prior_aux$autoscale))
    rows[model$p + 1L] <- sprintf("sigma ~ exponential(rate = %s), autoscaled",
                                  num4(model$prior_aux$rate))
  rows
}

# A prior object in rstanarm's words: one value, or [a,b,...] per coefficient.
describe_prior <- function(prior, k) {
  vec <- function(v) {
    v <- if (length(v) == 1L) rep(v, k) else v
    if (length(v) == 1L) num4(v) else paste0("[", paste(num4(v), collapse = ","), "]")
  }
  loc <- if (is.null(prior$location)) "default" else vec(prior$location)
  switch(prior$family,
         normal = sprintf("normal(location = %s, scale = %s)", loc, vec(prior$scale)),
         laplace = sprintf("laplace(location = %s, scale = %s)", loc, vec(prior$scale)),
         exponential = sprintf("exponential(rate = %s)", num4(prior$rate)))
}

# The intercept's prior as specified; a NULL location is the default:
# the response's mean for the linear model, 0 otherwise.
describe_intercept_prior <- function(model) {
  pi <- model$prior_intercept
  if (is.null(pi$location)) pi$location <- if (model$type == "linear") NULL else 0
  sub("location = default", "location = mean(y)", describe_prior(pi, 1L), fixed = TRUE)
}

# rstanarm's sections: intercept, coefficients, auxiliary, each specified
# and, when autoscaled, adjusted (the multilevel model's: R/multilevel-priors.R).
prior_sections <- function(model) UseMethod("prior_sections")
prior_sections.default <- function(model) {
  icpt <- centred_intercept(model)
  slopes <- setdiff(seq_len(model$p), icpt)
  out <- list()
  if (length(icpt)) {
    pi <- model$prior_intercept
    adjusted <- sprintf("normal(location = %s, scale = %s)", num4(model$prior_centre_loc),
                        num4(model$prior_centre_scale))
    # only the linear model's default intercept prior moves with the data
    moved <- model$type == "linear" && (is.null(pi$location) || isTRUE(pi$autoscale))
    out$intercept <- list(title = "Intercept (after predictors centered)",
                          specified = describe_intercept_prior(model),
                          adjusted = if (moved) adjusted)
  }
  if (length(slopes)) {
    k <- length(slopes)
    used <- list(family = if (all(model$prior_type[slopes] == 1L)) "laplace" else "normal",
                 location = model$prior_loc[slopes], scale = model$prior_scale[slopes])
    out$coefficients <- list(title = "Coefficients",
                             specified = describe_prior(model$prior, k),
                             adjusted = if (isTRUE(model$prior$autoscale))
                               describe_prior(used, k))
  }
  if (model$type == "linear") {
    pa <- model$prior_aux
    out$aux <- list(title = "Auxiliary (sigma)", specified = describe_prior(pa, 1L),
                    adjusted = if (isTRUE(pa$autoscale))
                      sprintf("exponential(rate = %s)", num4(model$prior_sigma_rate)))
  } else if (model$type == "negbin") {
    out$aux <- list(title = "Auxiliary (reciprocal_dispersion)",
                    specified = negbin_aux_row(model), adjusted = NULL)
  }
  out
}
