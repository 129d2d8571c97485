#' Variational inference: Bayes by Backprop
#'
#' Fits a Gaussian approximation \eqn{q(w) = N(\mu, L L^\top)}{q(w) = N(mu, L L')}
#' to the posterior of any model by stochastic gradients (Blundell et al.
#' 2015): each iteration draws \eqn{\epsilon \sim N(0, I)}{eps ~ N(0, I)},
#' takes the model's minibatch gradient \eqn{g = \hat g(w)}{g = g_hat(w)} of
#' the log joint at \eqn{w = \mu + L\epsilon}{w = mu + L eps} (the same
#' estimate [sgld()] uses) and moves \eqn{(\mu, L)}{(mu, L)} uphill on the
#' evidence lower bound
#' \deqn{\mathrm{ELBO} = E_q[\log p(D, w)] + \log\det L + \mathrm{const}}{ELBO = E_q[log p(D, w)] + log det L + const}
#' with the unbiased estimates \eqn{\nabla_\mu \approx g}{grad_mu ~ g} and
#' \eqn{\nabla_{L_{ij}} \approx g_i \epsilon_j}{grad_L_ij ~ g_i eps_j}, averaged over
#' `samples` draws of \eqn{\epsilon}{eps} on one minibatch. The sds are
#' \eqn{\exp(\lambda_j)}{exp(lambda_j)}, and the optimiser moves
#' \eqn{\lambda}{lambda}. `family = "meanfield"` keeps \eqn{L}{L} diagonal
#' (Bayes by Backprop proper); `"fullrank"` fits the whole lower-triangular
#' factor, for up to a few hundred parameters.
#'
#' @section Automatic settings:
#' With `lr = "auto"` and `iter = "auto"` (the defaults) the fit starts from
#' the Laplace approximation \eqn{N(\hat w, S)}{N(w_hat, S)} at the posterior mode
#' ([posterior_mode()]), as [sgld()] does: \eqn{q}{q} starts at the mode
#' with the sds \eqn{1/\sqrt{\Lambda_{jj}}}{1 / sqrt(Lambda_jj)} of
#' \eqn{\Lambda = S^{-1}}{Lambda = S^-1} (mean-field; the mean-field optimum
#' of a Gaussian posterior) or with \eqn{L L^\top = S}{L L' = S} (full rank),
#' and the optimiser (plain gradient ascent) works in the Laplace
#' approximation's coordinates: the gradient in \eqn{\mu}{mu} is multiplied by
#' \eqn{S}{S} (a Newton step for a Gaussian posterior), so every direction
#' converges at the same rate however correlated the parameters, and the
#' log sds' gradient is divided by its curvature. `print()` says what was
#' chosen and whether the run converged.
#'
#' For [model_logistic()] and [model_linear()], mean-field, the gradient is
#' exact: each observation's linear predictor is normal under \eqn{q}{q}, and
#' its expected log likelihood is computed itself (by quadrature for the
#' logistic model, in closed form for the linear one; `local = "expected"`),
#' on the full data while a pass costs at most \eqn{10^7}{10^7} multiply-adds.
#' The ELBO is then a smooth deterministic function of the means and log
#' sds, and BFGS ([stats::optim()]) on it takes \eqn{q}{q} from the Laplace
#' start to the optimum; the engine's ascent (steps of 0.5 in parts of 10
#' iterations) then confirms it, ending when a part moves \eqn{q}{q} by less
#' than \eqn{10^{-4}}{1e-4} of its sds (its means) and in its log sds. The
#' ascent alone stops short where the data barely determine a direction: on
#' Adult's a9a design (collinear columns) it met that tolerance 0.17 of
#' \eqn{q}{q}'s sds from the optimum; with BFGS first the tests measure
#' \eqn{2 \times 10^{-6}}{2e-6} (Pima, the handout data, a correlated
#' simulation and Adult).
#'
#' Otherwise (full rank, other models) the gradient is stochastic: draws of
#' \eqn{\epsilon}{eps} with the gradient of the Laplace approximation, whose
#' expectation under \eqn{q}{q} is known, as a control variate (Miller et al.
#' 2017; Geffner and Domke 2020), which removes most of the noise of
#' \eqn{\epsilon}{eps} where the posterior is close to Gaussian, the full data
#' up to 1,000 observations and minibatches with control variates at the
#' mode beyond. Steps of 0.1 run in parts of 50 iterations (twice as long
#' each time 64 parts have run); the reported \eqn{q}{q} is the average of
#' the iterates over the last three quarters of the run (Polyak-Ruppert
#' averaging), and the run ends when the batch means of the parts put that
#' average's Monte Carlo error below 0.02 of \eqn{q}{q}'s sds in the means
#' and 0.005 in the log sds, with no drift between the halves of those parts
#' beyond four times that, or after 200,000 iterations with a warning.
#'
#' Where there is no Laplace approximation (models with several modes by
#' construction, [model_mixture()], [model_ica()] and networks; models with a
#' latent path, [model_sv()]; more than 2,000 parameters), `"auto"` means the
#' earlier plain defaults: Adam with `lr_exp(0.01, 1e-4)` for 10,000
#' iterations from `init`, sds 0.01, averaged over the last half.
#'
#' Every fit is checked on its `draws` (with at least 100 of them): Pareto
#' k-hat of the importance ratios \eqn{p(D, w)/q(w)}{p(D, w) / q(w)} (Yao et al.
#' 2018, [psis_khat()]) and the means and sds that Pareto-smoothed
#' importance sampling corrects them to. Above 0.7 a warning says the
#' Gaussian approximation is unreliable for this posterior and names what to
#' run instead; below it, a warning when the corrected means are more than
#' 0.15 of the corrected sds from \eqn{q}{q}'s or its sds more than 10% off
#' (the bar every method of the package is held to); between 0.5 and 0.7
#' otherwise a message. Where the ratios are nearly constant (the sd of
#' their logarithm below 0.1), \eqn{q}{q} is the posterior to within the draws'
#' precision, whatever the shape of their tail, and nothing is said. A
#' mean-field fit underestimates posterior variances by design: for a
#' Gaussian posterior with precision \eqn{\Lambda}{Lambda} its optimum has the
#' exact means and variances \eqn{1/\Lambda_{jj}}{1/Lambda_jj}, not the marginal
#' variances, and the check says so when the difference matters.
#'
#' The fit runs in the samplers' engine, its gradient estimator followed by
#' an optimiser of the package, so schedules, several chains (independent
#' restarts, each with its own random stream), threads, progress, interrupts
#' and continuation (`init = fit`) work as for [sgld()]. A run that diverges
#' keeps the last finite \eqn{q}{q} with a warning.
#'
#' @inheritParams sgld
#' @param lr Learning rate of the optimiser: a number or a schedule, or
#'   `"auto"` (see "Automatic settings": 0.5 for exact gradients and 0.1 for
#'   stochastic ones in the Laplace coordinates, or `lr_exp(0.01, 1e-4)`
#'   without them).
#' @param iter Number of iterations per chain, or `"auto"`: until converged
#'   (at most 200,000 iterations), or 10,000 without the Laplace
#'   coordinates.
#' @param batch_size Minibatch size; `NULL`: the full data up to 1,000
#'   observations, or with expected log likelihoods up to \eqn{10^7}{10^7}
#'   multiply-adds a pass; beyond, in the Laplace coordinates, a batch whose
#'   gradient costs about the \eqn{d^2}{d^2} work of an iteration (at least 100),
#'   else 100.
#' @param family `"meanfield"` or `"fullrank"`.
#' @param samples Monte Carlo draws of \eqn{\epsilon}{eps} per iteration (a
#'   whole number >= 1), all on the iteration's minibatch.
#' @param optimizer The optimiser of \eqn{(\mu, \lambda, L)}{(mu, lambda, L)}:
#'   `"auto"` (`"sgd"` in the Laplace coordinates, else `"adam"`), `"sgd"`,
#'   `"momentum"`, `"adagrad"`, `"rmsprop"`, `"adam"`, or one made by
#'   [opt_adam()] and friends. In the Laplace coordinates it follows the
#'   gradient times the metric (see "Automatic settings").
#' @param laplace Start at the Laplace approximation and optimise in its
#'   coordinates (see "Automatic settings")? `TRUE`, `FALSE` or `"auto"`
#'   (where the approximation is available).
#' @param init_scale The starting scale of \eqn{q}{q} on the sampler's scale: a
#'   positive number or a positive vector of length `model$d` (the starting
#'   sds), or for `"fullrank"` also a positive definite d x d covariance
#'   matrix. `NULL`: the Laplace approximation's, or 0.01 without it.
#' @param average For a given `iter`: the fraction of the run at the end,
#'   in whole twentieths, over which \eqn{(\mu, \lambda, L)}{(mu, lambda, L)}
#'   are averaged (Polyak-Ruppert averaging); the fit's \eqn{q}{q} is that
#'   average (0: the final iterate). An automatic run averages over its
#'   last three quarters, or (exact gradients) takes its final iterate.
#' @param init Starting means on the user's scale (as in [sgld()]), or a fit
#'   of `bbb()` to continue: its estimator and Laplace approximation are
#'   kept, and the new run averages over its own iterations.
#' @param draws Draws from \eqn{q}{q} per chain in the fit's `draws`; with at
#'   least 100 they also give the check (k-hat, importance sampling) and
#'   the ELBO.
#' @param thin Keep every `thin`-th iterate of \eqn{\mu}{mu} in
#'   `fit$trajectory` (default: one per part of the run); it must divide
#'   the parts.
#' @param elbo_every Estimate the full-data ELBO of every chain each
#'   `elbo_every` iterations, for `fit$elbo_trace` (the run's parts are then
#'   that long; it must divide a given `iter`); each estimate costs
#'   `elbo_draws` full-data evaluations of the log joint.
#' @param elbo_draws Draws from \eqn{q}{q} per ELBO estimate of the trace.
#' @param local How the mean-field gradient's likelihood part is formed, for
#'   a model whose likelihood depends on its weights through per-observation
#'   linear combinations ([model_logistic()], [model_linear()], and each layer
#'   of [model_mlp()]): `"expected"` (regressions only), each observation's
#'   expected log likelihood under \eqn{q}{q} itself, without noise; `TRUE`,
#'   local reparameterisation (Kingma, Salimans and Welling 2015), each
#'   observation's combinations \eqn{x_i^\top w}{x_i' w} drawn from their exact
#'   distribution under \eqn{q}{q},
#'   \eqn{N(x_i^\top\mu, \sum_j x_{ij}^2\sigma_j^2)}{N(x_i' mu, sum_j x_ij^2 sigma_j^2)},
#'   independently per observation, instead of one \eqn{w}{w} for the whole
#'   minibatch (parameters that are not weights, the noise variance or a
#'   network's precisions, drawn once per iteration); `FALSE`, one \eqn{w}{w}
#'   per minibatch (Bayes by Backprop proper); or `"auto"`: `"expected"` for
#'   the regressions, and local reparameterisation for [model_mlp()]
#'   networks with batches of 500 or more. Local reparameterisation keeps
#'   the estimate unbiased and lowers its variance, at a cost: measured
#'   (bench/vi-local.R, bench/RESULTS.md), at batch 100 the variance of the
#'   gradient in the means hardly changes (ratios 0.96 to 1.27: it is the
#'   minibatch's), that in the scales falls 1.4-fold (linear, d = 3), 7-fold
#'   (logistic, d = 20), 2.4-fold (Adult, d = 123, median) and 3-fold (a
#'   network with 8 hidden units), while an iteration takes 1.8 to 3.5 times
#'   as long; the weights' share of the noise grows with the batch: at batch
#'   1000 the network's means' gradient variance fell 6-fold (the
#'   regressions' still 1.1-fold). Neither combines with
#'   `control_variates`, `clip` or the Laplace approximation's control
#'   variate (which they replace).
#' @param elbo_batch Keep the per-iteration minibatch estimate of the ELBO
#'   (`fit$elbo_batch`)? `"auto"` keeps it when `local` is not `FALSE`, where
#'   the model returns the minibatch log likelihood with the gradient for
#'   free; otherwise it costs an extra pass over every minibatch, so it is
#'   off unless asked for.
#' @param control_variates As for [sgld()], or `"auto"`: at the posterior
#'   mode when the run has the Laplace coordinates, minibatches and one
#'   \eqn{w}{w} per minibatch (`local` `FALSE`), else none.
#' @return An object of class `sgld_vi` (and `sgld_fit`): its `draws` are
#'   draws from the approximation \eqn{q} (not from the posterior), so
#'   `summary()`, `coef()`, `predict()` and the posterior/bayesplot methods
#'   work unchanged; `variational` holds per chain the means, sds, and the
#'   factor `L` and covariance of \eqn{q} on the sampler's scale, the means
#'   and sds of the draws on the user's scale, and how the gradient was
#'   formed (`local`: `"w"`, `"draw"` or `"expected"`); `khat` the check per
#'   chain (Pareto k-hat, the sd of the log importance ratios, and the
#'   largest shift of q's means in corrected sds and the range of its sds'
#'   ratios to the corrected ones); `elbo` the full-data ELBO per chain (its
#'   exact value with expected log likelihoods, else the draws' estimate and
#'   its Monte Carlo standard error), and `elbo_trace` all estimates made
#'   (iteration, chain, elbo, se); `vi` what was chosen (`plan`, whether the
#'   Laplace coordinates were used and why not, the iterations, parts and
#'   parts averaged) and the convergence check (`converged`, and per chain
#'   the largest Monte Carlo error and drift, or with exact gradients the
#'   last part's change, in units of \eqn{q}{q}'s sds); `clipped`, per chain,
#'   the iterations whose gradient met the bounds of the Laplace coordinates
#'   (or `clip`); `elbo_batch` (when kept, see `elbo_batch`) the minibatch ELBO
#'   at every kept iterate of the trajectory (iteration, chain, elbo), each
#'   the mean of the per-iteration estimates over the iterations since the
#'   previous kept iterate (noisy: a monitor of progress, not a
#'   measurement); `trajectory` the kept iterates of \eqn{\mu}{mu} as a
#'   [coda::mcmc.list].
#' @references Blundell, C., Cornebise, J., Kavukcuoglu, K. and Wierstra, D.
#'   (2015). Weight uncertainty in neural networks. *Proceedings of the 32nd ICML*.
#'
#'   Geffner, T. and Domke, J. (2020). Approximation based variance reduction
#'   for reparameterization gradients. *Advances in NeurIPS 33*.
#'
#'   Kingma, D. P., Salimans, T. and Welling, M. (2015). Variational dropout
#'   and the local reparameterization trick. *Advances in NeurIPS 28*.
#'
#'   Miller, A. C., Foti, N. J., D'Amour, A. and Adams, R. P. (2017). Reducing
#'   reparameterization gradient variance. *Advances in NeurIPS 30*.
#'
#'   Yao, Y., Vehtari, A., Simpson, D. and Gelman, A. (2018). Yes, but did it
#'   work?: Evaluating variational inference. *Proceedings of the 35th ICML*.
#' @seealso [psis_khat()] to check the approximation with more draws.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- bbb(m)
#' fit
#' @export
bbb <- function(model, lr = "auto", batch_size = NULL, iter = "auto", ...,
                family = c("meanfield", "fullrank"), samples = 1, optimizer = "auto",
                laplace = "auto", init_scale = NULL, average = 0.5, chains = 1, init = NULL,
                draws = 1000, thin = NULL, elbo_every = NULL, elbo_draws = 100,
                local = "auto", elbo_batch = "auto", replace = FALSE,
                control_variates = "auto", clip = NULL, monitor = NULL,
                threads = NULL,
                progress = getOption("sgld.progress", interactive())) {
  if (missing(model) || is_formula(model))
    return(formula_face(bbb, match.call(), parent.frame()))  # R/formula-face.R
  check_dots_empty(...)
  check_model(model)
  start <- proc.time()[["elapsed"]]
  family <- check_choice(family, c("meanfield", "fullrank"), "family")
  label <- vi_label(family)
  check_count(samples, "samples", lower = 1, upper = engine_codes()$limits[["vi_samples"]])
  check_count(draws, "draws", lower = 1, upper = 1e7)
  check_count(elbo_draws, "elbo_draws", lower = 0, upper = 1e6)
  check_count(chains, "chains", lower = 1, upper = 1000)
  check_number(average, "average", lower = 0, upper = 1)
  if (!identical(iter, "auto")) check_count(iter, "iter", lower = 1)
  if (!is.null(elbo_every)) check_count(elbo_every, "elbo_every", lower = 1)
  if (!is.null(thin)) check_count(thin, "thin", lower = 1)
  if (family == "fullrank" && model$d > 1000)
    abort(label, ": ", model$d, " parameters are too many for a full-rank family ",
          "(a ", model$d, " x ", model$d, " factor); use family = \"meanfield\".")
  plan <- vi_plan(model, family, label, lr = lr, batch_size = batch_size, iter = iter,
                  optimizer = optimizer, laplace = laplace, init_scale = init_scale,
                  init = init, samples = samples, local = local, elbo_batch = elbo_batch,
                  control_variates = control_variates, clip = clip, average = average,
                  elbo_every = elbo_every, thin = thin, chains = chains)
  setup <- proc.time()[["elapsed"]] - start
  run <- vi_run(model, plan, init = init, chains = chains, replace = replace, clip = clip,
                monitor = monitor, threads = threads, progress = progress,
                elbo_draws = elbo_draws, call = match.call())
  fit <- vi_fit(run, plan, draws = draws)
  fit$time <- proc.time()[["elapsed"]] - start
  fit$vi$setup_time <- setup
  vi_warnings(fit)
  fit
}

