#' Bayesian normal linear regression
#'
#' The model \eqn{y_i \mid \beta, \sigma^2 \sim N(x_i^\top \beta, \sigma^2)}{y_i | beta, sigma^2 ~ N(x_i' beta, sigma^2)}.
#' The default prior is rstanarm's `stan_glm()` default: each coefficient
#' \eqn{N(0, (2.5 s_y / s_j)^2)}{N(0, (2.5 s_y / s_j)^2)} (\eqn{s_y}{s_y} the
#' sd of the response, \eqn{s_j}{s_j} of column \eqn{j}{j} of the design), the
#' intercept at centred predictors \eqn{N(\bar y, (2.5 s_y)^2)}{N(mean(y), (2.5 s_y)^2)}
#' and \eqn{\sigma \sim}{sigma ~} Exponential(rate \eqn{1/s_y}{1/s_y}); see
#' [prior_normal()] and [prior_summary()][prior_summary.sgld_fit]. The
#' conjugate normal-inverse-gamma prior, `prior = prior_nig()`, has a
#' posterior in closed form ([linear_exact_posterior()]). The samplers move
#' \eqn{w = (\beta, \log \sigma^2)}{w = (beta, log sigma^2)}; draws are reported as `(Intercept)`, the
#' covariate names and `sigma2`.
#'
#' There are two faces, as with [lm()] and [lm.fit()]: a formula with a data
#' frame (factors and character columns become indicator columns through
#' [model.matrix()]), or a numeric design matrix with a response vector (no
#' intercept is added: include a column of ones for one).
#'
#' The data are checked once here and stored observation by observation
#' (the transposed design with the response as its last row), so a minibatch
#' reads contiguous memory.
#'
#' @param x A formula `response ~ covariates`, a numeric design matrix, a
#'   sparse matrix of the Matrix package (`dgCMatrix`, `dgRMatrix`,
#'   `dgTMatrix`, ...; a pattern matrix is refused, as its values are
#'   unknown), or a file-backed `bigmemory::big.matrix` (or its descriptor,
#'   from `bigmemory::describe()`) of type double or float; see the section
#'   "Data in a file". A sparse matrix with at most a quarter of its entries
#'   non-zero is stored by rows of non-zeros, built in O(non-zeros) without
#'   the dense matrix; a formula with a factor of more than 100 levels builds
#'   its design sparse ([Matrix::sparse.model.matrix()], with [glm()]'s
#'   columns and contrasts).
#' @param data A data frame holding the variables of the formula.
#' @param y The response, for the matrix face: a numeric vector with one value
#'   per row of `x`; for a big.matrix also the name or number of one of its
#'   columns (the other columns are then the covariates).
#' @param prior The coefficients' prior: [prior_normal()] (the default,
#'   `prior_normal(0, 2.5, autoscale = TRUE)`); or
#'   [prior_nig()], the conjugate prior of the coefficients and
#'   \eqn{\sigma^2}{sigma^2} together (then `prior_intercept` and `prior_aux`
#'   must not be given).
#' @param prior_intercept The prior of the intercept at centred predictors
#'   (of \eqn{\alpha + \bar x^\top\beta}{alpha + xbar' beta}, rstanarm's
#'   convention; the draws are of the intercept \eqn{\alpha}{alpha} of the
#'   predictors as given), a [prior_normal()]: by default
#'   `prior_normal(NULL, 2.5, autoscale = TRUE)`, centred at the mean of the
#'   response. `NULL` gives the intercept `prior`, on the predictors as given.
#'   Used when the design has a column named `"(Intercept)"`.
#' @param prior_aux The prior of the residual sd \eqn{\sigma}{sigma}:
#'   [prior_exponential()], by default `prior_exponential(1, autoscale = TRUE)`,
#'   of rate \eqn{1/s_y}{1/s_y}.
#' @param subset,weights,offset,na.action As in [lm()] and [glm()], for the
#'   formula face: `subset` selects rows of `data`; `weights` are case
#'   weights (observation i counts `weights[i]` times: its log likelihood is
#'   multiplied by it, so integer weights give the posterior of the data with
#'   rows replicated, and minibatches estimate the weighted sum as they do the
#'   plain one); `offset` is added to the linear predictor (as are `offset()`
#'   terms of the formula; [predict.sgld_fit()] evaluates it in `newdata`);
#'   `na.action` is [na.fail()] (the default: missing values are an error) or
#'   [na.omit()]. All three are evaluated in `data`, then in the formula's
#'   environment.
#' @param ... Not used; an error if given.
#' @return An object of class `sgld_model_linear` (and `sgld_model`) to pass to
#'   [sgld()], [sgd()] or [gd()].
#' @section Starting values:
#' Unless `init` is given, samplers start every chain at the prior's centre
#' for the coefficients (the intercept where the centred intercept is at its
#' prior's centre) and at \eqn{\sigma^2}{sigma^2} = the sample variance of the response.
#' @section Data in a file:
#' Given a file-backed big.matrix (`bigmemory::filebacked.big.matrix()`, not
#' separated; its backing file holds the matrix column-major), the model
#' writes once a copy of the covariates and response with each observation's
#' values together, and reads minibatches from a memory map of that copy: the
#' data never enter R's memory, and the operating system's page cache holds
#' what fits. The copy is kept in the cache directory
#' `getOption("sgld.cache_dir")` (by default `tools::R_user_dir("sgld",
#' "cache")`), never beside your data, under a name made from what it
#' derives from (the backing file's path, size and modification time, the
#' columns, the response and its coding): models on the same content share
#' one copy, other models never read it, and copies of an earlier state of
#' the same backing file are removed when a model is built on the new one.
#' It takes as much disk as the data; delete the directory to reclaim it
#' (models on it must then be built again). Before each run the copy and
#' the backing file are checked: a copy that is missing, truncated or
#' modified, or a backing file changed since the model was built, is an
#' error that says which. The model object stores the paths, not the data,
#' so it is small, can be saved, and can be sent to another process that
#' sees the same files (e.g. chains on a `future` plan, `parallel =
#' "future"` in [sgld()]; workers on other machines need a cache directory
#' they share). Control variates, [posterior_mode()] and the monitor make
#' passes over the file. The draws equal those of the same data in memory.
#' Needs `mmap`: Linux and macOS, not Windows. Predictions need `newdata`.
#' See `vignette("large-data")`.
#' @seealso [linear_exact_posterior()] for the exact posterior of this model.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' m
#' m2 <- model_linear(cbind(1, handout$x), handout$y)
#' @export
model_linear <- function(x, ...) UseMethod("model_linear")

