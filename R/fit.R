#' Fits returned by the samplers
#'
#' [sgld()], [sgd()] and [gd()] return an object of class `sgld_fit`, a list with
#' \describe{
#'   \item{draws}{a [coda::mcmc.list], one [coda::mcmc] matrix per chain: rows
#'     are kept iterations, columns the parameters on the user's scale (for
#'     [model_linear()]: the coefficients and `sigma2`); `coda::mcpar()` gives
#'     the first and last kept iteration and the thinning interval.}
#'   \item{lr}{the learning rate of each kept draw, a matrix with one column per
#'     chain of `draws`, for step-weighted estimates.}
#'   \item{iteration}{the iteration of each kept draw (same layout as `lr`).}
#'   \item{collect_from}{per chain, the first iteration whose draw could be
#'     kept (after burn-in, or once the sampling threshold was met; 0 if never).}
#'   \item{diagnostics}{with [diagnostics_every()], a data frame of the
#'     sampling threshold, noise variances and rejection probability.}
#'   \item{acceptance}{for [mala()], the acceptance rate of each chain.}
#'   \item{chain_ids, partial}{which chains `draws` holds: all of them, unless
#'     some stopped early (see [sgld()]); `partial` holds the draws of chains
#'     that stopped early, as [coda::mcmc] objects named by chain.}
#'   \item{pars, storage, moments}{the indices of the stored parameters
#'     (`NULL`: all); when fewer draws or parameters were stored than a
#'     default run stores, why (see `pars` in [sgld()]), else `NULL`; and each
#'     chain's running means, step-weighted means and variances of every
#'     parameter over every iteration after burn-in (`n` of them).}
#'   \item{last}{the final state of each chain (one row per chain, user's scale).}
#'   \item{state}{everything needed to continue the chains (see `init` in
#'     [sgld()]): `w`, the final parameters on the sampler's scale; `update`, the
#'     update rule's state (momenta, averages), one column per chain; `rng`, the
#'     random streams; `iteration`, the iteration each chain reached; `rule`.}
#'   \item{rule}{the update rule, e.g. `"SGLD"`, `"pSGLD (RMSprop preconditioner)"`.}
#'   \item{status}{per chain: `"done"`, `"diverged"` (a non-finite parameter or
#'     gradient), `"interrupted"`, `"failed"` (a function of a
#'     [model_custom()] failed), `"lost"` (with `parallel = "future"`, its
#'     future failed: its worker died or could not be reached; its draws are
#'     gone, the other chains' kept), `"warm-up"` (an automatic run, `lr =
#'     "auto"`, stopped after its warm-up: the draws are warm-up draws, not a
#'     sample; `sgld(model, init = fit)` finishes the run) or `"not run"`;
#'     `stop_iter` gives the
#'     iteration at which a chain stopped early.}
#'   \item{clipped}{per chain, how many iterations had their gradient clipped.}
#'   \item{monitor}{with [monitor_every()], a data frame of the log joint
#'     probability per datum and held-out metrics during the run; else `NULL`.}
#'   \item{checks}{the checks that tell a likely wrong run (each also gives a
#'     warning naming the cause and the remedy, of a class per check listed
#'     in [sgld_warning]; the threshold and Stein
#'     checks, which work with d x d matrices, only for models with at most
#'     1000 parameters): `alpha` and `sd_inflation`,
#'     the (preconditioned) sampling threshold at the end of each chain and the
#'     factor \eqn{\sqrt{1+\alpha}}{sqrt(1+alpha)} by which it widens the posterior sds
#'     (warning above 1); `acceptance` for [mala()] (warning below 0.15 or
#'     above 0.95); `threshold_reached` for a [sampling_threshold()] burn-in;
#'     `gradient_ratio`, Stein's identity \eqn{E[\nabla U\,(w - a)^\top] = -I}{E[grad U (w - a)^T] = -I}
#'     along the eigenvectors \eqn{u}{u} of the Hessian at the draws' mean:
#'     \eqn{r_u = -\overline{(u^\top \nabla U)(u^\top(w - \bar w))}}{r_u = -mean[(u^T grad U)(u^T(w - w_bar))]} is about 1
#'     for posterior draws, above for too wide ones, near 0 for a chain that
#'     has barely moved (warning outside 1/4 to 4; 50 draws; linear and
#'     normal-prior logistic models, when 50 + 2d passes over the data are
#'     cheap); `convergence`, R-hat and the ESS (`rhat`, `ess`; the
#'     largest and smallest as `rhat_max`, `ess_min`) of quantities that
#'     mean the same in every chain: the stored parameters, or for a
#'     [model_mlp()] network, whose hidden units can be permuted between
#'     chains, `sigma2` and the layers' precisions and, when every parameter
#'     is stored, the log likelihood of up to 1000 training rows at each draw
#'     (warning above 1.05 or below 100, repeated by `summary()` and
#'     `print()`; from at most 1000 draws a chain, every `thin`-th).}
#'   \item{auto}{with `lr = "auto"`, what was chosen and why (see [sgld()]):
#'     among others `strategy` (`"langevin"`; `"mala"` where the Laplace
#'     approximation failed; `"mala-gaussian"` for a negative binomial
#'     where it holds and every step reads the full data: exact steps much
#'     larger than the unadjusted ones; `"imh"` for one whose pilot's
#'     importance weights allow independence Metropolis-Hastings,
#'     with `pilot_khat`, `pilot_acceptance` and `evaluations`), `reason`
#'     (the sentence `print()` shows),
#'     `setup_time` and `sampling_time` (the iterations of every phase:
#'     pilots, warm-up and run), and, for a fit stopped by an interrupt
#'     before its run, `interrupted` (the phase).}
#'   \item{model, settings, method, call, time}{what was run, and its elapsed
#'     time in seconds.}
#'   \item{sampling_time}{the seconds the chains' iterations took, timed in
#'     the engine: `time` without allocating the results (R may collect its
#'     garbage then) or, with `lr = "auto"`, choosing the rate. With
#'     `parallel = "future"`, the longest worker's.}
#' }
#' Methods: `print()`, `summary()`, `coef()`, `vcov()`, `plot()`,
#' `as.matrix()`, `as.array()`, `coda::as.mcmc()` and `coda::as.mcmc.list()`.
#' @name sgld_fit
NULL

