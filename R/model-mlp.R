#' Bayesian neural network (multilayer perceptron)
#'
#' A fully connected network with `length(hidden)` hidden layers of ReLU or
#' tanh units and a linear output layer,
#' \eqn{a_l = \mathrm{act}(W_l a_{l-1} + b_l)}{a_l = act(W_l a_(l-1) + b_l)},
#' with a Gaussian likelihood \eqn{y \sim N(f(x), \sigma^2)}{y ~ N(f(x), sigma2)}
#' (`family = "gaussian"`, \eqn{\log\sigma^2}{log sigma2} sampled), a
#' Bernoulli one with \eqn{P(y = 1) = 1/(1 + e^{-f(x)})}{P(y = 1) = 1 / (1 + exp(-f(x)))}
#' (`"binomial"`) or a softmax over the classes (`"categorical"`). The
#' log likelihood and its gradient (by backpropagation over each minibatch)
#' are computed in C, so every sampler and optimiser of the package runs on
#' it: [sgd()], [sgld()], [psgld()], [sghmc()], control variates, [mala()].
#'
#' Inputs are standardised with the training data's means and standard
#' deviations (a constant column is only centred), and so is a Gaussian
#' response; `sigma2` is then the noise variance on the standardised scale
#' (multiply by `model$y_sd^2` for the response's units). Predictions
#' ([predict()][predict.sgld_fit]) and held-out metrics ([monitor_every()])
#' are on the user's scale.
#'
#' Parameters are named `W<l>[j,k]` (the weight from unit k of layer l-1 to
#' unit j of layer l; layer 0 is the input), `b<l>[j]`, `precision<l>` (a
#' sampled hierarchical prior's precision of layer l) and `sigma2`.
#'
#' `sgld(model)` with nothing else samples a network with settings it
#' chooses itself: see "Automatic settings".
#'
#' @section Priors:
#' `prior = NULL` (the default) is, for regression, the hierarchical prior
#' `prior_gamma(1, 1, integrate = TRUE)` and, for classes, \eqn{N(0, 0.3^2)}{N(0, 0.3^2)}
#' on every weight and bias. `prior_normal(0, sd)` fixes the prior sd,
#' one number for all layers or one per weight layer (`length(hidden) + 1`).
#' `prior_gamma(shape, rate)` makes the prior hierarchical: the weights and
#' biases of layer l are \eqn{N(0, 1/\lambda_l)}{N(0, 1/lambda_l)} with
#' \eqn{\lambda_l \sim \mathrm{Gamma}(shape, rate)}{lambda_l ~ Gamma(shape, rate)}
#' sampled jointly with the weights (as \eqn{\log\lambda_l}{log lambda_l}); with
#' `integrate = TRUE` each \eqn{\lambda_l}{lambda_l} is integrated out, which
#' leaves the layer's \eqn{N_l}{N_l} weights and biases the multivariate t prior
#' \eqn{p(w_l) \propto (rate + \|w_l\|^2/2)^{-(shape + N_l/2)}}{p(w_l)
#' proportional to (rate + |w_l|^2 / 2)^(-(shape + N_l/2))}: the same prior
#' on the weights, with no precision whose slow coupling to its weights (a
#' funnel) the chains must explore. For regression the noise precision
#' \eqn{1/\sigma^2 \sim \mathrm{Gamma}}{1/sigma2 ~ Gamma}(`prior_noise`).
#'
#' Why these defaults (`bench/uci.R`, `bench/fashion-mnist.R`; SGLD at lr
#' \eqn{10^{-5}}{1e-5}, batch 32, 2 chains of 160,000 iterations on Boston,
#' one hidden layer of 50 units): over splits 1-4, test RMSE / log density
#' 2.59 / -2.37 with the sampled hierarchical prior, 2.69 / -2.38 with
#' \eqn{N(0, 0.3^2)}{N(0, 0.3^2)}; on splits 1-2 \eqn{N(0, 1/\mathrm{fan\_in})}{N(0, 1/fan_in)}
#' was 0.07 worse in RMSE than the hierarchical prior, with R-hat 1.24-1.29 on the
#' log likelihood, and \eqn{N(0, 1)}{N(0, 1)} worse still (R-hat of
#' `sigma2` 3.2). Integrating the precisions out changed neither figure
#' (split 1: 3.05-3.09 / -2.49 to -2.50) but the convergence: on 4 chains
#' of 200,000 iterations the log likelihood's R-hat was 1.01-1.03 with
#' 175-800 effective draws, where the sampled precisions of the same runs
#' had R-hat 1.1-1.9 and 7-40 effective draws. On Fashion-MNIST (784 inputs,
#' 400 units, 10,000 images) the hierarchical prior made every weight small
#' (\eqn{\lambda_1 \approx 380}{lambda_1 about 380}) and lost two points of
#' accuracy (0.838 sampled; 0.71 after an Adam pilot, which it collapsed),
#' where \eqn{N(0, 0.3^2)}{N(0, 0.3^2)} gave 0.86, and
#' \eqn{N(0, 1/\mathrm{fan\_in})}{N(0, 1/fan_in)} left every method underconfident.
#'
#' @section Automatic settings:
#' `sgld(model)` (`lr = "auto"`) runs 4 chains (or `chains`), each from its
#' own random start:
#' 1. *Pilot.* Adam (learning rate \eqn{10^{-3}}{1e-3}, decayed to 0 along a
#'    cosine) for at most 10,000 iterations and 80% of the chain's, to a mode.
#'    Adam's step does not depend on the gradient's scale, so one learning
#'    rate serves every network.
#' 2. *Step.* At each pilot's end 20-100 minibatch gradients give the
#'    covariance of the minibatch estimate and, through it, the curvature
#'    \eqn{\lambda}{lambda} (the Fisher information's largest eigenvalue) and the
#'    sampling threshold \eqn{\alpha = \eta (n - m)/m\, \lambda/2}{alpha =
#'    eta (n - m) / m lambda / 2} of a step \eqn{\eta}{eta} with batch \eqn{m}{m}.
#'    The step is the smallest of: \eqn{\alpha = 20}{alpha = 20}; \eqn{3/\lambda}{3/lambda};
#'    and the larger of \eqn{0.1/\lambda}{0.1/lambda} and the step that moves
#'    the weights the data leave to the prior through 25 of their relaxation
#'    times (this one binds only for small networks, which run up to
#'    500,000 iterations).
#' 3. *Run.* Plain SGLD at that step from the pilot's end, batch
#'    \eqn{\max(32, n/600)}{max(32, n/600)} (all rows up to 32), first
#'    for 4,000 epochs (a quarter burn-in), then on in pieces, each
#'    continuing the last, until the draws pin the predictive mean down:
#'    its Monte Carlo error on up to 200 training rows, from the spread of
#'    the chains' means (each chain has its own start and pilot, so this is
#'    the error a repeat of the whole run shows), at most 0.1 of the
#'    predictive sd (root mean square over the rows). Each further piece is
#'    as long as the last one's error asks for (the earlier pieces become
#'    its burn-in). The 4,000 epochs are for the chains to leave the
#'    pilot's mode and settle, which no error from the draws so far shows
#'    (Concrete's test RMSE fell from 4.8 to 4.1 over the first 2,200
#'    epochs while that error was already below 0.1); at the noise bound's
#'    step an epoch relaxes every direction the data determine by the same
#'    amount whatever the rows (40 times its curvature over the largest
#'    relaxation times). Bounds, not targets:
#'    at least 10 epochs a chain (the whole length where the step was set
#'    to relax the weights left to the prior in a network small enough
#'    for the 500,000 iterations to bind), and at most the budget of about
#'    \eqn{2\times 10^{10}}{2e10} multiply-adds of backpropagation (batch x
#'    parameters x iterations x chains: about 25 s on one core) and 500,000
#'    iterations. `print()` says why the run stopped. The draws are thinned
#'    to at most 1,000 a chain (fewer if the draws of every weight would
#'    take more than 256 MB), every parameter stored (`pars = TRUE`, for
#'    `predict()`); giving `iter`, `burnin`, `thin` or `pars` other than
#'    `TRUE` runs one piece of that length.
#' 4. *Checks.* Besides R-hat and the effective sample size of what is
#'    identified (below), the step against the curvature where the chains
#'    ended, and the sampling threshold there: above 0.5 or above 1 the fit
#'    warns once, with both figures, and names the step, batch and length
#'    for more exact draws.
#'
#' `print()` says what was chosen and `fit$auto` holds it. `batch_size`,
#' `iter` (the iterations after the pilot), `burnin`, `thin`, `chains`,
#' `init` (the pilot's start), `pars` and `temperature` are kept when given;
#' `init` may be an automatic fit, which the run continues at its step.
#' With `precondition` or `control_variates`, give `lr` yourself.
#'
#' What this measured. Boston's hand-tuned lr \eqn{10^{-5}}{1e-5} has a
#' sampling threshold of 9-17 at the end of its runs; the rule above gave
#' \eqn{1.0}{1.0}-\eqn{1.2 \times 10^{-5}}{1.2e-5} there, and smaller steps at the same
#' cost mix proportionally slower (5e-5, 2e-5 and 1e-5 at equal cost
#' improved, a larger batch at 1e-5 did not: `bench/uci.R`). Such a step is
#' large: the chains leave the pilot's mode for flatter regions (the
#' curvature fell from \eqn{3\times 10^5}{3e5} to \eqn{1.2\times 10^5}{1.2e5}) where the step is
#' still 1.2-1.6 over it, and against a full-data run at the same step
#' (no minibatch noise) `sigma2` came out 19-26% larger and the predictive
#' means at the 51 test points differed by a median 0.13 (at most 0.8)
#' predictive sds; so the fit warns of both, while its test RMSE and log
#' density equal the full-data run's (3.00-3.05 / -2.48 against 3.09 /
#' -2.50). On a 1-3-1 tanh network of 50 points, where the 500,000
#' iterations allow a smaller step, the predictive means at 10 points were
#' within 0.12-0.15 sd of 16 x 1,000,000 MALA iterations
#' (`data-raw/mlp-reference.R`) and the sds 0.99-1.11 times as wide (seeds
#' 2-4; two of the three fits warned of their step); with 100 relaxation
#' times and \eqn{0.25/\lambda}{0.25/lambda} the means were 0.17-0.41 sd off.
#' Over the 20 splits of the UCI protocol (`bench/uci.R`, one hidden layer
#' of 50 units; at most 39 and 50 CPU seconds a fit) test RMSE / log density
#' were 3.03 / -2.49 on Boston and 4.57 / -2.93 on Concrete, against 2.98 /
#' -2.47 and 4.60 / -2.95 for the hand-tuned SGLD on the same splits (paired
#' difference in RMSE +0.05 +- 0.02 and -0.03 +- 0.02, within one standard
#' error of the protocol's means) and 3.01 / -2.57 and 5.67 / -3.16 for PBP
#' (published); and better than `lm()` on two more regressions over 5 splits
#' (biomass 1.18 / -1.46 against 1.40 / -1.77, used-car prices 2068 / -9.06
#' against 2959 / -9.42):
#' `bench/uci-auto.md`. Every such fit warns of its step (above).
#'
#' @section Starting values and what is kept:
#' Unless `init` is given, each chain starts at its own random weights,
#' \eqn{N(0, 1/\mathrm{fan\_in})}{N(0, 1/fan_in)} (2/fan-in for ReLU), biases
#' 0, each sampled layer precision at its fan-in and \eqn{\sigma^2 = 1}{sigma2 = 1}
#' (the standardised response's variance); the draws come from R's generator,
#' so `set.seed()` fixes them. With `pars = NULL` and a learning rate given, a
#' sampler stores no weights, only the draws of `sigma2` and any sampled
#' precisions: the engine's running
#' moments still give every weight's posterior mean and sd (`summary()`,
#' `coef()`), and [monitor_every()] records held-out metrics during the run.
#' `predict()` needs the draws of every weight: pass `pars = TRUE` (the
#' automatic settings do).
#' R-hat and the effective sample size, which a sampler's fit checks when it
#' ends, are judged on `sigma2` and sampled precisions and, with every
#' parameter stored, on the log likelihood of up to 1000 training rows at
#' each draw and of 5 of those rows alone, not on the
#' weights: chains that agree on every prediction may hold the hidden units
#' in different orders. Chains that settled in different modes (on large
#' networks, as a rule) disagree on these too, and the fit says so.
#'
#' @section Methods of a fit:
#' With the draws of every weight (`pars = TRUE`, which the automatic
#' settings store), a sampler's fit answers [predict()][predict.sgld_fit]
#' (with `interval = "confidence"` or `"prediction"` for regression and two
#' classes: quantiles over the draws of the expected response, or of
#' [posterior_predict()][posterior_predict.sgld_fit]'s draws),
#' `posterior_predict()`, `predictive_interval()`, `pp_check()` (the
#' response as numbers: 0/1 for two classes, 1 to K for more),
#' `fitted()`, `residuals()`, `posterior_epred()` and `posterior_linpred()`
#' (the output layer's value: the mean, or the logit of the second class;
#' regression and two classes), and
#' `log_lik()`, so `loo::loo()` and `loo::waic()`: each row's log
#' likelihood at each draw, computed in C by the blocked forward pass the
#' samplers use, and for regression in the response's own units (the
#' standardised response's density divided by `model$y_sd`), so that it
#' compares with a [model_linear()] fit of the same data. `log_lik(fit,
#' newdata)` takes held-out rows with their response. The table of
#' [sgld_fit_methods] lists what each model answers.
#'
#' @param x A formula `response ~ inputs` (no intercept column is made: the
#'   biases play its part), or a numeric matrix of inputs.
#' @param data A data frame with the variables of the formula.
#' @param y The response, for the matrix face.
#' @param hidden The widths of the hidden layers: whole numbers >= 1;
#'   `integer(0)` for no hidden layer (a linear or logistic model).
#' @param activation `"relu"` or `"tanh"`.
#' @param family `"gaussian"`, `"binomial"` (two classes: 0/1, logical or a
#'   two-level factor) or `"categorical"` (a factor, character or integer
#'   response with two or more classes). If not given: `"gaussian"` for a
#'   numeric response, `"binomial"` for a logical or two-level one, else
#'   `"categorical"`.
#' @param prior `NULL`, [prior_normal()] with mean 0, or [prior_gamma()]; see
#'   Priors.
#' @param prior_noise [prior_gamma()]: the prior of the noise precision
#'   (regression only).
#' @param standardize Standardise the inputs (and a Gaussian response)?
#' @param ... Not used; an error if given.
#' @return An object of class `sgld_model_mlp` (and `sgld_model`).
#' @examples
#' m <- model_mlp(medv ~ ., data = MASS::Boston, hidden = 10)
#' m
#' set.seed(1)
#' fit <- sgd(m, lr = 1e-3, batch_size = 32, iter = 2000)
#' @export
model_mlp <- function(x, ...) UseMethod("model_mlp")

