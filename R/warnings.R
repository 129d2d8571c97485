# No silent failure (issue 16): after a run, the checks that tell a likely
# wrong run from a right one. Each gives a warning that names the cause and
# the remedy, and leaves its figures in fit$checks.

#' The classes of sgld's warnings
#'
#' Every warning the package gives is a condition of class `"sgld_warning"`
#' and of a subclass naming the check or event that raised it, so that one
#' kind can be caught or muffled by its class, whatever its wording (which
#' may change): `withCallingHandlers(fit <- sgld(m), sgld_warning_ess =
#' function(w) invokeRestart("muffleWarning"))` silences only the
#' effective-sample-size warning, and `tryCatch(..., sgld_warning =
#' function(w) ...)` catches any of them. The figures behind each check stay
#' in the fit (see [sgld_fit]), whether or not it warned.
#'
#' @section Checks of a run:
#' \describe{
#'   \item{`sgld_warning_ess`, `sgld_warning_rhat`}{an effective sample size
#'     below 100 or an R-hat above 1.05 (`fit$checks$convergence`); both,
#'     and `sgld_warning_stuck`, are also of class `sgld_warning_convergence`,
#'     and `print()` and `summary()` of the fit say them again.}
#'   \item{`sgld_warning_stuck`}{a chain whose draws never changed (every step
#'     rejected, or too small to change a value).}
#'   \item{`sgld_warning_stein`}{"the draws do not look like posterior draws":
#'     Stein's identity checked along the Hessian's eigenvectors
#'     (`fit$checks$gradient_ratio`).}
#'   \item{`sgld_warning_threshold`}{the sampling threshold at the end of the
#'     run above 1 (`fit$checks$alpha`), or every setting of [tune_sgld()]
#'     with a large minibatch noise.}
#'   \item{`sgld_warning_threshold_burnin`}{a chain that never reached a
#'     [sampling_threshold()] burn-in.}
#'   \item{`sgld_warning_acceptance`}{[mala()]'s acceptance rate below 0.15 or
#'     above 0.95.}
#'   \item{`sgld_warning_mcse`}{the whitened stochastic-volatility run did not
#'     reach its Monte Carlo precision.}
#'   \item{`sgld_warning_mlp_step`}{[model_mlp()]'s automatic run ended with a
#'     step or a sampling threshold too large.}
#'   \item{`sgld_warning_auto_unadjusted`}{`lr = "auto"` found that unadjusted
#'     steps cannot be trusted for this posterior.}
#'   \item{`sgld_warning_vi_failed`, `sgld_warning_vi_importance`,
#'     `sgld_warning_vi_khat`, `sgld_warning_vi_nonfinite`,
#'     `sgld_warning_vi_convergence`}{[bbb()]: no chain with a finite
#'     approximation; importance sampling that moves q's moments; Pareto k-hat
#'     above 0.7; a log joint not finite at q's draws; a run that did not
#'     converge.}
#'   \item{`sgld_warning_pareto_k`}{[loo()]'s Pareto k diagnostics (the
#'     messages of the loo package).}
#' }
#' @section Events of a run:
#' \describe{
#'   \item{`sgld_warning_diverged`, `sgld_warning_interrupted`,
#'     `sgld_warning_partial_draws`}{a chain that diverged, a run interrupted
#'     by the user (or an automatic run stopped before its end), and chains
#'     of unequal length left in `partial`.}
#'   \item{`sgld_warning_lost_chains`, `sgld_warning_data_lost`}{a chain whose
#'     future failed; a worker holding rows of [shards()] lost.}
#'   \item{`sgld_warning_callback`}{a warning given by a function of a
#'     [model_custom()], said again after the run.}
#' }
#' @section Settings and data:
#' \describe{
#'   \item{`sgld_warning_design`}{an all-zero, identical or collinear column
#'     of the design matrix.}
#'   \item{`sgld_warning_mode`}{the search for the posterior mode did not
#'     converge (control variates), or its Hessian is not negative definite.}
#'   \item{`sgld_warning_numerical_gradient`}{[model_custom()] without a
#'     gradient, so it is taken by finite differences.}
#'   \item{`sgld_warning_schedule`}{a decay `gamma` outside (0.5, 1].}
#'   \item{`sgld_warning_threads`}{more `threads` than processors.}
#'   \item{`sgld_warning_long_run`}{a long run without a progress display.}
#' }
#' @name sgld_warning
#' @aliases sgld_warnings
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' # a deliberately short run with a step too large: its warnings are
#' # collected by class instead of printed
#' kinds <- character()
#' fit <- withCallingHandlers(sgld(m, lr = 1e-4, iter = 200, chains = 2),
#'   sgld_warning = function(w) {
#'     kinds <<- c(kinds, class(w)[1])
#'     invokeRestart("muffleWarning")
#'   })
#' kinds
NULL