new_sgld_fit <- function(engine, model, settings, lr, method, call, time,
                         rule = plain_rule("SGLD")) {
  # The engine's result arrives in an environment and is taken out of it, so
  # this frame holds the only reference: its draws matrices can then be
  # relabelled and transformed in place instead of copied.
  res <- engine$res
  rm("res", envir = engine)
  chains <- settings$chains
  capacity <- settings$capacity
  kept <- res$kept
  status <- chain_status(res$status)
  stopped <- which(status != "done" & kept > 0)
  # An mcmc object is a matrix with an mcpar attribute (first and last kept
  # iteration, thinning interval) and class "mcmc". Setting them here on the
  # engine's own matrix, rather than through coda::mcmc(), avoids copying
  # long runs; the drawn matrix is released from `res` so it is not shared
  # (a chain that stopped early keeps it: its draws are cut, which copies).
  # Irregular collection policies have no such spacing: mcpar then counts
  # kept draws, and fit$iteration says where each was taken.
  complete <- which(status == "done")
  in_draws <- if (length(complete)) complete else which(kept > 0)
  if (!length(in_draws)) in_draws <- seq_len(chains)
  start <- if (settings$regular) settings$t_offset[in_draws[1]] + settings$burnin + settings$thin
           else 1
  step <- if (settings$regular) settings$thin else 1
  keep <- settings$keep
  names_kept <- if (is.null(keep)) model$names else model$names[keep]
  log_cols <- if (is.null(keep)) model$log_scale else match(model$log_scale, keep, nomatch = 0L)
  as_chain <- function(c, K) {
    u <- res$draws[[c]]
    if (!c %in% stopped) res$draws[c] <<- list(NULL)
    if (K < capacity) u <- u[seq_len(K), , drop = FALSE]
    # parameters sampled as logarithms go back in place, a block of rows at a
    # time so no temporary is as long as the chain; other transforms copy (a
    # subset of parameters, `pars`, only ever has coordinate-wise ones)
    if (!is.null(model$moment_scale)) {
      u <- kept_to_user_scale(model, u, keep)   # transforms beyond exp (model_sv())
    } else if (is.null(model$log_scale) || K == 0) {
      if (is.null(keep)) u <- to_user_scale(model, u)
    } else {
      for (j in log_cols[log_cols > 0]) for (b in seq(1, K, by = 65536)) {
        rows <- b:min(K, b + 65535)
        u[rows, j] <- exp(u[rows, j])
      }
    }
    dimnames(u) <- list(NULL, names_kept)
    attr(u, "mcpar") <- c(start, start + (K - 1) * step, step)
    class(u) <- "mcmc"
    u
  }
  # coda needs chains of equal length: `draws` holds the chains that ran to the
  # end (cut to the shortest when a collection policy kept different numbers),
  # or, if none did, every chain that kept something. Chains that stopped early
  # keep all their draws in `partial`.
  K <- min(kept[in_draws])
  partial <- lapply(stopped, function(c) as_chain(c, kept[c]))
  names(partial) <- sprintf("chain %d", stopped)
  last <- to_user_scale(model, t(res$last))
  dimnames(last) <- list(paste("chain", seq_len(chains)), model$names)
  pick <- function(x) if (K == capacity && length(in_draws) == chains) x
                      else x[seq_len(K), in_draws, drop = FALSE]

  fit <- structure(list(
    draws = coda::mcmc.list(lapply(in_draws, as_chain, K = K)),
    lr = pick(res$eta),
    iteration = pick(res$iteration),
    chain_ids = in_draws,
    partial = partial,
    last = last,
    status = status,
    stop_iter = res$stop_iter,
    kept = kept,
    collect_from = res$collect_from,
    clipped = res$clip_count,
    acceptance = acceptance_rates(res, settings, status),
    monitor = monitor_frame(res, model, settings, has_test = !is.null(settings$test)),
    diagnostics = diagnostics_frame(res, settings),
    state = chain_state(res, settings, rule, model, status),
    pars = keep,
    storage = settings$storage,
    moments = moments_of(res, model),
    expected_time = res$expected_seconds,
    rule = rule$label,
    model = model,
    settings = fit_settings(settings, lr, model),
    method = method,
    call = call,
    time = time,
    sampling_time = res$sampling_seconds
  ), class = "sgld_fit")
  # a rule's per-iteration trace (bbb(): the minibatch ELBO), read by R/vi.R
  if (identical(method, "vi")) fit$rule_trace <- pick(res$trace)
  # a failed model function is an error, raised by the caller with this fit
  if (!any(status == "failed")) warn_stopped(fit, settings$regular)
  fit
}

