#' Stochastic gradient Langevin dynamics
#'
#' Draws from the posterior of `model` by stochastic gradient Langevin dynamics
#' (Welling and Teh, 2011): each iteration moves the parameters by the learning
#' rate times a minibatch estimate of the gradient of the log posterior, plus
#' Gaussian noise of variance \eqn{2 \eta_t \tau} (see [sgld-package] for the
#' update and its conversion to other conventions).
#'
#' With a constant learning rate the chain's stationary distribution is only
#' close to the posterior: the discretisation and the minibatch noise both
#' widen it, the more so the larger \eqn{\eta} and the smaller the batch.
#' Decaying schedules ([lr_poly()]) remove that bias asymptotically; weight the
#' draws by their learning rate (`summary()` reports both averages).
#'
#' @param model A model, e.g. from [model_linear()].
#' @param lr Learning rate: a positive number or a schedule ([lr_constant()],
#'   [lr_poly()], [lr_range()], [lr_piecewise()]).
#' @param batch_size Minibatch size \eqn{m}, a whole number from 1 to the
#'   number of observations; the default is 100 or all observations if fewer.
#' @param iter Number of iterations (updates) per chain.
#' @param ... Not used: every argument after `iter` must be given by its full
#'   name, and unknown names are an error.
#' @param burnin Number of initial iterations whose states are discarded
#'   (default: half of `iter`), or [sampling_threshold()] to start keeping
#'   draws once the sampling threshold is reached.
#' @param thin Keep every `thin`-th state after burn-in, or
#'   [mixing_distance()] to keep draws a fixed summed learning rate apart.
#' @param temperature \eqn{\tau \ge 0}; 1 samples the posterior, 0 gives
#'   stochastic gradient ascent.
#' @param chains Number of chains. Each chain draws from its own random stream,
#'   so chain \eqn{c} is the same whatever the number of chains.
#' @param init Starting values on the user's scale (for [model_linear()]:
#'   coefficients, then `sigma2`): `NULL` for the model's default start (see its
#'   help page), a vector used for every chain, or a matrix with one row per
#'   chain. Or a fit from an earlier run with the same model, update rule and
#'   number of chains, to continue it: each chain carries on from its state in
#'   `fit$state` (parameters, momenta and averages of the update rule, random
#'   streams, iteration count, at which the learning-rate schedule is evaluated),
#'   so with `burnin = 0` two runs of T iterations give the same draws as one
#'   run of 2T.
#' @param replace Draw each minibatch with replacement? By default the items of
#'   a minibatch are distinct (batches are still drawn independently).
#' @param clip `NULL`, or gradient clipping from [clip_norm()] or [clip_value()].
#' @param precondition `NULL` for the model's default (the plain update, or
#'   the natural gradient for [model_ica()]); `"none"` for the plain update; a
#'   symmetric positive definite d x d matrix \eqn{P} on the sampler's scale
#'   for the fixed preconditioner \eqn{w \leftarrow w + \eta P \hat g +
#'   \sqrt{2\eta\tau} P^{1/2}\xi}; `"rmsprop"` / [precond_rmsprop()] for pSGLD
#'   (see [psgld()]); or `"natural"` for the natural gradient of a matrix
#'   parameter (see [model_ica()] and [update_rules]).
#' @param control_variates `FALSE`; `TRUE` to find the posterior mode
#'   \eqn{\hat w} first ([posterior_mode()], one pass over the data per
#'   evaluation) and use the control-variate estimator (Baker et al. 2019)
#'   \eqn{\hat g(w) = \nabla\log f(w) + \sum_{i=1}^n \nabla\log f(z_i|\hat w)
#'   + \frac nm \sum_{i\in J}[\nabla\log f(z_i|w) - \nabla\log f(z_i|\hat w)]};
#'   or a mode on the user's scale (e.g. `coef()` of an [sgd()] fit) to centre it
#'   there. Each iteration then evaluates two minibatch gradients, but near the
#'   mode the estimate's noise shrinks by orders of magnitude. With `init = NULL`
#'   the chains start at that mode.
#' @param diagnostics `NULL`, or [diagnostics_every()] to record the sampling
#'   threshold, the two noise variances and the rejection probability.
#' @param monitor `NULL`, or [monitor_every()] to record the log joint
#'   probability and held-out metrics during the run (in `fit$monitor`).
#' @param threads Number of threads to run chains in parallel (OpenMP); the
#'   default is `getOption("sgld.threads", 1)`. The draws are identical for
#'   any number of threads. Models written in R functions ([model_custom()])
#'   run their chains one after the other whatever `threads` says, as R is
#'   single-threaded.
#' @param pars Which parameters' draws to store: `NULL` for the default,
#'   `TRUE` for all, `FALSE` for none, parameter names (e.g. `c("x", "sigma2")`; a name that is not a parameter's
#'   is taken as a regular expression, e.g. `"^w"`), or indices. The default
#'   stores every parameter when the model has at most 1000 (see
#'   `model$d`), and above that the model's own choice (e.g. the global
#'   parameters of a model with a latent path) or none. Whatever is stored,
#'   the engine keeps running means, step-weighted means and variances of
#'   every parameter over the kept iterations (`fit$moments`), from which
#'   [summary()][summary.sgld_fit] and [coef()][coef.sgld_fit] report the
#'   parameters without draws; memory then grows with the stored parameters
#'   only. Quantiles, ESS, R-hat, `vcov()` and `predict()` need draws.
#' @param progress Show a one-line progress display on the console (stderr):
#'   iterations done of the total, iterations per second, time left, and
#'   chains running, done and diverged; redrawn a few times a second, only for
#'   runs that last over half a second. The default is
#'   `getOption("sgld.progress", interactive())`, so scripts, knitr and tests
#'   stay quiet. Without it, a run expected to last more than an hour (from
#'   the speed of its first iterations) says so when it starts, and its fit
#'   carries a warning.
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @section Reproducibility:
#' The engine's generator is seeded from R's, so `set.seed()` before the call
#' makes a run reproducible.
#' @section Stopping early:
#' If a parameter or the gradient becomes non-finite, that chain stops, the
#' draws kept so far are returned, and a warning names the chain and the
#' iteration. An interrupt (Ctrl-C / Esc) stops every chain within about 10
#' milliseconds (chains run in chunks of iterations, and the interrupt is
#' checked between chunks) and likewise returns the draws made so far, which
#' `init = fit` continues.
#' @references Welling, M. and Teh, Y. W. (2011). Bayesian learning via
#'   stochastic gradient Langevin dynamics. *Proceedings of the 28th ICML*.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- sgld(m, lr = 2e-7, batch_size = 1000, iter = 20000, thin = 10)
#' summary(fit)
#' @export
sgld <- function(model, lr, batch_size = NULL, iter = 10000, ...,
                 burnin = floor(iter / 2), thin = 1, temperature = 1, chains = 1,
                 init = NULL, replace = FALSE, precondition = NULL,
                 control_variates = FALSE, clip = NULL, monitor = NULL,
                 diagnostics = NULL, threads = getOption("sgld.threads", 1L), pars = NULL,
                 progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  check_model(model)
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = resolve_precondition(precondition, model),
              control_variates = control_variates, method = "sgld", call = match.call(),
              pars = pars, progress = progress)
}

