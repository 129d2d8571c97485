#' When to start keeping draws, and which to keep
#'
#' Besides a number of iterations, `burnin` in [sgld()] can be
#' `sampling_threshold(alpha)`: keep draws from the first check at which
#' Welling and Teh's sampling threshold \eqn{\alpha_t}{alpha_t} (see
#' [diagnostics_every()]) is at most `alpha`, i.e. once the injected noise
#' dominates the stochastic-gradient noise and the chain has left its
#' optimisation phase. \eqn{\alpha_t}{alpha_t} is checked every `every` iterations.
#'
#' Besides a number, `thin` can be `mixing_distance(D0)`: keep a draw whenever
#' the learning rates summed since the last kept draw reach `D0`, so that kept
#' draws are about equally far apart in the chain's own time even as the
#' learning rate shrinks (Welling and Teh, section 5.3.1).
#'
#' With either, chains keep different numbers of draws at irregular
#' iterations: `fit$iteration` holds the iteration of every kept draw, and
#' coda's `mcpar` counts kept draws (1, 2, ...) rather than iterations.
#'
#' @param alpha Threshold on \eqn{\alpha_t}{alpha_t}, e.g. 0.1 as in the paper.
#' @param every Check every this many iterations.
#' @param D0 Summed learning rate between kept draws.
#' @return An object for the `burnin` or `thin` argument of [sgld()].
#' @examples
#' sampling_threshold(0.1, every = 100)
#' mixing_distance(1e-3)
#' @export
sampling_threshold <- function(alpha = 0.1, every = 100) {
  check_number(alpha, "alpha", lower = 0, lower_open = TRUE)
  check_count(every, "every", lower = 1)
  structure(list(alpha = alpha, every = every), class = "sgld_threshold")
}

#' @rdname sampling_threshold
#' @export
mixing_distance <- function(D0) {
  check_number(D0, "D0", lower = 0, lower_open = TRUE)
  structure(list(D0 = D0), class = "sgld_distance")
}

#' Welling and Teh's diagnostics during a run
#'
#' Every `every` iterations, at the current state, the engine records (with a
#' random stream of its own, so the draws are the same with and without):
#' \describe{
#'   \item{alpha}{the sampling threshold
#'     \eqn{\alpha_t = \eta_t n^2 \lambda_{max}(V_s) / (2m)}{alpha_t = eta_t n^2 lambda_max(V_s) / (2m)}, where \eqn{V_s}{V_s} is
#'     the covariance over the data of the per-item scores
#'     \eqn{\nabla \log f(z_i \mid w) + \nabla \log f(w) / n}{grad log f(z_i | w) + grad log f(w) / n}. The chain samples
#'     rather than optimises once \eqn{\alpha_t \ll 1}{alpha_t << 1}.}
#'   \item{var_injected, var_gradient}{the variance of the injected noise per
#'     coordinate, \eqn{2\eta_t\tau}{2 eta_t tau}, and of the stochastic-gradient part of the
#'     step in its noisiest direction, \eqn{\eta_t^2 (n^2/m) \lambda_{max}(V_s)}{eta_t^2 (n^2/m) lambda_max(V_s)}
#'     (their ratio is \eqn{\alpha_t}{alpha_t} at \eqn{\tau = 1}{tau = 1}).}
#'   \item{rejection}{the Metropolis-Hastings rejection probability of a
#'     full-data Langevin proposal \eqn{N(w + \eta_t \nabla U(w), 2\eta_t\tau I)}{N(w + eta_t grad U(w), 2 eta_t tau I)}
#'     from the current state, for the target \eqn{\exp(U/\tau)}{exp(U/tau)} (\eqn{\tau = 1}{tau = 1}
#'     for [sgd()]).}
#' }
#' Each evaluation reads the data about three times (scores and two full
#' gradients); with more than `sample` items the scores are taken over a random
#' subset of that size. With `diagnostics = NULL` (the default) none of this
#' is computed. With a preconditioner `P` ([psgld()], `sgld(precondition = )`,
#' the natural gradient of [model_ica()]) the threshold and `var_gradient` are
#' taken in the preconditioned coordinates, with
#' \eqn{\lambda_{max}(T^\top V_s T)}{lambda_max(T' V_s T)} for a factor
#' \eqn{T}{T} of `P` (Welling and Teh, section 5.3), while `var_injected` stays
#' \eqn{2\eta_t\tau}{2 eta_t tau}. The rejection probability is that of the
#' rule's own full-data proposal for rules without kept state (plain SGLD, a
#' fixed preconditioner, the natural gradient), and of the plain Langevin
#' proposal for the others (pSGLD, [sghmc()]). Control variates change none of
#' the three: they describe the rule at the same state and learning rate.
#' @param every Evaluate every this many iterations.
#' @param sample Largest number of items for the score covariance.
#' @return An object for the `diagnostics` argument of [sgld()] and [sgd()];
#'   the fit's `diagnostics` is a data frame with columns `chain`, `iteration`,
#'   `lr`, `alpha`, `var_injected`, `var_gradient` and `rejection`.
#' @examples
#' x <- mixture_data(100)
#' fit <- sgld(model_mixture(x), lr = lr_range(0.005, 5e-5), batch_size = 1,
#'             iter = 20000, diagnostics = diagnostics_every(1000))
#' fit$diagnostics
#' @export
diagnostics_every <- function(every, sample = 10000) {
  check_count(every, "every", lower = 1)
  check_count(sample, "sample", lower = 2)
  structure(list(every = every, sample = sample), class = "sgld_diagnostics")
}