# MALA's acceptance rate per chain, over the iterations each chain ran.
acceptance_rates <- function(res, settings, status) {
  if (!settings$mala) return(NULL)
  res$accepted / pmax(1, ifelse(status == "done", settings$iter,
                                res$stop_iter - settings$t_offset))
}

# The settings a fit records: the run's, the step as given, and the starts on
# the user's scale.
fit_settings <- function(settings, lr, model) {
  init <- matrix(settings$init, settings$chains, model$d, byrow = TRUE)
  c(settings[c("iter", "burnin", "thin", "chains", "threads", "batch_size", "temperature")],
    list(replace = as.logical(settings$replace), lr = lr, init = to_user_scale(model, init)))
}

diagnostics_frame <- function(res, settings) {
  if (settings$diag_every == 0) return(NULL)
  engine_rows(res$diagnostics, res$diagnosed, engine_codes()$diagnostics,
              floor(settings$iter / settings$diag_every))
}

warn_stopped <- function(fit, regular = TRUE) {
  for (c in which(fit$status == "diverged")) {
    sgld_warn("diverged", sprintf(paste0(
      "chain %d diverged at iteration %s: the parameters or their gradient became ",
      "non-finite or left the model's range. The %s draws kept before it are returned. ",
      "Try a smaller learning rate (`lr`) or gradient clipping (`clip`)."),
      c, format(fit$stop_iter[c], scientific = FALSE), format(fit$kept[c], scientific = FALSE)))
  }
  hit <- which(fit$status == "interrupted")
  if (length(hit)) {
    at <- unique(fit$stop_iter[hit])
    sgld_warn("interrupted", sprintf("interrupted by the user at iteration%s %s of chain%s %s; returning the draws made so far.",
                    if (length(at) > 1) "s" else "", paste(format(at, scientific = FALSE), collapse = ", "),
                    if (length(hit) > 1) "s" else "", paste(hit, collapse = ", ")))
  }
  dropped <- setdiff(seq_along(fit$status), fit$chain_ids)
  if (length(dropped) || regular && length(unique(fit$kept[fit$chain_ids])) > 1)
    sgld_warn("partial_draws", sprintf(paste0("`draws` holds chain%s %s (%d draws each); the draws of chains ",
                           "that stopped early are in `partial`."),
                    if (length(fit$chain_ids) > 1) "s" else "",
                    paste(fit$chain_ids, collapse = ", "), ndraws(fit)))
}

ndraws <- function(fit) nrow(fit$draws[[1]])

# Does the fit hold posterior draws (rather than an optimiser's trajectory)?
is_sampler <- function(fit) !fit$method %in% c("sgd", "gd")

pooled <- function(fit) do.call(rbind, lapply(fit$draws, unclass))

# print() of a fit shows at most this many parameters
print_max_rows <- 30L

# The effective sample size of what was stored, as the run's checks measured
# it (R/warnings.R: convergence_check()), beside the plan of lr = "auto":
# the plan's ~2,000 effective draws are of every iteration after burn-in,
# and thinning keeps fewer.
print_stored_ess <- function(x) {
  conv <- x$checks$convergence
  if (is.null(conv) || !is.finite(conv$ess_min)) return(invisible())
  cat("Effective sample size of the stored draws: smallest ", format(round(conv$ess_min)),
      if (isTRUE(conv$thin > 1)) paste0(" (from every k-th draw, k = ", conv$thin, ")"),
      if (!is.null(x$auto$target_ess)) paste0(", planned ", x$auto$target_ess),
      if (is.finite(conv$rhat_max)) paste0("; largest R-hat ", format(round(conv$rhat_max, 3), nsmall = 3)),
      "\n", sep = "")
}

