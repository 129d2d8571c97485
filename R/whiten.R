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

# the rule, for sgld(), mala() and sgd()
whiten_rule <- function(model, label) {
  if (!isTRUE(model$path_gaussian))
    abort("`precondition = \"whiten\"` needs a model with a latent path that supplies ",
          "its Gaussian approximation, such as model_sv(); ", class(model)[1], " does not.")
  g <- whiten_globals(model)
  update_rule("whiten", label, list(chol = as.double(t(chol(g$cov))), globals = g$theta),
              sampler = TRUE)
}

# U~(theta, 0) and its gradient in theta, or -Inf where the path's precision
# is not positive definite (theta far out)
whitened_profile <- function(model, theta) {
  k <- model$k
  tryCatch({
    w <- .Call(C_sgld_whiten_eval, model, c(as.double(theta), rep(0, model$n)), 1, TRUE)
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
  k <- model$k
  start <- to_sampler_scale(model, matrix(model$default_init, 1))[1, seq_len(k)]
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
#     from its Gaussian approximation, sgld() with the step growing
#     geometrically from a twentieth of its value to its value: the profile
#     can start far from the posterior (nu at 363 against 8 on a simulated
#     series of 10^5 days), and at the full step the first iterations then
#     overshot and diverged (at 10^5 and 10^6 days);
#  2. the globals' step covariance measured again where the chains arrived:
#     the inverse of the negative Hessian of U~ in theta at fixed z, averaged
#     over the chains' last states (in the whitened coordinates theta and z
#     are nearly independent, so this is close to the marginal curvature);
#     the profile's curvature can be far off where it is far off (there, for
#     log nu, 4.5 times the posterior's sd);
#  3. the sampler itself at its step from there, doubling until its second
#     half has whiten_auto_min_ess effective draws of every global, which
#     sets the run's length; the run continues it exactly.
# The steps, measured against exact references (tests/testthat/test-whiten.R
# and bench/sv.R): sgld() at lr 0.05 left the globals' means within 0.02 sd
# and the path's sds 1.0% too wide on the T = 500 series (0.1: 2.1%); mala()
# at lr 0.1 accepted 0.55 on MASS::SP500 and 0.8 on the T = 500 series.
whiten_auto_lr <- c(sgld = 0.05, mala = 0.1)
whiten_auto_ramp <- 20        # the first part's step starts at lr / 20
whiten_auto_warmup <- 5000    # iterations of each part of the warm-up
whiten_auto_min_ess <- 100    # effective draws the measured half needs
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
  rule <- whiten_rule(model, label)
  g <- list(theta = rule$opts$globals, R = matrix(rule$opts$chol, model$k))
  lr <- whiten_auto_lr[[method]]
  temperature <- if ("temperature" %in% given) args$temperature else 1
  init <- if ("init" %in% given && !is.null(args$init)) args$init
          else whiten_init(model, g, chains)
  run <- function(iter, burnin, thin, init, step = lr, sampler = method, monitor = NULL,
                  pars = NULL)
    run_sampler(model, lr = step, batch_size = model$n, iter = iter, burnin = burnin,
                thin = thin, temperature = temperature, chains = chains, init = init,
                replace = FALSE, clip = NULL, monitor = monitor, threads = args$threads,
                mala = sampler == "mala", rule = rule, method = sampler, call = call,
                pars = pars, progress = args$progress, parallel = args$parallel)
  part <- if ("burnin" %in% given && !is.null(args$burnin)) max(2, ceiling(args$burnin / 2))
          else whiten_auto_warmup
  # 1. the approach, at a growing step
  ramp <- new_lr("resolved", schedule = list(type = "exp", a = lr / whiten_auto_ramp,
                                             b = whiten_auto_ramp, gamma = 0, t0 = 0,
                                             t1 = part, floor = 0))
  approach <- suppressWarnings(run(part, part - 1, 1, init, step = ramp, sampler = "sgld"))
  warm_time <- approach$time
  rate <- NA_real_
  burnin <- part
  if (all(approach$status == "done")) {
    # 2. the globals' step covariance where the chains arrived
    C <- whiten_local_cov(model, approach$state$w)
    if (!is.null(C)) {
      rule$opts$chol <- as.double(t(chol(C)))
      g$R <- t(chol(C))
    }
    # 3. the sampler at its step, measured
    warm <- suppressWarnings(run(part, 0, 1, to_user_scale(model, approach$state$w)))
    warm_time <- warm_time + warm$time
    burnin <- 2 * part
    if ("iter" %in% given && !is.null(args$iter)) {
      kept <- max(1, args$iter - burnin)
    } else {
      # effective draws per iteration of the slowest global; below
      # whiten_auto_min_ess the estimate is too rough (the AR(1) model's mu
      # on MASS::SP500: a warm-up of 10,000 planned 173,000 iterations for
      # 2,000 effective draws and gave mu 188), so that part doubles,
      # continuing exactly, and the new half is measured
      whole <- FALSE
      repeat {
        x <- as.matrix(warm, scale = "sampler")[, seq_len(model$k), drop = FALSE]
        per <- nrow(x) / chains
        from <- if (whole) 1 else floor(per / 2) + 1
        rows <- unlist(lapply(seq_len(chains), function(c) (c - 1) * per + seq.int(from, per)))
        ok <- all(warm$status == "done") && all(is.finite(x))
        ess <- if (ok) min(coda::effectiveSize(x[rows, , drop = FALSE])) else 0
        rate <- if (ok && ess > 0) ess / length(rows) else NA_real_
        if (!ok || ess >= whiten_auto_min_ess || burnin >= whiten_auto_max_iter / 4) break
        more <- if (whole) per else part
        warm <- suppressWarnings(run(more, 0, 1, warm))   # its draws: the new half
        warm_time <- warm_time + warm$time
        burnin <- burnin + more
        whole <- TRUE
      }
      kept <- if (is.finite(rate)) ceiling(auto_target_ess / (rate * chains)) else part
      kept <- min(max(kept, part), whiten_auto_max_iter)
    }
  } else {
    warm <- approach
    kept <- 0
  }
  thin <- if ("thin" %in% given) args$thin
          else if (is.finite(rate)) max(1, floor(1 / (4 * rate))) else 1
  setup <- proc.time()[["elapsed"]] - start - warm_time
  fit <- if (all(warm$status == "done") && kept > 0)
    run(kept, 0, thin, warm, monitor = args$monitor, pars = args$pars)
  else warm
  fit$auto <- list(
    lr = lr, iter = burnin + kept, burnin = burnin, thin = thin, temperature = temperature,
    globals = g$theta, globals_covariance = crossprod(t(g$R)), warmup_rate = rate,
    target_ess = auto_target_ess, overdispersed = chains > 1 && !"init" %in% given,
    setup_time = setup,
    reason = sprintf(paste0(
      "lr = \"auto\": the latent path whitened given the globals (precondition = \"whiten\"), ",
      "step %s in those coordinates; a warm-up of %s iterations (the first %s at a step ",
      "growing from %s, then the globals' step covariance measured again), then %s more%s%s."),
      format(lr), format(burnin, big.mark = ","), format(part, big.mark = ","),
      format(lr / whiten_auto_ramp), format(kept, big.mark = ","),
      if (is.finite(rate)) sprintf(" for about %d effective draws of the globals at the warm-up's rate",
                                   auto_target_ess) else "",
      if (chains > 1 && !"init" %in% given) "; chains start over-dispersed" else ""))
  fit$time <- fit$time + warm_time + setup
  fit
}

# The inverse of the negative Hessian of U~ in the globals at fixed z,
# averaged over the states w (rows, sampler's scale); NULL if it is not
# positive definite there.
whiten_local_cov <- function(model, w) {
  k <- model$k
  h <- 1e-4
  H <- Reduce(`+`, lapply(seq_len(nrow(w)), function(i) {
    tz <- .Call(C_sgld_whiten_eval, model, as.double(w[i, ]), 1, FALSE)$theta_z
    grad_at <- function(t) {
      v <- .Call(C_sgld_whiten_eval, model, t, 1, TRUE)
      .Call(C_sgld_whiten_eval, model, v, 1, FALSE)$grad[seq_len(k)]
    }
    vapply(seq_len(k), function(j) {
      up <- down <- tz
      up[j] <- up[j] + h
      down[j] <- down[j] - h
      (grad_at(up) - grad_at(down)) / (2 * h)
    }, numeric(k))
  })) / nrow(w)
  H <- -(H + t(H)) / 2
  if (!all(is.finite(H))) return(NULL)
  tryCatch(chol2inv(chol(H)), error = function(e) NULL)
}

# Starts on the user's scale: the globals at the profile's maximum (one
# chain) or drawn around it with twice the step's sds (several), the path at
# xbar(theta) plus a standard normal z (a path as rough as the posterior's).
whiten_init <- function(model, g, chains) {
  k <- model$k
  w <- t(vapply(seq_len(chains), function(i) {
    th <- g$theta + if (chains > 1) drop(g$R %*% stats::rnorm(k, 0, auto_spread)) else 0
    .Call(C_sgld_whiten_eval, model, c(th, stats::rnorm(model$n)), 1, TRUE)
  }, numeric(model$d)))
  to_user_scale(model, w)
}