#' @rdname model_mlp
#' @export
model_mlp.formula <- function(x, data, hidden = 50, activation = c("relu", "tanh"),
                              family = c("gaussian", "binomial", "categorical"),
                              prior = NULL, prior_noise = prior_gamma(1, 1),
                              standardize = TRUE, ...) {
  check_dots_empty(...)
  design <- design_from_formula(x, data)
  X <- design$X[, colnames(design$X) != "(Intercept)", drop = FALSE]
  if (ncol(X) < 1L) abort("`x`: the formula has no inputs.")
  m <- new_model_mlp(X, design$y, hidden, activation, family, prior, prior_noise,
                     standardize, "the response of `x`")
  add_formula_parts(m, design)
}

#' @rdname model_mlp
#' @export
model_mlp.default <- function(x, y, hidden = 50, activation = c("relu", "tanh"),
                              family = c("gaussian", "binomial", "categorical"),
                              prior = NULL, prior_noise = prior_gamma(1, 1),
                              standardize = TRUE, ...) {
  check_dots_empty(...)
  x <- check_design_matrix(x)
  check_response_length(y, x)
  new_model_mlp(x, y, hidden, activation, family, prior, prior_noise, standardize, "`y`")
}

#' Gamma prior of a precision
#'
#' \eqn{\lambda \sim \mathrm{Gamma}(shape, rate)}{lambda ~ Gamma(shape, rate)}
#' (mean shape / rate), for the hierarchical prior of a [model_mlp()]
#' layer's weights or the noise precision of its regression.
#' @param shape,rate Positive numbers.
#' @param integrate For a network's layers: `FALSE` samples each layer's
#'   precision with its weights (as its logarithm); `TRUE` integrates it out,
#'   so that the layer's \eqn{N}{N} weights and biases have the multivariate
#'   t prior \eqn{p(w) \propto (rate + \|w\|^2/2)^{-(shape + N/2)}}{p(w)
#'   proportional to (rate + |w|^2 / 2)^(-(shape + N/2))}, the same prior on
#'   the weights with no precision to sample (see "Priors" in [model_mlp()]).
#' @return An object of class `sgld_prior`.
#' @examples
#' prior_gamma(1, 0.1)
#' prior_gamma(1, 1, integrate = TRUE)
#' @export
prior_gamma <- function(shape = 1, rate = 1, integrate = FALSE) {
  check_number(shape, "shape", lower = 0, lower_open = TRUE)
  check_number(rate, "rate", lower = 0, lower_open = TRUE)
  check_flag(integrate, "integrate")
  structure(list(family = "gamma", shape = as.double(shape), rate = as.double(rate),
                 integrate = integrate),
            class = c("sgld_prior_gamma", "sgld_prior"))
}