#' @export
print.sgld_fit <- function(x, digits = 4, ...) {
  s <- x$settings
  label <- if (is.null(x$rule)) toupper(x$method) else x$rule
  cat(label, " on ", class(x$model)[1], ": ", s$chains, " chain", if (s$chains > 1) "s",
      " x ", format(s$iter, big.mark = ",", scientific = FALSE), " iterations, batch size ", s$batch_size,
      if (is_sampler(x)) paste0(", temperature ", format(s$temperature)),
      "\n", sep = "")
  print_auto(x)  # what lr = "auto" chose (R/auto.R)
  if (!is.null(x$acceptance))
    cat("Acceptance rate: ", paste(format(x$acceptance, digits = 3), collapse = ", "),
        " (per chain)\n", sep = "")
  cat("Kept ", format(ndraws(x), big.mark = ","), " draws per chain (burn-in ",
      format(s$burnin, big.mark = ",", scientific = FALSE), ", thin ", s$thin, "); ", format(x$time, digits = 3), " s\n", sep = "")
  print_stored_ess(x)
  if (any(x$status != "done"))
    cat("Stopped early: ", paste0("chain ", seq_along(x$status), " ", x$status,
                                  collapse = ", "), "\n", sep = "")
  if (any(x$clipped > 0))
    cat("Gradient clipped in ", paste(format(x$clipped), collapse = ", "),
        " iterations (per chain)\n", sep = "")
  # print() computes no ESS or R-hat: it repeats what the run's checks found
  warn_convergence(x$checks$convergence)
  if (ndraws(x) > 0) {
    cat("\n")
    if (is_sampler(x)) {
      # no ESS or R-hat here: they cost far more than these columns
      probs <- c(0.025, 0.975)
      sm <- if (length(kept_indices(x))) draw_statistics(x, probs)
      if (!all_kept(x)) sm <- add_moment_rows(x, sm, probs)
      shown <- seq_len(min(nrow(sm), print_max_rows))
      print(sm[shown, c("mean", "sd", "2.5%", "97.5%"), drop = FALSE], digits = digits)
      if (nrow(sm) > print_max_rows)
        cat("... and ", format(nrow(sm) - print_max_rows, big.mark = ","),
            " more parameters: see summary(fit)$statistics\n", sep = "")
      if (!all_kept(x))
        cat("Draws stored for ", length(kept_indices(x)), " of ", x$model$d, " parameters",
            if (is.null(x$storage)) " (`pars`)", "; the others' means and sds are from ",
            "running moments.\n", sep = "")
      if (!is.null(x$storage)) cat("Draws: ", x$storage, ".\n", sep = "")
    } else {
      cat("Final iterate:\n")
      print(parameter_means(x), digits = digits)
    }
  }
  invisible(x)
}

