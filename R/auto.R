# lr = "auto": settings chosen from the posterior itself.
#
# The recipe, for sgld():
#  (a) the posterior mode w_hat (posterior_mode(): Newton's method in C for
#      the regressions, BFGS otherwise) and the Laplace covariance
#      S = (-H)^{-1} there;
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
#      see a chain that has not converged;
#  (g) the Laplace approximation is checked: where it fails outright
#      (auto_wall_departure, or a warm-up whose variances run off), the steps
#      are Metropolis-adjusted instead (auto_sgld_mala()).
# Every choice the user makes through an argument is kept.

auto_eta <- 0.25         # step in Laplace-preconditioned coordinates
auto_eta_skewed <- 0.1   # the step where the posterior is far from Gaussian
# effective draws of the slowest parameter, all chains together (2000 /
# chains each): a mean's Monte Carlo error is sd / sqrt(2000) = 0.022
# posterior sd and an sd's 1.6%, under half of the 0.15 sd and 10% accuracy
# bar (bench/defaults.md, "The precision the defaults aim at")
auto_target_ess <- 2000
auto_full_n <- 1000      # up to this many observations: full data in every step
auto_alpha_max <- 0.01   # largest sampling threshold the batch may leave
auto_spread <- 2         # starts of several chains from N(w_hat, spread^2 S)
auto_max_d <- 2000       # largest d for a d x d Laplace covariance
auto_max_spread <- 10    # longest lengthening of a run after its warm-up
auto_coord_residual <- 2 # coordinates drawn alone: conditional residual above this,
auto_coord_rows <- 0.1   # each on at most this fraction of the rows,
auto_coord_max <- 50     # at most this many,
auto_coord_rounds <- 3   # found in this many rounds,
auto_coord_rho2 <- 0.5   # nearly independent of the rest (auto_coordinates())
# Not beyond this departure. Data sets with coordinates drawn alone and
# their departures (bench/defaults.md): Adult 40, lending 46, Sacramento's
# condos 40, grants 9.4, the rare-levels simulation 17: within the bar in
# every seed tried; ames' Central_Air 280, where walls of data lie in the
# rest too: a step of the rest 2.3 Laplace sds along the intercept and the
# zoning levels swung Somerset (in the set, 182 rows all with central air)
# to 141, and its sd came out 8.5-8.7% off in three seeds, 29% in a fourth.
# There the run goes as before (and on ames the warm-up runs off:
# Metropolis-adjusted steps, within 0.051 sd and 4.8%).
auto_coord_departure <- 100
# Beyond it, only where the drawn-alone levels and the rest are nearly
# independent under the Laplace approximation (largest squared canonical
# correlation at most this): ames' failure was that coupling, the rest's
# steps dragging Somerset's conditional (0.154 there). Adult under
# rstanarm's autoscaled priors: departure 513, as the prior sds of its
# levels with 1-51 rows reach 451 and their posteriors are half-flat out to
# the prior's reach, all of it in the six levels drawn alone (the rest's
# largest conditional residual 1.08), coupling 0.063 (bench/defaults.md).
auto_coord_rho2_far <- 0.1