# Every warning of the package is a condition of classes
# "sgld_warning_<kind>" and "sgld_warning" (then "warning", "condition"), so
# a user or a test can catch or muffle one kind of check by its class rather
# than by its wording; the kinds are listed in ?sgld_warning. `...` is pasted
# into the message as warning(...) would; the call is left out of it.
sgld_warn <- function(kind, ...) {
  warning(warningCondition(paste0(...),
                           class = c(paste0("sgld_warning_", kind), "sgld_warning")))
}

# The R-hat, ESS and "did not move" warnings of a convergence_check() result,
# said when the run ends and again by print() and summary(); a fit saved
# before the checks had kinds is said under the convergence class alone.
warn_convergence <- function(convergence) {
  kinds <- convergence$kinds
  if (length(kinds) != length(convergence$messages)) kinds <- rep(NA, length(convergence$messages))
  for (i in seq_along(convergence$messages))
    sgld_warn(c(if (!is.na(kinds[i])) kinds[i], "convergence"), convergence$messages[i])
}

check_max_d <- 1000L
check_max_stored <- 5000L

# Called by run_sampler() on every fit; `cv_mode` is the control variates'
# centre on the sampler's scale (NULL for none). `auto`: the run's settings
# came from lr = "auto", so no warning may advise leaving `lr` out.
check_run <- function(fit, settings, rule, auto = FALSE, measured_ess = NULL) {
  checks <- list()
  # the threshold and Stein checks work with d x d matrices (a gradient
  # covariance, a Hessian and their eigenvectors): O(d^2) memory and O(d^3)
  # time, 12 GB at d = 40,000 (a network); above check_max_d they are skipped
  small <- fit$model$d <= check_max_d
  if (fit$method %in% c("sgld") && settings$temperature > 0 && small)
    checks <- c(checks, threshold_check(fit, settings, rule, auto = auto))
  if (fit$method == "mala") checks$acceptance <- acceptance_check(fit, auto)
  if (settings$burnin_mode == "threshold")
    checks$threshold_reached <- threshold_reached_check(fit, settings, auto)
  # the Stein check takes full-data gradients at stored draws: it needs all of
  # them. MALA's draws are exact once it has converged, which R-hat, the ESS
  # and the acceptance rate judge; there Stein's 50-draw estimate only adds
  # noise (0.31 along one direction of an exact run with 1,055 effective
  # draws of the nearly separated simulation in test-auto.R)
  if (is_sampler(fit) && fit$method != "mala" && settings$temperature > 0 && all_kept(fit) &&
      small)
    checks$gradient_ratio <- stein_check(fit, settings, auto = auto)
  # R-hat and the effective sample size of posterior draws (not of an
  # optimiser's or a variational fit's trajectory), warned at once
  if (is_sampler(fit) && fit$method != "vi" && settings$temperature > 0)
    checks$convergence <- convergence_check(fit, auto = auto, measured_ess = measured_ess)
  fit$checks <- checks
  fit
}

