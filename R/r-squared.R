#' Bayesian R-squared and LOO R-squared
#'
#' rstanarm's two R-squared measures for fits of the regressions, one value
#' per posterior draw:
#' \describe{
#'   \item{`bayes_R2()`}{Gelman, Goodrich, Gabry and Vehtari (2019): for each
#'     draw, the variance over the training rows of the expected response
#'     \eqn{\mu_i}{mu_i} (`posterior_epred()`) divided by itself plus the mean
#'     residual variance of the model at that draw: \eqn{\sigma^2}{sigma^2}
#'     for [model_linear()], \eqn{\mu_i(1 - \mu_i)}{mu_i (1 - mu_i)} averaged
#'     over the rows for [model_logistic()] (with a `cbind(events, nonevents)`
#'     response, counts: \eqn{n_i \mu_i}{n_i mu_i} and \eqn{n_i \mu_i (1 -
#'     \mu_i)}{n_i mu_i (1 - mu_i)}), as rstanarm. rstanarm stops for other
#'     families; here the count models use their own variance the same way:
#'     \eqn{\mu_i}{mu_i} for [model_poisson()], \eqn{\mu_i + \mu_i^2/\phi}{mu_i
#'     + mu_i^2 / phi} for [model_negbin()]. Each value lies in \[0, 1\].}
#'   \item{`loo_R2()`}{one minus the variance of the leave-one-out residuals
#'     \eqn{y_i - E_{loo}(\mu_i)}{y_i - E_loo(mu_i)} over the variance of
#'     \eqn{y}{y}, each under Bayesian-bootstrap (Dirichlet) weights of the
#'     rows, one set per draw, so the spread of the result reflects the
#'     uncertainty about the rows; the leave-one-out expectations use the
#'     Pareto-smoothed importance weights of [loo.sgld_fit()]. Values are
#'     clipped to \[-1, 1\], as rstanarm's.}
#' }
#' @param object A sampler's fit of [model_linear()], [model_logistic()],
#'   [model_poisson()] or [model_negbin()] whose data are in memory.
#' @param ... Not used.
#' @return A vector with one value per kept draw.
#' @references Gelman, A., Goodrich, B., Gabry, J. and Vehtari, A. (2019).
#'   R-squared for Bayesian regression models. *The American Statistician*
#'   73(3), 307-309.
#' @examples
#' set.seed(1)
#' fit <- sgld(mpg ~ wt + hp, data = mtcars)
#' summary(bayes_R2(fit))
#' summary(loo_R2(fit))
#' @name bayes_R2.sgld_fit
NULL

#' @rdname bayes_R2.sgld_fit
#' @export
bayes_R2.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  W <- prediction_draws(object, NULL, "bayes_R2()")
  model <- object$model
  trials <- model_trials(model)
  mu <- expected_response(model, linpred_draws(model, W, NULL), W)
  if (!is.null(trials)) mu <- mu * rep(trials, each = nrow(mu))
  explained <- row_variances(mu)
  explained / (explained + model_residual_variance(model, mu, W, trials))
}

#' @rdname bayes_R2.sgld_fit
#' @export
loo_R2.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  W <- prediction_draws(object, NULL, "loo_R2()")
  model <- object$model
  trials <- model_trials(model)
  y <- model_observed(model)
  mu <- expected_response(model, linpred_draws(model, W, NULL), W)
  if (!is.null(trials)) {
    mu <- mu * rep(trials, each = nrow(mu))
    y <- y * trials
  }
  psis <- fast_psis_loo(log_lik.sgld_fit(object), chain_of_draws(object), weights = TRUE)
  residual <- y - colSums(exp(psis$log_weights) * mu)
  # Bayesian-bootstrap weights of the rows, one set per draw (rstanarm's
  # sets the seed of the first chain; here the caller's set.seed() does)
  S <- nrow(mu)
  n <- ncol(mu)
  g <- matrix(stats::rexp(S * n), S, n)
  g <- g / rowSums(g)
  weighted_var <- function(v) (g %*% v^2 - (g %*% v)^2) * n / (n - 1)
  r2 <- 1 - drop(weighted_var(residual)) / drop(weighted_var(y))
  pmin(pmax(r2, -1), 1)
}

# Variance over the columns of each row, at once.
row_variances <- function(x) rowSums((x - rowMeans(x))^2) / (ncol(x) - 1)

# The training rows' binomial trials where the response gave counts, else NULL.
model_trials <- function(model) {
  trials <- model$trials
  if (is.null(trials) || all(trials == 1)) NULL else trials
}