#' Summaries of a fit
#'
#' Posterior means (plain and step-weighted), standard deviations, quantiles,
#' Monte Carlo standard errors of the means (`mcse`), effective sample sizes
#' (`n_eff`) and, for several chains (the default), the potential scale
#' reduction factor (`Rhat`), all over the kept draws of every chain; the
#' columns are named as rstanarm's.
#'
#' The plain mean is \eqn{\frac1K \sum_k h(w_k)}{1/K sum_k h(w_k)}; the step-weighted mean
#' \eqn{\sum_k \eta_k h(w_k) / \sum_k \eta_k}{sum_k eta_k h(w_k) / sum_k eta_k} weights each draw by its learning
#' rate, which is what a decaying schedule calls for (the two agree for a
#' constant one). ESS (`n_eff`) is [coda::effectiveSize()] summed over
#' chains, `mcse` is `sd / sqrt(n_eff)`; R-hat is
#' the point estimate of [coda::gelman.diag()]. Both come from coda's spectral
#' and variance estimates, whose cost grows with the chain's length: on chains
#' longer than `max_draws` draws they are computed from every k-th draw (k the
#' smallest interval that leaves at most `max_draws` per chain), and the summary
#' says so. The ESS is then that of the thinned draws: close to the ESS of all
#' draws when the chain's autocorrelation time is longer than k, at most k times
#' smaller when the draws are nearly independent. Means, sds and quantiles
#' always use every draw. `print()` of a fit shows means, sds and 95% intervals
#' and computes neither ESS nor R-hat.
#'
#' @param object,x An `sgld_fit`, or its summary for `print()`.
#' @param probs Quantiles to report.
#' @param max_draws Most draws per chain that ESS and R-hat are computed from.
#' @param digits Significant digits to print.
#' @param ... Not used.
#' @return `summary()` returns an object of class `summary.sgld_fit` whose
#'   `statistics` is a matrix with one row per parameter (also
#'   `coef(summary(fit))`), and whose `diagnostics_thin` is the interval k
#'   between the draws that ESS and R-hat used.
#' @export
summary.sgld_fit <- function(object, probs = c(0.025, 0.25, 0.5, 0.75, 0.975),
                             max_draws = 10000, ...) {
  check_dots_empty(...)
  check_count(max_draws, "max_draws", lower = 100)
  if (!is.numeric(probs) || !length(probs) || anyNA(probs) || any(probs < 0 | probs > 1))
    abort("`probs` must be probabilities between 0 and 1.")
  if (ndraws(object) == 0) abort("the fit has no kept draws to summarise.")
  K <- ndraws(object)
  k <- ceiling(K / max_draws)
  stats <- if (length(kept_indices(object))) kept_statistics(object, probs, k)
  # R-hat and ESS as the run's checks judged them (R/warnings.R), or judged
  # now where the run left them out for their cost
  convergence <- if (is_sampler(object) && object$method != "vi" &&
                     object$settings$temperature > 0) {
    if (is.null(object$checks$convergence)) convergence_check(object, bounded = FALSE)
    else {
      warn_convergence(object$checks$convergence)
      object$checks$convergence
    }
  }
  if (!all_kept(object)) stats <- add_moment_rows(object, stats, probs)
  stats <- rbind(stats, derived_statistics(object, probs, k, colnames(stats)))
  structure(list(statistics = stats, method = object$method, chains = length(object$draws),
                 draws = K, diagnostics_thin = k,
                 constant_lr = length(unique(as.vector(object$lr))) <= 1L,
                 convergence = convergence),
            class = "summary.sgld_fit")
}

# The summary's columns for the stored parameters: means, sds and quantiles
# over every kept draw; ESS and R-hat over every k-th.
kept_statistics <- function(object, probs, k) {
  stats <- draw_statistics(object, probs)
  if (ndraws(object) > 1) {
    d <- if (k > 1) thin_draws(object$draws, k) else object$draws
    n_eff <- ess(d)
    # the Monte Carlo standard error of the mean, as rstanarm's mcse column
    stats <- cbind(stats, mcse = stats[, "sd"] / sqrt(n_eff), n_eff = n_eff)
    if (length(object$draws) > 1) {
      stats <- cbind(stats, Rhat = psrf(d))
    }
  } else {
    stats <- cbind(stats, mcse = NA_real_, n_eff = NA_real_)
  }
  stats
}

# The summary's rows for the model's derived quantities (sigma of
# model_linear()), from their draws as for a stored parameter; none when the
# draws they are computed from were not stored.
derived_statistics <- function(object, probs, k, columns) {
  first <- model_derived(object$model, pooled(object)[seq_len(min(1L, ndraws(object))), ,
                                                      drop = FALSE])
  if (is.null(first)) return(NULL)
  derived <- object
  derived$draws <- coda::mcmc.list(lapply(object$draws, function(ch) {
    m <- unclass(ch)
    coda::mcmc(model_derived(object$model, m), start = stats::start(ch), thin = coda::thin(ch))
  }))
  stats <- kept_statistics(derived, probs, k)
  stats[, intersect(columns, colnames(stats)), drop = FALSE]
}

# Means (plain and step-weighted), sds and quantiles over every kept draw.
draw_statistics <- function(object, probs) {
  x <- pooled(object)
  w <- as.vector(object$lr)
  stats <- cbind(
    mean = colMeans(x),
    weighted_mean = colSums(x * w) / sum(w),
    sd = apply(x, 2, sd),
    t(apply(x, 2, quantile, probs = probs, names = FALSE))
  )
  if (ncol(x) == 1L) stats <- matrix(stats, 1L, dimnames = list(colnames(x), NULL))
  colnames(stats) <- c("mean", "weighted_mean", "sd", quantile_names(probs))
  stats
}

quantile_names <- function(probs) {
  paste0(format(100 * probs, trim = TRUE, drop0trailing = TRUE), "%")
}

# Every k-th draw of each chain, with coda's iteration labels kept right.
thin_draws <- function(draws, k) {
  coda::mcmc.list(lapply(draws, function(ch) {
    rows <- seq(1L, nrow(ch), by = k)
    coda::mcmc(unclass(ch)[rows, , drop = FALSE], start = stats::start(ch),
               thin = coda::thin(ch) * k)
  }))
}