# The Laplace approximation, or a clear error saying why it is not available.
auto_laplace <- function(model, what) {
  auto_laplace_capable(model, what)
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

# these posteriors have several modes by construction (label switching in
# the mixture, signs and order of the sources in ICA, permutations of a
# network's hidden units): one Laplace approximation would confine the
# chain to one of them without a warning
auto_laplace_capable <- function(model, what) {
  if (!model_capabilities(model)$laplace)
    abort(what, ": `lr = \"auto\"` builds on one Laplace approximation, and the posterior ",
          "of ", class(model)[1], " has several modes. Give `lr` yourself (a decaying ",
          "schedule such as lr_range(), as in the vignettes); see \"Choosing settings by ",
          "hand\" in ?sgld.")
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
laplace_departure <- function(model, pm, points = 10) laplace_residuals(model, pm, points = points)$departure

# Scores at `points` points of a Laplace approximation: of the coordinates A
# with the others held at the mode, N(w_hat_A, SA) with SA = HA^{-1} (by
# default every coordinate: the whole approximation, S and H = S^{-1}).
# `departure` is the residual above, in A's Laplace coordinates; and per
# coordinate j of A, `conditional` is the same residual of its conditional
# score, g_j + (HA u)_j at w_hat + u, in units of its conditional Laplace sd
# 1 / sqrt(HA_jj): it blames the coordinates whose own conditionals are far
# from Gaussian (on Adult education=Preschool 51, native_country=Outlying-US
# 21, four more levels with 1-14 rows 3-5, then at most 1.2), where the
# departure is a mix of them all.
laplace_residuals <- function(model, pm, A = seq_len(model$d), SA = pm$covariance,
                              HA = chol2inv(chol(SA)), points = 10) {
  RA <- chol(SA)
  k <- length(A)
  # the points first: full_gradient() draws from R's stream too
  Z <- with_seed_kept({
    set.seed(1)
    lapply(seq_len(points), function(i) stats::rnorm(k))
  })
  res <- with_seed_kept(vapply(Z, function(z) {
    u <- drop(z %*% RA)
    w <- pm$sampler
    w[A] <- w[A] + u
    g <- full_gradient(model, w)[A]
    c(drop(RA %*% g) + z, (g + drop(HA %*% u)) / sqrt(diag(HA)))
  }, numeric(2 * k)))
  rms <- sqrt(rowMeans(matrix(res, 2 * k)^2))
  list(departure = max(rms[seq_len(k)]), conditional = rms[k + seq_len(k)])
}

# Coordinates drawn one at a time by slice sampling on their own rows
# (src/coordinate.c), while the Langevin steps move the others: where a few
# coordinates make the posterior far from Gaussian (departure > 1) and the
# rest is close to it, the step need no longer be small for all. The set:
# the coordinates whose conditionals are far from Gaussian
# (auto_coord_residual) and whose columns are non-zero on few rows
# (auto_coord_rows of n, so that their updates cost little); then, given
# the set, the same residuals of the rest at 30 points of its own Laplace
# approximation (30 passes), and so on for auto_coord_rounds rounds (fixing
# a few levels can reveal another: its conditional was hidden behind theirs).
# 30 points, as 10 missed a wall: on modeldata's ames (Central_Air by
# neighbourhood), College_Creek's 267 rows all have central air, and its
# residual was 0.84 at 10 points, 220-250 at 30 and 100.
# The set is used only if the rest ends with every conditional residual at
# most auto_coord_residual and the two blocks are nearly independent under
# the Laplace approximation (the largest squared canonical correlation,
# Gibbs' rate of convergence, at most auto_coord_rho2). The rest then takes
# the step of a near-Gaussian posterior. (Not by its departure: on Adult
# that was 1.1-6.5 over six sets of 10 points, against 40 for the whole,
# driven by dense directions of the rest whose own conditionals are close to
# Gaussian.) On Adult (bench/defaults.md) six levels with 1-51 rows qualify in
# the first round, canonical correlation 0.27, the rest's largest residual
# 1.0 (occupation=Priv-house-serv, 149 rows, one event); steps of 0.25 then
# gave errors of at most 0.083 sd and 7% (20% at 0.5). The 48 coefficients with fewer than 1% of the rows would have given
# a correlation of 0.9985 (the levels of a factor and the intercept share a
# direction that the prior alone pins down, which one-at-a-time updates
# cross slowly). Returns NULL, or the engine's settings, the Langevin
# steps' factor (zero for the set) and what print() reports.
auto_coordinates <- function(model, pm, conditional) {
  if (!isTRUE(model_engine(model)$logpost_coordinate)) return(NULL)
  d <- model$d
  S <- pm$covariance
  H <- chol2inv(chol(S))
  A <- seq_len(d)
  B <- integer(0)
  rows <- list()
  residual <- conditional
  for (round in seq_len(auto_coord_rounds)) {
    far <- A[residual > auto_coord_residual]
    if (!length(far)) break
    r <- model_coordinate_rows(model, far)
    if (is.null(r)) return(NULL)
    few <- !vapply(r, is.null, NA) & lengths(r) <= auto_coord_rows * model$n
    if (!any(few)) return(NULL)
    B <- c(B, far[few])
    rows <- c(rows, r[few])
    if (length(B) > auto_coord_max || length(B) >= d) return(NULL)
    A <- setdiff(seq_len(d), B)
    HA <- H[A, A]
    residual <- laplace_residuals(model, pm, A, chol2inv(chol(HA)), HA, points = 30)$conditional
  }
  if (!length(B) || any(residual > auto_coord_residual)) return(NULL)
  rho2 <- max(Re(eigen(solve(S[A, A], S[A, B, drop = FALSE]) %*%
                         solve(S[B, B, drop = FALSE], S[B, A, drop = FALSE]),
                       only.values = TRUE)$values))
  if (!(rho2 <= auto_coord_rho2)) return(NULL)
  o <- order(B)
  B <- B[o]
  rows <- rows[o]
  factor <- matrix(0, d, d)
  factor[A, A] <- t(chol(chol2inv(chol(H[A, A]))))
  list(settings = list(index = as.integer(B - 1L), start = c(0, cumsum(lengths(rows))),
                       rows = as.double(unlist(rows)),
                       # twice the conditional Laplace sd: stepping out widens it
                       width = 2 / sqrt(diag(H)[B])),
       factor = factor, names = model$sampler_names[B], residual = max(residual),
       rho2 = rho2)
}

# The gradient of the log posterior at w (sampler's scale), in one pass over
# the data: the estimator with the whole data as its batch.
full_gradient <- function(model, w) {
  if (model$n > .Machine$integer.max) {
    e <- .Call(C_sgld_model_eval, model, as.double(w))
    return(e$grad_loglik + e$grad_logprior)
  }
  g <- model_gradient_draws(model, list(w = as.double(w), batch_size = model$n,
                                         times = 1L, replace = 0L, cv_mode = NULL))
  stop_on_failure(model)
  drop(g)
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

# The batch and control variates of lr = "auto": the full data when n is
# small; otherwise control variates at the mode and a batch grown until the
# sampling threshold alpha_of(batch, use_cv) is below auto_alpha_max; a
# batch the user fixed shrinks the step instead (by `shrink`). Where
# row_alpha_of(use_cv) is given (a near-Gaussian posterior: one row's
# threshold averaged over the Laplace approximation, auto_row_alpha()), the
# batch is solved for from it instead of grown from alpha_of().
auto_batch <- function(model, args, given, alpha_of, row_alpha_of = NULL) {
  n <- model$n
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
  shrink <- 1
  if (batch < n) {
    use_cv <- !isFALSE(cv)
    if (!is.null(row_alpha_of)) {
      # the smallest batch with a small alpha, from one row's noise
      replace <- isTRUE(args$replace)
      row_alpha <- row_alpha_of(use_cv)
      if (!"batch_size" %in% given)
        batch <- auto_batch_for(row_alpha, n, auto_alpha_max, least = batch, replace = replace)
      alpha <- auto_batch_alpha(row_alpha, batch, n, replace)
    } else {
      alpha <- alpha_of(batch, use_cv)
      # the noise variance falls as 1 / batch: grow the batch until alpha is small
      if (!"batch_size" %in% given && alpha > auto_alpha_max) {
        batch <- min(n, ceiling(batch * alpha / auto_alpha_max))
        alpha <- if (batch < n) alpha_of(batch, use_cv) else 0
      }
    }
    # a batch the user fixed: a smaller step instead, as alpha is proportional to it
    if ("batch_size" %in% given && alpha > auto_alpha_max) {
      shrink <- auto_alpha_max / alpha
      alpha <- auto_alpha_max
    }
    # control variates read two batches an iteration: from half the data on,
    # the full data cost less, and have no noise (modeldata's credit_data,
    # n = 4039: batch 2500 with control variates, 3.1 s of sampling)
    if (!any(c("batch_size", "control_variates") %in% given) &&
        (if (use_cv) 2 else 1) * batch >= n) {
      batch <- n
      cv <- FALSE
      alpha <- 0
    }
  }
  list(batch = batch, cv = cv, alpha = alpha, shrink = shrink)
}

# The sampling threshold of the estimator on one row, its noise covariance
# averaged over `points` points drawn from the Laplace approximation, where
# the chain spends its time (a step whose noise has covariance C in the
# Laplace coordinates widens the stationary variance of a Gaussian posterior
# by eta / 2 * C / (1 - eta / 2): the average noise sets the bias, not the
# noise at the farthest point). A batch of b rows drawn without replacement
# has (n - b) / ((n - 1) b) times that noise (auto_batch_alpha()), so one
# estimate serves every batch. It replaces measuring each batch at three
# points, 200 batches each: the largest of three points varied threefold
# between calls (NMES1988's negative binomial: 0.12-0.37 at batch 100 over
# ten points), 200 draws in 19 dimensions inflate the largest eigenvalue
# about 1.7 times (Marchenko-Pastur), and measuring a grown batch of 2,600
# rows cost 270 passes over the data (bench/negbin-defaults.md).
auto_row_alpha <- function(model, pm, cv, eta, factor = t(chol(pm$covariance)), points = 10,
                           times = auto_row_draws(model$d)) {
  R <- chol(pm$covariance)
  C <- 0
  for (k in seq_len(points)) {
    w <- pm$sampler + drop(stats::rnorm(model$d) %*% R)
    at <- to_user_scale(model, matrix(w, 1))[1, ]
    G <- stochastic_gradients(model, at, batch_size = 1, times = times,
                              control_variates = if (cv) pm$mode else FALSE)
    C <- C + stats::cov(G) / points
  }
  if (!is.null(factor)) C <- crossprod(factor, C %*% factor)
  if (anyNA(C)) return(NA_real_)
  if (any(!is.finite(C))) return(Inf)
  eta / 2 * max(eigen(C, symmetric = TRUE, only.values = TRUE)$values)
}

# draws per point: 2,000 (10 points pool 20,000, where the largest
# eigenvalue of d = 19 is inflated by 3%), fewer where d^2 makes their
# covariance dear, never below 200
auto_row_draws <- function(d) as.integer(max(200, min(2000, floor(2e8 / (10 * d^2)))))

# A batch's threshold from the one row's, and the smallest batch (at least
# `least`) whose threshold is at most `most`.
auto_batch_alpha <- function(row_alpha, batch, n, replace = FALSE)
  if (batch >= n && !replace) 0 else
    row_alpha / batch * (if (replace) 1 else (n - batch) / (n - 1))
auto_batch_for <- function(row_alpha, n, most, least = 100, replace = FALSE) {
  if (!is.finite(row_alpha)) return(n)
  b <- if (replace) row_alpha / most else row_alpha * n / (most * (n - 1) + row_alpha)
  as.integer(min(n, max(least, ceiling(b))))
}

# The run's length for `target` effective draws along the slowest direction,
# whose step is eta_slow: the AR(1) chain's integrated autocorrelation time
# (2 - eta) / eta; burn-in and thinning from it; what the user gave is kept.
auto_run_length <- function(eta_slow, target, chains, args, given,
                            tau_int = (2 - eta_slow) / eta_slow) {
  kept <- ceiling(target * tau_int / chains)
  burnin <- if ("burnin" %in% given) args$burnin else max(200, ceiling(0.1 * kept))
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else kept + burnin
  # an `iter` given alone shorter than the planned burn-in: half of it, as
  # sgld()'s own default
  if (burnin >= iter && !"burnin" %in% given) burnin <- floor(iter / 2)
  thin <- if ("thin" %in% given) args$thin else max(1, floor(tau_int / 4))
  list(tau_int = tau_int, kept = kept, burnin = burnin, iter = iter, thin = thin)
}

# sgld(model) with lr = "auto": the settings, then the run. `args` holds
# sgld()'s arguments, `given` the names the user gave.
auto_sgld <- function(model, args, given, call) {
  # a model with a latent path: its own recipe (R/whiten.R)
  if (isTRUE(model$path_gaussian)) return(auto_whiten(model, args, given, call, "sgld"))
  recipe <- auto_recipe(model)   # a model's own recipe (networks: R/auto-mlp.R)
  if (!is.null(recipe)) return(recipe(model, args, given, call))
  auto_phases(function(made) auto_sgld_phases(model, args, given, call, made))
}

auto_sgld_phases <- function(model, args, given, call, made) {
  # wide models: a diagonal preconditioner, nothing d x d (R/auto-wide.R)
  if (model$d > auto_wide_limit() && !"precondition" %in% given)
    return(auto_sgld_wide(model, args, given, call, made))
  start <- proc.time()[["elapsed"]]
  check_count(args$chains, "chains", lower = 1, upper = 1000)
  pm <- auto_laplace(model, "sgld()")
  step <- auto_sgld_step(model, args, given, pm)
  # the Laplace approximation fails outright (walls of data the Gaussian
  # crosses): Metropolis-adjusted steps where full passes are cheap enough
  if (step$departure > auto_wall_departure && auto_mala_allowed(model, given))
    return(auto_sgld_mala(model, args, given, call, made, pm, step$precondition, step$curv,
                          step$departure, start, "departure"))
  # independence Metropolis-Hastings (R/auto-imh.R) where a pilot's
  # importance weights allow it and it costs less than the alternative:
  # above auto_full_n rows that is the subsampled plan, made first (its
  # random numbers come before the pilot's, which a refusing pilot gives
  # back, so the fallback's draws are those the plan alone would give)
  plan <- if (model$n > auto_full_n && imh_pays(model, NULL))
            auto_sgld_plan(model, args, given, pm, step)
  if (auto_imh_wanted(model, given, step, plan)) {
    fit <- auto_imh(model, args, given, call, made, pm, step, start)
    if (!is.null(fit)) return(fit)
  }
  if (is.null(plan)) plan <- auto_sgld_plan(model, args, given, pm, step)
  if (auto_full_wanted(model, given, step, plan))
    return(auto_sgld_full(model, args, given, call, made, pm, step, start))
  init <- if ("init" %in% given && !is.null(args$init)) args$init
          else auto_init(model, pm, args$chains)
  setup <- proc.time()[["elapsed"]] - start
  run <- auto_sgld_runner(model, args, call, plan, step$coords)
  # the settings, recorded before anything runs: an interrupted run returns
  # them with its draws, and init = fit continues with them (R/continue.R)
  made$settings <- auto_sgld_settings(plan, step$coords)
  warm <- auto_sgld_warmup(model, args, given, made, run, init, pm, step, plan)
  if (isTRUE(warm$to_mala))
    return(auto_sgld_mala(model, args, given, call, made, pm, step$precondition, step$curv_all,
                          step$departure, start, "warm-up", warm$ratio))
  plan <- warm$plan
  made$settings <- auto_sgld_settings(plan, step$coords)
  fit <- if (is.null(warm$fit))
    run(plan$iter, plan$burnin, plan$thin, init, args$monitor, args$diagnostics, args$pars)
    else run(plan$iter - plan$burnin, 0, plan$thin, warm$fit, args$monitor, args$diagnostics,
             args$pars, as_run = list(iter = plan$iter, burnin = plan$burnin))
  fit <- auto_main(made, fit, warm$fit)
  fit$auto <- list(
    lr = plan$lr, batch_size = plan$batch, control_variates = !isFALSE(plan$cv),
    iter = plan$iter, burnin = plan$burnin, thin = plan$thin, temperature = plan$temperature,
    mode = pm$mode, covariance = pm$covariance,
    laplace_precondition = !"precondition" %in% given, alpha = plan$alpha,
    laplace_departure = step$departure, target_ess = auto_target_ess,
    coordinates = step$coords$names, settings = made$settings,
    autocorrelation_time = plan$tau_int, warmup_spread = if (warm$lengthen) plan$spread,
    overdispersed = args$chains > 1 && !"init" %in% given, setup_time = setup,
    strategy = "langevin",
    reason = auto_sgld_reason(model, given, step, plan, made$settings, warm$lengthen,
                              args$chains))
  fit$auto$sampling_time <- fit$sampling_time + warm$sampling
  fit$time <- fit$time + setup + warm$time
  if (step$departure > auto_wall_departure || is.finite(warm$ran_off))
    warn_unadjusted(model, given, step$departure, warm$ran_off)
  fit
}

# The preconditioner and the step: the eigenvalues of the posterior
# precision in the preconditioner's coordinates (the step is eta over the
# largest, the mixing time set by the smallest), the Laplace
# approximation's departure, and the coordinates drawn alone.
auto_sgld_step <- function(model, args, given, pm) {
  S <- pm$covariance
  precondition <- if ("precondition" %in% given) args$precondition else S
  if (!is.matrix(precondition))
    abort("`lr = \"auto\"` needs `precondition` to be a fixed matrix (or not given: the ",
          "Laplace covariance); give `lr` yourself for ", describe(precondition), ".")
  RP <- chol(precondition)
  curv <- eigen(RP %*% solve(S, t(RP)), symmetric = TRUE, only.values = TRUE)$values
  check <- laplace_residuals(model, pm)
  departure <- check$departure
  step <- list(precondition = precondition, curv = curv, curv_all = curv,
               departure = departure, coords = NULL)
  if (departure > auto_wall_departure && auto_mala_allowed(model, given)) return(step)
  # a few coordinates far from Gaussian, each on a few rows: drawn alone, and
  # the rest takes the step of a near-Gaussian posterior
  coords <- if (departure > 1 && !"precondition" %in% given)
    auto_coordinates(model, pm, check$conditional)
  if (!is.null(coords) && departure > auto_coord_departure && coords$rho2 > auto_coord_rho2_far)
    coords <- NULL
  if (!is.null(coords)) step$curv <- 1   # the rest's precision in its own Laplace coordinates
  step$coords <- coords
  step$skewed <- departure > 1 && is.null(coords)
  step$eta <- if (step$skewed) auto_eta_skewed else auto_eta
  step$factor <- if (is.null(coords)) t(chol(S)) else coords$factor
  step
}

# The batch, control variates, learning rate, temperature and run length.
# Near-Gaussian: the noise averaged over the Laplace approximation, where
# the chain spends its time. Far from Gaussian the chain goes where the
# Laplace points do not (rare levels drawn alone move many Laplace sds, and
# the control variates' noise grows with the distance from the mode): the
# largest noise of a few points. (On Adult both keep the full data; this
# keeps its run, seeded as in test-auto.R, draw for draw.)
auto_sgld_plan <- function(model, args, given, pm, step) {
  eta <- step$eta
  chosen <- auto_batch(model, args, given,
                       function(batch, use_cv) auto_alpha(model, pm, batch, use_cv, eta,
                                                          factor = step$factor),
                       if (step$departure <= 1)
                         function(use_cv) auto_row_alpha(model, pm, use_cv, eta,
                                                         factor = step$factor))
  lr <- eta / max(step$curv) * chosen$shrink
  eta_slow <- lr * min(step$curv)
  eta_top <- lr * max(step$curv)
  span <- auto_run_length(eta_slow, auto_target_ess, args$chains, args, given)
  list(lr = lr, eta_top = eta_top, batch = chosen$batch, chains = args$chains,
       cv = if (isTRUE(chosen$cv)) pm$mode else chosen$cv, alpha = chosen$alpha,
       # cancel Euler's widening tau / (1 - eta / 2) along the stiffest
       # direction; exact for a Gaussian posterior when P is its covariance
       temperature = if ("temperature" %in% given) args$temperature else 1 - eta_top / 2,
       tau_int = span$tau_int, kept = span$kept, burnin = span$burnin,
       iter = span$iter, thin = span$thin, spread = 1,
       rule = if (is.null(step$coords)) resolve_precondition(step$precondition, model)
              else update_rule("precond", "SGLD with a fixed preconditioner",
                               list(chol = as.double(step$coords$factor)), sampler = TRUE))
}

auto_sgld_runner <- function(model, args, call, plan, coords)
  function(iter, burnin, thin, init, monitor = NULL, diagnostics = NULL, pars = NULL,
           checks = "auto", as_run = NULL)
    run_sampler(model, lr = plan$lr, batch_size = plan$batch, iter = iter, burnin = burnin,
                thin = thin, temperature = plan$temperature, chains = args$chains, init = init,
                replace = args$replace, clip = args$clip, monitor = monitor,
                threads = args$threads, diagnostics = diagnostics, rule = plan$rule,
                control_variates = plan$cv, method = "sgld", call = call,
                pars = pars, progress = args$progress, parallel = args$parallel,
                checks = checks, coordinates = coords$settings, as_run = as_run)

# What a run's record holds of its settings (fit$settings of an
# interrupted run, init = fit's continuation: R/continue.R).
auto_sgld_settings <- function(plan, coords)
  list(lr = plan$lr, rule = plan$rule, batch_size = plan$batch,
       control_variates = plan$cv, temperature = plan$temperature, iter = plan$iter,
       burnin = plan$burnin, thin = plan$thin, coordinates = coords$settings,
       method = "sgld",
       expected_ess = expected_ess(plan$iter, plan$burnin, plan$tau_int * plan$spread,
                                   plan$chains))

# The burn-in runs on its own, as a warm-up that the run continues exactly
# (init = fit: the same draws as one run), so that an interrupt during it
# returns its draws rather than nothing. Far from Gaussian, the Laplace
# covariance understates some directions and the chain mixes along them
# more slowly than tau_int says: on Adult (rare levels with no events) the
# marginal variances were up to 3.0 times the Laplace ones and the planned
# 2,000 effective draws came out as 540-575 for those levels. There the
# warm-up is a fifth of the plan, and the largest ratio of a marginal
# variance in its second half to the Laplace one (at least 1, at most
# auto_max_spread) lengthens the rest. Adult, seeds 1 and 1654: 2.6 times,
# smallest ESS 1383 and 1466. A ratio beyond auto_max_spread is no
# skewness but the chain running off (a posterior with walls of data that
# the unadjusted step cannot follow): Metropolis-adjusted steps then
# (to_mala in the result).
auto_sgld_warmup <- function(model, args, given, made, run, init, pm, step, plan) {
  chains <- args$chains
  out <- list(fit = NULL, plan = plan, time = 0, sampling = 0, ran_off = NA_real_,
              lengthen = step$skewed && !any(c("iter", "burnin") %in% given))
  # a fifth of the planned run: on Adult the second half of a warm-up of a
  # tenth still carried the drift from the mode (0.9 sd along the rare
  # levels) and gave ratios up to 4.9; of a fifth, 2.8-3.5 in 4 seeds,
  # against 3.04 from the 150,000-draw reference
  if (out$lengthen) plan$burnin <- max(200, ceiling(0.2 * plan$kept))
  out$plan <- plan
  if (!(plan$burnin > 0 && plan$burnin < plan$iter)) return(out)
  # thinned as the run will be: its draws are what an interrupt returns
  warm <- auto_phase(made, "warm-up", suppressWarnings(
    run(plan$burnin, 0, min(plan$thin, plan$burnin), init,
        pars = if (out$lengthen || !is.null(step$coords)) TRUE, checks = FALSE)))
  out$time <- warm$time
  out$sampling <- warm$sampling_time
  # a chain that diverged in the warm-up: the run starts afresh, whole
  out$fit <- if (all(warm$status == "done")) warm
  # the warm-up's marginal variances against the Laplace ones: beyond
  # auto_max_spread the chain ran off, and Metropolis-adjusted steps take
  # over; far from Gaussian, the ratio lengthens the rest of the run.
  # Beside coordinates drawn alone only the rest is judged, nothing is
  # lengthened, and a warm-up that diverged counts as run off.
  judged <- if (!is.null(step$coords)) setdiff(seq_len(model$d), step$coords$settings$index + 1L)
            else if (out$lengthen && !is.null(out$fit)) seq_len(model$d)
  ratio <- NA_real_
  if (!is.null(judged)) {
    ratio <- if (is.null(out$fit)) Inf
             else warmup_variance_ratio(out$fit, pm$covariance, chains, judged)
    if (!is.finite(ratio) || ratio > auto_max_spread) {
      if (auto_mala_allowed(model, given)) return(list(to_mala = TRUE, ratio = ratio))
      out$ran_off <- ratio
      ratio <- auto_max_spread
    }
  }
  if (out$lengthen && !is.null(out$fit)) {
    plan$spread <- max(1, ratio)
    plan$kept <- ceiling(plan$kept * plan$spread)
    plan$thin <- if ("thin" %in% given) args$thin
                 else max(1, floor(plan$tau_int * plan$spread / 4))
    plan$iter <- plan$kept + plan$burnin
  }
  out$plan <- plan
  out
}

auto_sgld_reason <- function(model, given, step, plan, settings, lengthen, chains)
  sprintf(paste0(
    "lr = \"auto\": preconditioner %s, step %s in its coordinates%s (temperature %s ",
    "cancels the step's widening), %s; %s iterations planned for about %s effective draws%s%s."),
    if ("precondition" %in% given) "given" else "= Laplace covariance at the mode",
    format(plan$eta_top, digits = 3),
    if (!is.null(step$coords))
      sprintf(paste0(" for all but %s, whose posteriors are far from Gaussian (departure %s) ",
                     "and which are drawn one at a time on their own rows by slice sampling"),
              paste(step$coords$names, collapse = ", "), format(step$departure, digits = 2))
    else if (step$departure > 1) sprintf(", small as the posterior is far from Gaussian (%s)",
                                         format(step$departure, digits = 2)) else "",
    format(plan$temperature, digits = 3),
    if (plan$batch >= model$n) "full data in every step"
    else sprintf("batch %d%s (sampling threshold %s)", plan$batch,
                 if (!isFALSE(plan$cv)) " with control variates at the mode" else "",
                 format(plan$alpha, digits = 2)),
    format(plan$iter, big.mark = ","), format(settings$expected_ess, big.mark = ","),
    if (lengthen && plan$spread > 1)
      sprintf(paste0(" (%s times the plan: in a warm-up some marginal variances were %s ",
                     "times the Laplace ones)"),
              format(plan$spread, digits = 2), format(plan$spread, digits = 2)) else "",
    if (chains > 1 && !"init" %in% given) "; chains start over-dispersed around the mode" else "")

# The unadjusted steps ran where the Laplace approximation fails outright,
# as the Metropolis-adjusted ones were not allowed: a warning naming what
# would allow them.
warn_unadjusted <- function(model, given, departure, ran_off) {
  blockers <- intersect(c("batch_size", "control_variates", "temperature", "clip", "replace",
                          "diagnostics"), given)
  sgld_warn("auto_unadjusted", sprintf(paste0(
    "lr = \"auto\": %s, and the unadjusted steps cannot be trusted there: the draws may be ",
    "far from the posterior. %s"),
    if (is.finite(ran_off))
      sprintf("in a warm-up some marginal variances were %s times the Laplace ones",
              format(ran_off, digits = 3))
    else sprintf("the posterior is far from its Laplace approximation (%s)",
                 format(departure, digits = 2)),
    if (length(blockers))
      sprintf(paste0("Leave out %s, so that sgld(model) can take Metropolis-adjusted steps ",
                     "with the full data, or run mala(model)."),
              paste0("`", blockers, "`", collapse = ", "))
    else sprintf(paste0("Run mala(model): exact Metropolis-adjusted steps, each a pass over ",
                        "all %s observations."), format(model$n, big.mark = ","))))
}

# The largest ratio of a marginal variance in the second half of a warm-up
# (all chains) to the Laplace one, on the sampler's scale.
warmup_variance_ratio <- function(warm, S, chains, which = seq_len(ncol(S))) {
  x <- as.matrix(warm, scale = "sampler")
  half <- unlist(lapply(split(seq_len(nrow(x)), rep(seq_len(chains), each = nrow(x) / chains)),
                        function(r) r[-seq_len(floor(length(r) / 2))]))
  max(apply(x[half, which, drop = FALSE], 2, stats::var) / diag(S)[which])
}

# Where the Laplace approximation fails outright, sgld(model) takes
# Metropolis-adjusted Langevin steps with the full data (mala()), which are
# exact whatever the step: the unadjusted step cannot follow a posterior
# bounded by walls of data. A nearly separating predictor on a scale of
# 10^3-10^4 (tests/testthat/test-auto.R: its simulation) has scores 10^5-10^6
# times a Gaussian's at points drawn from its Laplace approximation, against
# 40 on Adult and below 1 on the held-out regressions (bench/defaults.md);
# there the unadjusted chain took steps of hundreds of posterior sds and ran
# 380,000 iterations to mean errors of 5.4 sd. Only where the user kept
# the choices this needs, and where full passes cost little.
auto_wall_departure <- 1000   # Laplace departure beyond which steps are adjusted
auto_mala_max_work <- 1e7     # largest n d for Metropolis-adjusted steps
auto_mala_max_factor <- 10    # longest run, in units of the Gaussian plan
auto_mala_announce <- 30      # mala(model): a run expected to take longer is announced
auto_mala_accept <- c(0.4, 0.8) # pilot acceptance rates aimed at

auto_mala_allowed <- function(model, given) {
  as.double(model$n) * model$d <= auto_mala_max_work &&
    !any(c("batch_size", "control_variates", "temperature", "clip", "replace",
           "diagnostics") %in% given)
}

auto_sgld_mala <- function(model, args, given, call, made, pm, precondition, curv, departure,
                           start, why, ratio = NA_real_) {
  chains <- args$chains
  rule <- mala_rule(precondition, model)
  run <- auto_mala_runner(model, args, call, rule)
  step <- auto_mala_step(made, run, pm, curv, model$d)
  warm <- auto_mala_warmup(made, run, args, given, step)
  span <- auto_mala_length(warm, chains, args, given)
  iter <- span$iter
  burnin <- warm$burnin
  setup <- proc.time()[["elapsed"]] - start - step$time - warm$time
  made$settings <- list(lr = step$eta, rule = rule, batch_size = model$n,
                        control_variates = FALSE, temperature = 1, iter = iter,
                        burnin = burnin, thin = span$thin, method = "mala",
                        expected_ess = span$expected_ess)
  as_run <- list(iter = iter, burnin = burnin)
  fit <- if (is.null(warm$fit)) run(iter, 0, span$thin, warm$init, step$eta, args$monitor,
                                    args$pars, as_run = as_run)
         else run(iter - burnin, 0, span$thin, warm$fit, step$eta, args$monitor, args$pars,
                  as_run = as_run)
  fit <- auto_main(made, fit, warm$fit)
  fit$auto <- list(
    lr = step$eta, iter = iter, burnin = burnin, thin = span$thin, mode = pm$mode,
    settings = made$settings, covariance = pm$covariance,
    laplace_precondition = !"precondition" %in% given, laplace_departure = departure,
    warmup_spread = if (is.finite(ratio)) ratio, pilot_acceptance = step$acceptance,
    ess_per_iteration = span$rate, target_ess = auto_target_ess, overdispersed = FALSE,
    setup_time = setup, strategy = "mala",
    reason = auto_mala_reason(why, departure, ratio, given, step, span, warm))
  fit$auto$sampling_time <- fit$sampling_time + step$sampling + warm$sampling
  fit$time <- fit$time + setup + step$time + warm$time
  fit
}

auto_mala_runner <- function(model, args, call, rule, leapfrog = 1L)
  function(iter, burnin, thin, init, eta, monitor = NULL, pars = NULL, checks = "auto",
           chains = args$chains, as_run = NULL, thin_auto = NULL)
    run_sampler(model, lr = eta, batch_size = model$n, iter = iter, burnin = burnin,
                thin = thin, temperature = 1, chains = chains, init = init, replace = FALSE,
                clip = NULL, monitor = monitor, threads = args$threads, mala = TRUE,
                rule = rule, method = "mala", call = call, pars = pars,
                progress = args$progress, parallel = args$parallel, checks = checks,
                as_run = as_run, leapfrog = leapfrog, thin_auto = thin_auto)

# Close to Gaussian with the full data in every step (small n), the
# unadjusted step 0.25 needs (2 - 0.25) / 0.25 = 7 passes per effective
# draw, and its temperature 1 - eta / 2 cancels its bias only for a
# Gaussian. Metropolis-adjusted steps in the Laplace metric may be much
# larger and are exact. Measured per effective draw of the slowest of the
# means AND of the squares (an sd's precision needs the latter; bench/hmc.md)
# on MASS::quine's negative binomial (d = 8) and the held-out sacramento
# regression (d = 7), 4 chains from the mode: unadjusted 0.25, 8.0 and 7.3
# passes; MALA with steps 1.0 / 1.2 / 1.4 in Laplace coordinates (acceptance
# 0.73 / 0.57 / 0.38), 3.7-4.1 / 3.1-3.6 / 3.9-4.8; Hamiltonian
# trajectories of 1 to 3 leapfrog steps (mala(leapfrog = 2)) of 0.7, 4.1-4.4,
# and of 0.9, 5.8-6.4: their means mix three times faster than MALA's but
# their squares no faster (the energy changes only through the momentum
# drawn afresh each iteration, ESS of the squares about 0.3 an iteration
# whatever the trajectory's length). So MALA, at the step 1.2 for d = 8,
# scaled as d^(-1/6) (Roberts and Rosenthal's optimal scaling).
auto_full_step <- 1.2       # proposal sd in Laplace coordinates at d = 8 (lr = step^2 / 2)
auto_full_leapfrog <- 1L    # mean leapfrog steps a proposal (1: MALA)
auto_full_warmup <- 200     # warm-up iterations a chain (its second half measures the rate)
auto_full_accept <- 0.35    # a warm-up accepting less takes a step 1.5 times smaller

# Only where a Metropolis-adjusted step costs little more than an
# unadjusted one: it needs the log likelihood as well as the gradient. One
# pass each, 4 chains x 3,000 steps, us a step adjusted / unadjusted:
# MASS::quine's negative binomial 6.3 / 5.3 (its lgamma and digamma steps
# from tables, one pass), sacramento (linear) 18 / 15, boston (linear) 13 /
# 4.9, birthwt (logistic) 9.5 / 3.8, the nearly separated logistic
# simulation (1,300 rows) 54 / 17, warpbreaks (Poisson) 3.5 / 1.5. With
# 0.45-0.65 of the passes, only the negative binomial gains (the nearly
# separated simulation took 0.56-0.77 CPU s this way, 0.35 unadjusted).
adjusted_steps_pay <- function(model) UseMethod("adjusted_steps_pay")
adjusted_steps_pay.default <- function(model) FALSE
adjusted_steps_pay.sgld_model_negbin <- function(model) TRUE

auto_full_wanted <- function(model, given, step, plan)
  adjusted_steps_pay(model) && is.null(step$coords) && !isTRUE(step$skewed) && plan$batch >= model$n &&
    isFALSE(plan$cv) && auto_mala_allowed(model, given) &&
    !any(c("precondition", "lr") %in% given) && model$d <= auto_max_d &&
    !inherits(tryCatch(check_densities(model, "mala()"), error = identity), "error")

# The run: a warm-up from the chains' starts that measures the acceptance
# and the effective draws per iteration (of the means and of the squares),
# then as many iterations as the target needs, continuing it (one run, as
# for the Metropolis-adjusted route of walls of data).
auto_sgld_full <- function(model, args, given, call, made, pm, step, start) {
  chains <- args$chains
  # every chain from the mode, as mala(m)'s (auto_mala_phases()): started
  # over-dispersed from N(mode, 4 S), one of four chains of the held-out
  # mtcars_am (32 rows, bench/heldout.R) sat where no proposal of this step
  # was accepted, and its mean came out 0.9 sd off; from the mode the
  # chains part within the warm-up, and R-hat still compares them
  init <- if ("init" %in% given && !is.null(args$init)) args$init else pm$mode
  leapfrog <- auto_full_leapfrog
  hmc <- leapfrog > 1
  rule <- mala_rule(pm$covariance, model)
  if (hmc) rule$label <- "HMC"
  run <- auto_mala_runner(model, args, call, rule, leapfrog = leapfrog)
  eps <- auto_full_step * (8 / max(8, model$d))^(if (hmc) 1 / 4 else 1 / 6)
  burnin <- if ("burnin" %in% given) args$burnin else auto_full_warmup
  # an `iter` given alone shorter than the warm-up: half of it, as sgld()'s
  # own default burn-in
  if ("iter" %in% given && !is.null(args$iter) && burnin >= args$iter)
    burnin <- if ("burnin" %in% given) args$iter - 1 else floor(args$iter / 2)
  time <- sampling <- 0
  warm <- NULL
  for (k in 1:4) {
    if (burnin < 1) break
    warm <- auto_phase(made, "warm-up", suppressWarnings(
      run(burnin, 0, 1, init, eps^2 / 2, pars = TRUE, checks = FALSE)))
    time <- time + warm$time
    sampling <- sampling + warm$sampling_time
    if (mean(warm$acceptance) >= auto_full_accept) break
    eps <- eps / 1.5
  }
  eta <- eps^2 / 2
  rate <- if (!is.null(warm)) min(1, mala_ess_rate(warm, chains, squares = TRUE)) else NA_real_
  measured <- is.finite(rate) && rate > 0
  # unmeasured: the rate of the unadjusted step's plan
  if (!measured) rate <- auto_eta / (2 - auto_eta)
  kept <- ceiling(auto_target_ess / (rate * chains))
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else kept + burnin
  # a draw kept every quarter of an effective one (and at most about 1,000
  # a chain, as every run without a `thin` given: R/collect.R)
  thin <- if ("thin" %in% given) args$thin else max(1, floor(1 / (4 * rate)))
  made$settings <- list(lr = eta, rule = rule, batch_size = model$n, control_variates = FALSE,
                        temperature = 1, iter = iter, burnin = burnin, thin = thin,
                        method = "mala", leapfrog = leapfrog,
                        expected_ess = floor(min(auto_target_ess,
                                                 rate * chains * (iter - burnin))))
  setup <- proc.time()[["elapsed"]] - start - time
  fit <- if (is.null(warm)) run(iter, 0, thin, init, eta, args$monitor, args$pars)
         else run(iter - burnin, 0, thin, warm, eta, args$monitor, args$pars,
                  as_run = list(iter = iter, burnin = burnin))
  fit <- auto_main(made, fit, warm)
  made$settings$thin <- fit$settings$thin
  # one run: its starts are the warm-up's
  if (!is.null(warm)) fit$settings$init <- warm$settings$init
  fit$auto <- list(
    lr = eta, batch_size = model$n, control_variates = FALSE, temperature = 1, iter = iter,
    burnin = burnin, thin = fit$settings$thin, mode = pm$mode,
    settings = made$settings, covariance = pm$covariance, laplace_precondition = TRUE,
    laplace_departure = step$departure, leapfrog = leapfrog,
    warmup_acceptance = if (!is.null(warm)) mean(warm$acceptance),
    ess_per_iteration = if (measured) rate, target_ess = auto_target_ess,
    overdispersed = FALSE, start = if (!"init" %in% given) "mode", setup_time = setup,
    strategy = if (hmc) "hmc" else "mala-gaussian",
    reason = sprintf(paste0(
      "lr = \"auto\": close to its Laplace approximation, with the full data in every ",
      "step: %s (exact) with the Laplace covariance at the mode as metric, proposal sd %s ",
      "in its coordinates (lr = %s)%s (warm-up acceptance %s); %s iterations planned for ",
      "about %s effective draws of the means and squares (%s per iteration in a warm-up of ",
      "%s)%s."),
      if (hmc) "Hamiltonian Monte Carlo" else "Metropolis-adjusted Langevin steps",
      format(eps, digits = 3), format(eta, digits = 3),
      if (hmc) sprintf(", 1 to %d leapfrog steps a proposal", 2L * leapfrog - 1L) else "",
      if (is.null(warm)) "not measured" else format(mean(warm$acceptance), digits = 2),
      format(iter, big.mark = ","), format(made$settings$expected_ess, big.mark = ","),
      if (measured) format(rate, digits = 2) else "not measured", format(burnin, big.mark = ","),
      if (!"init" %in% given)
        sprintf("; %s at the posterior mode", if (chains > 1) "chains start" else "the chain starts")
      else ""))
  fit$auto$sampling_time <- fit$sampling_time + sampling
  fit$time <- fit$time + setup + time
  fit
}

# The step: Roberts and Rosenthal's scaling, then pilots of one chain from
# the mode that continue each other, halving or growing it until the
# acceptance rate is in auto_mala_accept (on the nearly separated
# simulation the effective draws per iteration were best at acceptance
# 0.41, 234 in 18,000 iterations, against 151 at 0.63 and 69 at 0.79). One
# chain from the mode, whatever the number of chains: pilots from
# over-dispersed starts near a wall of data chose a step of 0.009, at which
# two chains accepted 0.91 and 0.87 of the run's proposals (0.15 from the
# mode, accepting 0.57).
auto_mala_step <- function(made, run, pm, curv, d) {
  eta <- 1.65^2 / (2 * d^(1 / 3)) / max(curv)
  time <- sampling <- 0
  acc <- NA_real_
  pilot <- NULL
  for (k in 1:8) {
    pilot <- auto_phase(made, "choice of the step", suppressWarnings(
      run(300, 0, 1, if (is.null(pilot)) pm$mode else pilot, eta, checks = FALSE,
          chains = 1)))
    time <- time + pilot$time
    sampling <- sampling + pilot$sampling_time
    acc <- pilot$acceptance
    if (acc < auto_mala_accept[1]) eta <- eta / 2
    else if (acc > auto_mala_accept[2]) eta <- eta * 1.5
    else break
  }
  list(eta = eta, acceptance = acc, pilot = pilot, time = time, sampling = sampling)
}

# A warm-up as long as the Gaussian plan's burn-in, at least 2,000
# iterations: its second half measures the effective draws per iteration
# of the slowest parameter, which sets the run's length. One chain
# continues its pilots. Several start from draws of the first half of
# the warm-up, run as one chain and spread over its second half: starts
# over-dispersed from the Laplace approximation sit near walls of data
# where the chosen step is refused (two and four chains of the nearly
# separated simulation accepted none of their proposals, even started
# where the log posterior was within 4 d of the mode's).
auto_mala_warmup <- function(made, run, args, given, step) {
  chains <- args$chains
  plan <- ceiling(auto_target_ess * (2 - auto_eta) / auto_eta / chains)
  burnin <- if ("burnin" %in% given) args$burnin else max(2000, ceiling(0.2 * plan))
  if ("iter" %in% given && !is.null(args$iter)) burnin <- min(burnin, args$iter - 1)
  init <- if ("init" %in% given && !is.null(args$init)) args$init else step$pilot
  time <- sampling <- 0
  spread_starts <- chains > 1 && !"init" %in% given && burnin >= 2 * chains
  first <- 0
  if (spread_starts) {
    first <- floor(burnin / 2)
    one <- auto_phase(made, "warm-up", suppressWarnings(
      run(first, 0, 1, step$pilot, step$eta, pars = TRUE, checks = FALSE, chains = 1)))
    time <- one$time
    sampling <- one$sampling_time
    x <- as.matrix(one)
    init <- x[round(seq(floor(nrow(x) / 2) + 1, nrow(x), length.out = chains)), , drop = FALSE]
  }
  rest <- burnin - first
  thin <- max(1, floor(rest / 5000))   # at most 5,000 draws a chain kept
  warm <- if (rest > 0) auto_phase(made, "warm-up", suppressWarnings(
    run(rest, 0, thin, init, step$eta, pars = TRUE, checks = FALSE)))
  if (!is.null(warm)) {
    time <- time + warm$time
    sampling <- sampling + warm$sampling_time
  }
  list(fit = warm, init = init, burnin = burnin, thin = thin, plan = plan,
       spread_starts = spread_starts, time = time, sampling = sampling)
}

# The run's length from the warm-up's effective draws per iteration, at
# most auto_mala_max_factor times the Gaussian plan.
auto_mala_length <- function(warm, chains, args, given) {
  rate <- if (!is.null(warm$fit)) mala_ess_rate(warm$fit, chains) / warm$thin else NA_real_
  measured <- is.finite(rate) && rate > 0
  longest <- auto_mala_max_factor * warm$plan
  kept <- if (measured) min(longest, ceiling(auto_target_ess / (rate * chains))) else longest
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else kept + warm$burnin
  thin <- if ("thin" %in% given) args$thin else if (measured) max(1, floor(1 / (4 * rate))) else 1
  list(rate = rate, kept = kept, longest = longest, iter = iter, thin = thin,
       capped = measured && kept >= longest && !"iter" %in% given,
       expected_ess = if (measured)
         floor(min(auto_target_ess, rate * chains * (iter - warm$burnin))) else auto_target_ess)
}

auto_mala_reason <- function(why, departure, ratio, given, step, span, warm)
  sprintf(paste0(
    "lr = \"auto\": the posterior is far from its Laplace approximation (%s), so the ",
    "steps are Metropolis-adjusted (MALA, exact whatever the step) with the full data: ",
    "preconditioner %s, step %s (pilot acceptance %s); %s iterations planned for about %d ",
    "effective draws (%s per iteration in a warm-up of %s)%s%s."),
    if (why == "departure")
      sprintf("its scores at points drawn from it are %s times a Gaussian's",
              format(departure, digits = 2))
    else sprintf("in a warm-up of unadjusted steps some marginal variances were %s times the Laplace ones",
                 format(ratio, digits = 2)),
    if ("precondition" %in% given) "given" else "= Laplace covariance at the mode",
    format(step$eta, digits = 3), format(step$acceptance, digits = 2),
    format(span$iter, big.mark = ","), auto_target_ess, format(span$rate, digits = 2),
    format(warm$burnin, big.mark = ","),
    if (span$capped) sprintf(" (capped at %d times the Gaussian plan)", auto_mala_max_factor)
    else "",
    if (warm$spread_starts) "; chains start from draws of a one-chain warm-up" else "")

# Effective draws per kept draw (per chain) of the slowest parameter, from
# the second half of each chain of a warm-up.
mala_ess_rate <- function(warm, chains, squares = FALSE) {
  if (!all(warm$status == "done")) return(NA_real_)
  x <- warm$draws
  K <- coda::niter(x)
  from <- floor(K / 2) + 1
  half <- coda::mcmc.list(lapply(x, function(ch)
    coda::mcmc(unclass(ch)[from:K, , drop = FALSE])))
  e <- ess(half)
  # and of the squared deviations from the mean, on which an sd's precision rests
  if (squares) {
    mu <- colMeans(do.call(rbind, lapply(half, unclass)))
    e <- c(e, ess(coda::mcmc.list(lapply(half, function(ch)
      coda::mcmc((unclass(ch) - rep(mu, each = nrow(ch)))^2)))))
  }
  if (anyNA(e)) return(NA_real_)
  min(e) / ((K - from + 1) * chains)
}

# lr = "auto" runs in phases: the mode and the Laplace approximation,
# pilots, a warm-up, the run. An interrupt stops it in any of them. In a
# sampling phase the engine stops within about 10 ms and returns what that
# phase made; in the R code between phases (or during the mode search, in C,
# where the interrupt is polled between chunks of the data) it arrives as
# R's interrupt. Either way the last fit made is returned, with a warning
# saying which phase it comes from; before any run, nothing was made and
# the interrupt goes on as usual.
auto_phases <- function(body) {
  made <- new.env(parent = emptyenv())
  withRestarts(
    withCallingHandlers(body(made), interrupt = function(cond)
      if (!is.null(made$fit)) invokeRestart("auto_stop", made$fit, made$phase)),
    auto_stop = function(fit, phase) auto_stopped(fit, phase, made$settings))
}

# Records a phase's fit as the last made; an interrupted one ends lr = "auto".
auto_phase <- function(made, phase, fit) {
  made$fit <- fit
  made$phase <- phase
  # a worker holding rows was lost (R/shards.R): the phase's draws are all
  # there will be (its warning, silenced with the warm-up's, said again)
  if (!is.null(fit$data_lost)) {
    sgld_warn("data_lost", fit$data_lost)
    invokeRestart("auto_stop", fit, phase)
  }
  if (any(fit$status == "interrupted")) invokeRestart("auto_stop", fit, phase)
  fit
}

# The run proper: interrupted before it kept a draw, the warm-up's draws are
# what there is.
auto_main <- function(made, fit, warm) {
  if (any(fit$status == "interrupted") && !is.null(warm) && all(fit$kept == 0))
    invokeRestart("auto_stop", warm, "warm-up")
  made$fit <- fit
  made$phase <- "run"
  fit
}

auto_stopped <- function(fit, phase, made_settings = NULL) {
  # the phase itself, or the R code after it, before the next phase began
  when <- if (any(fit$status == "interrupted")) "in" else "after"
  lost <- !is.null(fit$data_lost)
  if (phase != "run" && !lost)
    sgld_warn("interrupted", sprintf(paste0(
      "lr = \"auto\" was interrupted %s its %s: the fit holds that phase's %s draws per ",
      "chain, taken before the chains reached the posterior, not a sample from it. Run ",
      "sgld(model) again to completion, or continue these chains with init = fit and `lr` ",
      "given (fit$auto$lr)."), when, phase, format(ndraws(fit), big.mark = ",")))
  # the draws of a warm-up are no sample: their chains say so
  if (phase != "run") fit$status[fit$status == "done"] <- "warm-up"
  fit$auto <- c(fit$auto[setdiff(names(fit$auto), c("lr", "settings", "reason"))], list(
    lr = fit$settings$lr, interrupted = phase, settings = made_settings,
    reason = if (lost) sprintf("lr = \"auto\": a worker holding rows was lost in its %s.", phase)
             else sprintf("lr = \"auto\": interrupted %s its %s.", when, phase)))
  fit
}

# The effective draws a Langevin plan expects of `iter` iterations after
# `burnin` (never more than it was planned for).
expected_ess <- function(iter, burnin, tau_int, chains)
  floor(min(auto_target_ess, max(0, iter - burnin) * chains / tau_int))

# mala(model) with lr = "auto": P = the Laplace covariance and the step from
# Roberts and Rosenthal's optimal scaling, h = 1.65^2 d^(-1/3) in MALA's usual
# x + h/2 grad + sqrt(h) xi, i.e. eta = h / 2 here, checked by short pilots
# that halve or grow it until the acceptance rate is between 0.45 and 0.85.
auto_mala <- function(model, args, given, call) {
  if (isTRUE(model$path_gaussian)) return(auto_whiten(model, args, given, call, "mala"))
  recipe <- auto_mala_recipe(model)   # a model's own (multilevel: R/auto-glmm.R)
  if (!is.null(recipe)) return(recipe(model, args, given, call))
  auto_phases(function(made) auto_mala_phases(model, args, given, call, made))
}

# A model's own automatic settings for mala(), as auto_recipe() for sgld():
# NULL, or a function(model, args, given, call) returning the fit.
auto_mala_recipe <- function(model) UseMethod("auto_mala_recipe")
auto_mala_recipe.default <- function(model) NULL

auto_mala_phases <- function(model, args, given, call, made) {
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
  pilot_sampling <- pilot_iter <- 0
  for (k in 1:6) {
    pilot <- auto_phase(made, "choice of the step", suppressWarnings(run_sampler(
      model, lr = eta, batch_size = model$n, iter = 300, burnin = 0, thin = 1,
      temperature = args$temperature, chains = 1, init = pm$mode, replace = FALSE, clip = NULL,
      monitor = NULL, threads = 1L, mala = TRUE, rule = rule, method = "mala", call = call,
      checks = FALSE)))
    acc <- pilot$acceptance
    pilot_sampling <- pilot_sampling + pilot$sampling_time
    pilot_iter <- pilot_iter + 300
    if (acc < 0.45) eta <- eta / 2 else if (acc > 0.85) eta <- eta * 1.5 else break
  }
  # 10,000 kept iterations in all, split over the chains; each chain burns
  # in 1,000 from its own start
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else 1000 + ceiling(1e4 / chains)
  burnin <- if ("burnin" %in% given) args$burnin else 1000
  # an `iter` given alone shorter than the planned burn-in: half of it
  if (burnin >= iter && !"burnin" %in% given) burnin <- floor(iter / 2)
  # every chain starts at the mode, as the pilots did: chains started
  # over-dispersed from N(w_hat, 4 S) can sit where the piloted step is
  # refused (a 254,654-row regression: chains at acceptance 0 and R-hat 8.8
  # in 40,000 iterations; the ill-conditioned simulation of test-mala.R:
  # R-hat 1.3-1.5 at the default length), which no number of
  # iterations mends. The chains still differ after the burn-in, and R-hat
  # still sees a chain that stays in part of the posterior.
  init <- if ("init" %in% given && !is.null(args$init)) args$init else pm$mode
  # the run's length at the pilots' speed, said before a long run starts
  # (a 254,654-row regression ran 444 s at the defaults with no word of it;
  # the progress line, shown in interactive sessions, gives the time left)
  expected <- pilot_sampling / pilot_iter * iter * chains /
    max(1, min(chains, if (is.numeric(args$threads)) args$threads else 1))
  if (is.finite(expected) &&
      expected > getOption("sgld.mala_announce_seconds", auto_mala_announce))
    message(sprintf(paste0(
      "mala(): about %s for %s iterations of %d chain%s, each a pass over all %s rows (at ",
      "the pilots' speed). sgld(model) subsamples the rows; `progress = TRUE` shows the time ",
      "left, and an interrupt keeps the draws made."),
      format_seconds(expected), format(iter, big.mark = ","), chains, if (chains > 1) "s" else "",
      format(model$n, big.mark = ",")))
  setup <- proc.time()[["elapsed"]] - start
  fit <- run_sampler(model, lr = eta, batch_size = model$n, iter = iter, burnin = burnin,
                     thin = args$thin, temperature = args$temperature, chains = chains,
                     init = init, replace = FALSE, clip = NULL, monitor = args$monitor,
                     threads = args$threads, mala = TRUE, rule = rule, method = "mala",
                     call = call, pars = args$pars, progress = args$progress,
                     parallel = args$parallel, checks = "auto")
  fit$auto <- list(lr = eta, iter = iter, burnin = burnin, mode = pm$mode,
                   covariance = pm$covariance, pilot_acceptance = acc, setup_time = setup,
                   overdispersed = FALSE, start = if (!"init" %in% given) "mode",
                   expected_seconds = expected,
                   reason = sprintf(paste0(
                     "lr = \"auto\": preconditioner %s, step %s (pilot acceptance %s)%s."),
                     if ("precondition" %in% given) "given" else "= Laplace covariance at the mode",
                     format(eta, digits = 3), format(acc, digits = 2),
                     if (!"init" %in% given)
                       sprintf("; %s at the posterior mode",
                               if (chains > 1) "chains start" else "the chain starts") else ""))
  fit$time <- fit$time + setup
  fit
}

# One or two lines for print(): what lr = "auto" chose and why.
print_auto <- function(x) {
  if (is.null(x$auto)) return(invisible())
  cat(strwrap(x$auto$reason, exdent = 2), sep = "\n")
  # what the run reached, where it fell short of the plan's promise
  reached <- x$checks$convergence$ess_min
  planned <- x$auto$settings$expected_ess
  if (is.numeric(reached) && length(reached) == 1 && is.finite(reached) &&
      (is.null(planned) || reached < 0.9 * planned))
    cat(strwrap(sprintf("The run reached a smallest effective sample size of %s%s.",
                        format(reached, digits = 3),
                        if (is.null(planned)) "" else
                          sprintf(", short of the %s planned", format(planned, big.mark = ","))),
                exdent = 2), sep = "\n")
}

# Samplers without automatic settings say so, and what to use instead.
auto_unsupported <- function(what) {
  remedy <- if (what %in% c("sgd()", "gd()"))
    "posterior_mode(model) finds the mode without a learning rate (by BFGS)"
  else "sgld(model) chooses its settings itself (a fixed Laplace preconditioner)"
  abort(what, " needs a learning rate `lr` (a number or a schedule): it has no automatic ",
        "one. ", remedy, "; see \"Choosing settings by hand\" in ?sgld.")
}
