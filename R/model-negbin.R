#' Bayesian negative-binomial regression
#'
#' The NB2 model with the log link: \eqn{y_i}{y_i} has mean
#' \eqn{\mu_i = e^{\eta_i}}{mu_i = exp(eta_i)}, \eqn{\eta_i = x_i^\top \beta + o_i}{eta_i = x_i' beta + o_i},
#' and variance \eqn{\mu_i + \mu_i^2 / \phi}{mu_i + mu_i^2 / phi}, as
#' [MASS::glm.nb()] (whose `theta` is \eqn{\phi}{phi}) and rstanarm's
#' `neg_binomial_2` (whose `reciprocal_dispersion` is \eqn{\phi}{phi}). The
#' default priors are rstanarm's `stan_glm()` defaults: each coefficient
#' \eqn{N(0, (2.5 / s_j)^2)}{N(0, (2.5 / s_j)^2)} (\eqn{s_j}{s_j} the sd of
#' column \eqn{j}{j} of the design), the intercept at centred predictors
#' \eqn{N(0, 2.5^2)}{N(0, 2.5^2)} and \eqn{\phi \sim}{phi ~} Exponential(1)
#' (see [prior_normal()] and [prior_summary()][prior_summary.sgld_fit]).
#' Alternatively (`prior_overdispersion`) the overdispersion
#' \eqn{1/\phi}{1/phi} has a half-normal prior, whose mode is at
#' \eqn{1/\phi = 0}{1/phi = 0}, the Poisson model: the prior shrinks towards
#' the simpler model and lets the data ask for overdispersion (the
#' penalised-complexity argument of Simpson et al. 2017).
#' Samplers move \eqn{\log\phi}{log(phi)} (`log_phi`); draws are reported as
#' `phi`.
#'
#' @inheritParams model_poisson
#' @param prior_aux The prior of \eqn{\phi}{phi}: [prior_exponential()],
#'   by default `prior_exponential(1)`, rstanarm's.
#' @param prior_overdispersion `NULL` (the default), or the scale of a
#'   half-normal prior of \eqn{1/\phi}{1/phi} in place of `prior_aux`: a
#'   positive number (1, the default of earlier versions, leaves
#'   \eqn{1/\phi}{1/phi} below about 2 a priori).
#' @return An object of class `sgld_model_negbin` (and `sgld_model`).
#' @section Starting values:
#' Unless `init` is given, samplers start every chain at the coefficients'
#' prior centre (the intercept where the centred intercept is at its prior's
#' centre) and \eqn{\phi = 1}{phi = 1}.
#' @references Simpson, D., Rue, H., Riebler, A., Martins, T. G. and
#'   Sorbye, S. H. (2017). Penalising model component complexity: a principled,
#'   practical approach to constructing priors. Statistical Science 32, 1-28.
#' @examples
#' m <- model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
#' m
#' @export
model_negbin <- function(x, ...) UseMethod("model_negbin")

#' @rdname model_negbin
#' @export
model_negbin.formula <- function(x, data, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                 prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                 prior_aux = prior_exponential(1), prior_overdispersion = NULL,
                                 subset, weights, offset, na.action = na.fail, ...) {
  check_dots_empty(...)
  check_one_aux_prior(missing(prior_aux), prior_overdispersion)
  design <- design_from_formula(x, data, frame_extras(match.call()), na.action)
  y <- count_response(design$y, "the response of `x`")
  count_model_parts(new_model_negbin(design$X, y, prior, prior_intercept, prior_aux,
                                     prior_overdispersion), design)
}

#' @rdname model_negbin
#' @export
model_negbin.default <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                 prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                 prior_aux = prior_exponential(1), prior_overdispersion = NULL,
                                 ...) {
  check_dots_empty(...)
  check_one_aux_prior(missing(prior_aux), prior_overdispersion)
  x <- check_design_matrix(x, keep_sparse = TRUE)
  check_response_length(y, x)
  new_model_negbin(x, count_response(y, "`y`"), prior, prior_intercept, prior_aux,
                   prior_overdispersion)
}

check_one_aux_prior <- function(no_aux_prior, prior_overdispersion) {
  if (!no_aux_prior && !is.null(prior_overdispersion))
    abort("give `prior_aux` (a prior on phi) or `prior_overdispersion` (on 1/phi), not both.")
}

# phi ~ exponential(rate) (prior_aux_scale 0), or 1/phi ~ half-normal(0,
# prior_overdispersion) (prior_aux_scale, src/model_negbin.c)
new_model_negbin <- function(X, y, prior, prior_intercept, prior_aux, prior_overdispersion) {
  m <- new_count_model("negbin", X, y, prior, prior_intercept)
  if (is.null(prior_overdispersion)) {
    m$prior_aux <- prior_aux
    m$prior_aux_rate <- resolve_aux_prior(prior_aux, 1, "phi")
    m$prior_aux_scale <- 0
  } else {
    check_number(prior_overdispersion, "prior_overdispersion", lower = 0, lower_open = TRUE)
    m$prior_aux_scale <- as.double(prior_overdispersion)
    m$prior_aux_rate <- 0
  }
  m$d <- ncol(X) + 1L
  m$names <- c(colnames(X), "phi")
  m$sampler_names <- c(colnames(X), "log_phi")
  m$default_init <- c(m$default_init, 1)
  m$log_scale <- m$d   # phi is sampled as its logarithm
  class(m) <- c("sgld_model_negbin", "sgld_model")
  set_model_data(m, X, y)
}

#' @export
print.sgld_model_negbin <- function(x, ...) {
  print_count_model(x, "Bayesian negative-binomial regression (NB2, log link)")
  cat(negbin_aux_row(x), "\n", sep = "")
  invisible(x)
}

model_capabilities.sgld_model_negbin <- function(model) {
  utils::modifyList(NextMethod(), list(regression = TRUE, smooth_likelihood = TRUE))
}
model_family.sgld_model_negbin <- function(model) negbin_family()
# rstanarm's name for the family (also the multilevel model's, R/model-glmm-methods.R)
negbin_family <- function()
  structure(list(family = "neg_binomial_2", link = "log", linkfun = log, linkinv = exp),
            class = "family")
model_link.sgld_model_negbin <- function(model) "log"
model_mean.sgld_model_negbin <- function(model, eta, W) exp(eta)
# bayes_R2(): mu + mu^2 / phi, phi sampled as its logarithm
model_residual_variance.sgld_model_negbin <- function(model, mu, W, trials)
  rowMeans(mu + mu^2 / exp(W[, model$d]))
model_response_draws.sgld_model_negbin <- function(model, eta, W, rows) {
  phi <- exp(W[, model$d])          # one per draw, recycled down the columns
  matrix(stats::rnbinom(length(eta), size = phi, mu = exp(eta)), nrow(eta))
}
check_user_values.sgld_model_negbin <- function(model, w, arg) {
  if (any(w[, model$d] <= 0)) abort("`", arg, "`: phi must be positive.")
}
response_like.sgld_model_negbin <- function(model, y) count_response(y, "`newdata`: the response")

# The coefficients' priors, and phi's.
model_prior_rows.sgld_model_negbin <- function(model) {
  c(coef_prior_rows(model), negbin_aux_row(model))
}

negbin_aux_row <- function(model) {
  if (model$prior_aux_scale > 0)
    return(sprintf("1/phi ~ half-normal(0, %s)", format(model$prior_aux_scale, digits = 4)))
  sprintf("phi ~ exponential(rate = %s)", format(model$prior_aux_rate, digits = 4))
}