# Are the kept draws in the posterior's typical set? For draws from a density
# exp(U / tau), integration by parts gives Stein's identity
# E[g (w - a)^T] = -tau I for any fixed a (g the gradient of U; the identity
# behind the KSD), exactly, Gaussian or not. So along any unit direction u,
# r_u = -mean over draws of (u^T g)(u^T (w - w_bar)) / tau is about 1 for a
# right run; for a Gaussian posterior sampled too wide by a factor f in
# variance along u it is f; near 0 when the chain has barely moved (stuck
# where it started, or crawling along a ridge toward the posterior). The
# directions are the eigenvectors of the Hessian at the draws' mean, which
# single out the flat ridges along which slow chains fail: a chain that has
# settled across a stiff direction but not along a flat one (unscaled
# predictors) has a small r there. The first version of this check used the
# second-order identity E[g g^T] = -E[H] with H at the draws' mean; it
# raised a false alarm (24) on exact MALA draws of Adult, whose posterior is
# far from Gaussian along rare levels; this one has no such approximation.
# With 50 well-spread draws a right run's r_u has a Monte Carlo sd of about
# 0.2 (sqrt(2/50) for a Gaussian), more for skewed directions: the bounds
# 1/4 and 4 leave room for a hundred directions; and as a direction along
# which the posterior is skewed makes the products heavy-tailed (Adult's
# rare levels: -6.6 along education=Preschool on an accurate run, within
# 0.06 sd and 7% of the reference), a ratio outside them must also be more
# than 3 standard errors of its 50 products from 1, or have a standard error
# above 10: products of posterior draws are of order 1 (their mean is 1),
# and ones of order 10^7 (draws 80 apart, gradients of 10^6, a ratio near 0
# from their cancelling) come from no posterior. Only for the models whose
# log densities are smooth, and when 50 + 2d full passes are cheap. A
# Laplace prior's kink leaves the identity true (the density is continuous)
# but has no Hessian: there the directions are the coordinates, and 50
# passes suffice. That catches a step far beyond the prior's scale: with
# prior_laplace(0, 1e-6) and lr = 1e-3 the prior alone moves a coefficient
# by 1000 a step, and the chain jumps between two points 1000 apart (lag-1
# autocorrelation -0.999; with thin = 2 it sits at one of them), where r is
# of the order of 10^8.
stein_check <- function(fit, settings, draws = 50, bounds = c(0.25, 4), auto = FALSE) {
  model <- fit$model
  caps <- model_capabilities(model)
  smooth <- caps$smooth_likelihood
  # a regression whose only kinks are its priors' (Laplace), along the coordinates
  kinked <- !smooth && caps$regression
  # wide models (R/auto-wide.R): along the coordinates, as with kinks,
  # rather than along the eigenvectors of a d x d Hessian
  along_hessian <- smooth && model$d <= auto_wide_limit()
  K <- ndraws(fit)
  if (!(smooth || kinked) || K < 10 ||
      model$n * (draws + if (along_hessian) 2 * model$d else 0) > 5e7) return(NULL)
  x <- as.matrix(fit, scale = "sampler")
  pick <- unique(round(seq(1, nrow(x), length.out = min(draws, nrow(x)))))
  x <- x[pick, , drop = FALSE]
  grad <- function(w) {
    e <- .Call(C_sgld_model_eval, model, as.double(w))
    e$grad_loglik + e$grad_logprior
  }
  G <- t(apply(x, 1, grad))
  if (model$d == 1) G <- t(G)
  if (any(!is.finite(G))) return(NULL)
  centre <- colMeans(x)
  if (along_hessian) {
    H <- vapply(seq_len(model$d), function(j) {
      step <- 1e-4 * max(1, abs(centre[j]))
      e <- replace(numeric(model$d), j, step)
      -(grad(centre + e) - grad(centre - e)) / (2 * step)
    }, numeric(model$d))
    if (any(!is.finite(H))) return(NULL)
    eig <- eigen((H + t(H)) / 2, symmetric = TRUE)
  } else {
    eig <- list(vectors = NULL, values = rep(1, model$d))   # the coordinates
  }
  # these models' log posteriors are concave around their posterior mass: a
  # direction of non-positive curvature at the draws' mean is far from it
  dev <- sweep(x, 2, centre)
  products <- if (is.null(eig$vectors)) -(G * dev) / settings$temperature
              else -((G %*% eig$vectors) * (dev %*% eig$vectors)) / settings$temperature
  r <- colMeans(products)
  se <- apply(products, 2, stats::sd) / sqrt(nrow(products))
  r[eig$values <= 0] <- Inf
  off <- (r > bounds[2] | r < bounds[1]) & (!is.finite(r) | abs(r - 1) > 3 * se | se > 10)
  worst <- if (any(off)) which(off)[which.max(abs(log(pmax(r[off], 1e-300))))]
           else which.max(abs(log(pmax(r, 1e-300))))
  r_worst <- r[worst]
  involved <- model$names[if (is.null(eig$vectors)) worst
                          else which.max(abs(eig$vectors[, worst]))]
  # lr = "auto" chose the settings: the remedies are the ones it does not try
  longer <- format(4 * settings$iter, big.mark = ",", scientific = FALSE)
  remedy <- if (auto)
    paste0("The settings lr = \"auto\" chose do not suit this posterior: run mala(model) ",
           "(exact Metropolis-adjusted steps), or ",
           if (settings$chains >= 4) paste0("run the chains for longer (iter = ", longer, ").")
           else paste0("several chains for longer (chains = 4, iter = ", longer, ")."))
  else "Leave `lr` out (lr = \"auto\") or see \"Choosing settings by hand\" in ?sgld."
  if (any(off) && !is.finite(r_worst))
    sgld_warn("stein", sprintf(paste0(
      "the draws do not look like posterior draws: the log posterior is not concave at ",
      "their mean (along a direction mostly '%s'), so they are far from the posterior's ",
      "mass: the chain has not reached it or has run away (`lr` too small or too large). %s"),
      involved, remedy))
  else if (any(off))
    sgld_warn("stein", sprintf(paste0(
      "the draws do not look like posterior draws: along one direction (mostly '%s') the ",
      "gradient of the log posterior times the draws' deviation from their mean averages ",
      "%s (standard error %s), where posterior draws give -1 (Stein's identity; %s). %s %s"),
      involved, format(-r_worst, digits = 3), format(se[worst], digits = 2),
      if (r_worst > 1) "they spread too wide" else "they have barely moved or are not in equilibrium",
      if (r_worst > 1) paste0("The step is too large (`lr`) or the gradient noise too ",
                              "strong (`batch_size` too small).")
      else paste0("The chain is stuck or still on its way to the posterior (`lr` too small ",
                  "for the number of iterations, or too large and rejected)."), remedy))
  list(ratio = r, se = se, worst = unname(r_worst), parameter = involved, ok = !any(off))
}