#' @export
print.sgld_prior_gamma <- function(x, ...) {
  cat("Gamma prior of a precision: shape ", format(x$shape), ", rate ", format(x$rate),
      if (isTRUE(x$integrate)) " (integrated out of a network layer's prior)", "\n", sep = "")
  invisible(x)
}

mlp_families <- c("gaussian", "binomial", "categorical")

# prior = NULL: see the section "Priors" of ?model_mlp for the measurements.
mlp_default_prior <- function(family) {
  if (family == "gaussian") prior_gamma(1, 1, integrate = TRUE) else prior_normal(0, 0.3)
}

check_hidden <- function(hidden) {
  if (is.null(hidden)) return(integer())
  if (!is.numeric(hidden) || is.object(hidden) || any(!is.finite(hidden)) ||
      any(hidden != round(hidden)) || any(hidden < 1))
    abort("`hidden` must be the widths of the hidden layers, whole numbers >= 1 ",
          "(integer(0) for no hidden layer), not ", describe(hidden),
          if (is.numeric(hidden) && length(hidden)) paste0(" (", paste(format(hidden), collapse = ", "), ")"),
          ".")
  if (any(hidden > 1e5)) abort("`hidden`: a layer of more than 100000 units is not supported.")
  as.integer(hidden)
}

# The response coded for the C model: Gaussian as it is (standardised later),
# binomial 0/1, categorical 0..K-1; with the class labels.
mlp_response <- function(y, family, what) {
  if (family == "gaussian") {
    if (!is.numeric(y) || is.object(y) || any(!is.finite(y)))
      abort(what, " must be finite numbers for family = \"gaussian\"",
            if (is.factor(y) || is.character(y)) " (use family = \"binomial\" or \"categorical\" for classes)",
            ".")
    return(list(y = as.double(y), labels = NULL))
  }
  if (family == "binomial") {
    b <- binary_response(y, what)
    return(list(y = (as.double(b) + 1) / 2, labels = attr(b, "labels")))
  }
  if (anyNA(y)) abort(what, " has missing values (first at ", which(is.na(y))[1], ").")
  f <- if (is.factor(y)) droplevels(y) else if (is.character(y) || is.logical(y) ||
         is.numeric(y) && all(y == round(y))) factor(y) else
    abort(what, " must be a factor, character, logical or whole numbers for family = ",
          "\"categorical\", not ", describe(y), ".")
  if (nlevels(f) < 2L)
    abort(what, " must have at least two classes; it has one ('", levels(f)[1], "').")
  list(y = as.double(as.integer(f) - 1L), labels = levels(f))
}

