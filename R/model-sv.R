#' Stochastic volatility models
#'
#' A latent log-volatility for every time point and a few global parameters,
#' in two variants (`type`):
#'
#' * `"ar1"`, the model of the \pkg{stochvol} package:
#'   \eqn{y_t = e^{h_t/2}\varepsilon_t}{y[t] = exp(h[t]/2) eps[t]},
#'   \eqn{h_t = \mu + \phi(h_{t-1} - \mu) + \sigma\eta_t}{h[t] = mu + phi (h[t-1] - mu) + sigma eta[t]},
#'   \eqn{h_1 \sim N(\mu, \sigma^2/(1-\phi^2))}{h[1] ~ N(mu, sigma^2 / (1 - phi^2))},
#'   \eqn{\eta_t \sim N(0, 1)}{eta[t] ~ N(0, 1)} and \eqn{\varepsilon_t}{eps[t]}
#'   standard normal (`errors = "normal"`) or a Student t with \eqn{\nu > 2}{nu > 2}
#'   degrees of freedom scaled to variance 1 (`errors = "t"`). Priors, as
#'   stochvol's defaults: \eqn{\mu \sim N(}{mu ~ N(}`mu_mean`, `mu_sd`\eqn{^2)}{^2)},
#'   \eqn{(\phi+1)/2 \sim Beta(}{(phi + 1)/2 ~ Beta(}`phi_a`, `phi_b`), \eqn{\sigma}{sigma}
#'   half-normal with scale `sigma_scale` (\eqn{\sigma^2 \sim}{sigma^2 ~} `sigma_scale`\eqn{^2\chi^2_1}{^2 chisq(1)}),
#'   \eqn{\nu - 2 \sim Exp(}{nu - 2 ~ Exp(}`nu_rate`).
#' * `"rw"`, Keng's variant of the PyMC example: a random walk
#'   \eqn{s_t \sim N(s_{t-1}, \sigma^2)}{s[t] ~ N(s[t-1], sigma^2)},
#'   \eqn{s_1 \sim N(0, }{s[1] ~ N(0, }`s1_sd`\eqn{^2)}{^2)}, and
#'   \eqn{y_t \sim t_\nu(0, e^{s_t})}{y[t] ~ t_nu(0, scale exp(s[t]))} (`errors = "t"`, the
#'   default) or \eqn{N(0, e^{2s_t})}{N(0, exp(2 s[t]))}; priors
#'   \eqn{\sigma \sim Exp(}{sigma ~ Exp(}`sigma_rate`) and \eqn{\nu \sim Exp(}{nu ~ Exp(}`nu_rate`).
#'
#' Draws are reported as `mu`, `phi`, `sigma`, `nu` (those the variant has)
#' and the path `h[<time>]` or `s[<time>]`, named by `names(y)`, the times of a
#' `ts`, or 1 to T. The samplers move
#' \eqn{(\mu, \mathrm{atanh}\,\phi, \log\sigma, \log(\nu - 2), h)}{(mu, atanh(phi), log(sigma), log(nu - 2), h)}
#' (for `"rw"`, \eqn{\log\sigma, \log\nu, s}{log(sigma), log(nu), s}); the log prior
#' includes the Jacobians.
#'
#' @section Parameterisation of the path:
#' The path is stored and reported as itself (centred: the latents, not
#' their innovations), but by default the samplers move it in coordinates
#' that whiten it given the globals (`precondition = "whiten"`, the default
#' of [sgld()], [mala()] and [sgd()] for this model). Given the globals
#' \eqn{\theta}{theta} the path is close to normal,
#' \eqn{N(\bar x(\theta), M(\theta)^{-1})}{N(xbar(theta), M(theta)^-1)}, with
#' \eqn{M}{M} the process's precision (tridiagonal) plus the data's Fisher
#' information per day (\eqn{2\nu/(\nu+3)}{2 nu / (nu + 3)} for a t scale, 2 for
#' a normal one, a quarter of that for the log-variance of `"ar1"`) and
#' \eqn{\bar x}{xbar} the process's mean smoothed towards a rough path (the
#' logarithm of a moving average of \eqn{y^2}{y^2}). With \eqn{M = LL^T}{M = L L'}
#' the samplers move \eqn{\theta}{theta} and
#' \eqn{z = L^T(x - \bar x(\theta))}{z = L'(x - xbar(theta))}, which is
#' close to \eqn{N(0, I)}{N(0, I)} whatever \eqn{\theta}{theta} is, with the
#' Jacobian in the target (details in `src/update_whiten.c`); every step
#' costs O(T). For `"ar1"` the level \eqn{\mu}{mu} is whitened with the path
#' (given \eqn{\phi}{phi} and \eqn{\sigma}{sigma}, path and level are jointly
#' close to normal, and the factor of their precision is still O(T)), so
#' \eqn{\theta = (\mathrm{atanh}\,\phi, \log\sigma[, \log(\nu-2)])}{theta =
#' (atanh(phi), log(sigma)[, log(nu - 2)])}.
#'
#' Why: in the path's own coordinates \eqn{\sigma}{sigma} is pinned by the
#' roughness of the path, and the path's fast directions have precision up
#' to \eqn{4/\sigma^2}{4 / sigma^2}: a funnel that no fixed step crosses. In
#' the innovations (non-centred) \eqn{\sigma}{sigma} is pinned instead by the
#' path's slow part, which the data fix. Whitening given the globals is
#' centred where the data speak and non-centred where the process does.
#' Measured on `MASS::SP500` (random walk, T = 2780; `bench/sv.R`): [mala()]
#' in the path's own coordinates, with the process's precision plus the
#' data's information as a metric, gave \eqn{\sigma}{sigma} 4 to 8 effective
#' draws in 30,000 iterations; whitened, 380 to 540. Plain SGLD in the path's
#' own coordinates (`precondition = "none"`) did not settle at any step
#' tried: \eqn{\sigma}{sigma}'s mean fell from 0.095 to 0.064 as the step was
#' quartered, against 0.033 in the exact posterior. The level is the second
#' funnel: \eqn{\mu}{mu} is identified only through the path's long-run
#' mean, so its conditional sd given \eqn{\phi}{phi} grows like
#' \eqn{\sigma/(\sqrt{T}(1-\phi))}{sigma / (sqrt(T) (1 - phi))} as
#' \eqn{\phi \to 1}{phi -> 1}, towards the prior's; a fixed step for
#' \eqn{\mu}{mu} cannot follow it (on demeaned `MASS::SP500`, Euler's steps
#' of 0.05 over 25,000 iterations gave \eqn{\mu}{mu} 406 effective draws
#' with \eqn{\mu}{mu} outside the block and 656 in it). (The exact Gibbs samplers of \pkg{stochvol}
#' face the same choice and interweave both forms.)
#'
#' [sgld()] moves \eqn{(\theta, z)}{(theta, z)} in Leimkuhler-Matthews steps
#' (Leimkuhler, Matthews and Stoltz 2016): Euler's step of the Langevin
#' diffusion with the noise of each step the mean of its own normals and the
#' last step's. At the same cost its invariant law is exact for a Gaussian
#' target at any stable step (Euler's inflates a standard normal's variance
#' to \eqn{1/(1-\eta/2)}{1 / (1 - eta / 2)}) and its bias is
#' \eqn{O(\eta^2)}{O(eta^2)}, so steps 8 times longer keep the same accuracy
#' in these nearly Gaussian coordinates. [mala()] proposes Euler's step
#' (its proposal must be Markov) and [sgd()] takes it without noise.
#'
#' @section Minibatches, control variates, diagnostics:
#' Each latent belongs to one day. A random minibatch scaled by n/m would
#' multiply a sampled day's likelihood gradient by n/m and leave the other
#' days' latents with their prior alone: the estimator is then wrong for
#' every latent, not merely noisy. So samplers run on full data
#' (`batch_size = T`, the default for this model; T is a few thousand, and a
#' gradient costs O(T)), and a smaller `batch_size` is refused. Contiguous
#' windows with buffers (Ma, Foti and Fox 2017) are not offered: their
#' gradient is biased by the buffer's truncation, and the whitening below is
#' built for the whole path; a full-data iteration of the whitened sampler
#' costs about 0.1 microseconds per day (`bench/sv.R`: 94 ms at T = 10^6),
#' so full data stays affordable at the lengths daily series have. With full
#' data the gradient is exact, so control variates have nothing to reduce and
#' are refused too, as is `diagnostics` (its score covariance is d x d) and a
#' preconditioning matrix (d x d): the default `precondition = "whiten"` is
#' this model's preconditioner, and [psgld()] offers a diagonal one.
#'
#' By default a fit stores the draws of the globals only; the path's means
#' and sds come from the engine's running moments (see `pars` in [sgld()]),
#' and [sv_volatility()] summarises it.
#'
#' @section Accuracy, and the settings that reach it:
#' With full data the gradient is exact, so a sampler's error is
#' discretisation bias plus Monte Carlo error. `sgld(model)` with no other
#' argument (`lr = "auto"`) samples with the path whitened in
#' Leimkuhler-Matthews steps of 0.4; it runs a warm-up of 5,000 iterations
#' (1,000 at a step growing to 0.4; 2,000 whose draws set the globals' step
#' covariance; 2,000 more, doubled until they hold 100 effective draws of
#' every global) and then enough iterations for about 2,000 effective draws
#' of the globals at the warm-up's rate. It then checks its own Monte Carlo
#' error: when a global's mean or sd is not pinned down to a third of the bar
#' below, it warns, says why when the reason is \eqn{\phi}{phi}'s posterior
#' reaching 1, and names the remedies. `mala(model)` runs the same recipe at
#' step 0.1 with Euler's steps and a Metropolis-Hastings correction, and is
#' exact.
#'
#' Measured against exact references (the bar: the globals' means within
#' 0.15 sd and sds within 10 percent, the path's means correlated above
#' 0.995 and its sds within 10 percent on average):
#' * the AR(1) model (normal errors, these priors) against rstan's NUTS on
#'   the same model with the path non-centred, 4 chains
#'   (`inst/extdata/sv-ar1-*-reference.rds`, `data-raw/sv-ar1-reference.R`):
#'   on demeaned `MASS::SP500` (T = 2780; NUTS: \eqn{\mu}{mu} -0.404, sd
#'   0.218; \eqn{\phi}{phi} 0.9862, sd 0.0048; \eqn{\sigma}{sigma} 0.137, sd
#'   0.019) `sgld(model)` alone was off by at most 0.042 sd, with sds within
#'   2.9 percent, in two seeds (about 6 CPU seconds each); on a simulated
#'   series (T = 2000, \eqn{\phi = 0.98}{phi = 0.98}) by at most 0.020 sd and
#'   1.2 percent; on the DAX of `EuStockMarkets` without its holidays
#'   (T = 1786, \eqn{\phi}{phi} 0.960) by at most 0.026 sd and 1.9 percent;
#'   the path's means correlated 1.0000 with NUTS's and
#'   its sds were within 0.3 percent on average in every run
#'   (`tests/testthat/test-model-sv.R`, `bench/sv-ar1.R`). `mala(model)` at
#'   its defaults, exact, was off by at most 0.045 sd with sds within 2.8
#'   percent on the three series (`bench/sv-ar1-mala.R`; 50 to 120 CPU
#'   seconds, against about 6 for `sgld(model)`). Where
#'   \eqn{\phi}{phi}'s posterior reaches 1 the default warns (on 2,000
#'   simulated days with \eqn{\phi = 0.998}{phi = 0.998} its 99 percent
#'   quantile was 0.9994 and the Monte Carlo error of \eqn{\mu}{mu}'s sd 4
#'   percent; the means and sds still agreed with \pkg{stochvol}'s within 5
#'   percent);
#' * the random walk on a simulated series (T = 500, \eqn{\sigma = 0.3}{sigma =
#'   0.3}) against rstan's NUTS (`data-raw/sv-reference.R`): `sgld()` at lr
#'   0.4 over 30,000 iterations was off by -0.06 and -0.01 sd for
#'   \eqn{\sigma}{sigma} and \eqn{\nu}{nu}, sds 0.99 and 1.00 of the
#'   reference's, the path's sds 0.996 on average (Euler's steps at that lr:
#'   1.106); `tests/testthat/test-whiten.R` checks it and the exactness of
#'   `mala()`;
#' * the random walk on `MASS::SP500` (T = 2780) against a long exact
#'   `mala()` run (`inst/extdata/sv-sp500-reference.rds`, 4 chains, ESS of
#'   \eqn{\sigma}{sigma} 15,447; rstan's NUTS on the non-centred model agrees
#'   with it): `sgld(model)` alone (27,916 iterations, 6.4 CPU seconds) was
#'   off by -0.002 and -0.010 sd for \eqn{\sigma}{sigma} and \eqn{\nu}{nu},
#'   with sds 1.000 and 0.977 of the reference's, the path's means
#'   correlated 1.0000 and its sds 1.001 on average (`test-whiten.R`).
#'
#' \pkg{stochvol} samples the AR(1) model by ASIS on a ten-component mixture
#' approximation of \eqn{\log\varepsilon_t^2}{log eps[t]^2} (Omori et al.
#' 2007): close to the exact posterior, not exactly it. Against the NUTS
#' references, with 100,000 draws on `MASS::SP500` and the simulated series
#' its means were within 0.04 NUTS sds and its sds within 4 percent, on the DAX
#' \eqn{\phi}{phi} +0.14 sd, \eqn{\sigma}{sigma} -0.21 sd and its sd 6
#' percent wide; with 30,000 draws on
#' `MASS::SP500` and the simulated series within 0.09 sd and 3.2 percent,
#' errors of the size of its own Monte Carlo error (327 and 571 effective
#' draws of its slowest global), but on the DAX (\eqn{\phi}{phi} 0.96)
#' \eqn{\phi}{phi} was 0.17 sd high, \eqn{\sigma}{sigma} 0.24 sd low and
#' its sd 11 percent wide, outside the bar (`bench/sv-ar1.R`,
#' `bench/sv.md`; the 100,000-draw runs are stored with the references as
#' `stochvol`).
#' Time to the same number of effective draws of the slowest global
#' (`bench/sv-ar1.R`, each call timed whole, on a machine shared with other
#' work): `sgld(model)` reached them 86, 43 and 60 times faster than
#' \pkg{stochvol}'s `svsample()` on `MASS::SP500`, the simulated series and
#' the DAX (86, 41 and 47 times by CPU time): 107 to 147 effective draws per
#' second against 1.3 to 3.3.
#'
#' In the path's own coordinates (`precondition = "none"`) every fixed-step
#' sampler is biased in \eqn{\sigma}{sigma}: on the T = 500 series
#' `sgld()`'s mean of \eqn{\sigma}{sigma} was 0.350, 0.316, 0.306 and 0.301 at
#' `lr` 2e-3, 1e-3, 5e-4 and 2.5e-4 (reference 0.296, sd 0.034), and
#' [sghmc()] (which always moves the path as itself) reached the bar at
#' `lr = 2.5e-4` over 1e6 iterations. [psgld()] diverged at steps that mix.
#'
#' @section Pointwise log likelihood, loo and waic:
#' `log_lik(fit)` is, for each draw and each day, the density of that day's
#' return given that draw's latent on that day and its globals (the
#' observation density above: \eqn{N(0, e^{h_t})}{N(0, exp(h[t]))}, or the t
#' density), the per-day likelihood given the path, computed in C. Its sum
#' over days is the model's log likelihood at the draw. It is not a
#' one-step-ahead (predictive) density. Each day has its own latent, which
#' the posterior fits to that day's return, so leaving a day out moves that
#' latent, and the importance weights of `loo::loo(fit)` can be
#' heavy-tailed (loo's Pareto k diagnostics say where). Measured on a
#' simulated AR(1) series of 500 days (phi 0.95, sigma 0.25; `sgld(m, chains
#' = 2, pars = TRUE)`, 9,950 draws): 92% of the k below 0.5, 1.2% above 0.7;
#' p_loo 40. It needs the draws of the path: fit with
#' `pars = TRUE`, as do `posterior_predict()` (for each draw a return per
#' day from the observation model given the draw's latent),
#' `predictive_interval()` and `pp_check()`. `predict()` is not defined
#' (each return has mean 0 given its day's volatility): [sv_volatility()]
#' gives the volatility path.
#'
#' @param y Returns: a numeric vector or `ts`, finite, non-constant, at least
#'   10 values (see [price_returns()] to make them from prices). A normal
#'   model refuses exact zeros (their likelihood pushes the latent to minus
#'   infinity): use `errors = "t"` or `price_returns(zeros = "offset")`.
#' @param type `"ar1"` or `"rw"`, as above.
#' @param errors `"normal"` or `"t"`; the default is `"normal"` for `"ar1"`
#'   and `"t"` for `"rw"`.
#' @param mu_mean,mu_sd Normal prior of \eqn{\mu}{mu} (`"ar1"`).
#' @param phi_a,phi_b Beta prior of \eqn{(\phi + 1)/2}{(phi + 1)/2} (`"ar1"`).
#' @param sigma_scale Scale of the half-normal prior of \eqn{\sigma}{sigma} (`"ar1"`).
#' @param sigma_rate Rate of the exponential prior of \eqn{\sigma}{sigma} (`"rw"`).
#' @param s1_sd Prior sd of \eqn{s_1}{s[1]} (`"rw"`).
#' @param nu_rate Rate of the exponential prior of \eqn{\nu - 2}{nu - 2}
#'   (`"ar1"`) or \eqn{\nu}{nu} (`"rw"`).
#' @return An object of class `sgld_model_sv` (and `sgld_model`).
#' @seealso [sv_volatility()] for the volatility path of a fit,
#'   [price_returns()].
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   m <- model_sv(MASS::SP500, type = "rw")
#'   m
#'   set.seed(1)
#'   # a short run with the path whitened (sgld(m) alone chooses its length)
#'   fit <- sgld(m, lr = 0.05, iter = 3000, burnin = 1000)
#'   colMeans(as.matrix(fit))
#'   head(sv_volatility(fit))
#' }
#' @export
model_sv <- function(y, type = c("ar1", "rw"), errors = NULL, mu_mean = 0, mu_sd = 100,
                     phi_a = 5, phi_b = 1.5, sigma_scale = 1, sigma_rate = 10, s1_sd = 100,
                     nu_rate = 0.1) {
  type <- check_choice(type, c("ar1", "rw"), "type")
  if (is.null(errors)) errors <- if (type == "rw") "t" else "normal"
  errors <- check_choice(errors, c("normal", "t"), "errors")
  times <- sv_times(y)
  if (!is.numeric(y) || !is.null(dim(y)) && !(length(dim(y)) == 2 && min(dim(y)) == 1))
    abort("`y` must be a numeric vector of returns, not ", describe(y), ".")
  y <- as.double(y)
  if (anyNA(y)) abort("`y` must not have missing values; it has NA at position ",
                      which(is.na(y))[1], ".")
  if (any(!is.finite(y)))
    abort("`y` must be finite; it has ", format(y[!is.finite(y)][1]), " at position ",
          which(!is.finite(y))[1], ".")
  if (length(y) < 10L) abort("`y` must have at least 10 returns, not ", length(y), ".")
  if (max(y) == min(y)) abort("`y` must not be constant (every return is ", y[1], ").")
  if (errors == "normal" && any(y == 0))
    abort("`y` has ", sum(y == 0), " exact zero", if (sum(y == 0) > 1) "s", " (first at ",
          "position ", which(y == 0)[1], "): a normal model's likelihood then pushes that ",
          "day's log-volatility to minus infinity. Use `errors = \"t\"`, or remove or offset ",
          "zeros with price_returns(zeros = ).")
  check_number(mu_mean, "mu_mean")
  for (arg in c("mu_sd", "phi_a", "phi_b", "sigma_scale", "sigma_rate", "s1_sd", "nu_rate"))
    check_number(get(arg), arg, lower = 0, lower_open = TRUE)
  n <- length(y)
  t_err <- errors == "t"
  globals <- if (type == "ar1") c("mu", "phi", "sigma") else "sigma"
  sampler_globals <- if (type == "ar1") c("mu", "atanh_phi", "log_sigma") else "log_sigma"
  scales <- if (type == "ar1") c("identity", "tanh", "exp") else "exp"
  if (t_err) {
    globals <- c(globals, "nu")
    sampler_globals <- c(sampler_globals, if (type == "ar1") "log_nu_minus_2" else "log_nu")
    scales <- c(scales, if (type == "ar1") "exp_plus2" else "exp")
  }
  k <- length(globals)
  latent <- if (type == "ar1") "h" else "s"
  path_names <- paste0(latent, "[", times, "]")
  # a start near the posterior: the log of a 21-day (or shorter, for short
  # series) centred moving average of y^2, floored so that a run of zeros
  # stays finite, for the path
  width <- min(21L, 2L * ((n - 1L) %/% 2L) + 1L)
  v <- stats::filter(y^2, rep(1 / width, width), sides = 2)
  half <- (width - 1L) %/% 2L
  v[seq_len(half)] <- v[half + 1L]
  v[n - seq_len(half) + 1L] <- v[n - half]
  h0 <- log(pmax(as.double(v), 1e-3 * mean(y^2)))
  init_globals <- if (type == "ar1") c(mean(h0), 0.95, 0.2) else 0.1
  if (t_err) init_globals <- c(init_globals, 10)
  structure(list(
    type = "sv", sv_type = if (type == "ar1") 0L else 1L, t_errors = as.integer(t_err),
    variant = type, errors = errors,
    y = y, y2 = y^2, n = as.double(n), times = times,
    mu_mean = mu_mean, mu_sd = mu_sd, phi_a = phi_a, phi_b = phi_b,
    sigma_scale = sigma_scale, sigma_rate = sigma_rate, s1_sd = s1_sd, nu_rate = nu_rate,
    d = k + n, k = k,
    names = c(globals, path_names),
    sampler_names = c(sampler_globals, path_names),
    default_init = c(init_globals, if (type == "ar1") h0 else h0 / 2),
    path_centre = sv_path_centre(h0, type, t_err),
    default_pars = seq_len(k),
    moment_scale = c(scales, rep("identity", n)),
    local_parameters = TRUE,
    path_gaussian = TRUE,
    path_level = if (type == "ar1") 1L else 0L,
    default_precondition = "whiten"
  ), class = c("sgld_model_sv", "sgld_model"))
}