#' Preconditioned SGLD
#'
#' [sgld()] with the RMSprop preconditioner of Li et al. (2016): each
#' coordinate's step and noise are scaled by the inverse root mean square of
#' its recent gradients, so coordinates whose posterior scales differ by orders
#' of magnitude move at comparable speeds with one learning rate. See
#' [update_rules] for the update and its defaults.
#'
#' @inheritParams sgld
#' @param alpha Weight of the old average of squared gradients, in \[0, 1).
#' @param lambda Positive constant added to the root mean square.
#' @param v_init Starting value (>= 0) of the averages of squared gradients.
#' @param ... Further arguments of [sgld()], by name.
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- psgld(m, lr = 1e-4, batch_size = 100, iter = 20000)
#' summary(fit)
#' @export
psgld <- function(model, lr, batch_size = NULL, iter = 10000, ..., alpha = 0.99,
                  lambda = 1e-5, v_init = 0) {
  fit <- sgld(model, lr = lr, batch_size = batch_size, iter = iter, ...,
              precondition = precond_rmsprop(alpha = alpha, lambda = lambda, v_init = v_init))
  fit$call <- match.call()
  fit
}

#' Stochastic gradient Hamiltonian Monte Carlo
#'
#' SGHMC (Chen, Fox and Guestrin 2014) adds a velocity \eqn{v} to each chain
#' and damps it by friction, one step per iteration:
#' \deqn{v \leftarrow (1 - a) v + \eta \hat g(w) + \sqrt{2 a \eta \tau}\,\xi,
#'   \qquad w \leftarrow w + v,}
#' their equation (15) with learning rate \eqn{\eta} (their \eqn{\eta}),
#' friction \eqn{a} (their \eqn{\alpha}) and the gradient-noise estimate
#' \eqn{\hat\beta = 0}; every iteration yields a draw. The velocity starts at
#' 0 and is part of the chain's state (`fit$state`). At `friction = 1` this is
#' [sgld()]; smaller friction lets the chain keep its direction and cross
#' the posterior in fewer iterations. For a Gaussian posterior whose largest
#' precision is \eqn{\lambda} the recursion is stable for
#' \eqn{\eta < 2(2 - a)/\lambda}; like SGLD's, the stationary distribution of
#' a constant-step chain is only close to the posterior, the closer the
#' smaller \eqn{\eta}.
#'
#' @inheritParams sgld
#' @param friction Friction \eqn{a}, in (0, 1].
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @references Chen, T., Fox, E. B. and Guestrin, C. (2014). Stochastic gradient
#'   Hamiltonian Monte Carlo. *Proceedings of the 31st ICML*.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- sghmc(m, lr = 2e-8, friction = 0.1, batch_size = 1000, iter = 20000, thin = 10)
#' summary(fit)
#' @export
sghmc <- function(model, lr, batch_size = NULL, iter = 10000, ..., friction = 0.1,
                  burnin = floor(iter / 2), thin = 1, temperature = 1, chains = 1,
                  init = NULL, replace = FALSE, control_variates = FALSE, clip = NULL,
                  monitor = NULL, diagnostics = NULL,
                  threads = getOption("sgld.threads", 1L), pars = NULL,
                  progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  check_number(friction, "friction", lower = 0, upper = 1, lower_open = TRUE)
  rule <- update_rule("sghmc", "SGHMC", list(friction = friction), sampler = TRUE)
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = rule, control_variates = control_variates,
              method = "sghmc", call = match.call(), pars = pars, progress = progress)
}

