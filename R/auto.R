# lr = "auto": settings chosen from the posterior itself (issue 16).
#
# The recipe, for sgld():
#  (a) the posterior mode w_hat (posterior_mode(), BFGS) and the Laplace
#      covariance S = (-H)^{-1} there (central differences of the exact
#      gradient);
#  (b) the fixed preconditioner P = S. In the coordinates z = R^{-T}(w - w_hat)
#      (S = R^T R) the posterior is close to N(0, I) whatever the scales of
#      the predictors, so one step size fits every model and data set;
#  (c) the full data in every step when n is small; otherwise control
#      variates at w_hat, whose gradient noise near the mode is tiny, with a
#      batch chosen so that the sampling threshold stays below 0.01;
#  (d) the step eta = 0.25 in those coordinates, at temperature 1 - eta / 2.
#      For a Gaussian target, Euler's step w <- w - eta w + sqrt(2 eta tau) xi
#      has the stationary variance tau / (1 - eta / 2): the temperature
#      1 - eta / 2 cancels that widening exactly, at any eta < 2. What is
#      left is the posterior's departure from a Gaussian. Measured on
#      MASS::Pima.tr (7 unscaled predictors, n = 200, against 200,000 MALA
#      draws, ESS ~7000 per run, two runs each): at temperature 1 - eta/2 the
#      sd ratios were 0.98-1.015 at eta = 0.1, 0.978-1.011 at 0.2,
#      0.975-1.003 at 0.3 and 0.966-1.000 at 0.5, mean errors at most 0.045
#      sd throughout; at temperature 1, eta = 0.1 already gave sds up to 6.8%
#      too wide. 0.25 keeps the bias near 2% and mixes 2.6 times faster than
#      0.1;
#  (e) iter from a target effective sample size: the AR(1) autocorrelation
#      1 - eta of the unit-curvature chain has integrated time (2 - eta) / eta;
#  (f) several chains start over-dispersed, from N(w_hat, 4 S), so R-hat can
#      see a chain that has not converged.
# Every choice the user makes through an argument is kept.

auto_eta <- 0.25         # step in Laplace-preconditioned coordinates
auto_eta_skewed <- 0.1   # the step where the posterior is far from Gaussian
auto_target_ess <- 2000  # effective draws (all chains together)
auto_full_n <- 1000      # up to this many observations: full data in every step
auto_alpha_max <- 0.01   # largest sampling threshold the batch may leave
auto_spread <- 2         # starts of several chains from N(w_hat, spread^2 S)
auto_max_d <- 2000       # largest d for a d x d Laplace covariance
auto_max_spread <- 10    # longest lengthening of a run after its warm-up

# The Laplace approximation, or a clear error saying why it is not available.
auto_laplace <- function(model, what) {
  # these posteriors have several modes by construction (label switching in
  # the mixture, signs and order of the sources in ICA, permutations of a
  # network's hidden units): one Laplace approximation would confine the
  # chain to one of them without a warning
  if (inherits(model, c("sgld_model_mixture", "sgld_model_ica", "sgld_model_mlp")))
    abort(what, ": `lr = \"auto\"` builds on one Laplace approximation, and the posterior ",
          "of ", class(model)[1], " has several modes. Give `lr` yourself (a decaying ",
          "schedule such as lr_range(), as in the vignettes); see \"Choosing settings by ",
          "hand\" in ?sgld.")
  # the Laplace covariance is d x d: beyond a few thousand parameters it costs
  # more memory and time than the run it would tune
  if (model$d > auto_max_d)
    abort(what, ": `lr = \"auto\"` builds a ", model$d, " x ", model$d, " Laplace covariance, ",
          "too large above ", auto_max_d, " parameters. Give `lr` yourself; see \"Choosing ",
          "settings by hand\" in ?sgld.")
  pm <- tryCatch(withCallingHandlers(posterior_mode(model, covariance = TRUE),
                                     warning = function(w) invokeRestart("muffleWarning")),
                 error = function(e) abort(what, ": `lr = \"auto\"` needs the posterior ",
                                           "mode, which failed: ", conditionMessage(e),
                                           " Give `lr` yourself."))
  if (is.null(pm$covariance))
    abort(what, ": `lr = \"auto\"` needs a posterior whose Hessian at the mode is negative ",
          "definite, and this model's is not (a multimodal or improper posterior?). ",
          "Give `lr` yourself (see the section \"Choosing settings by hand\" of ?sgld).")
  pm
}