#' @rdname model_linear
#' @export
model_linear.formula <- function(x, data, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                 prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                 prior_aux = prior_exponential(1, autoscale = TRUE), subset,
                                 weights, offset, na.action = na.fail, ...) {
  check_dots_empty(...)
  check_nig_alone(prior, missing(prior_intercept), missing(prior_aux))
  design <- design_from_formula(x, data, frame_extras(match.call()), na.action)
  y <- design$y
  if (!is.numeric(y) || is.matrix(y))
    abort("the response of `x` must be a numeric vector, not ", class(y)[1], ".")
  # an offset moves the response: y - offset ~ N(x' beta, sigma2); rstanarm
  # scales its priors by the response as observed
  y_obs <- as.double(y)
  y <- y_obs - if (is.null(design$offset)) 0 else design$offset
  if (all(y == y[1])) stop_constant_response(y[1])   # R/file-backed.R
  m <- add_formula_parts(new_model_linear(design$X, y, prior, prior_intercept, prior_aux,
                                          y_obs), design)
  m$obs_weight <- design$weights
  m
}

#' @rdname model_linear
#' @export
model_linear.default <- function(x, y, prior = prior_normal(0, 2.5, autoscale = TRUE),
                                 prior_intercept = prior_normal(NULL, 2.5, autoscale = TRUE),
                                 prior_aux = prior_exponential(1, autoscale = TRUE), ...) {
  check_dots_empty(...)
  check_nig_alone(prior, missing(prior_intercept), missing(prior_aux))
  if (is_file_matrix(x)) return(file_model_linear(x, y, prior, prior_intercept, prior_aux))
  x <- check_design_matrix(x, keep_sparse = TRUE)
  check_response_length(y, x)
  if (!is.numeric(y) || any(!is.finite(y)))
    abort("`y` must be a finite numeric vector; it has ",
          if (is.numeric(y)) format(y[!is.finite(y)][1]) else class(y)[1],
          if (is.numeric(y)) paste0(" at position ", which(!is.finite(y))[1]), ".")
  if (all(y == y[1])) stop_constant_response(y[1])
  new_model_linear(x, as.double(y), prior, prior_intercept, prior_aux)
}

