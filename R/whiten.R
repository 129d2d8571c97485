# precondition = "whiten": Langevin dynamics with a model's latent path
# whitened given its globals (src/update_whiten.c, whose header has the
# maths). The rule needs one setting, a fixed covariance C for the steps of
# the globals, about their marginal posterior covariance; it is found here
# from the model alone, before the run.
#
# How: at z = 0 the path is xbar(theta), the model's Gaussian approximation
# of the path's conditional mean given the globals, and
# U~(theta, 0) = U(theta, xbar(theta)) - log det L(theta) is a Laplace-type
# approximation of the globals' marginal log posterior. C is the inverse of
# its negative Hessian (central differences of its exact gradient) at its
# maximum (k <= 4 parameters: a few dozen full passes over the data).
# Measured against long exact runs (mala() in these coordinates), the sds
# it implies for log sigma and log nu were 0.093 and 0.21 on the simulated
# series of the accuracy tests (T = 500), against posterior sds of 0.115
# and 0.446 (tests/testthat/test-whiten.R: nu's posterior is skewed), and
# 0.164 and 0.102 on MASS::SP500, against 0.17 and 0.165. A step covariance
# a factor 2 off costs some mixing, not correctness; lr = "auto" measures
# it again once the chains have reached the posterior (auto_whiten()).

# The globals the rule moves with its step covariance: those after the
# level, which (path_level, the AR(1) model's mu) is whitened with the path.
whiten_globals_index <- function(model) seq.int(model$path_level + 1L, length.out = whiten_k(model))
whiten_k <- function(model) model$k - model$path_level

# the rule, for sgld(), mala() and sgd(): with `lm`, Leimkuhler-Matthews
# steps (the noise of each step the mean of its normals and the last
# step's: src/update_whiten.c), sgld()'s; without, Euler's, mala()'s proposal
# and sgd()'s step
whiten_rule <- function(model, label, lm = FALSE) {
  if (!isTRUE(model$path_gaussian))
    abort("`precondition = \"whiten\"` needs a model with a latent path that supplies ",
          "its Gaussian approximation, such as model_sv(); ", class(model)[1], " does not.")
  g <- whiten_globals(model)
  update_rule(if (lm) "whiten_lm" else "whiten",
              if (lm) paste(label, "(Leimkuhler-Matthews steps)") else label,
              list(chol = as.double(t(chol(g$cov))), globals = g$theta), sampler = TRUE)
}

# U~(theta, 0) and its gradient in theta, or -Inf where the path's precision
# is not positive definite (theta far out)
whitened_profile <- function(model, theta) {
  k <- whiten_k(model)
  tryCatch({
    w <- .Call(C_sgld_whiten_eval, model, c(as.double(theta), rep(0, model$d - k)), 1, TRUE)
    e <- .Call(C_sgld_whiten_eval, model, w, 1, FALSE)
    list(value = e$U - e$log_det, grad = e$grad[seq_len(k)])
  }, error = function(e) list(value = -Inf, grad = rep(NA_real_, k)))
}

# The maximum of U~(theta, 0) and the inverse of its negative Hessian there,
# on the sampler's scale of the globals. A Hessian that is not negative
# definite (a profile without a clear maximum) falls back to the diagonal of
# its absolute curvatures, and failing that to unit variances: C only sets
# the globals' step, so a rough one costs mixing, not correctness.
whiten_globals <- function(model) {
  k <- whiten_k(model)
  start <- to_sampler_scale(model, matrix(model$default_init, 1))[1, whiten_globals_index(model)]
  fn <- function(th) {
    v <- whitened_profile(model, th)$value
    if (is.finite(v)) -v else 1e300
  }
  gr <- function(th) -whitened_profile(model, th)$grad
  opt <- stats::optim(start, fn, gr, method = "L-BFGS-B", lower = start - 8, upper = start + 8)
  theta <- opt$par
  h <- 1e-4
  H <- vapply(seq_len(k), function(j) {
    up <- down <- theta
    up[j] <- up[j] + h
    down[j] <- down[j] - h
    (whitened_profile(model, up)$grad - whitened_profile(model, down)$grad) / (2 * h)
  }, numeric(k))
  H <- -(H + t(H)) / 2
  cov <- if (all(is.finite(H))) tryCatch(chol2inv(chol(H)), error = function(e) NULL)
  if (is.null(cov)) {
    curv <- abs(diag(H))
    cov <- diag(ifelse(is.finite(curv) & curv > 0, 1 / curv, 1), k)
  }
  list(theta = unname(theta), cov = unname(cov))
}