vi_label <- function(family) {
  if (family == "meanfield") "Bayes by Backprop (mean-field Gaussian)"
  else "Bayes by Backprop (full-rank Gaussian)"
}

# ------------------------------------------------------------ the plan --

# The step of plain gradient ascent on stochastic gradients in the Laplace
# coordinates, where the ELBO's curvature is 1 in every direction for a
# Gaussian posterior: each step takes a tenth of the distance to the
# optimum. A constant step leaves the average of the iterates off the
# optimum by an amount proportional to it (the gradient's noise seen
# through the ELBO's curvature changing); measured on MASS::Pima.tr, mean
# field, one draw of w per iteration, 8 chains of 200,000 iterations: the
# intercept's mean off by 0.021 of q's sd at 0.2 and 0.008 at 0.1, while
# some chains diverged at 0.4.
vi_eta <- 0.1
# iterations per part of an automatic run: the parts' means are the batch
# means of the convergence check, so a part must be long against the
# iterates' autocorrelation time, which is about 1 / eta in these
# coordinates
vi_part <- 50
vi_max_iter <- 200000      # the longest automatic run
vi_min_parts <- 16         # an automatic run's fewest parts (12 of them averaged)
# convergence: the average's Monte Carlo standard error, in q's sds for the
# means and in log sd for the scales; the drift between the halves of the
# averaged parts may be four times as large
vi_tol_mean <- 0.02
vi_tol_scale <- 0.005
vi_tol_exact <- 1e-4       # a deterministic ascent: the largest change over a part
vi_full_n <- 1000          # up to this many observations: the full data in every step
# exact gradients (expected log likelihoods on the full data): a larger step
# (the ascent is deterministic; twice the curvature of the Laplace
# coordinates still converges), in parts of 10 iterations, the full data
# while a pass costs up to 10^7 multiply-adds (Adult: 4.6 10^5)
vi_eta_exact <- 0.5
vi_part_exact <- 10
vi_exact_work <- 1e7

