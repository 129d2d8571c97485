# The contract between a model and the rest of the package. A model is a C
# table (src/model_table.c: densities, gradients, each row's log likelihood)
# and an R object of class c("sgld_model_<type>", "sgld_model") whose S3
# methods answer the generics below; the generic code (methods.R, predict.R,
# run.R, vi.R, auto.R, warnings.R, monitor.R) asks these generics and never
# tests a model's class. Each generic has a default, so a model implements
# only where it differs.

# ---- what a model can do ------------------------------------------------------

# A named list of flags:
#   regression         predictions from a linear predictor x'beta (+ offset):
#                      predict(), log_lik(), posterior_predict(), fitted(),
#                      residuals(), family() and loo()
#   laplace            one mode, so that a Laplace approximation describes the
#                      posterior (lr = "auto", bbb()'s start); FALSE where the
#                      posterior has several modes by construction
#   smooth_likelihood  log density twice differentiable everywhere (the Stein
#                      check of warnings.R uses finite differences of it)
#   exact_posterior    the posterior in closed form (linear_exact_posterior())
#   natural_gradient   a square matrix parameter (the "natural" rule)
#   portable           can be sent to another R process (parallel = "future")
#   calls_r            its densities are R functions, so each evaluation costs
#                      R's overhead and may have side effects
#   mixing_transform   a user transform that may mix the parameters
model_capabilities <- function(model) UseMethod("model_capabilities")

model_capabilities.default <- function(model) {
  list(regression = FALSE, laplace = TRUE, smooth_likelihood = FALSE,
       exact_posterior = FALSE, natural_gradient = FALSE, portable = TRUE,
       calls_r = FALSE, mixing_transform = FALSE)
}

# Which optional functions the model's C table has (src/model_contract.c):
# loglik_rows, grad_loglik_local, expected_loglik, local_params,
# main_thread_only, path_gaussian, logpost_coordinate.
model_engine <- function(model) .Call(C_sgld_model_info, model)

# For the coordinate updates (src/coordinate.c), in models whose C table has
# logpost_coordinate: a list with, per coefficient j, the rows where its
# covariate is not zero (0-based), all that its full conditional reads, or
# NULL where j is no coefficient (a dispersion: it reads every row); NULL
# for the whole where the rows cannot be listed (data in a file). The
# default reads the regressions' dense (p + 1) x n rows `z`.
model_coordinate_rows <- function(model, j) UseMethod("model_coordinate_rows")
model_coordinate_rows.default <- function(model, j) {
  if (isTRUE(model$sparse == 1L)) return(sparse_coordinate_rows(model, j))
  if (is.null(model$z) || is.null(model$p)) return(NULL)
  lapply(j, function(k) if (k <= model$p) which(model$z[k, ] != 0) - 1)
}

# ---- the regression face --------------------------------------------------------

# The model's family (stats::family() object) for family().
model_family <- function(model) UseMethod("model_family")
model_family.default <- function(model) {
  abort("family() is defined for regression models, not ", class(model)[1], ".")
}

# The link function of the expected response: "identity", "logit" or "log"
# (predict() applies its inverse in C, src/predict.c).
model_link <- function(model) UseMethod("model_link")
model_link.default <- function(model) "identity"

# The expected response given draws x observations linear predictors `eta`
# and the draws W (sampler scale, one per row).
model_mean <- function(model, eta, W) UseMethod("model_mean")
model_mean.default <- function(model, eta, W) eta

# One draw of the response per entry of `eta` (draws x observations), given
# the draws W and the rows' likelihood fields `rows` (model_rows()).
model_response_draws <- function(model, eta, W, rows) UseMethod("model_response_draws")

# Quantities derived from a model's parameters that users expect beside them
# (model_linear(): sigma beside sigma2), as columns computed from the columns
# of a user-scale draws matrix x; NULL when the model has none or x lacks
# what they need.
model_derived <- function(model, x) UseMethod("model_derived")
model_derived.default <- function(model, x) NULL

# The mean over the training rows of each draw's residual variance (one per
# draw), given the expected responses mu (draws x rows; counts where the
# response gave binomial trials) and the draws W (sampler scale), for
# bayes_R2() (R/r-squared.R).
model_residual_variance <- function(model, mu, W, trials) UseMethod("model_residual_variance")
model_residual_variance.default <- function(model, mu, W, trials) {
  abort("bayes_R2() and loo_R2() are available for fits of regression models (model_linear(), ",
        "model_logistic(), model_poisson(), model_negbin()), not ", class(model)[1], ".")
}

# The observed response in the scale of model_mean(), for residuals().
model_observed <- function(model) UseMethod("model_observed")
model_observed.default <- function(model) stored_response(model)   # R/design-sparse.R

# ---- each row's log likelihood ---------------------------------------------------

# The draws x rows matrix of log f(z_i | w_s), W one draw per row (sampler
# scale), over the model's own rows (each with its case weight; in memory or
# on a file), computed in C by the model's table, `threads` threads sharing
# the rows.
model_loglik_rows <- function(model, W, threads = getOption("sgld.threads", 1L)) {
  # rows held elsewhere (shards, R/model-sharded.R) answer themselves
  own <- model_loglik_elsewhere(model, W)
  if (!is.null(own)) return(own)
  W <- t(W)
  storage.mode(W) <- "double"
  .Call(C_sgld_pointwise_loglik, model, W, as.integer(threads))
}