# How far the posterior departs from its Laplace approximation. In Laplace
# coordinates z (w = w_hat + R^T z, S = R^T R) a Gaussian posterior has the
# score R grad U = -z exactly; at 10 points z ~ N(0, I) the largest
# root-mean-square residual over the coordinates measures the departure
# (10 full passes over the data). Measured: handout 0.02, mtcars 0.44,
# Pima 0.25, Adult (a9a, rare levels such as education=Preschool whose
# posteriors are strongly skewed) 20. Where it is above 1 the step is 0.1
# instead of 0.25: on Adult, against 150,000 MALA draws, 0.25 left mean
# errors of 0.31 sd and sds 23% off along education=Preschool, still 0.26
# and 21% with three times the iterations (a bias, not Monte Carlo error);
# 0.1 gave 0.094 sd and 4.2%.
laplace_departure <- function(model, pm, points = 10) {
  R <- chol(pm$covariance)
  res <- with_seed_kept({
    set.seed(1)
    t(vapply(seq_len(points), function(k) {
      z <- stats::rnorm(model$d)
      e <- .Call(C_sgld_model_eval, model, pm$sampler + drop(z %*% R))
      drop(R %*% (e$grad_loglik + e$grad_logprior)) + z
    }, numeric(model$d)))
  })
  if (model$d == 1) res <- t(res)
  max(sqrt(colMeans(res^2)))
}

# Overdispersed starts, on the user's scale: one row per chain.
auto_init <- function(model, pm, chains) {
  if (chains == 1) return(pm$mode)
  R <- chol(pm$covariance)
  w <- matrix(pm$sampler, chains, model$d, byrow = TRUE) +
    auto_spread * matrix(stats::rnorm(chains * model$d), chains) %*% R
  to_user_scale(model, w)
}

# The sampling threshold of the control-variate (or plain) estimator at a
# few points drawn from the Laplace approximation, for the step eta and the
# preconditioner P = T T' (by default the Laplace covariance S = R'R, T = R';
# NULL for none): alpha = eta / 2 * lambda_max(T' Cov(g_hat) T).
auto_alpha <- function(model, pm, batch_size, cv, eta, points = 3, times = 200,
                       factor = t(chol(pm$covariance))) {
  R <- chol(pm$covariance)
  max(vapply(seq_len(points), function(k) {
    w <- pm$sampler + drop(stats::rnorm(model$d) %*% R)
    at <- to_user_scale(model, matrix(w, 1))[1, ]
    G <- stochastic_gradients(model, at, batch_size = batch_size, times = times,
                              control_variates = if (cv) pm$mode else FALSE)
    estimator_threshold(G, eta, factor)   # R/warnings.R
  }, numeric(1)))
}