# The Laplace approximation for bbb(), or the reason there is none.
vi_laplace <- function(model) {
  if (!model_capabilities(model)$laplace)
    return("the posterior has several modes by construction")
  if (isTRUE(model$local_parameters))
    return("the model has a latent path")
  if (model$d > auto_max_d)
    return(paste0("a ", model$d, " x ", model$d, " covariance is too large"))
  pm <- tryCatch(suppressWarnings(posterior_mode(model, covariance = TRUE)),
                 error = function(e) conditionMessage(e))
  if (is.character(pm)) return(paste("the mode search failed:", pm))
  if (is.null(pm$covariance))
    return("the Hessian at the mode is not negative definite")
  pm
}

# Every setting of the run, resolved once: what the engine's estimator and
# optimiser get, how long the run is and how it is cut into parts.
vi_plan <- function(model, family, label, lr, batch_size, iter, optimizer, laplace,
                    init_scale, init, samples, local, elbo_batch, control_variates, clip,
                    average, elbo_every, thin, chains) {
  d <- model$d
  n <- model$n
  continuing <- inherits(init, "sgld_fit")
  if (continuing) {
    if (!inherits(init, "sgld_vi"))
      abort("`init`: ", label, " continues a fit of bbb(), not of ", init$method, "().")
    if (init$variational$family != family)
      abort("`init`: the fit to continue is ", init$rule, "; continue it with the same ",
            "family (family = \"", init$variational$family, "\").")
    old <- init$vi$plan
  }
  if (!(identical(laplace, "auto") || isTRUE(laplace) || isFALSE(laplace)))
    abort("`laplace` must be \"auto\", TRUE or FALSE; not ", describe(laplace), ".")
  cv_given <- !identical(control_variates, "auto")
  cv_on <- cv_given && !isFALSE(control_variates) && !is.null(control_variates)
  # carrying on: the fit's estimator, whatever `local` says
  local <- if (continuing) old$local
           else resolve_local(local, model, family, cv_on, clip, batch_size, label)
  # the Laplace approximation: kept from the fit when carrying on
  pm <- NULL
  reason <- NULL
  if (continuing) {
    pm <- old$laplace
    if (is.null(pm)) reason <- old$reason
  } else if (!isFALSE(laplace)) {
    pm <- vi_laplace(model)
    if (is.character(pm)) {
      if (isTRUE(laplace))
        abort("`laplace = TRUE`: ", label, " has no Laplace approximation here: ", pm, ".")
      reason <- pm
      pm <- NULL
    }
  } else reason <- "laplace = FALSE"
  coords <- !is.null(pm)
  # the batch: the full data on small data sets, and with expected log
  # likelihoods while a pass costs under 10^7 multiply-adds (then the
  # gradient is exact); otherwise, in the Laplace coordinates, so that the
  # minibatch's gradient costs about as much as the d^2 work of the metric
  # and the control variate, at least 100
  if (is.null(batch_size)) {
    batch_size <- if (n <= vi_full_n || local == "expected" &&
                      n * vi_row_cost(model) <= vi_exact_work) n
                  else if (coords) min(n, max(100, ceiling(d^2 / max(1, vi_row_cost(model)))))
                  else min(100, n)
  }
  if (isTRUE(model$local_parameters)) batch_size <- n
  # exact gradients: a deterministic ascent, no averaging
  exact <- local == "expected" && batch_size == n
  auto_lr <- identical(lr, "auto")
  auto_iter <- identical(iter, "auto") && coords
  if (identical(optimizer, "auto")) optimizer <- if (coords) "sgd" else "adam"
  inner <- resolve_vi_optimizer(optimizer, label)
  if (auto_lr) lr <- if (!coords) lr_exp(0.01, 1e-4) else if (exact) vi_eta_exact else vi_eta
  lr <- as_lr(lr)
  if (identical(iter, "auto") && !coords) iter <- 10000
  if (!cv_given) control_variates <- coords && batch_size < n && local == "w"
  if (isTRUE(control_variates) && coords) control_variates <- pm$mode
  # the estimator's options (src/gradient_vi.c), the fit's when carrying on
  start <- vi_start(model, family, pm, init_scale, init, continuing, label)
  if (exact && family == "meanfield" && coords && !continuing && is.null(init) &&
      is.null(init_scale) && auto_lr && auto_iter)
    start <- vi_exact_optimum(model, start)
  opts <- if (continuing) old$gradient$opts else {
    A <- if (coords) vi_precision(pm$covariance)
    list(samples = as.integer(samples), scale_init = start$scale,
         factor = if (coords) t(chol(pm$covariance)),
         precision = if (local == "w") A, curvature = if (coords) diag(A),
         local = match(local, c("w", "draw", "expected")) - 1L,
         elbo_batch = as.integer(resolve_elbo_batch(elbo_batch, local)))
  }
  gradient <- list(name = paste0("vi_", family), opts = opts)
  # the parts of the run: of equal length, a whole number of them in a given
  # `iter` (at most 20, for its average over whole parts)
  if (!is.null(elbo_every) && !auto_iter && iter %% elbo_every != 0)
    abort("`elbo_every` (", elbo_every, ") must divide `iter` (", iter, ").")
  part <- if (!is.null(elbo_every)) elbo_every
          else if (auto_iter) if (exact) vi_part_exact else vi_part
          else iter / max(which(iter %% seq_len(20) == 0))
  if (!is.null(thin) && part %% thin != 0)
    abort("`thin` (", thin, ") must divide the parts of the run (", part, " iterations",
          if (!is.null(elbo_every)) ": `elbo_every`", ").")
  list(family = family, label = label, laplace = pm, reason = reason, coords = coords,
       gradient = gradient, rule = inner, lr = lr, auto_lr = auto_lr, iter = iter,
       auto_iter = auto_iter, batch_size = batch_size, control_variates = control_variates,
       local = local, exact = exact, average = average, part = part,
       thin = if (is.null(thin)) part else thin, elbo_every = elbo_every,
       init = start$mean, continuing = continuing, samples = samples,
       bfgs = isTRUE(start$bfgs))
}