#' Stochastic gradient descent and gradient descent
#'
#' Follow the (minibatch) gradient of the log posterior from a start:
#' `sgd()` is [sgld()] at temperature 0, and `gd()` is `sgd()` with the full
#' data in every batch. The fit holds the whole trajectory (every iterate,
#' unless thinned), and [coef()] gives its final point: the estimate of the
#' posterior mode (the MAP estimate on the sampler's scale).
#'
#' @inheritParams sgld
#' @param thin Keep every `thin`-th iterate.
#' @param optimizer `NULL` for the model's default (the plain step, or the
#'   natural gradient for [model_ica()]); `"sgd"` for the plain step
#'   \eqn{w \leftarrow w + \eta \hat g}; `"momentum"`, `"adagrad"`,
#'   `"rmsprop"`, `"adam"` for those optimisers with their default settings, or
#'   one made by [opt_momentum()], [opt_adagrad()], [opt_rmsprop()] or
#'   [opt_adam()]; `"natural"` for natural-gradient ascent (see [update_rules]).
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' fit <- sgd(m, lr = 1e-5, batch_size = 10, iter = 1000,
#'            init = c(1.1, -2, 1))
#' coef(fit)
#' coef(gd(m, lr = 1e-5, iter = 2000))
#' @export
sgd <- function(model, lr, batch_size = NULL, iter = 1000, ..., optimizer = NULL, thin = 1,
                chains = 1, init = NULL, replace = FALSE, control_variates = FALSE,
                clip = NULL, monitor = NULL, diagnostics = NULL,
                threads = getOption("sgld.threads", 1L), pars = NULL,
                progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = 0,
              thin = thin, temperature = 0, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = resolve_optimizer(optimizer, model),
              control_variates = control_variates, method = "sgd", call = match.call(),
              pars = pars, progress = progress)
}

#' @rdname sgd
#' @export
gd <- function(model, lr, iter = 1000, ..., thin = 1, init = NULL, clip = NULL, pars = NULL,
               progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  check_model(model)
  run_sampler(model, lr = lr, batch_size = model$n, iter = iter, burnin = 0,
              thin = thin, temperature = 0, chains = 1, init = init,
              replace = FALSE, clip = clip, monitor = NULL, threads = 1L,
              rule = plain_rule("Gradient descent"), method = "gd", call = match.call(),
              pars = pars, progress = progress)
}

# The one runner behind every exported sampler: check everything once, call
# the C driver, and turn what it returns into an sgld_fit.
run_sampler <- function(model, lr, batch_size, iter, burnin, thin, temperature, chains,
                        init, replace, clip, monitor, threads, method, call,
                        rule = plain_rule("SGLD"), control_variates = FALSE,
                        diagnostics = NULL, mala = FALSE, pars = NULL, progress = FALSE) {
  settings <- run_settings(model, lr = lr, batch_size = batch_size, iter = iter,
                           burnin = burnin, thin = thin, temperature = temperature,
                           chains = chains, init = init, replace = replace, clip = clip,
                           monitor = monitor, threads = threads, rule = rule,
                           control_variates = control_variates,
                           diagnostics = diagnostics, mala = mala, pars = pars,
                           progress = progress)
  engine <- new.env(parent = emptyenv())
  start <- proc.time()[["elapsed"]]
  engine$res <- .Call(C_sgld_run, model, settings)
  elapsed <- proc.time()[["elapsed"]] - start
  failure <- report_callbacks(model)
  fit <- new_sgld_fit(engine, model = model, settings = settings, lr = settings$lr,
                      method = method, call = call, time = elapsed, rule = rule)
  if (any(fit$status == "failed")) stop(model_error(fit, failure))
  warn_long_run(fit, settings)
  fit
}