guess_family <- function(y) {
  if (is.logical(y)) return("binomial")
  if (is.factor(y) || is.character(y))
    return(if (length(unique(y[!is.na(y)])) == 2L) "binomial" else "categorical")
  "gaussian"
}

new_model_mlp <- function(X, y, hidden, activation, family, prior, prior_noise, standardize,
                          what) {
  n <- nrow(X)
  if (n < 2L) abort("`data` must have at least 2 observations, not ", n, ".")
  hidden <- check_hidden(hidden)
  activation <- check_choice(activation, c("relu", "tanh"), "activation")
  family <- if (identical(family, mlp_families)) guess_family(y)
            else check_choice(family, mlp_families, "family")
  check_flag(standardize, "standardize")
  if (!inherits(prior_noise, "sgld_prior") || prior_noise$family != "gamma")
    abort("`prior_noise` must be made by prior_gamma(), not ", describe(prior_noise), ".")
  resp <- mlp_response(y, family, what)
  K <- if (family == "categorical") length(resp$labels) else 1L
  p <- ncol(X)
  widths <- c(p, hidden, K)
  layers <- length(widths) - 1L
  default_prior <- is.null(prior)
  if (default_prior) prior <- mlp_default_prior(family)
  hier <- inherits(prior, "sgld_prior") && prior$family == "gamma"
  integrated <- hier && isTRUE(prior$integrate)
  if (hier) {
    prior_sd <- rep(1, layers)
  } else {
    if (!inherits(prior, "sgld_prior") || prior$family != "normal")
      abort("`prior` must be NULL, prior_normal(0, sd) or prior_gamma(), not ",
            describe(prior), ".")
    if (is.null(prior$location) || any(prior$location != 0))
      abort("`prior`: prior_normal() must have mean 0 for a network.")
    if (isTRUE(prior$autoscale))
      abort("`prior`: a network's prior is not autoscaled; give `autoscale = FALSE`.")
    if (!length(prior$scale) %in% c(1L, layers))
      abort("`prior`: prior_normal() needs one sd or one per weight layer (", layers,
            "), not ", length(prior$scale), ".")
    prior_sd <- rep_len(prior$scale, layers)
  }
  # names: W<l>[j,k], b<l>[j] per layer, then precisions, then sigma2
  nm <- unlist(lapply(seq_len(layers), function(l) {
    # unit j's incoming weights are contiguous (as the C code stores them)
    c(sprintf("W%d[%d,%d]", l, rep(seq_len(widths[l + 1]), each = widths[l]),
              rep(seq_len(widths[l]), times = widths[l + 1])),
      sprintf("b%d[%d]", l, seq_len(widths[l + 1])))
  }))
  n_weights <- length(nm)
  extra <- c(if (hier && !integrated) sprintf("precision%d", seq_len(layers)),
             if (family == "gaussian") "sigma2")
  d <- n_weights + length(extra)
  x_mean <- if (standardize) colMeans(X) else rep(0, p)
  x_sd <- if (standardize) apply(X, 2, stats::sd) else rep(1, p)
  x_sd[!(x_sd > 0)] <- 1
  y_mean <- if (standardize && family == "gaussian") mean(resp$y) else 0
  y_sd <- if (standardize && family == "gaussian") stats::sd(resp$y) else 1
  if (!(y_sd > 0)) y_sd <- 1
  m <- structure(list(
    type = if (family == "gaussian") "mlp_regression" else "mlp_classification",
    p = p, n = as.double(n), widths = as.integer(widths), hidden = hidden,
    activation = activation, family = family,
    family_code = match(family, mlp_families) - 1L,
    activation_code = match(activation, c("relu", "tanh")) - 1L,
    prior_code = if (integrated) 2L else as.integer(hier), prior_sd = as.double(prior_sd),
    prior_shape = if (hier) prior$shape else 1, prior_rate = if (hier) prior$rate else 1,
    noise_shape = prior_noise$shape, noise_rate = prior_noise$rate,
    prior = prior, default_prior = default_prior, prior_noise = prior_noise,
    x_mean = unname(x_mean), x_sd = unname(x_sd), y_mean = y_mean, y_sd = y_sd,
    y_scale = y_sd, labels = resp$labels, input_names = colnames(X),
    n_weights = n_weights,
    d = d,
    names = c(nm, extra),
    sampler_names = c(nm, sub("^(precision|sigma2)", "log_\\1", extra)),
    log_scale = if (length(extra)) n_weights + seq_along(extra),
    # keep summaries, not weights, by default (see resolve_pars())
    summaries_only = TRUE,
    default_pars = if (length(extra)) n_weights + seq_along(extra) else integer()
  ), class = c("sgld_model_mlp", "sgld_model"))
  set_model_data(m, X, resp$y)
}