# lr = "auto" for a model with a latent path (sgld() and mala(); R/auto.R
# hands over): the path whitened, a fixed step in those coordinates, a
# warm-up in three parts, and a run long enough for auto_target_ess
# effective draws of the globals at the warm-up's rate:
#  1. from the globals' profile maximum (whiten_globals()) and a path drawn
#     from its Gaussian approximation, Euler's steps with the step growing
#     geometrically from a twentieth of its value to its value: the profile
#     can start far from the posterior (nu at 363 against 8 on a simulated
#     series of 10^5 days), and at the full step the first iterations then
#     overshot and diverged (at 10^5 and 10^6 days);
#  2. the sampler at its step for twice as long with the profile's step
#     covariance, whose draws' covariance of the globals (shrunk towards the
#     profile's by their effective number) becomes the step covariance: on
#     demeaned MASS::SP500 (AR(1) model) it gave sigma 1,823 effective draws
#     in 20,000 iterations at lr 0.4 against 1,222 with the profile's, and
#     the curvature at single states of the chain (the inverse Hessian at
#     fixed z) varied by a factor 4 from state to state;
#  3. the sampler with it, for twice the first part and doubling until the
#     new draws hold whiten_auto_min_ess effective draws of every global,
#     which sets the run's length; the run continues it exactly.
# The steps, measured against exact references (bench/sv.R): sgld()'s
# Leimkuhler-Matthews steps at lr 0.4 left the AR(1) model's globals' sds
# within 2% of NUTS's on MASS::SP500 (0.7: mu's 13% too wide; 1.4
# diverged); mala() at lr 0.1 accepted 0.55 on MASS::SP500 (random walk)
# and 0.8 on a simulated series of T = 500.
whiten_auto_lr <- c(sgld = 0.4, mala = 0.1)
whiten_auto_ramp <- 20        # the first part's step starts at lr / 20
whiten_auto_warmup <- c(sgld = 1000, mala = 5000)  # iterations of the first part
whiten_auto_min_ess <- 100    # effective draws the measured part needs
whiten_auto_max_iter <- 2e6   # the longest run it plans

auto_whiten <- function(model, args, given, call, method) {
  start <- proc.time()[["elapsed"]]
  what <- paste0(method, "()")
  chains <- args$chains
  check_count(chains, "chains", lower = 1, upper = 1000)
  if ("precondition" %in% given && !identical(args$precondition, "whiten"))
    abort(what, ": `lr = \"auto\"` for this model samples with the latent path whitened ",
          "(`precondition = \"whiten\"`); give `lr` yourself for another preconditioner.")
  label <- if (method == "mala") "MALA with the latent path whitened"
           else "SGLD with the latent path whitened"
  rule <- whiten_rule(model, label, lm = method == "sgld")
  profile_cov <- tcrossprod(matrix(rule$opts$chol, whiten_k(model)))
  globals <- rule$opts$globals
  lr <- whiten_auto_lr[[method]]
  temperature <- if ("temperature" %in% given) args$temperature else 1
  init <- if ("init" %in% given && !is.null(args$init)) args$init
          else whiten_init(model, list(theta = globals, R = t(chol(profile_cov))), chains)
  run <- whiten_runner(model, args, call, method, lr, temperature)
  part <- if ("burnin" %in% given && !is.null(args$burnin)) max(2, ceiling(args$burnin / 5))
          else whiten_auto_warmup[[method]]
  warm <- whiten_warmup(model, run, rule, lr, part, init, profile_cov)
  span <- whiten_run_length(model, run, warm, args, given, part, chains)
  warm_time <- warm$time + span$time
  thin <- if ("thin" %in% given) args$thin
          else if (is.finite(span$rate)) max(1, floor(1 / (4 * span$rate))) else 1
  setup <- proc.time()[["elapsed"]] - start - warm_time
  kept <- span$kept
  fit <- if (whiten_done(span$fit) && kept > 0)
    run(kept, 0, thin, span$fit, warm$rule, monitor = args$monitor, pars = args$pars)
  else span$fit
  fit$auto <- list(
    lr = lr, iter = span$burnin + kept, burnin = span$burnin, thin = thin,
    temperature = temperature, globals = globals, globals_covariance = warm$covariance,
    warmup_rate = span$rate, target_ess = auto_target_ess,
    overdispersed = chains > 1 && !"init" %in% given, setup_time = setup,
    reason = whiten_reason(method, lr, part, span$burnin, kept, span$rate,
                           chains > 1 && !"init" %in% given))
  fit$time <- fit$time + warm_time + setup
  if (whiten_done(fit) && kept > 0) {
    fit$auto$precision <- whiten_precision(fit)
    warn_whiten_precision(fit, what, given)
  }
  fit
}