# Parameters whose draws were not stored (`pars`) get their mean, step-weighted
# mean and sd from the running moments of the same kept iterations; their
# quantiles, ESS and R-hat need draws and are NA.
add_moment_rows <- function(object, stats, probs) {
  columns <- if (!is.null(stats)) colnames(stats)
             else c("mean", "weighted_mean", "sd", quantile_names(probs), "mcse", "n_eff",
                    if (length(object$draws) > 1 && ndraws(object) > 1) "Rhat")
  mom <- pooled_moments(object$moments, object$chain_ids)
  # moments of a transform that mixes the parameters (a multilevel model's
  # b = L z) are the sampler's coordinates', and named so
  sampler <- identical(object$moments$scale, "sampler")
  all <- matrix(NA_real_, object$model$d, length(columns),
                dimnames = list(if (sampler) object$model$sampler_names else object$model$names,
                                columns))
  all[, "mean"] <- mom$mean
  all[, "weighted_mean"] <- mom$weighted_mean
  all[, "sd"] <- mom$sd
  if (!is.null(stats)) all[kept_indices(object), ] <- stats
  all
}

# R-hat of each variable of an mcmc.list: the point estimate of
# coda::gelman.diag(x, autoburnin = FALSE, multivariate = FALSE), with its
# degrees-of-freedom correction, computed for all variables at once. coda
# forms the full covariance matrices of the variables first, which took 29 s
# for 2,000 parameters of two chains against 0.07 s here
# (bench/convergence-checks.R).
psrf <- function(x) {
  chains <- lapply(x, function(ch) as.matrix(unclass(ch)))
  m <- length(chains)
  n <- nrow(chains[[1]])
  if (m < 2 || n < 2) return(rep(NA_real_, ncol(chains[[1]])))
  xbar <- vapply(chains, colMeans, numeric(ncol(chains[[1]])))
  # the differences sweep() would take, without its aperm(): the same
  # numbers, 95 -> 62 us a chain of 1,000 x 5 draws
  s2 <- vapply(chains, function(ch) colSums((ch - rep(colMeans(ch), each = n))^2) / (n - 1),
               numeric(ncol(chains[[1]])))
  xbar <- matrix(xbar, ncol = m)
  s2 <- matrix(s2, ncol = m)
  # across chains, variable by variable (rows)
  row_cov <- function(a, b) rowSums((a - rowMeans(a)) * (b - rowMeans(b))) / (m - 1)
  w <- rowMeans(s2)
  b <- n * row_cov(xbar, xbar)
  muhat <- rowMeans(xbar)
  var_w <- row_cov(s2, s2) / m
  var_b <- 2 * b^2 / (m - 1)
  cov_wb <- (n / m) * (row_cov(s2, xbar^2) - 2 * muhat * row_cov(s2, xbar))
  V <- (n - 1) * w / n + (1 + 1 / m) * b / n
  var_V <- ((n - 1)^2 * var_w + (1 + 1 / m)^2 * var_b +
            2 * (n - 1) * (1 + 1 / m) * cov_wb) / n^2
  df_V <- 2 * V^2 / var_V
  df_adj <- (df_V + 3) / (df_V + 1)
  unname(sqrt(df_adj * ((n - 1) / n + (1 + 1 / m) * (1 / n) * (b / w))))
}

# coda's effective sample size per parameter; NA where its spectral fit fails
# (e.g. on finite but astronomically large draws of a chain that ran away)
ess <- function(draws) {
  chains <- if (coda::is.mcmc.list(draws)) draws else list(draws)
  N <- vapply(chains, NROW, 1)
  total <- 0
  if (length(chains) > 1 && all(N == N[1])) {
    # chains of one length side by side in one call: every column's numbers
    # are its own, and the R overhead is paid once (the effective sample
    # sizes were a third of the default call on datasets::warpbreaks)
    k <- NCOL(chains[[1]])
    total <- rowSums(matrix(ess_ar(do.call(cbind, lapply(chains, function(ch)
      as.matrix(unclass(ch))))), k))
  } else for (ch in chains) total <- total + ess_ar(as.matrix(unclass(ch)))
  # what the fit for all variables at once leaves out: coda's, variable by variable
  vapply(seq_along(total), function(j) {
    if (!is.na(total[j])) return(total[j])
    tryCatch(unname(coda::effectiveSize(draws[, j, drop = TRUE])), error = function(e) NA_real_)
  }, numeric(1))
}

