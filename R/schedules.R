#' Learning-rate schedules
#'
#' The learning rate \eqn{\eta_t}{eta_t} of iteration \eqn{t = 1, 2, \dots}{t = 1, 2, ...} (see
#' [sgld-package] for the update it scales). Wherever a schedule is expected, a
#' bare positive number means `lr_constant()` of it.
#'
#' * `lr_constant(eta)`: \eqn{\eta_t = \eta}{eta_t = eta}.
#' * `lr_poly(a, b, gamma)`: \eqn{\eta_t = a (b + t)^{-\gamma}}{eta_t = a (b + t)^-gamma}, the schedule of
#'   Welling and Teh. With \eqn{0.5 < \gamma \le 1}{0.5 < gamma <= 1} it satisfies the
#'   Robbins-Monro conditions \eqn{\sum \eta_t = \infty}{sum eta_t = Inf},
#'   \eqn{\sum \eta_t^2 < \infty}{sum eta_t^2 < Inf}; other values give a warning.
#' * `lr_range(start, end, gamma)`: the polynomial schedule that decays from
#'   `start` at the first iteration to `end` at the last one (the run's `iter`),
#'   as in "step sizes decaying from 0.01 to 0.0001". With
#'   \eqn{r = (start/end)^{1/\gamma}}{r = (start/end)^(1/gamma)} it uses \eqn{b = (T - r)/(r - 1)}{b = (T - r)/(r - 1)} and
#'   \eqn{a = start\,(b + 1)^\gamma}{a = start (b + 1)^gamma}.
#' * `lr_piecewise(C0, T0, T1, s)`: \eqn{C_0}{C_0} up to iteration \eqn{T_0}{T_0}, then
#'   \eqn{C_0 (t - T_0)^{-s}}{C_0 (t - T_0)^-s} up to \eqn{T_1}{T_1}, then constant at its value at
#'   \eqn{T_1}{T_1} (the computer practical uses \eqn{C_0 = 10^{-6}}{C_0 = 10^-6}, \eqn{s = 0.51}{s = 0.51},
#'   \eqn{T_0 = 0.3\,T}{T_0 = 0.3 T}, \eqn{T_1 = 0.6\,T}{T_1 = 0.6 T}).
#'
#' * `lr_exp(start, end)`: exponential decay from `start` at the first
#'   iteration to `end` at the last, \eqn{\eta_t = start\,(end/start)^{(t-1)/(T-1)}}{eta_t = start (end/start)^((t-1)/(T-1))}
#'   (Welling and Teh's Figure 2, right, from \eqn{10^{-2}}{10^-2} to \eqn{10^{-8}}{10^-8} in
#'   their \eqn{\epsilon}{epsilon}). It does not satisfy the Robbins-Monro conditions;
#'   it is for exploring step sizes.
#'
#' * `lr_cyclical(a, cycles, beta, explore)`: the cyclical cosine schedule of Zhang
#'   et al. (2020). The run's \eqn{T}{T} iterations are cut into `cycles`
#'   cycles of \eqn{L = \lceil T/M \rceil}{L = ceiling(T/M)} iterations
#'   (\eqn{M}{M} = `cycles`; the last cycle is shorter when \eqn{M}{M} does not
#'   divide \eqn{T}{T}). With
#'   \eqn{r_t = \mathrm{mod}(t - 1, L)/L}{r_t = mod(t - 1, L) / L}, how far
#'   iteration \eqn{t}{t} is into its cycle,
#'   \eqn{\eta_t = \frac{a}{2}\left(\cos(\pi r_t) + 1\right)}{eta_t = (a/2) (cos(pi r_t) + 1)}:
#'   each cycle starts at \eqn{a}{a} and falls to nearly 0. The first part of
#'   each cycle, \eqn{r_t < \beta}{r_t < beta}, explores: large steps move the
#'   chain to another region of the posterior, by optimisation (`explore =
#'   "optimize"`, Zhang et al.'s algorithm: no noise is injected, as if the
#'   temperature were 0, so [sgld()] takes SGD steps, [sghmc()] SGD with
#'   momentum steps and [psgld()] RMSprop steps) or by sampling at the run's
#'   temperature (`"sample"`). The rest of each cycle,
#'   \eqn{r_t \ge \beta}{r_t >= beta}, samples at the run's temperature.
#'   Draws are kept only in the sampling parts: after `burnin`, `thin` counts the iterations of each
#'   sampling part from its start (so `thin` = 10 in a sampling part of 30
#'   iterations keeps its 10th, 20th and 30th), and `mixing_distance()` sums the
#'   learning rates from its start. [sgld()]'s default `burnin` (half the
#'   run) still applies: `burnin = 0` keeps draws from every cycle. Averaging
#'   predictions over the draws of several cycles can average over several
#'   modes of the posterior. The draws are then at
#'   irregular iterations: `fit$iteration` says where each was taken (see
#'   [sampling_threshold()]). A continued run (`init = fit`) carries on the
#'   cycles of its own length from the iteration where the first run stopped.
#'
#' `floor` keeps a decaying schedule from going below a critical level: it
#' decreases, then holds.
#'
#' Note that Welling and Teh's step size \eqn{\epsilon_t}{epsilon_t} is \eqn{2 \eta_t}{2 eta_t}.
#'
#' @param eta A positive learning rate.
#' @param a,b,gamma Scale, offset and exponent of the polynomial decay; for
#'   `lr_cyclical()`, `a` is the learning rate at the start of each cycle.
#' @param start,end Learning rates at the first and at the last iteration,
#'   `start > end > 0`.
#' @param C0,T0,T1,s Level, end of the constant phase, end of the decay, and
#'   exponent of the piecewise schedule (iteration counts for `T0 < T1`).
#' @param cycles The number of cycles \eqn{M}{M}, a whole number from 1 (at
#'   most the run's `iter`).
#' @param beta The fraction of each cycle that explores, in \eqn{[0, 1)}{[0, 1)}:
#'   0 samples, and keeps draws, in the whole of every cycle.
#' @param explore How the exploring part of each cycle moves: `"optimize"`
#'   (no injected noise) or `"sample"` (at the run's temperature). [mala()]
#'   needs `"sample"`.
#' @param floor A lower bound on the learning rate, 0 for none.
#' @return An object of class `sgld_lr`.
#' @references Zhang, R., Li, C., Zhang, J., Chen, C. and Wilson, A. G. (2020).
#'   Cyclical stochastic gradient MCMC for Bayesian deep learning. ICLR.
#'   <https://openreview.net/forum?id=rkeS1RVtPS>
#' @examples
#' lr_constant(1e-5)
#' lr_poly(a = 0.01, b = 1, gamma = 0.55)
#' lr_range(start = 0.01, end = 1e-4)
#' lr_piecewise(C0 = 1e-6, T0 = 3000, T1 = 6000)
#' lr_cyclical(a = 1e-3, cycles = 4, beta = 0.8)
#' plot(lr_values(lr_cyclical(1e-3, cycles = 4), 1:1000), type = "l",
#'      xlab = "iteration", ylab = "learning rate")
#' @name schedules
NULL