whiten_done <- function(f) all(f$status == "done")

# Every phase keeps every draw it is given: the warm-ups' rates are per
# iteration, and the run's precision check (whiten_precision()) judges the
# Monte Carlo error of the globals from all their draws (on the
# stochastic-volatility vignette's series, thinned to 1,000 draws a chain
# it reported mu and nu short of the bar); only the few globals are stored.
whiten_runner <- function(model, args, call, method, lr, temperature)
  function(iter, burnin, thin, init, rule, step = lr, sampler = method, monitor = NULL,
           pars = NULL)
    run_sampler(model, lr = step, batch_size = model$n, iter = iter, burnin = burnin,
                thin = thin, temperature = temperature, chains = args$chains, init = init,
                replace = FALSE, clip = NULL, monitor = monitor, threads = args$threads,
                mala = sampler == "mala", rule = rule, method = sampler, call = call,
                pars = pars, progress = args$progress, parallel = args$parallel,
                thin_auto = FALSE)

# The warm-up: (1) the approach, at a growing step, with Euler's steps (the
# rule without kept state, also mala()'s proposal); (2) the globals' step
# covariance from the sampler's own draws; (3) the sampler with it,
# measured. Returns the last phase's fit, the rule with its covariance,
# the iterations spent and their time.
whiten_warmup <- function(model, run, rule, lr, part, init, profile_cov) {
  ramp <- new_lr("resolved", schedule = list(type = "exp", a = lr / whiten_auto_ramp,
                                             b = whiten_auto_ramp, gamma = 0, t0 = 0,
                                             t1 = part, floor = 0))
  euler <- rule
  euler$name <- "whiten"
  warm <- suppressWarnings(run(part, part - 1, 1, init, euler, step = ramp, sampler = "sgld"))
  time <- warm$time
  burnin <- part
  covariance <- profile_cov
  if (whiten_done(warm)) {
    warm <- suppressWarnings(run(2 * part, 0, 1, to_user_scale(model, warm$state$w), rule))
    time <- time + warm$time
    burnin <- burnin + 2 * part
    if (whiten_done(warm)) {
      covariance <- whiten_draws_cov(model, warm, profile_cov)
      rule$opts$chol <- as.double(t(chol(covariance)))
      warm <- suppressWarnings(run(2 * part, 0, 1, to_user_scale(model, warm$state$w), rule))
      time <- time + warm$time
      burnin <- burnin + 2 * part
    }
  }
  list(fit = warm, rule = rule, covariance = covariance, time = time, burnin = burnin,
       measured = whiten_done(warm) && burnin == 5 * part)
}