# The (preconditioned) sampling threshold at the final state of each chain,
# alpha = eta / 2 * lambda_max(T^T Cov(g_hat) T) with T a factor of the
# preconditioner and g_hat the estimator the run used (with its control
# variates), estimated from 200 independent minibatches. The gradient noise
# adds about alpha times the injected variance in its noisiest direction, so
# the posterior sds come out too wide by about sqrt(1 + alpha) there.
threshold_check <- function(fit, settings, rule, times = 200, auto = FALSE) {
  if (!rule$name %in% c("sgld", "precond", "precond_lm", "psgld")) return(list())
  model <- fit$model
  # a model in R functions would be called `times` more times, which its
  # functions may count or log: left out
  if (model_capabilities(model)$calls_r) return(list())
  n <- model$n
  if (settings$batch_size >= n) return(list(alpha = 0, sd_inflation = 1))
  run <- utils::head(which(fit$status == "done"), 4)   # bounded cost for many chains
  if (!length(run)) return(list())
  alpha <- vapply(run, function(c) {
    w <- fit$state$w[c, ]
    eta <- fit$lr[nrow(fit$lr), min(c, ncol(fit$lr))]
    if (!length(eta) || !is.finite(eta)) return(NA_real_)
    G <- tryCatch(with_seed_kept(model_gradient_draws(model, list(
      w = as.double(w), batch_size = settings$batch_size, times = times,
      replace = settings$replace, cv_mode = settings$cv_mode))),
      error = function(e) NULL)
    if (is.null(G) || any(!is.finite(G))) return(NA_real_)
    # the rule's own factor of its preconditioner there (src/update_*.c)
    st <- fit$state$update
    T <- .Call(C_sgld_rule_factor, model, rule$name, rule$opts, as.double(w),
               as.double(if (is.null(st)) numeric() else st[, c]))
    estimator_threshold(G, eta, T)
  }, numeric(1))
  out <- list(alpha = alpha, sd_inflation = sqrt(1 + alpha))
  worst <- suppressWarnings(max(alpha, na.rm = TRUE))
  if (is.finite(worst) && worst > 1)
    sgld_warn("threshold", sprintf(paste0(
      "the sampling threshold at the end of the run is %s (above 1): the minibatch ",
      "gradient noise is larger than the injected noise, so the draws are not from the ",
      "posterior; its sds come out too wide by a factor of about %s in the noisiest ",
      "direction. %s"),
      format(worst, digits = 3), format(sqrt(1 + worst), digits = 3),
      if (auto) sprintf(paste0("The batch lr = \"auto\" chose (%d) was measured near the ",
                               "mode: give a larger `batch_size`, or `batch_size = %s` (the ",
                               "full data)."), settings$batch_size,
                        format(fit$model$n, scientific = FALSE))
      else paste0("Use a smaller `lr`, a larger `batch_size` or `control_variates = TRUE`, ",
                  "or leave `lr` out (lr = \"auto\").")))
  out
}