# With exact expected log likelihoods the mean-field ELBO is a smooth,
# deterministic function of (mu, log sd), so quasi-Newton steps (BFGS) take
# q from the Laplace start to the optimum; plain ascent crawls along the
# directions the data barely determine. On Adult's a9a design, whose
# education and education_num columns are collinear, the ascent met its
# tolerance (a change of 1e-4 sd over a part) 0.17 sd short of the optimum
# (tests/testthat/test-vi.R); from this start the engine's ascent then only
# confirms it. The start is kept when BFGS fails or ends lower.
vi_exact_optimum <- function(model, start) {
  d <- model$d
  mu0 <- to_sampler_scale(model, matrix(start$mean, 1))[1, ]
  last <- NULL
  eval_at <- function(x) {
    if (!identical(x, last$x)) {
      sd <- exp(x[d + seq_len(d)])
      e <- .Call(C_sgld_model_expected, model, x[seq_len(d)], sd)
      last <<- list(x = x, value = -(e$loglik + e$logprior + sum(log(sd))),
                    gradient = -c(e$grad_mu_loglik + e$grad_mu_logprior,
                                  (e$grad_sd_loglik + e$grad_sd_logprior) * sd + 1))
    }
    last
  }
  x0 <- c(mu0, start$scale)
  f0 <- eval_at(x0)$value
  o <- tryCatch(stats::optim(x0, function(x) eval_at(x)$value, function(x) eval_at(x)$gradient,
                             method = "BFGS", control = list(maxit = 2000, reltol = 1e-14)),
                error = function(e) NULL)
  if (is.null(o) || !is.finite(o$value) || o$value > f0 || any(!is.finite(o$par))) return(start)
  list(mean = to_user_scale(model, matrix(o$par[seq_len(d)], 1))[1, ],
       scale = o$par[d + seq_len(d)], bfgs = TRUE)
}