# The rough path the whitened samplers centre the path's Gaussian
# approximation on (path_gaussian in src/model_sv.c): the log of a moving
# average of y^2 on the latent's scale. For the random walk with t returns
# the latent is the log of the t's scale, and a t's variance is
# nu / (nu - 2) times its scale squared, so the centre is lowered by
# log(nu / (nu - 2)) / 2 at nu = 10, about the prior's mean. Without it the
# globals' profile (R/whiten.R), where the samplers start, put nu at 14.4 on
# MASS::SP500 and at 15 on a simulated series of 10^5 days, against
# posterior means of 7.9 and 7.8; with it, 7.5 and 7.8.
sv_path_centre <- function(h0, type, t_errors) {
  if (type == "ar1") return(h0)          # standardised errors: the variance is e^h
  h0 / 2 - if (t_errors) 0.5 * log(10 / 8) else 0
}

sv_times <- function(y) {
  if (stats::is.ts(y)) return(format(as.double(stats::time(y))))
  if (!is.null(names(y)) && !anyDuplicated(names(y)) && !anyNA(names(y))) return(names(y))
  seq_along(y)
}

#' @export
print.sgld_model_sv <- function(x, ...) {
  cat("Stochastic volatility (", if (x$variant == "ar1") "AR(1) log-variance h"
      else "random-walk log-scale s", ", ", x$errors, " errors): ",
      format(x$n, big.mark = ","), " returns\n", sep = "")
  if (x$variant == "ar1") {
    cat("  mu ~ N(", x$mu_mean, ", ", x$mu_sd, "^2), (phi + 1)/2 ~ Beta(", x$phi_a, ", ",
        x$phi_b, "), sigma ~ |N(0, ", x$sigma_scale, "^2)|", sep = "")
    if (x$t_errors) cat(", nu - 2 ~ Exp(", x$nu_rate, ")", sep = "")
  } else {
    cat("  sigma ~ Exp(", x$sigma_rate, "), s[1] ~ N(0, ", x$s1_sd, "^2)", sep = "")
    if (x$t_errors) cat(", nu ~ Exp(", x$nu_rate, ")", sep = "")
  }
  cat("\n")
  invisible(x)
}