# Where a Metropolis-adjusted chain starts matters as much as its step: a
# start far from the mode, near a wall of data, can refuse every step a
# pilot from the mode found good (bench/negbin-defaults.md: four chains of
# the nearly separated simulation at n = 300, started from N(mode, 4 S),
# accepted nothing; started at the mode, 0.54 and R-hat 1.005). The advice
# names the start the user has not already chosen, or the one they gave.
mala_start_advice <- function(fit, auto) {
  given <- names(fit$call)[-1]
  if ("init" %in% given)
    " or start the chains at the posterior mode instead of the given `init` (init = posterior_mode(model)$mode)"
  else if (!auto)
    " and start the chains at the posterior mode (init = posterior_mode(model)$mode)"
  else ""
}

# MALA's acceptance rate far from its useful range.
acceptance_check <- function(fit, auto = FALSE) {
  a <- fit$acceptance
  say <- function(bad, what) {
    if (!length(bad)) return()
    sgld_warn("acceptance", sprintf("mala(): the acceptance rate of chain%s %s is %s, %s",
                    if (length(bad) > 1) "s" else "", paste(bad, collapse = ", "),
                    paste(format(a[bad], digits = 2), collapse = ", "), what))
  }
  step <- if (length(fit$lr)) format(fit$lr[1], digits = 3) else "one"
  say(which(a < 0.15), paste0(
    "below 0.15: the step `lr` is too large, the chain hardly moves and its draws do not ",
    "represent the posterior. ",
    if (auto) paste0("The step lr = \"auto\" chose in short pilots (", step, ") does not suit ",
                     "the whole run: give a smaller `lr` (", step, " / 10, say)",
                     mala_start_advice(fit, auto), ".")
    else paste0("Use a smaller `lr` (a tenth, say)", mala_start_advice(fit, auto),
                ", or leave `lr` out (lr = \"auto\" pilots the step from the mode).")))
  say(which(a > 0.95), paste0(
    "above 0.95: the step `lr` is so small that the chain moves slowly and its draws are ",
    "strongly correlated. ",
    if (auto) paste0("Give a larger `lr` than the ", step, " lr = \"auto\" chose.")
    else "Use a larger `lr` or leave it out (lr = \"auto\")."))
  list(rate = a, ok = a >= 0.15 & a <= 0.95)
}

# A sampling_threshold() burn-in that some chain never reached.
threshold_reached_check <- function(fit, settings, auto = FALSE) {
  reached <- fit$collect_from > 0
  never <- which(!reached & fit$status == "done")
  if (length(never))
    sgld_warn("threshold_burnin", sprintf(paste0(
      "chain%s %s never reached the sampling threshold alpha <= %s in %s iterations, so ",
      "%s no draws. %s"),
      if (length(never) > 1) "s" else "", paste(never, collapse = ", "),
      format(settings$alpha0), format(settings$iter, big.mark = ","),
      if (length(never) > 1) "they kept" else "it kept",
      if (auto) paste0("Give a larger `batch_size` than the ", settings$batch_size,
                       " lr = \"auto\" chose, or a fixed `burnin`.")
      else paste0("Use a smaller or decaying `lr`, a larger `batch_size` or ",
                  "`control_variates = TRUE`, more iterations, or leave `lr` out ",
                  "(lr = \"auto\").")))
  reached
}