# coda::effectiveSize() of each column of one chain's draws, computed as coda
# does (spectrum0.ar(): the spectral density at 0 of an autoregression fitted
# by Yule-Walker, its order chosen by AIC up to 10 log10 N, as ar() does;
# 0 where the draws are a straight line), in C (src/ess.c): the
# autocovariances and Durbin-Levinson's recursion column by column.
# coda fits each variable of each chain through lm() and ar(), whose R
# overhead was a quarter of the default call's time on MASS::quine (28 of
# 120 ms, 8 parameters x 4 chains); the same recursion over all columns at
# once in R still took a third of the call on datasets::warpbreaks (its
# FFTs and R calls; bench/imh.md). The same numbers come out to rounding
# (tests/testthat/test-convergence.R). NA for a column it leaves to coda
# (non-finite draws, a tie in AIC).
ess_ar <- function(x) {
  storage.mode(x) <- "double"
  .Call(C_sgld_ess_ar, x)
}

#' @rdname summary.sgld_fit
#' @export
print.summary.sgld_fit <- function(x, digits = 3, ...) {
  cat(format(x$draws, big.mark = ","), " draws x ", x$chains, " chain", if (x$chains > 1) "s",
      "\n", sep = "")
  s <- x$statistics
  # the step-weighted mean only when it differs from the plain one
  if (isTRUE(x$constant_lr)) s <- s[, colnames(s) != "weighted_mean", drop = FALSE]
  out <- format_statistics(s, digits)
  # narrow enough for the console: drop inner quantiles before wrapping
  quant <- grep("%$", colnames(out))
  while (table_width(out) > getOption("width") && length(quant) > 2) {
    inner <- quant[-c(1, length(quant))]
    drop <- inner[which.min(abs(as.numeric(sub("%", "", colnames(out)[inner])) - 50))]
    if (colnames(out)[drop] == "50%" && length(inner) > 1) drop <- setdiff(inner, drop)[1]
    out <- out[, -drop, drop = FALSE]
    quant <- grep("%$", colnames(out))
  }
  print(out, quote = FALSE, right = TRUE)
  if (isTRUE(x$diagnostics_thin > 1))
    cat("ESS and R-hat from every k-th draw, k = ", x$diagnostics_thin,
        " (see ?summary.sgld_fit)\n", sep = "")
  if (!isTRUE(x$constant_lr)) cat("weighted_mean: each draw weighted by its learning rate\n")
  invisible(x)
}

format_statistics <- function(s, digits) {
  out <- matrix("", nrow(s), ncol(s), dimnames = dimnames(s))
  for (j in seq_len(ncol(s))) {
    v <- s[, j]
    out[, j] <- if (colnames(s)[j] == "n_eff") format(round(v), big.mark = "")
                else if (colnames(s)[j] == "Rhat") format(round(v, 3), nsmall = 3)
                else formatC(v, digits = digits, format = "fg")
  }
  out
}

table_width <- function(out) {
  max(nchar(c("", rownames(out)))) +
    sum(pmax(nchar(colnames(out)), apply(nchar(out), 2, max)) + 1)
}

#' Point estimates and covariance from a fit
#'
#' For a sampler (`sgld()`), `coef()` is the posterior mean over all kept draws
#' (step-weighted with `weighted = TRUE`); for an optimiser (`sgd()`, `gd()`) it
#' is the final iterate, averaged over chains. rstanarm's `coef()` is the
#' posterior median; here it is the mean, which the running moments give
#' also for parameters whose draws were not stored (`pars`) and which a
#' decaying learning rate asks to weight; the medians are `summary(fit)`'s
#' `50%` column. As rstanarm's, for the regressions ([model_linear()],
#' [model_logistic()], [model_poisson()], [model_negbin()]) `coef()` holds
#' one entry per column of the model matrix, so `X %*% coef(fit)` is the
#' linear predictor: the auxiliary parameter (`sigma2` of the linear model,
#' `phi` of the negative binomial) is left out; [sigma()] gives the
#' residual sd. For the other models it holds every parameter. `vcov()` is
#' the covariance of the pooled draws of the same parameters.
#' @param object An `sgld_fit`.
#' @param weighted Weight the draws by their learning rate?
#' @param ... Not used.
#' @return A named vector (`coef`) or matrix (`vcov`), on the user's scale.
#' @export
coef.sgld_fit <- function(object, weighted = FALSE, ...) {
  check_dots_empty(...)
  check_flag(weighted, "weighted")
  # a model's own (a multilevel model: each group's coefficients, as rstanarm's)
  own <- model_fit_coef(object$model, object)
  if (!is.null(own)) return(own)
  parameter_means(object, weighted)[coefficient_indices(object$model)]
}

# The posterior mean of every parameter (the final iterate of an optimiser).
parameter_means <- function(object, weighted = FALSE) {
  if (object$method %in% c("sgd", "gd")) return(colMeans(object$last))
  if (ndraws(object) == 0) abort("the fit has no kept draws.")
  if (!all_kept(object)) {
    mom <- pooled_moments(object$moments, object$chain_ids)
    return(if (weighted) mom$weighted_mean else mom$mean)
  }
  x <- pooled(object)
  if (weighted) {
    w <- as.vector(object$lr)
    return(colSums(x * w) / sum(w))
  }
  colMeans(x)
}