new_lr <- function(type, ...) structure(list(type = type, ...), class = "sgld_lr")

#' @rdname schedules
#' @export
lr_constant <- function(eta) {
  check_number(eta, "eta", lower = 0, lower_open = TRUE)
  new_lr("constant", eta = eta)
}

#' @rdname schedules
#' @export
lr_poly <- function(a, b = 0, gamma = 0.55, floor = 0) {
  check_number(a, "a", lower = 0, lower_open = TRUE)
  check_number(b, "b", lower = 0)
  check_gamma(gamma)
  check_number(floor, "floor", lower = 0)
  new_lr("poly", a = a, b = b, gamma = gamma, floor = floor)
}

#' @rdname schedules
#' @export
lr_range <- function(start, end, gamma = 0.55, floor = 0) {
  check_number(start, "start", lower = 0, lower_open = TRUE)
  check_number(end, "end", lower = 0, lower_open = TRUE)
  if (end >= start) abort("`end` must be smaller than `start` (", end, " >= ", start, ").")
  check_gamma(gamma)
  check_number(floor, "floor", lower = 0)
  new_lr("range", start = start, end = end, gamma = gamma, floor = floor)
}

#' @rdname schedules
#' @export
lr_exp <- function(start, end) {
  check_number(start, "start", lower = 0, lower_open = TRUE)
  check_number(end, "end", lower = 0, lower_open = TRUE)
  if (end >= start) abort("`end` must be smaller than `start` (", end, " >= ", start, ").")
  new_lr("exp", start = start, end = end, floor = 0)
}