# the cost of one observation's gradient, in multiply-adds: the non-zero
# covariates of a sparse regression, else d
vi_row_cost <- function(model) {
  if (!is.null(model$sp_start)) return(length(model$sp_val) / model$n)
  model$d
}

# the precision of the Laplace approximation, symmetric
vi_precision <- function(S) {
  A <- chol2inv(chol(S))
  (A + t(A)) / 2
}

# q's start: the means on the user's scale (NULL: the engine's default start
# or the fit's) and the estimator's scale parameters.
vi_start <- function(model, family, pm, init_scale, init, continuing, label) {
  d <- model$d
  mean <- if (!is.null(init) && !continuing) init
          else if (!is.null(pm)) pm$mode
  if (continuing) return(list(mean = NULL, scale = NULL))
  if (is.null(init_scale) && !is.null(pm)) {
    # the Laplace approximation: sd_j = 1 / sqrt(Lambda_jj) (the mean-field
    # optimum for a Gaussian posterior), or L = C (M = I)
    if (family == "meanfield") return(list(mean = mean,
                                           scale = -0.5 * log(diag(vi_precision(pm$covariance)))))
    return(list(mean = mean, scale = vi_scale_parameters(diag(d), d, family)))
  }
  L <- vi_scale_init(if (is.null(init_scale)) 0.01 else init_scale, d, family, label)
  # in the Laplace coordinates full rank's M is relative to C: M = C^-1 L
  if (family == "fullrank" && !is.null(pm)) L <- forwardsolve(t(chol(pm$covariance)), L)
  list(mean = mean, scale = vi_scale_parameters(L, d, family))
}