# sgld(model) with lr = "auto": the settings, then the run. `args` holds
# sgld()'s arguments, `given` the names the user gave.
auto_sgld <- function(model, args, given, call) {
  # a model with a latent path: its own recipe (R/whiten.R)
  if (isTRUE(model$path_gaussian)) return(auto_whiten(model, args, given, call, "sgld"))
  recipe <- auto_recipe(model)   # a model's own recipe (networks: R/auto-mlp.R)
  if (!is.null(recipe)) return(recipe(model, args, given, call))
  what <- "sgld()"
  start <- proc.time()[["elapsed"]]
  n <- model$n
  d <- model$d
  chains <- args$chains
  check_count(chains, "chains", lower = 1, upper = 1000)
  pm <- auto_laplace(model, what)
  S <- pm$covariance
  precondition <- if ("precondition" %in% given) args$precondition else S
  if (!is.matrix(precondition))
    abort("`lr = \"auto\"` needs `precondition` to be a fixed matrix (or not given: the ",
          "Laplace covariance); give `lr` yourself for ", describe(precondition), ".")
  # eigenvalues of the posterior precision in the preconditioner's coordinates:
  # the step is eta over the largest, the mixing time set by the smallest
  RP <- chol(precondition)
  curv <- eigen(RP %*% solve(S, t(RP)), symmetric = TRUE, only.values = TRUE)$values
  departure <- laplace_departure(model, pm)
  eta <- if (departure > 1) auto_eta_skewed else auto_eta
  lr <- eta / max(curv)
  eta_slow <- lr * min(curv)
  cv_given <- "control_variates" %in% given
  if ("batch_size" %in% given) {
    batch <- args$batch_size
    cv <- if (cv_given) args$control_variates else !is.null(batch) && batch < n
  } else if (n <= auto_full_n || (cv_given && isFALSE(args$control_variates))) {
    batch <- if (n <= auto_full_n) n else NULL
    cv <- if (cv_given) args$control_variates else FALSE
  } else {
    cv <- if (cv_given) args$control_variates else TRUE
    batch <- min(n, 100)
  }
  if (is.null(batch)) batch <- min(100, n)
  alpha <- 0
  if (batch < n) {
    use_cv <- !isFALSE(cv)
    alpha <- auto_alpha(model, pm, batch, use_cv, eta)
    # the noise variance falls as 1 / batch: grow the batch until alpha is small
    if (!"batch_size" %in% given && alpha > auto_alpha_max) {
      batch <- min(n, ceiling(batch * alpha / auto_alpha_max))
      alpha <- if (batch < n) auto_alpha(model, pm, batch, use_cv, eta) else 0
    }
    # a batch the user fixed: a smaller step instead, as alpha is proportional to it
    if ("batch_size" %in% given && alpha > auto_alpha_max) {
      shrink <- auto_alpha_max / alpha
      lr <- lr * shrink
      eta_slow <- eta_slow * shrink
      alpha <- auto_alpha_max
    }
  }
  eta_top <- lr * max(curv)
  if (isTRUE(cv)) cv <- pm$mode
  tau_int <- (2 - eta_slow) / eta_slow
  kept <- ceiling(auto_target_ess * tau_int / chains)
  burnin <- if ("burnin" %in% given) args$burnin else max(200, ceiling(0.1 * kept))
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else kept + burnin
  thin <- if ("thin" %in% given) args$thin else max(1, floor(tau_int / 4))
  # cancel Euler's widening tau / (1 - eta / 2) along the stiffest direction;
  # exact for a Gaussian posterior when P is its covariance
  temperature <- if ("temperature" %in% given) args$temperature
                 else 1 - eta_top / 2
  init <- if ("init" %in% given && !is.null(args$init)) args$init else auto_init(model, pm, chains)
  setup <- proc.time()[["elapsed"]] - start
  rule <- resolve_precondition(precondition, model)
  run <- function(iter, burnin, thin, init, monitor = NULL, diagnostics = NULL, pars = NULL)
    run_sampler(model, lr = lr, batch_size = batch, iter = iter, burnin = burnin,
                thin = thin, temperature = temperature, chains = chains, init = init,
                replace = args$replace, clip = args$clip, monitor = monitor,
                threads = args$threads, diagnostics = diagnostics, rule = rule,
                control_variates = cv, method = "sgld", call = call,
                pars = pars, progress = args$progress, parallel = args$parallel)
  # Far from Gaussian, the Laplace covariance understates some directions
  # and the chain mixes along them more slowly than tau_int says: on Adult
  # (rare levels with no events) the marginal variances were up to 3.0 times
  # the Laplace ones and the planned 2,000 effective draws came out as
  # 540-575 for those levels. There the burn-in runs first as a warm-up; the
  # largest ratio of a marginal variance in its second half to the Laplace
  # one (at least 1, at most auto_max_spread) lengthens the rest, which
  # continues it exactly (init = fit: the same draws as one run). Adult,
  # seeds 1 and 1654: 2.6 times, smallest ESS 1383 and 1466.
  spread <- 1
  warm <- NULL
  if (departure > 1 && !any(c("iter", "burnin") %in% given)) {
    # a fifth of the planned run: on Adult the second half of a warm-up of a
    # tenth still carried the drift from the mode (0.9 sd along the rare
    # levels) and gave ratios up to 4.9; of a fifth, 2.8-3.5 in 4 seeds,
    # against 3.04 from the 150,000-draw reference
    burnin <- max(200, ceiling(0.2 * kept))
    warm <- suppressWarnings(run(burnin, 0, 1, init, pars = TRUE))
    if (all(warm$status == "done")) {
      x <- as.matrix(warm, scale = "sampler")
      half <- unlist(lapply(split(seq_len(nrow(x)), rep(seq_len(chains), each = nrow(x) / chains)),
                            function(r) r[-seq_len(floor(length(r) / 2))]))
      spread <- max(1, min(auto_max_spread,
                           max(apply(x[half, , drop = FALSE], 2, stats::var) / diag(S))))
      kept <- ceiling(kept * spread)
      thin <- if ("thin" %in% given) args$thin else max(1, floor(tau_int * spread / 4))
      iter <- kept + burnin
    } else warm <- NULL
  }
  fit <- if (is.null(warm))
    run(iter, burnin, thin, init, args$monitor, args$diagnostics, args$pars)
  else run(kept, 0, thin, warm, args$monitor, args$diagnostics, args$pars)
  fit$auto <- list(
    lr = lr, batch_size = batch, control_variates = !isFALSE(cv), iter = iter,
    burnin = burnin, thin = thin, temperature = temperature, mode = pm$mode,
    covariance = S, laplace_precondition = !"precondition" %in% given,
    alpha = alpha, laplace_departure = departure, target_ess = auto_target_ess,
    autocorrelation_time = tau_int, warmup_spread = if (!is.null(warm)) spread,
    overdispersed = chains > 1 && !"init" %in% given, setup_time = setup,
    reason = sprintf(paste0(
      "lr = \"auto\": preconditioner %s, step %s in its coordinates%s (temperature %s ",
      "cancels the step's widening), %s; %s iterations for about %d effective draws%s%s."),
      if ("precondition" %in% given) "given" else "= Laplace covariance at the mode",
      format(eta_top, digits = 3),
      if (departure > 1) sprintf(", small as the posterior is far from Gaussian (%s)",
                                 format(departure, digits = 2)) else "",
      format(temperature, digits = 3),
      if (batch >= n) "full data in every step"
      else sprintf("batch %d%s (sampling threshold %s)", batch,
                   if (!isFALSE(cv)) " with control variates at the mode" else "",
                   format(alpha, digits = 2)),
      format(iter, big.mark = ","), auto_target_ess,
      if (!is.null(warm) && spread > 1)
        sprintf(paste0(" (%s times the plan: in a warm-up some marginal variances were %s ",
                       "times the Laplace ones)"),
                format(spread, digits = 2), format(spread, digits = 2)) else "",
      if (chains > 1 && !"init" %in% given) "; chains start over-dispersed around the mode" else ""))
  fit$time <- fit$time + setup + if (!is.null(warm)) warm$time else 0
  fit
}