#' @rdname schedules
#' @export
lr_piecewise <- function(C0, T0, T1, s = 0.51, floor = 0) {
  check_number(C0, "C0", lower = 0, lower_open = TRUE)
  check_count(T0, "T0", lower = 0)
  check_count(T1, "T1", lower = 1)
  if (T1 <= T0) abort("`T1` must be greater than `T0` (", T1, " <= ", T0, ").")
  check_number(s, "s", lower = 0, lower_open = TRUE)
  check_number(floor, "floor", lower = 0)
  new_lr("piecewise", C0 = C0, T0 = T0, T1 = T1, s = s, floor = floor)
}

#' @rdname schedules
#' @export
lr_cyclical <- function(a, cycles, beta = 0.8, explore = c("optimize", "sample")) {
  check_number(a, "a", lower = 0, lower_open = TRUE)
  check_count(cycles, "cycles", lower = 1)
  check_number(beta, "beta", lower = 0)
  if (beta >= 1) abort("`beta` must be smaller than 1 (the fraction of each cycle that ",
                       "explores), not ", beta, ".")
  explore <- check_choice(explore, c("optimize", "sample"), "explore")
  new_lr("cyclical", a = a, cycles = cycles, beta = beta, explore = explore, floor = 0)
}

check_gamma <- function(gamma) {
  check_number(gamma, "gamma", lower = 0, lower_open = TRUE)
  if (gamma <= 0.5 || gamma > 1)
    sgld_warn("schedule", "`gamma` = ", gamma, " is outside (0.5, 1]: the schedule does not satisfy ",
            "the Robbins-Monro conditions.")
  invisible(gamma)
}

#' @export
print.sgld_lr <- function(x, ...) {
  txt <- switch(x$type,
    constant = sprintf("constant: eta = %g", x$eta),
    poly = sprintf("polynomial: eta_t = %g (%g + t)^-%g", x$a, x$b, x$gamma),
    range = sprintf("polynomial from %g at t = 1 to %g at the last iteration, gamma = %g",
                    x$start, x$end, x$gamma),
    piecewise = sprintf("piecewise: %g up to t = %g, then %g (t - %g)^-%g up to t = %g",
                        x$C0, x$T0, x$C0, x$T0, x$s, x$T1),
    exp = sprintf("exponential from %g at t = 1 to %g at the last iteration", x$start, x$end),
    cyclical = sprintf("cyclical cosine from %g, %g cycle%s, the first %g of each exploring (%s)",
                       x$a, x$cycles, if (x$cycles == 1) "" else "s", x$beta,
                       if (x$explore == "optimize") "optimising" else "sampling"))
  if (!is.null(x$floor) && x$floor > 0) txt <- paste0(txt, ", floor ", format(x$floor))
  cat("Learning-rate schedule, ", txt, "\n", sep = "")
  invisible(x)
}