# The lower-triangular factor of the starting covariance given by the user.
vi_scale_init <- function(init_scale, d, family, label) {
  what <- paste0("`init_scale` for ", label)
  if (is.matrix(init_scale) && family == "fullrank") {
    S <- init_scale
    if (!is.numeric(S) || any(dim(S) != d) || any(!is.finite(S)))
      abort(what, " must be a finite ", d, " x ", d, " covariance matrix.")
    if (!isSymmetric(unname(S))) abort(what, " must be symmetric.")
    ev <- eigen(S, symmetric = TRUE, only.values = TRUE)$values
    if (min(ev) <= 1e-12 * max(abs(ev), .Machine$double.xmin))
      abort(what, " must be positive definite; the matrix given is rank-deficient or ",
            "indefinite (smallest eigenvalue ", format(min(ev), digits = 3), ").")
    return(t(chol(S)))
  }
  if (!is.numeric(init_scale) || is.object(init_scale) || is.matrix(init_scale) ||
      !length(init_scale) %in% c(1, d))
    abort(what, " must be a positive number or a vector of ", d, " positive numbers",
          if (family == "fullrank") paste0(", or a ", d, " x ", d, " covariance matrix"),
          "; not ", describe(init_scale), ".")
  if (any(!is.finite(init_scale)) || any(init_scale <= 0))
    abort(what, " must be positive and finite (the starting sds of q); got ",
          paste(format(utils::head(init_scale[!is.finite(init_scale) | init_scale <= 0], 3)),
                collapse = ", "), ".")
  if (any(init_scale > 1e300)) abort(what, " is too large.")
  diag(rep_len(as.double(init_scale), d), d)
}

