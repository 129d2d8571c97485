#' Welling and Teh's mixture of Gaussians with tied means
#'
#' The two-parameter model of the paper's first experiment:
#' \eqn{\theta_1 \sim N(0, \sigma_1^2)}{theta_1 ~ N(0, sigma_1^2)}, \eqn{\theta_2 \sim N(0, \sigma_2^2)}{theta_2 ~ N(0, sigma_2^2)},
#' \eqn{x_i \sim \frac12 N(\theta_1, \sigma_x^2) + \frac12 N(\theta_1 + \theta_2, \sigma_x^2)}{x_i ~ 1/2 N(theta_1, sigma_x^2) + 1/2 N(theta_1 + theta_2, sigma_x^2)}.
#' With data drawn at \eqn{\theta = (0, 1)}{theta = (0, 1)} the posterior has two modes, near
#' \eqn{(0, 1)}{(0, 1)} and \eqn{(1, -1)}{(1, -1)}. The likelihood is computed by log-sum-exp,
#' so items far from both means give finite values and gradients.
#'
#' @param x The data: a numeric vector.
#' @param sigma2_1,sigma2_2 Prior variances of \eqn{\theta_1}{theta_1} and \eqn{\theta_2}{theta_2}.
#' @param sigma2_x Variance of each component.
#' @return An object of class `sgld_model_mixture` (and `sgld_model`) with
#'   parameters `theta1` and `theta2`.
#' @seealso [mixture_data()] to simulate the paper's data, [grid_posterior()]
#'   for the exact posterior on a grid.
#' @examples
#' set.seed(1)
#' m <- model_mixture(mixture_data(100))
#' m
#' @export
model_mixture <- function(x, sigma2_1 = 10, sigma2_2 = 1, sigma2_x = 2) {
  if (!is.numeric(x) || !is.null(dim(x)) && length(dim(x)) > 1 && min(dim(x)) > 1)
    abort("`x` must be a numeric vector, not ", describe(x), ".")
  x <- as.double(x)
  if (length(x) < 1L) abort("`x` must have at least one value.")
  if (any(!is.finite(x)))
    abort("`x` must be finite; it has ", format(x[!is.finite(x)][1]), " at position ",
          which(!is.finite(x))[1], ".")
  check_number(sigma2_1, "sigma2_1", lower = 0, lower_open = TRUE)
  check_number(sigma2_2, "sigma2_2", lower = 0, lower_open = TRUE)
  check_number(sigma2_x, "sigma2_x", lower = 0, lower_open = TRUE)
  structure(list(
    type = "mixture", z = x, n = as.double(length(x)), p = 1L,
    sigma2_1 = sigma2_1, sigma2_2 = sigma2_2, sigma2_x = sigma2_x,
    d = 2L, names = c("theta1", "theta2"), sampler_names = c("theta1", "theta2"),
    default_init = c(0, 0)
  ), class = c("sgld_model_mixture", "sgld_model"))
}

#' @export
print.sgld_model_mixture <- function(x, ...) {
  cat("Mixture of two Gaussians with tied means: ", x$n, " observations\n",
      "  theta1 ~ N(0, ", x$sigma2_1, "), theta2 ~ N(0, ", x$sigma2_2, "), ",
      "x ~ 0.5 N(theta1, ", x$sigma2_x, ") + 0.5 N(theta1 + theta2, ", x$sigma2_x, ")\n",
      sep = "")
  invisible(x)
}

to_user_scale.sgld_model_mixture <- function(model, w) w
to_sampler_scale.sgld_model_mixture <- function(model, w) w
check_user_values.sgld_model_mixture <- function(model, w, arg) invisible()
set_model_data.sgld_model_mixture <- function(model, X, y) {
  model$z <- as.double(y)
  model$n <- as.double(length(y))
  model
}