# Random starting weights, one row per chain (user's scale): N(0, gain / fan-in)
# with gain 2 for ReLU (He et al. 2015) and 1 for tanh, biases 0, precisions at
# the fan-in, sigma2 = 1.
initial_values.sgld_model_mlp <- function(model, chains) {
  w <- matrix(0, chains, model$d)
  gain <- if (model$activation == "relu") 2 else 1
  widths <- model$widths
  at <- 0L
  for (l in seq_len(length(widths) - 1L)) {
    nw <- widths[l + 1] * widths[l]
    w[, at + seq_len(nw)] <- stats::rnorm(chains * nw, sd = sqrt(gain / widths[l]))
    at <- at + nw + widths[l + 1]
  }
  if (model$prior_code == 1L) {
    L <- length(widths) - 1L
    w[, at + seq_len(L)] <- rep(widths[seq_len(L)], each = chains)
    at <- at + L
  }
  if (model$family == "gaussian") w[, at + 1L] <- 1
  w
}

# The prior's precision of each weight layer at w (sampler's scale): fixed,
# sampled, or, integrated out, its posterior mean given the layer's weights,
# (shape + N / 2) / (rate + |w|^2 / 2); the curvature of the log prior along a
# weight the data leave alone.
mlp_prior_precisions <- function(model, w) {
  L <- length(model$widths) - 1L
  if (model$prior_code == 0L) return(1 / model$prior_sd^2)
  if (model$prior_code == 1L) return(exp(w[model$n_weights + seq_len(L)]))
  sizes <- model$widths[-1] * (model$widths[-(L + 1)] + 1)
  ss <- vapply(split(w[seq_len(model$n_weights)]^2, rep(seq_len(L), sizes)), sum, numeric(1))
  (model$prior_shape + sizes / 2) / (model$prior_rate + ss / 2)
}