# Every argument checked, and resolved into the plain list the C driver reads.
run_settings <- function(model, lr, batch_size, iter, burnin, thin, temperature, chains,
                         init, replace, clip, rule = plain_rule("SGLD"), threads = 1L,
                         monitor = NULL, diagnostics = NULL, mala = FALSE,
                         control_variates = FALSE, pars = NULL, progress = FALSE) {
  check_model(model)
  check_flag(progress, "progress")
  keep <- resolve_pars(pars, model)
  n <- model$n
  d <- model$d
  lr <- as_lr(lr)
  check_count(iter, "iter", lower = 1)
  if (is.null(batch_size)) batch_size <- min(100, n)
  check_count(batch_size, "batch_size", lower = 1, upper = min(n, .Machine$integer.max))
  schedule <- resolve_lr(lr, iter)
  collect <- resolve_collection(burnin, thin, diagnostics, iter, schedule)
  check_number(temperature, "temperature", lower = 0)
  check_count(chains, "chains", lower = 1, upper = 1000)
  check_flag(replace, "replace")
  check_count(threads, "threads", lower = 1, upper = 1024)
  if (mala) check_densities(model, "mala()")
  if (!is.null(diagnostics)) check_densities(model, "`diagnostics`")
  if (!is.null(monitor)) check_densities(model, "`monitor`")
  if (!is.null(clip) && !inherits(clip, "sgld_clip"))
    abort("`clip` must be NULL, clip_norm() or clip_value(), not ", describe(clip), ".")
  n_keep <- if (is.null(keep)) d else length(keep)
  if (collect$capacity * n_keep * chains > 2^31)
    abort("the run would keep up to ", format(collect$capacity * chains, big.mark = ","),
          " draws of ", n_keep, " parameters (",
          format(8 * collect$capacity * n_keep * chains / 2^30, digits = 3),
          " GiB); increase `thin`, reduce `iter`, or store fewer parameters with `pars`.")
  if (!is.null(monitor) && !inherits(monitor, "sgld_monitor"))
    abort("`monitor` must be NULL or made by monitor_every(), not ", describe(monitor), ".")
  if (!is.null(monitor) && monitor$every > iter)
    abort("`monitor`: `every` (", monitor$every, ") must be at most `iter` (", iter, ").")
  test <- if (!is.null(monitor) && !is.null(monitor$newdata))
    held_out_model(model, monitor$newdata)
  cv_mode <- resolve_control_variates(control_variates, model)
  if (inherits(init, "sgld_fit")) {
    from <- continuation(init, model, chains, rule)
    init_w <- from$w
  } else {
    from <- list(t_offset = rep(0, chains), state_init = NULL, rng_init = NULL)
    # with control variates the mode is known: start there unless told otherwise
    init_w <- if (is.null(init) && !is.null(cv_mode)) matrix(cv_mode, chains, d, byrow = TRUE)
              else resolve_init(model, init, chains)
  }
  c(collect[setdiff(names(collect), "regular")], list(
    iter = iter, chains = chains, batch_size = batch_size,
    replace = as.integer(replace), temperature = temperature,
    lr = lr, schedule = schedule,
    clip_type = if (is.null(clip)) "none" else clip$type,
    clip_threshold = if (is.null(clip)) 0 else clip$threshold,
    update = rule$name, update_opts = rule$opts, init = as.double(t(init_w)),
    t_offset = as.double(from$t_offset), state_init = from$state_init,
    rng_init = from$rng_init, threads = threads,
    monitor_every = if (is.null(monitor)) 0 else monitor$every, test = test,
    mala = as.integer(mala),
    progress = as.integer(progress), keep = keep, moment_scale = moment_scales(model),
    long_run_seconds = getOption("sgld.long_run_seconds", 3600),
    cv_mode = cv_mode,
    regular = collect$regular,
    # chains run in this order; each has its own stream, so the order cannot matter
    order = seq_len(chains)
  ))
}