# The run's length: the user's, or from the effective draws per iteration
# of the slowest global in the warm-up; below whiten_auto_min_ess the
# estimate is too rough (the AR(1) model's mu on MASS::SP500 with Euler's
# steps and mu outside the block: a warm-up of 10,000 planned 173,000
# iterations for 2,000 effective draws and gave mu 188), so the warm-up
# doubles, continuing exactly, and the new part is measured.
whiten_run_length <- function(model, run, warm, args, given, part, chains) {
  fit <- warm$fit
  burnin <- warm$burnin
  time <- 0
  rate <- NA_real_
  kept <- 0
  if (warm$measured && "iter" %in% given && !is.null(args$iter)) {
    kept <- max(1, args$iter - burnin)
  } else if (warm$measured) {
    repeat {
      x <- as.matrix(fit, scale = "sampler")[, seq_len(model$k), drop = FALSE]
      ok <- whiten_done(fit) && all(is.finite(x))
      ess <- if (ok) min(coda::effectiveSize(whiten_chains(x, chains))) else 0
      rate <- if (ok && ess > 0) ess / nrow(x) else NA_real_
      if (!ok || ess >= whiten_auto_min_ess || burnin >= whiten_auto_max_iter / 4) break
      more <- nrow(x) / chains
      fit <- suppressWarnings(run(more, 0, 1, fit, warm$rule))   # its draws: the new part
      time <- time + fit$time
      burnin <- burnin + more
    }
    kept <- if (is.finite(rate)) ceiling(auto_target_ess / (rate * chains)) else part
    kept <- min(max(kept, part), whiten_auto_max_iter)
  }
  list(fit = fit, burnin = burnin, kept = kept, rate = rate, time = time)
}

whiten_reason <- function(method, lr, part, burnin, kept, rate, overdispersed)
  sprintf(paste0(
    "lr = \"auto\": the latent path whitened given the globals (precondition = \"whiten\"), ",
    "step %s in those coordinates%s; a warm-up of %s iterations (the first %s at a step ",
    "growing from %s, then %s whose draws set the globals' step covariance), then %s ",
    "more%s%s."),
    format(lr), if (method == "sgld") " (Leimkuhler-Matthews steps)" else "",
    format(burnin, big.mark = ","), format(part, big.mark = ","),
    format(lr / whiten_auto_ramp), format(2 * part, big.mark = ","),
    format(kept, big.mark = ","),
    if (is.finite(rate)) sprintf(" for about %d effective draws of the globals at the warm-up's rate",
                                 auto_target_ess) else "",
    if (overdispersed) "; chains start over-dispersed" else "")

# Whether the run pins down each global's posterior mean and sd: the Monte
# Carlo standard error of the mean, in posterior sds (1 / sqrt(ESS)), and
# of the sd, relative to it (by the delta method from the effective draws of
# the squared deviations, which a heavy tail makes few). The default's bar is
# 0.15 sd and 10%, so three standard errors must stay inside it:
# whiten_precision_bar.
whiten_precision_bar <- c(mean = 0.05, sd = 0.033)

whiten_precision <- function(fit) {
  x <- as.matrix(fit)
  x <- x[, intersect(fit$model$names[seq_len(fit$model$k)], colnames(x)), drop = FALSE]
  chains <- length(fit$status)
  # coda's spectral estimate needs a few draws per chain and some spread:
  # with fewer, or none, nothing is pinned down
  few <- nrow(x) / chains < 10
  t(vapply(colnames(x), function(p) {
    v <- x[, p]
    d2 <- (v - mean(v))^2
    ess <- if (few || stats::var(v) == 0) c(0, 0)
           else coda::effectiveSize(whiten_chains(cbind(v, d2), chains))
    c(ess = ess[[1]], se_mean = 1 / sqrt(ess[[1]]),
      se_sd = stats::sd(d2) / sqrt(ess[[2]]) / (2 * stats::var(v)))
  }, numeric(3)))
}