#' @export
print.sgld_model_mlp <- function(x, ...) {
  cat("Bayesian neural network (", x$family, "): ", format(x$n, big.mark = ","),
      " observations, layers ", paste(x$widths, collapse = " -> "), " (", x$activation,
      "), ", format(x$d, big.mark = ","), " parameters\n", sep = "")
  if (!is.null(x$formula)) cat("Formula: ", deparse(x$formula), "\n", sep = "")
  cat("Prior", if (isTRUE(x$default_prior)) " (the default)", ": ", sep = "")
  if (x$prior_code >= 1L) cat("hierarchical, each layer's precision ~ Gamma(",
                              x$prior$shape, ", ", x$prior$rate, ")",
                              if (x$prior_code == 2L) ", integrated out", "\n", sep = "")
  else if (length(unique(x$prior_sd)) == 1L)
    cat("N(0, ", format(x$prior_sd[1], digits = 3), "^2) on every weight and bias\n", sep = "")
  else cat("N(0, sd^2), sd = ", paste(format(x$prior_sd, digits = 3), collapse = ", "),
           " by layer\n", sep = "")
  if (x$family == "gaussian")
    cat("Noise: 1/sigma2 ~ Gamma(", x$noise_shape, ", ", x$noise_rate, ")\n", sep = "")
  invisible(x)
}

# Inputs standardised with the training statistics, stored with the coded
# response, observation by observation.
set_model_data.sgld_model_mlp <- function(model, X, y) {
  # held-out data from a formula arrive with the intercept column the
  # network does not use (held_out_model())
  if ("(Intercept)" %in% colnames(X)) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  Xs <- sweep(sweep(unname(X), 2, model$x_mean), 2, model$x_sd, "/")
  ys <- if (model$family == "gaussian") (y - model$y_mean) / model$y_sd else y
  model$z <- stack_data(Xs, ys)
  model$n <- as.double(nrow(X))
  model
}

# the inputs on the user's scale (no intercept column)
design_matrix.sgld_model_mlp <- function(model) {
  X <- t(model$z[seq_len(model$p), , drop = FALSE])
  X <- sweep(sweep(X, 2, model$x_sd, "*"), 2, model$x_mean, "+")
  colnames(X) <- model$input_names
  X
}

mlp_inputs <- function(model, newdata) {
  if (is.null(newdata)) return(design_matrix(model))
  X <- design_for_newdata(model, newdata)
  X[, colnames(X) != "(Intercept)", drop = FALSE]
}

response_like.sgld_model_mlp <- function(model, y) {
  if (anyNA(y)) abort("`newdata`: the response has missing values.")
  if (model$family == "gaussian") {
    if (!is.numeric(y) || any(!is.finite(y))) abort("`newdata`: the response must be finite numbers.")
    return(as.double(y))
  }
  yy <- as.character(if (is.factor(y)) y else as.vector(y))
  if (model$family == "binomial" && is.logical(y)) yy <- ifelse(y, "TRUE", "FALSE")
  if (model$family == "binomial" && is.numeric(y) && identical(model$labels, c("0", "1")))
    yy <- as.character(as.integer(y))
  unknown <- setdiff(unique(yy), model$labels)
  if (length(unknown))
    abort("`newdata`: the response has value", if (length(unknown) > 1) "s", " ",
          paste0("'", utils::head(unknown, 3), "'", collapse = ", "),
          " not among the training classes (", paste0("'", model$labels, "'", collapse = ", "), ").")
  as.double(match(yy, model$labels) - 1L)
}

# The network's answers to the model contract (R/model.R): the hidden units
# can be permuted, so the posterior has several modes by construction.
# permutations of the hidden units: several modes by construction
model_capabilities.sgld_model_mlp <- function(model) {
  utils::modifyList(NextMethod(), list(laplace = FALSE))
}

model_predict.sgld_model_mlp <- function(model, object, newdata, type, draws, ndraws, threads) {
  predict_mlp(object, newdata, type, draws)
}

model_posterior_predict.sgld_model_mlp <- function(model, object, newdata, ndraws) {
  out <- posterior_predict_mlp(object, newdata)
  if (is.null(ndraws)) return(out)
  check_count(ndraws, "ndraws", lower = 1, upper = nrow(out))
  out[sort(sample.int(nrow(out), ndraws)), , drop = FALSE]
}

to_user_scale.sgld_model_mlp <- function(model, w) {
  for (j in model$log_scale) w[, j] <- exp(w[, j])
  w
}
to_sampler_scale.sgld_model_mlp <- function(model, w) {
  for (j in model$log_scale) w[, j] <- log(w[, j])
  w
}
check_user_values.sgld_model_mlp <- function(model, w, arg) {
  if (length(model$log_scale) && any(w[, model$log_scale] <= 0))
    abort("`", arg, "`: sigma2 and the precisions must be positive.")
}