# The estimator's scale parameters of a lower-triangular factor with a
# positive diagonal: log sds (mean-field), or by columns log M_jj,
# M[j+1, j], ..., M[d, j] (full rank).
vi_scale_parameters <- function(L, d, family) {
  if (family == "meanfield") return(log(diag(L)))
  unlist(lapply(seq_len(d), function(j) c(log(L[j, j]), L[seq_len(d - j) + j, j])))
}

# ... and back: the factor L of q from theta's scale parameters
vi_factor <- function(scale, d, family, C = NULL) {
  if (family == "meanfield") return(diag(exp(scale), d))
  M <- matrix(0, d, d)
  at <- 0
  for (j in seq_len(d)) {
    col <- scale[at + seq_len(d - j + 1)]
    M[j:d, j] <- c(exp(col[1]), col[-1])
    at <- at + d - j + 1
  }
  if (is.null(C)) M else C %*% M
}

resolve_vi_optimizer <- function(optimizer, label) {
  ok <- c("sgd", "momentum", "adagrad", "rmsprop", "adam")
  if (is.character(optimizer) && length(optimizer) == 1 && optimizer %in% ok)
    return(resolve_optimizer(optimizer, NULL))
  if (inherits(optimizer, "sgld_rule") && optimizer$name %in% c("sgld", ok) && !optimizer$sampler)
    return(optimizer)
  abort("`optimizer` for ", label, " must be \"auto\", one of \"", paste(ok, collapse = "\", \""),
        "\" or made by opt_momentum(), opt_adagrad(), opt_rmsprop() or opt_adam(); not ",
        describe(optimizer), ".")
}