# prior_nig() is the joint prior of the coefficients and sigma2: the other
# two priors, given beside it, would be ignored.
check_nig_alone <- function(prior, no_intercept_prior, no_aux_prior) {
  if (inherits(prior, "sgld_prior") && identical(prior$family, "nig")) {
    if (!no_intercept_prior)
      abort("`prior_intercept` cannot be given with `prior = prior_nig()`, the joint prior ",
            "of every coefficient and sigma2.")
    if (!no_aux_prior)
      abort("`prior_aux` cannot be given with `prior = prior_nig()`, the joint prior ",
            "of every coefficient and sigma2.")
  }
}

# y: the response the likelihood reads (net of an offset); y_obs: as
# observed, which autoscaling reads (rstanarm's sd(y) and mean(y)).
new_model_linear <- function(X, y, prior, prior_intercept, prior_aux, y_obs = y) {
  n <- nrow(X)
  p <- ncol(X)
  coef_names <- colnames(X)
  if (n < 2L) abort("`data` must have at least 2 observations, not ", n, ".")
  nig <- inherits(prior, "sgld_prior") && identical(prior$family, "nig")
  m <- list(type = "linear", p = p, n = as.double(n), prior = prior, prior_nig = as.integer(nig))
  if (nig) {
    pr <- resolve_prior_nig(prior, p, coef_names)
    m <- c(m, list(prior_mean = pr$mean, prior_vinv = pr$vinv,
                   prior_vinv_diag = as.integer(pr$vinv_diag), prior_shape = pr$shape,
                   prior_rate = pr$rate, prior_const = pr$const, prior_V = pr$V))
    init <- pr$mean
  } else {
    if (!inherits(prior, "sgld_prior") || prior$family != "normal")
      abort("`prior` must be made by prior_normal() or prior_nig(), not ",
            if (inherits(prior, "sgld_prior")) paste0("a ", prior$family, " prior")
            else describe(prior), ".")
    pr <- resolve_coef_prior(prior, prior_intercept, X, y_obs)
    m <- c(m, coef_prior_fields(pr),
           list(prior_intercept = prior_intercept, prior_aux = prior_aux,
                prior_sigma_rate = resolve_aux_prior(prior_aux, response_moments(y_obs)[2],
                                                     "sigma")))
    init <- prior_centre_point(pr)
  }
  check_rank(X)  # R/design.R
  m <- c(m, list(
    # a sparse design with at most a quarter non-zeros keeps its rows sparse
    sparse = as.integer(is_sparse_design(X) && design_density(X) <= 0.25),
    d = p + 1L,
    names = c(coef_names, "sigma2"),
    sampler_names = c(coef_names, "log_sigma2"),
    default_init = c(init, var(y)),
    log_scale = p + 1L   # sigma2 is sampled as its logarithm
  ))
  m <- structure(m, class = c("sgld_model_linear", "sgld_model"))
  store_rows(m, X, y)   # R/design-sparse.R
}

#' @export
print.sgld_model_linear <- function(x, ...) {
  cat("Bayesian linear regression: ", format(x$n, big.mark = ","), " observations, ",
      x$p, " coefficient", if (x$p > 1) "s", " (", paste(x$names[seq_len(x$p)], collapse = ", "),
      ") and sigma2\n", sep = "")
  if (!is.null(x$formula)) cat("Formula: ", deparse(x$formula), "\n", sep = "")
  print_observation_fields(x)
  if (!identical(x$prior_nig, 0L)) {   # saved before rstanarm's prior: NIG
    print(x$prior)
  } else {
    print_coef_priors(x)
    cat("sigma: exponential(rate = ", format(x$prior_sigma_rate, digits = 4), ")\n", sep = "")
  }
  invisible(x)
}

# ---- the model's contract (R/model.R) ------------------------------------------