# The warning when whiten_precision() says the default run falls short,
# naming the remedies; for the AR(1) model it says when the reason is phi's
# posterior reaching 1, where the level mu is barely identified and its
# draws follow its prior in the tail.
warn_whiten_precision <- function(fit, what, given) {
  pr <- fit$auto$precision
  short <- rownames(pr)[pr[, "se_mean"] > whiten_precision_bar[["mean"]] |
                          pr[, "se_sd"] > whiten_precision_bar[["sd"]]]
  if (!length(short)) return(invisible())
  model <- fit$model
  x <- as.matrix(fit)
  near1 <- if ("phi" %in% colnames(x)) stats::quantile(x[, "phi"], 0.99, names = FALSE) else NA
  # standard errors fall as 1 / sqrt(iterations): enough for the worst, with
  # half as much again to spare
  factor <- 1.5 * max(pr[short, "se_mean"] / whiten_precision_bar[["mean"]],
                      pr[short, "se_sd"] / whiten_precision_bar[["sd"]])^2
  more <- format(ceiling(factor * fit$auto$iter / 1000) * 1000, big.mark = ",",
                 scientific = FALSE)
  why <- if (is.finite(near1) && near1 > whiten_phi_near1)
    sprintf(paste0(" phi's posterior reaches 1 (its 99%% quantile is %.4f), where mu, the ",
                   "process's long-run level, is barely identified and its draws follow its ",
                   "N(%s, %s^2) prior in the tail."), near1, format(model$mu_mean), format(model$mu_sd))
  else ""
  remedies <- c(
    if (!"iter" %in% given) sprintf("a longer run (iter = %s)", more),
    if (nzchar(why)) c("a random walk for the log-variance (type = \"rw\")",
                       "an informative prior for the level (mu_mean, mu_sd)"),
    if ("iter" %in% given) "a longer run (a larger iter)")
  sgld_warn("mcse", sprintf(paste0(
    "%s: the run did not pin down %s to the bar of 0.15 posterior sd for the mean and 10%% ",
    "for the sd (Monte Carlo standard errors: %s).%s Try %s."),
    what, paste(short, collapse = ", "),
    paste(sprintf("%s %.3f sd and %.1f%%", short, pr[short, "se_mean"], 100 * pr[short, "se_sd"]),
          collapse = "; "),
    why, paste(remedies, collapse = ", or ")))
}
whiten_phi_near1 <- 0.995     # phi's 99% quantile beyond which the warning names it

# the rows of draws stacked chain after chain, as a list of coda chains
whiten_chains <- function(x, chains) {
  per <- nrow(x) / chains
  coda::mcmc.list(lapply(seq_len(chains), function(c)
    coda::mcmc(x[(c - 1) * per + seq_len(per), , drop = FALSE])))
}

# The covariance of the globals the rule moves (sampler's scale) over a
# fit's draws, shrunk towards `prior_cov` with weight 5 / (n + 5), n their
# fewest effective draws (as Stan regularises its adapted metric); the
# prior alone when it is not positive definite.
whiten_draws_cov <- function(model, fit, prior_cov) {
  x <- as.matrix(fit, scale = "sampler")[, model$path_level + seq_len(whiten_k(model)),
                                          drop = FALSE]
  if (!all(is.finite(x)) || nrow(x) < 10) return(prior_cov)
  n <- min(coda::effectiveSize(whiten_chains(x, length(fit$status))))
  C <- (n * stats::cov(x) + 5 * prior_cov) / (n + 5)
  if (inherits(tryCatch(chol(C), error = identity), "error")) prior_cov else C
}

# Starts on the user's scale: the globals at the profile's maximum (one
# chain) or drawn around it with twice the step's sds (several), the path at
# xbar(theta) plus a standard normal z (a path as rough as the posterior's).
whiten_init <- function(model, g, chains) {
  k <- whiten_k(model)
  w <- t(vapply(seq_len(chains), function(i) {
    th <- g$theta + if (chains > 1) drop(g$R %*% stats::rnorm(k, 0, auto_spread)) else 0
    .Call(C_sgld_whiten_eval, model, c(th, stats::rnorm(model$d - k)), 1, TRUE)
  }, numeric(model$d)))
  to_user_scale(model, w)
}
