#' rstanarm's decov() prior for the covariances of group effects
#'
#' The prior of each random-effect term's covariance matrix in
#' [model_glmer()], as rstanarm's `decov()` defines it (its priors vignette):
#' the matrix is its sds and its correlation matrix; the trace
#' \eqn{r (\tau c)^2}{r (tau c)^2} (r coefficients per group) has
#' \eqn{\tau \sim \mathrm{Gamma}(\mathrm{shape}, 1)}{tau ~ Gamma(shape, 1)}
#' with \eqn{c}{c} = `scale` (times \eqn{\sigma}{sigma} for a gaussian
#' model), the variances' shares of the trace are
#' \eqn{\mathrm{Dirichlet}(\mathrm{concentration})}{Dirichlet(concentration)}, and the
#' correlation matrix is \eqn{\mathrm{LKJ}(\mathrm{regularization})}{LKJ(regularization)}. With one
#' coefficient per group it is an exponential prior on the sd at the default
#' shape 1. For terms of three or more coefficients this is the documented
#' prior; rstanarm 2.21.3's code differs from it there (bench/glmm-mala.md).
#'
#' @param regularization,concentration,shape,scale Positive numbers: one,
#'   or one per random-effect term. The defaults are rstanarm's.
#' @return An object of class `sgld_prior`.
#' @examples
#' prior_decov()
#' prior_decov(scale = 2)
#' @export
prior_decov <- function(regularization = 1, concentration = 1, shape = 1, scale = 1) {
  args <- list(regularization = regularization, concentration = concentration, shape = shape,
               scale = scale)
  for (nm in names(args)) {
    v <- args[[nm]]
    if (!is.numeric(v) || !length(v) || any(!is.finite(v)) || any(v <= 0))
      abort("`", nm, "` must be positive numbers: one, or one per random-effect term; not ",
            describe(v), ".")
  }
  structure(c(list(family = "decov"), lapply(args, as.double)), class = "sgld_prior")
}

# stan_glmer()'s defaults, resolved for the fixed design X (response y for
# a gaussian model, else NULL) by the flat models' rules (R/priors.R):
# coefficients autoscaled, the intercept's prior on centred predictors
# (centred at mean(y) for gaussian), sigma exponential with rate 1 / sd(y);
# for the negative binomial (`family` "negbin") phi exponential with
# prior_aux's rate, not autoscaled (stan_glmer.nb's, as model_negbin()'s).
# model_glmm() takes independent normal priors: with the intercept's prior
# on centred predictors its C side sees the centred design, so the
# intercept's prior is the centred intercept's.
glmer_priors <- function(prior, prior_intercept, prior_aux, prior_covariance, X, y,
                         family = "gaussian") {
  pr <- resolve_coef_prior(prior, prior_intercept, X, y)
  if (any(pr$type != 0L))
    abort("`prior`: a multilevel model takes prior_normal() for its coefficients, not ",
          "prior_laplace().")
  loc <- pr$loc
  scale <- pr$scale
  centred <- !is.null(pr$centre)
  if (centred) {
    icpt <- which(!is.finite(scale))
    loc[icpt] <- pr$centre_loc
    scale[icpt] <- pr$centre_scale
  }
  if (!inherits(prior_covariance, "sgld_prior") || !identical(prior_covariance$family, "decov"))
    abort("`prior_covariance` must be made by prior_decov(), not ", describe(prior_covariance),
          ".")
  list(loc = loc, scale = scale, centre = centred, resolved = pr,
       aux_rate = if (!is.null(y)) resolve_aux_prior(prior_aux, response_moments(y)[2], "sigma")
                  else if (family == "negbin") resolve_aux_prior(prior_aux, 1, "phi") else 1,
       decov = prior_covariance[c("regularization", "concentration", "shape", "scale")])
}

# prior_summary(): one sentence per parameter of the user's scale.
model_prior_rows.sgld_model_glmm <- function(model) {
  beta <- sprintf("normal(mean = %s, sd = %s)", num4(model$prior_loc), num4(model$prior_scale))
  if (isTRUE(model$centred)) beta[model$intercept] <- paste(beta[model$intercept],
                                                            "at centred predictors")
  dc <- function(k) sprintf("decov(reg. = %s, conc. = %s, shape = %s, scale = %s)",
                            num4(model$decov_regularization[k]),
                            num4(model$decov_concentration[k]), num4(model$decov_shape[k]),
                            num4(model$decov_scale[k]))
  c(beta, rep("group effect: normal(0, Sigma) of its term", length(model$b_names)),
    if (length(model$aux_name)) sprintf("exponential(rate = %s)", num4(model$aux_rate)),
    vapply(model$sigma_term, dc, ""))
}

# rstanarm's sections for stan_glmer(): intercept, coefficients, sigma, and
# the covariance.
prior_sections.sgld_model_glmm <- function(model) {
  if (is.null(model$prior)) return(NULL)   # model_glmm()'s explicit vectors: the rows say it
  icpt <- if (isTRUE(model$centred)) model$intercept else integer()
  slopes <- setdiff(seq_len(model$p), icpt)
  gaussian <- model$family == "gaussian"
  out <- list()
  autoscaled <- function(pr) isTRUE(pr$autoscale)
  if (length(icpt)) {
    pi <- model$prior_intercept
    spec <- pi
    if (is.null(spec$location)) spec$location <- model$prior_loc[icpt]
    moved <- gaussian && autoscaled(pi)
    out$intercept <- list(title = "Intercept (after predictors centered)",
                          specified = describe_prior(spec, 1L),
                          adjusted = if (moved)
                            sprintf("normal(location = %s, scale = %s)",
                                    num4(model$prior_loc[icpt]), num4(model$prior_scale[icpt])))
  }
  if (length(slopes)) {
    k <- length(slopes)
    used <- list(family = "normal", location = model$prior_loc[slopes],
                 scale = model$prior_scale[slopes])
    out$coefficients <- list(title = "Coefficients", specified = describe_prior(model$prior, k),
                             adjusted = if (autoscaled(model$prior)) describe_prior(used, k))
  }
  # rstanarm autoscales sigma's prior, not the negative binomial's phi
  if (length(model$aux_name))
    out$aux <- list(title = paste0("Auxiliary (", model$aux_name, ")"),
                    specified = describe_prior(model$prior_aux, 1L),
                    adjusted = if (gaussian && autoscaled(model$prior_aux))
                      sprintf("exponential(rate = %s)", num4(model$aux_rate)))
  same <- function(v) if (length(unique(v)) == 1L) num4(v[1]) else
    paste0("[", paste(num4(v), collapse = ","), "]")
  out$covariance <- list(title = "Covariance", adjusted = NULL,
                         specified = sprintf("decov(reg. = %s, conc. = %s, shape = %s, scale = %s)",
                                             same(model$decov_regularization),
                                             same(model$decov_concentration),
                                             same(model$decov_shape), same(model$decov_scale)))
  out
}