# The network's outputs for inputs X (user's scale) at each row of W (sampler
# scale): a list of rows x draws matrices, one per output unit.
mlp_outputs <- function(model, X, W) {
  A0 <- t(sweep(sweep(X, 2, model$x_mean), 2, model$x_sd, "/"))  # inputs x rows
  widths <- model$widths
  L <- length(widths) - 1L
  K <- widths[L + 1]
  out <- lapply(seq_len(K), function(k) matrix(0, nrow(X), nrow(W)))
  act <- if (model$activation == "relu") function(s) pmax(s, 0) else tanh
  for (r in seq_len(nrow(W))) {
    a <- A0
    at <- 0L
    for (l in seq_len(L)) {
      nw <- widths[l + 1] * widths[l]
      Wl <- matrix(W[r, at + seq_len(nw)], widths[l + 1], widths[l], byrow = TRUE)
      s <- Wl %*% a + W[r, at + nw + seq_len(widths[l + 1])]
      a <- if (l < L) act(s) else s
      at <- at + nw + widths[l + 1]
    }
    for (k in seq_len(K)) out[[k]][, r] <- a[k, ]
  }
  out
}

# predict() for a network: per draw, the mean response (Gaussian, user's
# units) or the class probabilities; averaged over draws.
predict_mlp <- function(object, newdata, type, draws) {
  model <- object$model
  if (is_sampler(object) && !all_kept(object))
    abort("predict() for a neural network needs the draws of every weight, but this fit ",
          "stored ", length(object$pars), " of ", model$d, " parameters (the default keeps ",
          "none of the weights); rerun with `pars = TRUE`, or use monitor_every(newdata = ) ",
          "to record held-out metrics during the run.")
  if (is_sampler(object) && ndraws(object) == 0) abort("the fit has no kept draws to predict from.")
  X <- mlp_inputs(model, newdata)
  W <- if (is_sampler(object)) as.matrix(object, scale = "sampler")
       else to_sampler_scale(model, object$last)
  f <- mlp_outputs(model, X, W)
  if (model$family == "gaussian") {
    if (type == "class") abort("`type` = \"class\" is for classification networks.")
    mu <- model$y_mean + model$y_sd * f[[1]]
    return(if (draws) mu else rowMeans(mu))
  }
  if (model$family == "binomial") {
    prob <- if (type == "link") f[[1]] else stats::plogis(f[[1]])
    if (draws && type != "class") return(prob)
    pbar <- rowMeans(stats::plogis(f[[1]]))
    if (type == "class") return(factor(model$labels[1 + (pbar > 0.5)], levels = model$labels))
    return(if (type == "link") rowMeans(prob) else pbar)
  }
  # categorical: softmax per draw
  fm <- simplify2array(f)                       # rows x draws x K
  mx <- apply(fm, c(1, 2), max)
  e <- exp(sweep(fm, c(1, 2), mx))
  prob <- sweep(e, c(1, 2), apply(e, c(1, 2), sum), "/")
  if (type == "link") return(if (draws) fm else apply(fm, c(1, 3), mean))
  if (draws && type == "response") return(prob)
  pbar <- apply(prob, c(1, 3), mean)
  if (!is.matrix(pbar)) pbar <- matrix(pbar, nrow(X))
  colnames(pbar) <- model$labels
  if (type == "class") return(factor(model$labels[max.col(pbar, ties.method = "first")],
                                     levels = model$labels))
  pbar
}

# Draws from the posterior predictive distribution of a network fit, for
# posterior_predict() (R/methods.R): for each kept draw one simulated response
# per row of `newdata`, y ~ N(f_s(x), sigma2_s) in the response's units for
# regression, a class drawn from the draw's probabilities for classification.
# Like predict() it needs the weights of every draw (pars = TRUE). Returns
# draws x rows, rstanarm's layout.
posterior_predict_mlp <- function(object, newdata = NULL) {
  model <- object$model
  if (!inherits(model, "sgld_model_mlp"))
    abort("posterior_predict() is available for model_mlp() fits, not ", class(model)[1], ".")
  if (!is_sampler(object))
    abort("posterior_predict() needs posterior draws; this is an optimiser's (", object$method,
          ") fit.")
  if (model$family == "gaussian") {
    mu <- predict_mlp(object, newdata, "response", TRUE)
    s <- sqrt(as.matrix(object)[, "sigma2"]) * model$y_sd
    return(t(mu + stats::rnorm(length(mu)) * rep(s, each = nrow(mu))))
  }
  prob <- predict_mlp(object, newdata, "response", TRUE)
  if (model$family == "binomial")
    return(t(matrix(model$labels[1 + (stats::runif(length(prob)) < prob)], nrow(prob))))
  # categorical: rows x draws x K; the first class whose cumulative probability passes u
  cum <- prob
  for (k in seq_len(dim(prob)[3])[-1]) cum[, , k] <- cum[, , k - 1] + prob[, , k]
  u <- array(stats::runif(nrow(prob) * ncol(prob)), dim(prob)[1:2])
  cls <- 1L + apply(sweep(cum, c(1, 2), u, "<"), c(1, 2), sum)
  t(matrix(model$labels[pmin(cls, dim(prob)[3])], nrow(prob)))
}