as_lr <- function(lr) {
  if (inherits(lr, "sgld_lr")) return(lr)
  if (is_number(lr) && is.numeric(lr)) {
    if (!is.finite(lr) || lr <= 0)
      abort("`lr` must be a positive finite learning rate or a schedule such as ",
            "lr_poly(), not ", describe(lr), ".")
    return(lr_constant(lr))
  }
  abort("`lr` must be a positive number or a schedule made by lr_constant(), lr_poly(), ",
        "lr_range(), lr_piecewise(), lr_exp() or lr_cyclical(), not ", describe(lr), ".")
}

# The shapes the C engine knows, by the names in src/codes.c (constant,
# polynomial, piecewise, exponential, cyclical): lr_range() is a polynomial
# one. A cyclical schedule's cycle length t1 = ceiling(iter / cycles), its
# exploring fraction b and its exploring temperature gamma (relative to the
# run's: 0 optimises, 1 samples) are read by src/schedule.c.
resolve_lr <- function(lr, iter) {
  out <- list(type = "constant", a = 0, b = 0, gamma = 0, t0 = 0, t1 = 0, floor = 0)
  switch(lr$type,
    constant = {
      out$a <- lr$eta
    },
    poly = {
      out[c("type", "a", "b", "gamma", "floor")] <- list("poly", lr$a, lr$b, lr$gamma, lr$floor)
    },
    range = {
      if (iter < 2) abort("`lr`: lr_range() needs at least 2 iterations.")
      r <- (lr$start / lr$end)^(1 / lr$gamma)
      b <- (iter - r) / (r - 1)
      out[c("type", "a", "b", "gamma", "floor")] <-
        list("poly", lr$start * (b + 1)^lr$gamma, b, lr$gamma, lr$floor)
    },
    piecewise = {
      out[c("type", "a", "gamma", "t0", "t1", "floor")] <-
        list("piecewise", lr$C0, lr$s, lr$T0, lr$T1, lr$floor)
    },
    exp = {
      out[c("type", "a", "b", "t1")] <- list("exp", lr$start, lr$end / lr$start, iter)
    },
    cyclical = {
      if (lr$cycles > iter)
        abort("`lr`: lr_cyclical() with `cycles` = ", lr$cycles, " needs at least as many ",
              "iterations; the run has `iter` = ", iter, ".")
      out[c("type", "a", "b", "gamma", "t1")] <-
        list("cyclical", lr$a, lr$beta, as.double(lr$explore == "sample"), ceiling(iter / lr$cycles))
    },
    # a schedule already resolved for a longer run that is executed in parts
    # (bbb() between its ELBO estimates): each part keeps the whole run's shape
    resolved = return(lr$schedule),
    abort("`lr` has an unknown schedule type."))
  out
}

#' Learning rates of a schedule
#'
#' The learning rate \eqn{\eta_t}{eta_t} a schedule gives at iterations `t`, as the
#' engine computes it (useful to plot a schedule, or to convert between
#' conventions: Welling and Teh's \eqn{\epsilon_t = 2\eta_t}{epsilon_t = 2 eta_t}).
#' @param lr A schedule or a positive number.
#' @param t Iterations (whole numbers from 1).
#' @param iter The run's length, which [lr_range()] needs; defaults to `max(t)`.
#' @return A numeric vector as long as `t`.
#' @examples
#' lr_values(lr_range(0.005, 5e-5), c(1, 5000, 10000))
#' @export
lr_values <- function(lr, t, iter = max(t)) {
  lr <- as_lr(lr)
  if (!is.numeric(t) || any(!is.finite(t)) || any(t < 1) || any(t != round(t)))
    abort("`t` must be whole numbers from 1.")
  check_count(iter, "iter", lower = 1)
  .Call(C_sgld_schedule_values, resolve_lr(lr, iter), as.double(t), FALSE)
}

lr_total <- function(schedule, iter) .Call(C_sgld_schedule_values, schedule, as.double(iter), TRUE)