model_capabilities.sgld_model_linear <- function(model) {
  utils::modifyList(NextMethod(), list(regression = TRUE, smooth_likelihood = TRUE,
                                exact_posterior = !identical(model$prior_nig, 0L)))
}
model_family.sgld_model_linear <- function(model) stats::gaussian()
model_link.sgld_model_linear <- function(model) "identity"
model_response_draws.sgld_model_linear <- function(model, eta, W, newdata) {
  # the residual sd of each draw, recycled down the columns (one per draw)
  eta + matrix(stats::rnorm(length(eta)), nrow(eta)) * sqrt(exp(W[, model$d]))
}
# The normal-inverse-gamma prior (R/priors.R), per parameter in words;
# rstanarm's as the other regressions' (R/prior-summary.R).
model_prior_rows.sgld_model_linear <- function(model) {
  if (identical(model$prior_nig, 0L))
    return(c(coef_prior_rows(model),
             sprintf("sigma ~ exponential(rate = %s)", format(model$prior_sigma_rate, digits = 4))))
  num <- function(v) format(v, digits = 4, trim = TRUE)
  V <- as.matrix(model$prior_V)   # p x p
  pr <- model$prior
  mu <- rep_len(pr$mean, model$p)
  off <- V
  diag(off) <- 0
  c(sprintf("normal(mean = %s, sd = %s * sigma), given sigma2%s", num(mu), num(sqrt(diag(V))),
            if (any(off != 0)) ", correlated (V is not diagonal)" else ""),
    sprintf("inverse-gamma(shape = %s, rate = %s)", num(pr$shape), num(pr$rate)))
}

# rstanarm and brms report the residual sd; sigma2 stays the parameter
model_derived.sgld_model_linear <- function(model, x) {
  if (!"sigma2" %in% colnames(x)) return(NULL)
  cbind(sigma = sqrt(x[, "sigma2"]))
}
# bayes_R2(): sigma2 of each draw, sampled as its logarithm
model_residual_variance.sgld_model_linear <- function(model, mu, W, trials) exp(W[, model$d])
# the stored response is net of the offset
model_observed.sgld_model_linear <- function(model) {
  stored_response(model) + if (is.null(model$offset)) 0 else model$offset
}
with_offset.sgld_model_linear <- function(model, offset) {
  if (is.null(offset)) return(model)
  if (!is.null(model$sp_y)) model$sp_y <- model$sp_y - offset
  else model$z[model$p + 1L, ] <- model$z[model$p + 1L, ] - offset
  model
}
response_like.sgld_model_linear <- function(model, y) {
  if (!is.numeric(y) || any(!is.finite(y)))
    abort("`newdata`: the response must be finite numbers.")
  as.double(y)
}

check_user_values.sgld_model_linear <- function(model, w, arg) {
  if (any(w[, model$d] <= 0)) abort("`", arg, "`: sigma2 must be positive.")
}


#' Log posterior and its gradient
#'
#' Evaluates a model's log likelihood, log prior and their gradients over the
#' full data at one point on the sampler's (unconstrained) scale, by the same
#' C code the samplers use. The log prior includes the Jacobian of the
#' transformation to the sampler's scale (for [model_linear()],
#' \eqn{\sigma^2 = e^\gamma}{sigma^2 = e^gamma}).
#'
#' @param model A model, e.g. from [model_linear()].
#' @param w A numeric vector: one point on the sampler's scale, in the order of
#'   `model$sampler_names`.
#' @return A list with `loglik`, `logprior`, `logpost` (their sum), and the
#'   gradients `grad_loglik`, `grad_logprior` and `grad_logpost`.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' log_posterior(m, c(0, 0.9, log(0.19)))$grad_logpost
#' @export
log_posterior <- function(model, w) {
  check_model(model)
  if (!is.numeric(w) || length(w) != model$d || any(!is.finite(w)))
    abort("`w` must be a finite numeric vector of length ", model$d, " (",
          paste(model$sampler_names, collapse = ", "), ").")
  check_densities(model, "log_posterior()")
  r <- .Call(C_sgld_model_eval, model, as.double(w))
  stop_on_failure(model)
  names(r$grad_loglik) <- names(r$grad_logprior) <- model$sampler_names
  list(loglik = r$loglik, logprior = r$logprior, logpost = r$loglik + r$logprior,
       grad_loglik = r$grad_loglik, grad_logprior = r$grad_logprior,
       grad_logpost = r$grad_loglik + r$grad_logprior)
}

check_model <- function(model, arg = "model") {
  if (!inherits(model, "sgld_model"))
    abort("`", arg, "` must be a model made by model_linear() or another model_*() ",
          "function, not ", describe(model), ".")
  invisible(model)
}