# The model's default start on the user's scale: a vector for every chain, or
# (models whose chains should start apart, such as networks) a matrix with one
# row per chain.
initial_values <- function(model, chains) UseMethod("initial_values")
initial_values.default <- function(model, chains) model$default_init

# Starting values: one row per chain on the sampler's scale.
resolve_init <- function(model, init, chains) {
  d <- model$d
  if (is.null(init)) init <- initial_values(model, chains)
  if (!is.numeric(init) || is.object(init))
    abort("`init` must be NULL, a numeric vector of length ", d,
          ", a matrix with one row per chain, or a fit to continue; not ", describe(init), ".")
  if (is.matrix(init)) {
    if (nrow(init) != chains || ncol(init) != d)
      abort("`init` must be a ", chains, " x ", d, " matrix (one row per chain), not ",
            nrow(init), " x ", ncol(init), ".")
  } else {
    if (length(init) != d)
      abort("`init` must have length ", d, " (", paste(model$names, collapse = ", "),
            "), not ", length(init), ".")
    init <- matrix(init, chains, d, byrow = TRUE)
  }
  if (any(!is.finite(init))) abort("`init` must be finite.")
  check_user_values(model, init, "init")
  w <- to_sampler_scale(model, init)
  if (any(!is.finite(w))) abort("`init` is outside the parameter space.")
  w
}

#' Metropolis-adjusted Langevin algorithm
#'
#' The exact reference sampler: each iteration proposes a Langevin step with the
#' full-data gradient, \eqn{w' \sim N(w + \eta P \nabla U(w), 2\eta\tau P)}, and
#' accepts it with the Metropolis-Hastings probability for the target
#' \eqn{\exp(U/\tau)}, so the chain's stationary distribution is exactly the
#' posterior whatever the step size (the step size governs only how fast it
#' mixes). It runs in the same engine as [sgld()], with the full data in every
#' step. Aim for an acceptance rate of roughly 0.5 to 0.7.
#'
#' @inheritParams sgld
#' @param lr Step size \eqn{\eta} (a number or a schedule; a constant one keeps
#'   the chain stationary).
#' @param precondition `NULL` for the model's default (none, or the natural
#'   gradient for [model_ica()]), `"none"`, `"natural"`, or a symmetric
#'   positive definite d x d matrix \eqn{P} on the sampler's scale, e.g. an
#'   estimate of the posterior covariance.
#' @param temperature \eqn{\tau > 0}; 1 samples the posterior.
#' @return An object of class `sgld_fit` whose `acceptance` holds each chain's
#'   acceptance rate.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- mala(m, lr = 1e-5, iter = 2000)
#' fit$acceptance
#' @export
mala <- function(model, lr, iter = 10000, ..., burnin = floor(iter / 2), thin = 1,
                 temperature = 1, chains = 1, init = NULL, precondition = NULL,
                 monitor = NULL, threads = getOption("sgld.threads", 1L), pars = NULL,
                 progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  check_model(model)
  check_number(temperature, "temperature", lower = 0, lower_open = TRUE)
  run_sampler(model, lr = lr, batch_size = model$n, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = FALSE, clip = NULL, monitor = monitor, threads = threads,
              mala = TRUE, rule = mala_rule(precondition, model), method = "mala",
              call = match.call(), pars = pars, progress = progress)
}

# MALA's proposal is the step of a rule without kept state.
mala_rule <- function(precondition, model) {
  if (inherits(precondition, "sgld_rule") || identical(precondition, "rmsprop"))
    abort("`precondition` for mala() must be NULL, \"none\", \"natural\" or a matrix: ",
          "an adaptive preconditioner cannot be a Metropolis-Hastings proposal.")
  rule <- resolve_precondition(precondition, model)
  rule$label <- if (rule$name == "natural") "natural-gradient MALA" else "MALA"
  rule
}

# The lower Cholesky factor of a user's preconditioner, column-major.
precondition_factor <- function(P, d) {
  if (is.null(P)) return(NULL)
  if (!is.numeric(P) || !is.matrix(P) || any(dim(P) != d) || any(!is.finite(P)))
    abort("`precondition` must be a finite ", d, " x ", d, " matrix.")
  if (!isSymmetric(unname(P))) abort("`precondition` must be symmetric.")
  R <- tryCatch(chol(P), error = function(e) abort("`precondition` must be positive definite."))
  as.double(t(R))
}

# The scale on which the engine keeps each parameter's running moments: the
# user's scale where the model's transform acts on each coordinate alone
# (sigma2 = exp(log sigma2)), else the sampler's.
moment_scales <- function(model) {
  scale <- rep("identity", model$d)
  scale[model$log_scale] <- "exp"
  scale
}