# R-hat and the ESS of a network (R/warnings.R). Its weights are not
# identified: hidden units can be permuted (and tanh units' signs flipped), so
# two chains can agree on every prediction with different weights, and the
# weights' R-hat says nothing. The check judges the stored parameters that
# are identified (sigma2, sampled layer precisions) and, when every parameter
# is stored, what the predictions are made of: the log likelihood of up to
# 1000 training rows spread over the data at each draw, and that of each of
# 5 of those rows alone (for regression a function of the network's output
# there and sigma2, for classes of the probability of the observed class),
# from at most 1000 draws a chain. For a large network fewer rows, so that
# the forward passes stay near 2e8 multiply-adds, but not fewer than 100
# while they cost at most 5e9 (Fashion-MNIST's 318,010 parameters, 2 x 50
# draws: 100 rows, 3e9, a few seconds).
convergence_draws.sgld_model_mlp <- function(model, fit) {
  keep <- kept_indices(fit)
  identified <- which(keep > model$n_weights)
  K <- ndraws(fit)
  draws <- fit$draws
  k <- ceiling(K / 1000)
  if (k > 1) draws <- thin_draws(draws, k)
  used <- coda::niter(draws) * coda::nchain(draws)
  rows <- min(model$n, 1000, floor(2e8 / (used * model$d)))
  if (rows < 100 && 100 * used * model$d <= 5e9) rows <- min(model$n, 100)
  with_loglik <- all_kept(fit) && rows >= 50
  if (!length(identified) && !with_loglik) return(NULL)
  items <- unique(round(seq(1, model$n, length.out = rows)))
  single <- items[unique(round(seq(1, length(items), length.out = min(5, length(items)))))]
  coda::mcmc.list(lapply(draws, function(ch) {
    x <- unclass(ch)
    out <- x[, identified, drop = FALSE]
    if (with_loglik) {
      W <- t(to_sampler_scale(model, x))
      ll <- vapply(c(list(items), as.list(single)), function(i)
        .Call(C_sgld_loglik_draws, model, W, as.double(i)), numeric(nrow(x)))
      if (nrow(x) == 1L) ll <- matrix(ll, 1)
      colnames(ll) <- c(sprintf("log likelihood of %d training rows", length(items)),
                        sprintf("log likelihood of training row %d", single))
      out <- cbind(out, ll)
    }
    coda::mcmc(out, start = stats::start(ch), thin = coda::thin(ch))
  }))
}

# The methods it answers (R/capabilities.R): those of a regression but
# family(); the "linear predictor" is the output layer's value (linear in
# the last hidden layer's units). For more than two classes the prediction
# is a vector of class probabilities, which has no single interval or
# residual.
model_methods.sgld_model_mlp <- function(model) {
  per_class <- if (model$family != "categorical") TRUE else
    paste0("its prediction is a probability for each class, not one number; ",
           "predict(fit, newdata, draws = TRUE) gives each draw's probabilities")
  utils::modifyList(NextMethod(), list(
    predict = TRUE, predict_interval = per_class, posterior_predict = TRUE,
    predictive_interval = if (model$family != "binomial") per_class else
      paste0("posterior_predict() draws class labels, which have no quantiles; ",
             "predict(fit, newdata, interval = \"prediction\") gives intervals of the ",
             "0/1 indicator of the second class"),
    pp_check = TRUE, fitted = per_class, posterior_epred = per_class,
    family = paste0("a network is not a generalised linear model; its likelihood is ",
                    "named by model$family")))
}

# predict()'s intervals and posterior_epred() / posterior_linpred()
# (R/predict.R): the network's output at each draw, on the response's scale
# (regression) or the probability of the second class (its logit for type =
# "link"); new observations drawn from them.
model_prediction_draws.sgld_model_mlp <- function(model, W, newdata, type) {
  X <- mlp_inputs(model, newdata)
  f <- t(mlp_outputs(model, X, W)[[1]])          # draws x rows
  colnames(f) <- rownames(X)
  if (model$family == "gaussian") {
    mu <- model$y_mean + model$y_sd * f
    sd <- sqrt(exp(W[, match("sigma2", model$names)])) * model$y_sd   # one per draw
    return(list(mean = mu, replicate = function() mu + stats::rnorm(length(mu)) * sd))
  }
  prob <- stats::plogis(f)
  list(mean = if (type == "link") f else prob,
       replicate = function() (stats::runif(length(prob)) < prob) + 0)
}

# residuals(): the response in its units, or 1 for the second class
model_observed.sgld_model_mlp <- function(model) {
  y <- model$z[model$p + 1L, ]
  if (model$family == "gaussian") model$y_mean + model$y_sd * y else y
}

# pp_check(): posterior_predict() gives class labels; bayesplot takes numbers
model_pp_data.sgld_model_mlp <- function(model, yrep) {
  y <- model_observed(model)
  if (model$family == "gaussian") return(list(y = y, yrep = yrep))
  first <- if (model$family == "binomial") 0 else 1
  list(y = y + first, yrep = matrix(match(yrep, model$labels) - 1 + first, nrow(yrep)))
}