to_user_scale.sgld_model_sv <- function(model, w) apply_scales(w, model$moment_scale, TRUE)
to_sampler_scale.sgld_model_sv <- function(model, w) apply_scales(w, model$moment_scale, FALSE)

check_user_values.sgld_model_sv <- function(model, w, arg) {
  g <- model$names
  if ("phi" %in% g && any(abs(w[, match("phi", g)]) >= 1))
    abort("`", arg, "`: phi must be strictly between -1 and 1.")
  if (any(w[, match("sigma", g)] <= 0)) abort("`", arg, "`: sigma must be positive.")
  if ("nu" %in% g) {
    lower <- if (model$variant == "ar1") 2 else 0
    if (any(w[, match("nu", g)] <= lower))
      abort("`", arg, "`: nu must be greater than ", lower, ".")
  }
}

held_out_model.sgld_model_sv <- function(model, newdata) {
  abort("`monitor`: held-out data have no meaning for model_sv() (each day has its own ",
        "latent); monitor the training fit without `newdata`.")
}

# What a model with parameters local to items cannot run with (see the help
# of model_sv()).
check_local_parameters <- function(model, batch_size, control_variates, diagnostics, rule) {
  if (batch_size < model$n)
    abort("`batch_size` must be the number of time points (", model$n, ") for this model: ",
          "each latent belongs to one day, so a random minibatch scaled by n/m gives a ",
          "wrong gradient for the latents, not merely a noisy one. Leave `batch_size` at ",
          "NULL (full data).")
  if (!isFALSE(control_variates) && !is.null(control_variates))
    abort("`control_variates` do not apply to this model: it runs on full data, whose ",
          "gradient is exact; leave `control_variates = FALSE`.")
  if (!is.null(diagnostics))
    abort("`diagnostics` are not available for this model: the score covariance they ",
          "estimate is d x d (d = ", model$d, ").")
  if (identical(rule$name, "precond"))
    abort("`precondition`: a d x d matrix (d = ", model$d, ") is not accepted for this ",
          "model; use psgld() for a diagonal preconditioner.")
  invisible()
}