# The collection policy and diagnostics settings, and how many rows of draws
# each chain may need.
# `thin_auto`: the user gave no `thin`, so keep about default_draws a chain
# (R/pars.R), or every `thin`-th when that is fewer.
resolve_collection <- function(burnin, thin, diagnostics, iter, schedule, thin_auto = FALSE) {
  # the modes by their names in src/codes.c
  out <- list(burnin = 0, burnin_mode = "count", alpha0 = 0, thin = 1, thin_mode = "count",
              distance = 0, diag_every = 0, diag_sample = 10000)
  if (!is.null(diagnostics)) {
    if (!inherits(diagnostics, "sgld_diagnostics"))
      abort("`diagnostics` must be NULL or made by diagnostics_every(), not ",
            describe(diagnostics), ".")
    if (diagnostics$every > iter)
      abort("`diagnostics`: `every` (", diagnostics$every, ") must be at most `iter` (", iter, ").")
    out$diag_every <- diagnostics$every
    out$diag_sample <- diagnostics$sample
  }
  if (inherits(burnin, "sgld_threshold")) {
    out$burnin_mode <- "threshold"
    out$alpha0 <- burnin$alpha
    if (out$diag_every == 0) out$diag_every <- burnin$every
    else if (out$diag_every != burnin$every)
      abort("`burnin`: sampling_threshold(every = ", burnin$every, ") and `diagnostics` ",
            "(every = ", out$diag_every, ") must check at the same iterations.")
    if (out$diag_every > iter) abort("`burnin`: `every` must be at most `iter`.")
  } else {
    check_count(burnin, "burnin", lower = 0)
    if (burnin >= iter)
      abort("`burnin` must be smaller than `iter` (", burnin, " >= ", iter, ").")
    out$burnin <- burnin
  }
  phases <- sampling_phases(schedule)
  if (inherits(thin, "sgld_distance")) {
    out$thin_mode <- "distance"
    out$distance <- thin$D0
    capacity <- floor(lr_total(schedule, iter) / thin$D0) + 1
  } else {
    check_count(thin, "thin", lower = 1)
    span <- iter - out$burnin
    if (thin_auto) {
      thin <- max(thin, floor(span / default_draws))
      if (!is.null(phases)) thin <- min(thin, phases$sampling)
    }
    out$thin <- thin
    out$span <- span
    if (thin > span)
      abort("`thin` must be at most iter - burnin = ", span, " so that a draw is kept.")
    capacity <- floor(span / thin)
    if (!is.null(phases)) {
      if (thin > phases$sampling)
        abort("`thin` must be at most the length of a cycle's sampling part (",
              phases$sampling, " iterations of lr_cyclical()'s ", phases$cycle,
              ") so that a draw is kept.")
      # thinning counts afresh in each sampling part, and the iterations
      # from burn-in to the end touch at most this many of them
      touched <- ceiling(span / phases$cycle) + 1
      capacity <- min(capacity, touched * floor(phases$sampling / thin))
    }
  }
  out$capacity <- min(capacity, floor((iter - out$burnin) / out$thin))
  out$regular <- out$burnin_mode == "count" && out$thin_mode == "count" && is.null(phases)
  out
}

# A schedule whose cycles explore before they sample (lr_cyclical(), resolved):
# the cycle's length and the number of its iterations that sample, those
# whose position r = j / L (j = 0, ..., L - 1) is at least b, as the engine
# decides (src/schedule.c); NULL for the other schedules, which sample
# throughout.
sampling_phases <- function(schedule) {
  if (schedule$type != "cyclical") return(NULL)
  L <- schedule$t1
  j <- ceiling(schedule$b * L)
  while (j > 0 && (j - 1) / L >= schedule$b) j <- j - 1
  while (j < L && j / L < schedule$b) j <- j + 1
  list(cycle = L, sampling = L - j)
}