# R-hat above 1.05 or ESS below 100, judged on what means the same in every
# chain: the quantities of convergence_draws(), by default the stored
# parameters. Each chain is cut to at most `max_draws` draws (every k-th)
# for coda's spectral ESS, whose cost grows with the chain: with 1000 or
# more draws a chain, an ESS below 100 of the thinned draws means
# autocorrelation times of 10 or more thinned draws, where thinning loses
# almost nothing, so a warning is never caused by the thinning. At fit time
# (`bounded`) the check is left out when it would cost more than a few
# seconds (coda takes about 3 ms a quantity and chain at 1000 draws).
convergence_check <- function(fit, warn = TRUE, bounded = TRUE, max_draws = 1000,
                              auto = FALSE, measured_ess = NULL) {
  if (ndraws(fit) < 2) return(NULL)
  q <- convergence_draws(fit$model, fit)
  if (is.null(q) || coda::nvar(q) == 0 || coda::niter(q) < 2) return(NULL)
  if (bounded && coda::nvar(q) * coda::nchain(q) > check_max_stored) return(NULL)
  # `measured_ess`: a route that measured every stored draw's effective sample size
  # already (R/auto-imh.R: its stopping rule) gives it, and R-hat is taken
  # on the same unthinned draws
  given <- !is.null(measured_ess) && length(measured_ess) == coda::nvar(q)
  k <- if (given) 1 else ceiling(coda::niter(q) / max_draws)
  if (k > 1) q <- thin_draws(q, k)
  e <- if (given) unname(measured_ess) else ess(q)
  rhat <- if (coda::nchain(q) > 1) psrf(q)
  nm <- coda::varnames(q)
  names(e) <- nm
  if (!is.null(rhat)) names(rhat) <- nm
  extreme <- function(x, f) if (any(!is.na(x))) f(x, na.rm = TRUE) else NA_real_
  high <- names(which(rhat > 1.05))
  low <- names(which(e < 100))
  s <- fit$settings
  burn <- if (is.numeric(s$burnin)) s$burnin else 0
  # an interrupted run is judged by the iterations it reached, not asked for
  reached <- if (any(fit$status == "interrupted") && length(fit$state$iteration))
               min(s$iter, max(fit$state$iteration)) else s$iter
  sampled <- max(1, reached - burn)
  # advice from the run as it was, and never fewer iterations than it ran
  longer <- function(factor)
    format(max(reached + 1, ceiling(burn + sampled * factor)), big.mark = ",",
           scientific = FALSE)
  msg <- character()
  # a chain whose draws never change (every step rejected, or too small to
  # change a value) did not move: more of the same iterations give more of
  # the same draws, so the advice is about the step and ESS/R-hat are moot
  still <- which(vapply(q, function(x) all(apply(as.matrix(x), 2, function(v)
    all(v == v[1]))), NA))
  if (length(still) || isTRUE(extreme(e, min) < 1)) {
    acc <- if (!is.null(fit$acceptance)) sprintf(" (acceptance %s)", paste(format(
      fit$acceptance[fit$chain_ids][if (length(still)) still else seq_along(q)], digits = 2),
      collapse = ", ")) else ""
    msg <- sprintf(paste0(
      "%s did not move%s: %s, so running longer would not help. %s"),
      if (length(still)) sprintf("chain%s %s", if (length(still) > 1) "s" else "",
                                 paste(fit$chain_ids[still], collapse = ", "))
      else "the chains", acc,
      if (length(still)) "every stored draw is the same"
      else sprintf("the effective sample size is %s", format(extreme(e, min), digits = 2)),
      if (fit$method == "mala" || !is.null(fit$acceptance))
        paste0("The step is too large to be accepted: give a smaller `lr` (a tenth, say)",
               mala_start_advice(fit, auto), ".")
      else if (auto) "The step lr = \"auto\" chose does not suit this run: run mala(model), or give `lr` yourself."
      else "Check the step `lr`: one too small to change the parameters leaves them where they started.")
    out <- list(rhat_max = extreme(rhat, max), ess_min = extreme(e, min), rhat = rhat,
                ess = e, thin = k, messages = msg, kinds = "stuck", stuck = TRUE)
    if (warn) warn_convergence(out)
    return(invisible(out))
  }
  kinds <- c(if (length(high)) "rhat", if (length(low)) "ess")
  if (length(high))
    msg <- c(msg, sprintf(paste0(
      "R-hat is above 1.05 for %s (largest %s): the chains disagree, so they have not ",
      "converged to one distribution. Run more iterations (iter = %s, say) from spread-out ",
      "starts%s."),
      name_list(high), format(extreme(rhat, max), digits = 3), longer(4),
      if (auto) "" else ", or check the settings (lr, batch_size)"))
  if (length(low))
    msg <- c(msg, sprintf(paste0(
      "the effective sample size is below 100 for %s (smallest %s): the means and ",
      "quantiles are too uncertain to use. Run more iterations (about iter = %s for 100 ",
      "effective draws)%s."),
      name_list(low), format(extreme(e, min), digits = 3),
      longer(100 / max(1, extreme(e, min)) * 1.2),
      if (fit$method == "mala" || auto) "" else " or a larger `lr`"))
  out <- list(rhat_max = extreme(rhat, max), ess_min = extreme(e, min), rhat = rhat,
              ess = e, thin = k, messages = msg, kinds = kinds)
  if (warn) warn_convergence(out)
  invisible(out)
}