# local = "auto", TRUE, FALSE or "expected" -> how the mean-field gradient's
# likelihood part is formed: "w" (at one draw of w per minibatch), "draw"
# (each item's linear combination drawn: local reparameterisation) or
# "expected" (each item's expectation itself). These need a mean-field q
# and a model linear in its weights; they bypass the minibatch gradient,
# so they do not combine with control variates or clipping. "auto" takes
# the expectations where the model has them (exact, and no dearer than a
# draw: logistic_normal.c), else draws locally where that pays.
resolve_local <- function(local, model, family, cv_on, clip, batch_size, label) {
  if (!(identical(local, "auto") || identical(local, "expected") || isTRUE(local) ||
        isFALSE(local)))
    abort("`local` must be \"auto\", \"expected\", TRUE or FALSE; not ", describe(local), ".")
  # what the model's C table has (sgld.h: grad_loglik_local, expected_loglik)
  engine <- if (family == "meanfield") model_engine(model)
  can <- isTRUE(engine$grad_loglik_local)
  can_expect <- isTRUE(engine$expected_loglik)
  if (isTRUE(local) || identical(local, "expected")) {
    what <- if (isTRUE(local)) "`local = TRUE` (local reparameterisation)"
            else "`local = \"expected\"` (expected log likelihoods)"
    why <- if (family != "meanfield") "a mean-field family (family = \"meanfield\")"
           else if (isTRUE(local) && !can)
             "a model linear in its weights (a regression or model_mlp())"
           else if (!isTRUE(local) && !can_expect)
             "a model with expected log likelihoods (model_linear(), model_logistic(), model_poisson())"
           else if (cv_on) "plain minibatches (control_variates = FALSE)"
           else if (!is.null(clip)) "an unclipped gradient (clip = NULL)"
    if (!is.null(why)) abort(what, " needs ", why, ".")
    return(if (isTRUE(local)) "draw" else "expected")
  }
  if (isFALSE(local) || !can || cv_on || !is.null(clip)) return("w")
  if (can_expect) return("expected")
  if (local_auto(model, batch_size)) "draw" else "w"
}

# Where local reparameterisation is on by default (bench/vi-local.R, figures
# in bench/EARLIER.md, the run of 2026-11-23). It cuts the variance of the
# gradient in the scales 1.4- to 8-fold, but that in the means only by the
# share of the weights' noise in it, which grows with the batch: the means'
# total variance ratio (ordinary / local) was 0.96-1.08 for the regressions at
# batch 100 and 1.06-1.08 at batch 1000; for a network with 8 hidden units
# 1.35 at batch 100, 1.81 at 300 and 6.0 at 1000. An iteration costs 2x as
# much on the network and 2.7-3.5x on the regressions (whose ordinary gradient
# has the blocked kernels of dense.h). So: on for networks at batches of 500
# or more (break-even near 330, interpolating between 300 and 1000), off for
# the regressions at any batch.
local_auto <- function(model, batch_size) {
  m <- if (is.null(batch_size)) min(100, model$n) else batch_size
  grepl("^mlp_", model$type) && m >= 500
}

# elbo_batch = "auto", TRUE or FALSE: keep the per-iteration minibatch ELBO
# (fit$elbo_batch). Free with local reparameterisation (the model returns the
# minibatch log likelihood); otherwise an extra pass over each minibatch.
resolve_elbo_batch <- function(elbo_batch, local) {
  if (!(identical(elbo_batch, "auto") || isTRUE(elbo_batch) || isFALSE(elbo_batch)))
    abort("`elbo_batch` must be \"auto\", TRUE or FALSE; not ", describe(elbo_batch), ".")
  if (identical(elbo_batch, "auto")) return(local != "w")
  elbo_batch
}