#' The volatility path of a stochastic volatility fit
#'
#' The posterior mean and pointwise band of each day's volatility: the sd of
#' that day's return given the latent, \eqn{e^{h_t/2}}{exp(h[t]/2)} for
#' `"ar1"` (times \eqn{\sqrt{\nu/(\nu-2)}}{sqrt(nu/(nu-2))} is not applied:
#' t errors are standardised already), and the scale \eqn{e^{s_t}}{exp(s[t])}
#' for `"rw"` (the sd is that times \eqn{\sqrt{\nu/(\nu-2)}}{sqrt(nu/(nu-2))}
#' for \eqn{\nu > 2}{nu > 2}).
#'
#' When the fit stored the path's draws (`pars = TRUE`), the mean and
#' quantiles are those of the transformed draws (`method = "draws"`).
#' Otherwise (the default `pars`) they come from the engine's running means
#' and sds of the latent under a normal approximation to its marginal
#' (`method = "normal"`): the mean \eqn{e^{a m + a^2 v/2}}{exp(a m + a^2 v / 2)}
#' and the band \eqn{e^{a(m \pm z s)}}{exp(a (m +- z s))}, with a = 1/2 or 1.
#'
#' @param fit A fit of a [model_sv()] model.
#' @param level Coverage of the pointwise band.
#' @return A data frame with `time`, the latent's `mean` and `sd`, and the
#'   volatility's `mean`, `lower` and `upper`; attribute `method`.
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   set.seed(1)
#'   fit <- sgld(model_sv(MASS::SP500[1:500], type = "rw"), lr = 0.05, iter = 2000)
#'   v <- sv_volatility(fit)
#'   plot(v$mean, type = "l", ylim = range(v$lower, v$upper))
#'   lines(v$lower, lty = 2)
#'   lines(v$upper, lty = 2)
#' }
#' @export
sv_volatility <- function(fit, level = 0.9) {
  if (!inherits(fit, "sgld_fit") || !inherits(fit$model, "sgld_model_sv"))
    abort("`fit` must be a fit of a model_sv() model, not ", describe(fit), ".")
  check_number(level, "level", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  model <- fit$model
  path <- model$k + seq_len(model$n)
  a <- if (model$variant == "ar1") 0.5 else 1
  z <- stats::qnorm(0.5 + level / 2)
  if (all(path %in% kept_indices(fit))) {
    u <- as.matrix(fit)[, model$names[path], drop = FALSE]
    vol <- exp(a * u)
    q <- apply(vol, 2, stats::quantile, probs = c(0.5 - level / 2, 0.5 + level / 2),
               names = FALSE)
    out <- data.frame(time = model$times, latent_mean = colMeans(u),
                      latent_sd = apply(u, 2, stats::sd), mean = colMeans(vol),
                      lower = q[1, ], upper = q[2, ])
    method <- "draws"
  } else {
    mom <- pooled_moments(fit$moments, fit$chain_ids)
    m <- unname(mom$mean[path])
    s <- unname(mom$sd[path])
    out <- data.frame(time = model$times, latent_mean = m, latent_sd = s,
                      mean = exp(a * m + a^2 * s^2 / 2),
                      lower = exp(a * (m - z * s)), upper = exp(a * (m + z * s)))
    method <- "normal"
  }
  rownames(out) <- NULL
  attr(out, "method") <- method
  out
}

#' Returns from prices
#'
#' Percentage log returns \eqn{100 \log(p_t / p_{t-1})}{100 log(p[t] / p[t-1])}
#' (or simple returns), for [model_sv()]. Days on which the price did not
#' change give exact zeros, which a normal stochastic volatility model cannot
#' take; `zeros` says what to do with them.
#'
#' @param prices Positive finite prices, oldest first (a vector or `ts`).
#' @param log `TRUE` for log returns, `FALSE` for simple returns.
#' @param scale Multiplier (100 for percent).
#' @param zeros `"keep"`; `"drop"` to remove them (the series then skips
#'   those days); or `"offset"` to replace each by plus or minus (alternating)
#'   half the smallest non-zero absolute return, the size of a price tick.
#' @return A numeric vector of `length(prices) - 1` returns (fewer with
#'   `zeros = "drop"`), named by the later day when `prices` has names.
#' @examples
#' r <- price_returns(EuStockMarkets[, "DAX"])
#' sum(r == 0)
#' sum(price_returns(EuStockMarkets[, "DAX"], zeros = "offset") == 0)
#' @export
price_returns <- function(prices, log = TRUE, scale = 100, zeros = c("keep", "drop", "offset")) {
  zeros <- check_choice(zeros, c("keep", "drop", "offset"), "zeros")
  check_flag(log, "log")
  check_number(scale, "scale", lower = 0, lower_open = TRUE)
  if (!is.numeric(prices) || !is.null(dim(prices)) && min(dim(prices)) > 1)
    abort("`prices` must be a numeric vector, not ", describe(prices), ".")
  nm <- names(prices)
  p <- as.double(prices)
  if (length(p) < 2L) abort("`prices` must have at least 2 values.")
  if (anyNA(p) || any(!is.finite(p)) || any(p <= 0))
    abort("`prices` must be positive and finite; position ",
          which(is.na(p) | !is.finite(p) | p <= 0)[1], " is ",
          format(p[which(is.na(p) | !is.finite(p) | p <= 0)[1]]), ".")
  r <- scale * (if (log) diff(base::log(p)) else diff(p) / p[-length(p)])
  if (!is.null(nm)) names(r) <- nm[-1]
  z <- which(r == 0)
  if (length(z) && zeros == "drop") r <- r[-z]
  if (length(z) && zeros == "offset") {
    if (all(r == 0)) abort("`prices` are constant: every return is zero.")
    r[z] <- min(abs(r[r != 0])) / 2 * rep_len(c(1, -1), length(z))
  }
  r
}

# The methods it answers (R/capabilities.R): log_lik() is the per-day
# density given the path (the section "Pointwise log likelihood" above).
model_methods.sgld_model_sv <- function(model) {
  mean_zero <- paste0("each return has mean 0 given its day's volatility; ",
                      "predictive_interval() gives intervals of each day's return, ",
                      "sv_volatility() its volatility")
  utils::modifyList(NextMethod(), list(
    predict = mean_zero, predict_interval = mean_zero, posterior_epred = mean_zero,
    fitted = mean_zero, posterior_predict = TRUE, predictive_interval = TRUE,
    pp_check = TRUE))
}

# posterior_predict(): for each draw one return per day, drawn from the
# observation model given that draw's latent on the day (and nu).
model_posterior_predict.sgld_model_sv <- function(model, object, newdata, ndraws) {
  if (!is.null(newdata))
    abort("`newdata`: model_sv() replicates the returns of its own days only (each day ",
          "has its own latent); leave `newdata` NULL.")
  W <- prediction_draws(object, ndraws, "posterior_predict()")
  u <- to_user_scale(model, W)
  x <- u[, model$k + seq_len(model$n), drop = FALSE]
  scale <- exp(if (model$variant == "ar1") x / 2 else x)
  if (model$t_errors) {
    nu <- u[, match("nu", model$names)]        # one per draw: recycled down each column
    eps <- stats::rt(length(scale), df = nu)
    # ar1's t errors are standardised to variance 1
    if (model$variant == "ar1") eps <- eps * sqrt((nu - 2) / nu)
  } else {
    eps <- stats::rnorm(length(scale))
  }
  out <- scale * eps
  colnames(out) <- model$times
  out
}

# pp_check(): the observed returns against the replicated ones
model_pp_data.sgld_model_sv <- function(model, yrep) list(y = model$y, yrep = yrep)

# the returns as a one-column matrix named by day (log_lik() names its
# columns by these rows)
design_matrix.sgld_model_sv <- function(model) {
  matrix(model$y, ncol = 1L, dimnames = list(model$times, "y"))
}