#' What R-hat and the effective sample size judge
#'
#' After a sampler's run, R-hat and the ESS are computed on quantities that
#' mean the same in every chain and warn above 1.05 or below 100. By default
#' these are the stored parameters. A model whose parameters are not
#' identified (a network's hidden units can be permuted, so two chains can
#' agree on every prediction with different weights) provides a method that
#' returns identifiable quantities instead, such as the log likelihood of
#' some of the data at each draw.
#' @param model The fit's model.
#' @param fit The fit (its `draws`, `pars`, `settings`).
#' @return An [coda::mcmc.list] with one matrix per chain of `fit$draws`
#'   (rows the kept draws, columns the quantities, named), or `NULL` when
#'   nothing can be judged.
#' @keywords internal
#' @noRd
convergence_draws <- function(model, fit) UseMethod("convergence_draws")

convergence_draws.default <- function(model, fit) fit$draws

name_list <- function(x, most = 5) {
  s <- paste0("'", utils::head(x, most), "'", collapse = ", ")
  if (length(x) > most) paste0(s, " and ", length(x) - most, " more") else s
}

# Evaluate expr without moving R's random number stream: the checks run
# after a run must not change the draws of what the user runs next.
# The sampling threshold of a gradient estimator from repeated estimates G
# at one point (one per row): alpha = eta / 2 * lambda_max(T' Cov(G) T), with T
# a factor of the preconditioner (P = T T'; NULL for none). Welling and Teh's
# section 4.1 in this package's eta; used after a run (threshold_check()) and
# to choose the automatic batch (auto_alpha()).
# T: NULL, the d x d factor, or a function applying T' to a gradient (a
# diagonal or low-rank factor, R/auto-wide.R). The largest eigenvalue of
# T' Cov(G) T = Z'Z / (draws - 1), Z the centred gradients through T, is
# that of Z Z' / (draws - 1): the smaller of the two is formed, so a wide
# model costs draws^2 d, never d x d.
estimator_threshold <- function(G, eta, T = NULL) {
  if (is.function(T)) {
    # row by row into one copy of G: sweep(), apply() and t() held five
    # copies of its 200 x d (at d = 10,000, 16 MB each: 125 MB of the wide
    # recipe's peak memory, bench/sparse.md)
    centre <- colMeans(G)
    for (i in seq_len(nrow(G))) G[i, ] <- T(G[i, ] - centre)
    Z <- G
  } else {
    Z <- sweep(G, 2, colMeans(G))
    if (!is.null(T)) Z <- Z %*% T
  }
  C <- (if (ncol(Z) <= nrow(Z)) crossprod(Z) else tcrossprod(Z)) / (nrow(G) - 1)
  # finite gradients so large that their covariance overflows (a network
  # under pSGLD with a tiny lambda, before it diverges): the noise is
  # unbounded, which the check reports, rather than eigen() failing
  if (anyNA(C)) return(NA_real_)
  if (any(!is.finite(C))) return(Inf)
  eta / 2 * max(eigen(C, symmetric = TRUE, only.values = TRUE)$values)
}

with_seed_kept <- function(expr) {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env)
          else if (exists(".Random.seed", envir = env, inherits = FALSE))
            rm(".Random.seed", envir = env))
  expr
}