# The regression coefficients (the model matrix's columns, without an
# auxiliary parameter), or every parameter of another model.
coefficient_indices <- function(model) {
  if (isTRUE(model_capabilities(model)$regression) && !is.null(model$p)) seq_len(model$p)
  else seq_len(model$d)
}

#' @rdname coef.sgld_fit
#' @export
vcov.sgld_fit <- function(object, ...) {
  require_all_draws(object, "vcov()")
  stats::cov(pooled(object)[, coefficient_indices(object$model), drop = FALSE])
}

#' Draws as matrices, arrays and coda objects
#'
#' `as.matrix()` stacks the kept draws of all chains (one row per draw);
#' `as.array()` gives iterations x chains x parameters, the layout of
#' bayesplot and rstan; `as.mcmc.list()` returns the chains for coda, and
#' `as.mcmc()` the single chain of a one-chain fit.
#'
#' @param x An `sgld_fit`.
#' @param scale `"user"` for the model's natural parameters (e.g. `sigma2`),
#'   `"sampler"` for the unconstrained ones the sampler moved (e.g. `log_sigma2`).
#' @param ... Not used.
#' @export
as.matrix.sgld_fit <- function(x, scale = c("user", "sampler"), ...) {
  scale <- check_choice(scale, c("user", "sampler"), "scale")
  m <- pooled(x)
  if (scale == "sampler") {
    m <- kept_to_sampler_scale(x$model, m, x$pars)
    colnames(m) <- x$model$sampler_names[kept_indices(x)]
    return(m)
  }
  with_derived(x$model, m)
}

# The user's draws with the model's derived quantities appended (sigma for
# model_linear(), see model_derived()).
with_derived <- function(model, m) {
  extra <- model_derived(model, m)
  if (is.null(extra)) m else cbind(m, extra)
}

#' @rdname as.matrix.sgld_fit
#' @export
as.array.sgld_fit <- function(x, scale = c("user", "sampler"), ...) {
  scale <- check_choice(scale, c("user", "sampler"), "scale")
  K <- ndraws(x)
  chains <- length(x$draws)
  nm <- (if (scale == "user") x$model$names else x$model$sampler_names)[kept_indices(x)]
  per_chain <- lapply(x$draws, function(ch) {
    m <- unclass(ch)
    attr(m, "mcpar") <- NULL
    if (scale == "sampler") kept_to_sampler_scale(x$model, m, x$pars)
    else with_derived(x$model, m)
  })
  if (scale == "user" && chains) nm <- colnames(per_chain[[1]])
  a <- array(NA_real_, c(K, chains, length(nm)),
             dimnames = list(iteration = NULL, chain = paste0("chain:", seq_len(chains)),
                             parameter = nm))
  for (c in seq_len(chains)) a[, c, ] <- per_chain[[c]]
  a
}

#' @rdname as.matrix.sgld_fit
#' @method as.mcmc.list sgld_fit
#' @export
as.mcmc.list.sgld_fit <- function(x, ...) {
  require_stored_draws(x, "as.mcmc.list()")
  x$draws
}

#' @rdname as.matrix.sgld_fit
#' @method as.mcmc sgld_fit
#' @export
as.mcmc.sgld_fit <- function(x, ...) {
  if (length(x$draws) > 1)
    abort("the fit has ", length(x$draws), " chains; use as.mcmc.list() to keep them apart.")
  require_stored_draws(x, "as.mcmc()")
  x$draws[[1]]
}

#' Trace and density plots
#'
#' Plots each parameter's trace and density for every chain, by coda's
#' [coda::plot.mcmc()]. A screen shows a few thousand points across, so long
#' chains are thinned for display to at most `max_draws` draws each (every
#' k-th draw, k as small as that allows); the traces keep their iteration
#' axis.
#' @param x An `sgld_fit`.
#' @param max_draws Most draws per chain to plot; `Inf` for all.
#' @param ... Passed to [coda::plot.mcmc.list()].
#' @return `x`, invisibly.
#' @export
plot.sgld_fit <- function(x, max_draws = 5000, ...) {
  if (ndraws(x) == 0) abort("the fit has no kept draws to plot.")
  require_stored_draws(x, "plot()")
  if (!identical(max_draws, Inf)) check_count(max_draws, "max_draws", lower = 10)
  k <- ceiling(ndraws(x) / max_draws)
  plot(if (k > 1) thin_draws(x$draws, k) else x$draws, ...)
  invisible(x)
}
