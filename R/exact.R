#' Exact posterior of the Bayesian linear regression
#'
#' For the conjugate normal-inverse-gamma prior, `model_linear(...,
#' prior = prior_nig())`, the posterior of [model_linear()] is known in closed
#' form (the default prior, rstanarm's, is not conjugate: it has no closed
#' form, and this function refuses it):
#' \eqn{V_n = (X^\top X + V^{-1})^{-1}}{V_n = (X' X + V^-1)^-1}, \eqn{\mu_n = V_n (V^{-1}\mu + X^\top y)}{mu_n = V_n (V^-1 mu + X' y)},
#' \eqn{a_n = a + n/2}{a_n = a + n/2},
#' \eqn{b_n = b + \frac12 (y^\top y + \mu^\top V^{-1} \mu - \mu_n^\top V_n^{-1} \mu_n)}{b_n = b + 1/2 (y' y + mu' V^-1 mu - mu_n' V_n^-1 mu_n)};
#' \eqn{\sigma^2 \mid y \sim IG(a_n, b_n)}{sigma^2 | y ~ IG(a_n, b_n)} and each \eqn{\beta_j \mid y}{beta_j | y} is a
#' Student t with \eqn{2 a_n}{2 a_n} degrees of freedom, location \eqn{\mu_{n,j}}{mu_(n,j)} and
#' scale \eqn{\sqrt{(b_n/a_n) V_{n,jj}}}{sqrt((b_n/a_n) V_(n,jj))}. It is the yardstick for the samplers.
#'
#' With case weights (`weights` in [model_linear()]) the data enter as
#' \eqn{X^\top C X}{X' C X}, \eqn{X^\top C y}{X' C y}, \eqn{y^\top C y}{y' C y}
#' and \eqn{n = \sum_i c_i}{n = sum_i c_i}, with \eqn{C}{C} the diagonal
#' matrix of the weights \eqn{c_i}{c_i}; an offset is subtracted from
#' \eqn{y}{y}.
#'
#' @param model A model from [model_linear()] with `prior = prior_nig()`.
#' @return An object of class `sgld_exact_linear`: a list with `mean` and `sd`
#'   (user's scale: coefficients and `sigma2`), `mode` (the posterior mode on
#'   the sampler's scale, where [gd()] converges: \eqn{\beta = \mu_n}{beta = mu_n},
#'   \eqn{\log\sigma^2 = \log(b_n / (a_n + p/2))}{log sigma^2 = log(b_n / (a_n + p/2))}), the posterior parameters
#'   `mu_n`, `V_n`, `a_n`, `b_n`, and `density(x, parameter)`, the
#'   marginal posterior density of one parameter given by name: a coefficient,
#'   `"sigma2"`, or `"log_sigma2"` for the sampler's scale.
#' @examples
#' ex <- linear_exact_posterior(model_linear(y ~ x, data = handout, prior = prior_nig()))
#' ex$mean
#' ex$density(0.19, "sigma2")
#' @export
linear_exact_posterior <- function(model) {
  if (!inherits(model, "sgld_model") || !identical(model$type, "linear"))
    abort("`model` must be made by model_linear(), not ", describe(model), ".")
  if (!model_capabilities(model)$exact_posterior)
    abort("`model` has rstanarm's default prior, which is not conjugate: the exact ",
          "posterior needs the normal-inverse-gamma prior, model_linear(..., prior = ",
          "prior_nig()).")
  p <- model$p
  X <- design_matrix(model)
  y <- stored_response(model)     # net of any offset
  # case weights c: the likelihood is prod N(y_i; x_i' beta, sigma2)^c_i, so
  # X'X, X'y, y'y and n become X'CX, X'Cy, y'Cy and sum(c)
  c <- if (is.null(model$obs_weight)) rep(1, length(y)) else model$obs_weight
  n <- sum(c)
  mu <- model$prior_mean
  Vinv <- solve(model$prior_V)
  prec_n <- crossprod(X, X * c) + Vinv
  V_n <- solve(prec_n)
  mu_n <- drop(V_n %*% (Vinv %*% mu + crossprod(X, c * y)))
  a_n <- model$prior_shape + n / 2
  b_n <- model$prior_rate +
    0.5 * (sum(c * y^2) + drop(crossprod(mu, Vinv %*% mu)) - drop(crossprod(mu_n, prec_n %*% mu_n)))
  df <- 2 * a_n
  scale <- sqrt(b_n / a_n * diag(V_n))
  names(mu_n) <- names(scale) <- model$names[seq_len(p)]
  mean <- c(mu_n, sigma2 = b_n / (a_n - 1))
  sd <- c(scale * sqrt(df / (df - 2)),
          sigma2 = if (a_n > 2) b_n / ((a_n - 1) * sqrt(a_n - 2)) else Inf)
  mode <- c(mu_n, log_sigma2 = log(b_n / (a_n + p / 2)))

  density <- function(x, parameter) {
    if (parameter %in% names(mu_n)) {
      j <- match(parameter, names(mu_n))
      return(stats::dt((x - mu_n[[j]]) / scale[[j]], df) / scale[[j]])
    }
    if (parameter %in% c("sigma2", "log_sigma2")) {
      s2 <- if (parameter == "log_sigma2") exp(x) else x
      # sigma2 ~ IG(a_n, b_n) means 1 / sigma2 ~ Gamma(a_n, rate = b_n)
      dens_user <- stats::dgamma(1 / s2, shape = a_n, rate = b_n) / s2^2
      return(if (parameter == "log_sigma2") dens_user * s2 else dens_user)
    }
    abort("`parameter` must be one of ", paste0("'", c(model$names, "log_sigma2"), "'",
                                                 collapse = ", "), ".")
  }
  structure(list(mean = mean, sd = sd, mode = mode, mu_n = mu_n, V_n = V_n,
                 a_n = a_n, b_n = b_n, df = df, density = density),
            class = "sgld_exact_linear")
}

#' @export
print.sgld_exact_linear <- function(x, digits = 4, ...) {
  cat("Exact posterior of the Bayesian linear regression\n")
  print(cbind(mean = x$mean, sd = x$sd), digits = digits)
  invisible(x)
}