# mala(model) with lr = "auto": P = the Laplace covariance and the step from
# Roberts and Rosenthal's optimal scaling, h = 1.65^2 d^(-1/3) in MALA's usual
# x + h/2 grad + sqrt(h) xi, i.e. eta = h / 2 here, checked by short pilots
# that halve or grow it until the acceptance rate is between 0.45 and 0.85.
auto_mala <- function(model, args, given, call) {
  if (isTRUE(model$path_gaussian)) return(auto_whiten(model, args, given, call, "mala"))
  start <- proc.time()[["elapsed"]]
  d <- model$d
  chains <- args$chains
  check_count(chains, "chains", lower = 1, upper = 1000)
  pm <- auto_laplace(model, "mala()")
  precondition <- if ("precondition" %in% given) args$precondition else pm$covariance
  eta <- 1.65^2 / (2 * d^(1 / 3))
  if (is.matrix(precondition)) {
    RP <- chol(precondition)
    curv <- eigen(RP %*% solve(pm$covariance, t(RP)), symmetric = TRUE, only.values = TRUE)$values
    eta <- eta / max(curv)
  }
  rule <- mala_rule(precondition, model)
  acc <- NA_real_
  for (k in 1:6) {
    pilot <- suppressWarnings(run_sampler(model, lr = eta, batch_size = model$n, iter = 300, burnin = 0,
                         thin = 1, temperature = args$temperature, chains = 1,
                         init = pm$mode, replace = FALSE, clip = NULL, monitor = NULL,
                         threads = 1L, mala = TRUE, rule = rule, method = "mala", call = call))
    acc <- pilot$acceptance
    if (acc < 0.45) eta <- eta / 2 else if (acc > 0.85) eta <- eta * 1.5 else break
  }
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else 11000
  burnin <- if ("burnin" %in% given) args$burnin else 1000
  init <- if ("init" %in% given && !is.null(args$init)) args$init else auto_init(model, pm, chains)
  setup <- proc.time()[["elapsed"]] - start
  fit <- run_sampler(model, lr = eta, batch_size = model$n, iter = iter, burnin = burnin,
                     thin = args$thin, temperature = args$temperature, chains = chains,
                     init = init, replace = FALSE, clip = NULL, monitor = args$monitor,
                     threads = args$threads, mala = TRUE, rule = rule, method = "mala",
                     call = call, pars = args$pars, progress = args$progress,
                     parallel = args$parallel)
  fit$auto <- list(lr = eta, iter = iter, burnin = burnin, mode = pm$mode,
                   covariance = pm$covariance, pilot_acceptance = acc, setup_time = setup,
                   overdispersed = chains > 1 && !"init" %in% given,
                   reason = sprintf(paste0(
                     "lr = \"auto\": preconditioner %s, step %s (pilot acceptance %s)%s."),
                     if ("precondition" %in% given) "given" else "= Laplace covariance at the mode",
                     format(eta, digits = 3), format(acc, digits = 2),
                     if (chains > 1 && !"init" %in% given)
                       "; chains start over-dispersed around the mode" else ""))
  fit$time <- fit$time + setup
  fit
}

# One or two lines for print(): what lr = "auto" chose and why.
print_auto <- function(x) {
  if (!is.null(x$auto)) cat(strwrap(x$auto$reason, exdent = 2), sep = "\n")
}

# Samplers without automatic settings say so, and what to use instead.
auto_unsupported <- function(what) {
  remedy <- if (what %in% c("sgd()", "gd()"))
    "posterior_mode(model) finds the mode without a learning rate (by BFGS)"
  else "sgld(model) chooses its settings itself (a fixed Laplace preconditioner)"
  abort(what, " needs a learning rate `lr` (a number or a schedule): it has no automatic ",
        "one. ", remedy, "; see \"Choosing settings by hand\" in ?sgld.")
}