# The model holding other rows of the same kind, given as a data frame with
# the formula's variables (or, for a model built from a matrix, a list with
# `x` and `y`), the response coded as in training, and their offsets.
held_out_model <- function(model, newdata) UseMethod("held_out_model")

held_out_model.default <- function(model, newdata) {
  if (is.null(model$terms)) {
    if (!is.list(newdata) || is.data.frame(newdata) || !all(c("x", "y") %in% names(newdata)))
      abort("`newdata` must be a list with `x` and `y` for a model built from a matrix.")
    X <- design_for_newdata(model, newdata$x)
    y <- newdata$y
  } else {
    X <- design_for_newdata(model, newdata)
    resp <- model$formula[[2L]]
    missing_resp <- setdiff(all.vars(resp), names(newdata))
    if (length(missing_resp))
      abort("`newdata` has no response column '", missing_resp[1], "'.")
    y <- eval(resp, newdata, environment(model$formula))
  }
  if (NROW(y) != nrow(X))
    abort("`newdata`: the response has length ", NROW(y), " but there are ", nrow(X), " rows.")
  with_offset(set_model_data(in_memory(model), X, response_like(model, y)), attr(X, "offset"))
}

# The model with per-row offsets `offset` (NULL: none) in the likelihood.
with_offset <- function(model, offset) UseMethod("with_offset")
with_offset.default <- function(model, offset) {
  model$obs_offset <- offset
  model
}

# A held-out response coded as the model's C side reads it.
response_like <- function(model, y) UseMethod("response_like")

# ---- the two scales and the starting values -------------------------------------
# Samplers move unconstrained parameters; users see them on their natural
# scale. Each model says how to go from one to the other, one draw per row;
# by default the columns model$log_scale are sampled as their logarithms.

to_user_scale <- function(model, w) UseMethod("to_user_scale")
to_user_scale.default <- function(model, w) {
  for (j in model$log_scale) w[, j] <- exp(w[, j])
  w
}

to_sampler_scale <- function(model, w) UseMethod("to_sampler_scale")
to_sampler_scale.default <- function(model, w) {
  for (j in model$log_scale) w[, j] <- log(w[, j])
  w
}

# Stops unless every row of w is a valid point on the user scale (for init).
check_user_values <- function(model, w, arg) UseMethod("check_user_values")
check_user_values.default <- function(model, w, arg) invisible()

# The model's default start on the user's scale: a vector for every chain, or
# (models whose chains should start apart, such as networks) a matrix with one
# row per chain.
initial_values <- function(model, chains) UseMethod("initial_values")
initial_values.default <- function(model, chains) model$default_init

# ---- full-data quantities ------------------------------------------------------

# Each row's log likelihood at each draw (draws x rows) computed where the
# rows live, or NULL for the C table's loglik_rows (model_loglik_rows()).
model_loglik_elsewhere <- function(model, W) UseMethod("model_loglik_elsewhere")
model_loglik_elsewhere.default <- function(model, W) NULL

# Newton's search for the mode from `init` (sampler's scale): a list with
# sampler, gradient, log_posterior, iterations, converged, passes and
# hessian (of the log posterior), or NULL where the model has no Hessian
# (posterior_mode() then searches by BFGS). The default is the C search
# (src/mode.c); data in shards sum their workers' passes (R/model-sharded.R).
model_newton <- function(model, init, maxit) UseMethod("model_newton")
model_newton.default <- function(model, init, maxit) {
  .Call(C_sgld_posterior_mode, model,
        list(init = as.double(init), maxit = as.integer(maxit), tol = 1e-12))
}

# `settings$times` minibatch estimates of the log posterior's gradient at
# settings$w (batch_size, replace, cv_mode: src/gradient.c's
# sgld_gradient_draws()), one per row.
model_gradient_draws <- function(model, settings) UseMethod("model_gradient_draws")

# ---- a fit's summaries, where a model has its own ----------------------------

# coef() and sigma() of a fit of this model, or NULL for the generic ones (a
# multilevel model: each group's coefficients and the residual sd, as
# rstanarm's; R/model-glmm-methods.R).
model_fit_coef <- function(model, object) UseMethod("model_fit_coef")
model_fit_coef.default <- function(model, object) NULL
model_fit_sigma <- function(model, object) UseMethod("model_fit_sigma")
model_fit_sigma.default <- function(model, object) NULL

# Why `pars` cannot keep a subset of this model's parameters, for a model
# whose user transform mixes them (model_capabilities()$mixing_transform).
model_mixing_reason <- function(model) UseMethod("model_mixing_reason")
model_mixing_reason.default <- function(model)
  "a model_custom() with a `transform` keeps the draws of every parameter (its transform may mix them)"
model_gradient_draws.default <- function(model, settings) {
  .Call(C_sgld_gradient_draws, model, settings)
}