#' Simulate the data of Welling and Teh's mixture experiment
#'
#' Draws `n` values from \eqn{\frac12 N(\theta_1, \sigma_x^2) + \frac12
#' N(\theta_1 + \theta_2, \sigma_x^2)}{1/2 N(theta_1, sigma_x^2) + 1/2
#'   N(theta_1 + theta_2, sigma_x^2)}. The paper used 100 points at
#' \eqn{\theta = (0, 1)}{theta = (0, 1)} with \eqn{\sigma_x^2 = 2}{sigma_x^2 = 2}; Keng's blog drew them with
#' \eqn{\sigma_x^2 = 2.56}{sigma_x^2 = 2.56} and fitted \eqn{\sigma_x^2 = 2}{sigma_x^2 = 2}, which makes the
#' second mode plainer. Uses R's random number generator.
#' @param n Number of values.
#' @param theta The two parameters.
#' @param sigma2_x Variance of each component.
#' @return A numeric vector of length `n`.
#' @examples
#' set.seed(1)
#' summary(mixture_data(100))
#' @export
mixture_data <- function(n = 100, theta = c(0, 1), sigma2_x = 2) {
  check_count(n, "n", lower = 1)
  if (!is.numeric(theta) || length(theta) != 2L || any(!is.finite(theta)))
    abort("`theta` must be two finite numbers.")
  check_number(sigma2_x, "sigma2_x", lower = 0, lower_open = TRUE)
  second <- stats::runif(n) < 0.5
  stats::rnorm(n, mean = theta[1] + second * theta[2], sd = sqrt(sigma2_x))
}

#' Exact posterior of a two-parameter model on a grid
#'
#' Evaluates the log posterior of any model with two (sampler-scale)
#' parameters at every point of a regular grid and normalises it in log space
#' (log-sum-exp), so that the density sums to one over the grid cells. For
#' comparing a sampler's draws with the truth, as in Welling and Teh's Figure 1.
#' @param model A model with two parameters, e.g. from [model_mixture()].
#' @param x,y Increasing, equally spaced grid values of the first and second
#'   parameter.
#' @return A list of class `sgld_grid` with `x`, `y` and `density` (a
#'   `length(x)` by `length(y)` matrix, for [graphics::contour()] or
#'   [graphics::image()]), plus `prob`, the probability of each cell.
#' @examples
#' set.seed(1)
#' g <- grid_posterior(model_mixture(mixture_data(100)),
#'                     seq(-1.5, 2.5, length.out = 81), seq(-3, 3, length.out = 81))
#' contour(g$x, g$y, g$density)
#' @export
grid_posterior <- function(model, x, y) {
  check_model(model)
  if (model$d != 2L) abort("`model` must have two parameters, not ", model$d, ".")
  for (arg in c("x", "y")) {
    v <- get(arg)
    if (!is.numeric(v) || length(v) < 2L || any(!is.finite(v)) || any(diff(v) <= 0))
      abort("`", arg, "` must be at least two increasing finite numbers.")
    if (max(abs(diff(v) - mean(diff(v)))) > 1e-8 * max(1, abs(v)))
      abort("`", arg, "` must be equally spaced.")
  }
  lp <- outer(x, y, Vectorize(function(a, b) log_posterior(model, c(a, b))$logpost))
  top <- max(lp)
  if (!is.finite(top)) abort("the log posterior is not finite on the grid.")
  w <- exp(lp - top)
  prob <- w / sum(w)
  structure(list(x = x, y = y, density = prob / (diff(x)[1] * diff(y)[1]), prob = prob),
            class = "sgld_grid")
}

# predict(): the posterior predictive density at each value of `newdata`
model_predict.sgld_model_mixture <- function(model, object, newdata, type, draws, ndraws,
                                             threads) {
  if (type != "response") abort("`type` must be \"response\" (the predictive density) ",
                                "for model_mixture().")
  use <- predict_draws_of(object, ndraws)
  x <- if (is.null(newdata)) model$z else newdata
  if (!is.numeric(x) || !is.null(dim(x)) || any(!is.finite(x)))
    abort("`newdata` must be a vector of finite numbers for model_mixture().")
  .Call(C_sgld_predict_mixture, as.double(x), use$chains, use$pick, as.double(model$sigma2_x),
        draws)
}

# label switching: two modes by construction
model_capabilities.sgld_model_mixture <- function(model) {
  utils::modifyList(NextMethod(), list(laplace = FALSE))
}

# The methods it answers (R/capabilities.R): predict() is the predictive
# density of x, log_lik() each x's mixture density at each draw.
model_methods.sgld_model_mixture <- function(model) {
  density_only <- paste0("the model is the density of x alone, with no covariates: ",
                         "predict() gives its posterior predictive density")
  utils::modifyList(NextMethod(), list(
    predict = TRUE, posterior_predict = density_only, predictive_interval = density_only,
    pp_check = density_only,
    posterior_epred = density_only, fitted = density_only,
    predict_interval = paste0("predict() gives the posterior predictive density at each ",
                              "value of `newdata`, a number with no interval")))
}

# the data as a one-column matrix, one row per observation (log_lik() names
# its columns by these rows)
design_matrix.sgld_model_mixture <- function(model) matrix(model$z, ncol = 1L,
                                                           dimnames = list(NULL, "x"))
