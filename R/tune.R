#' Tune sgld() by short pilot runs scored by the kernel Stein discrepancy
#'
#' Runs a short pilot chain for every combination of learning rates, batch
#' sizes, preconditioners and control variates in a grid, scores each by its
#' kernel Stein discrepancy ([ksd()]) at equal cost, and returns the table,
#' best first, with the settings of the best row ready for [sgld()]. This is
#' the grid-search form of tuning by KSD (Coullon, South and Nemeth 2023 do
#' it by successive halving).
#'
#' Learning rates are given relative to the posterior's stiffest direction:
#' `step = 0.1` means \eqn{\eta = 0.1 / \lambda_{max}}{eta = 0.1 / lambda_max}, with
#' \eqn{\lambda_{max}}{lambda_max} the largest eigenvalue of the Laplace precision in the
#' preconditioner's coordinates (1 with the Laplace preconditioner), since an
#' absolute learning rate means nothing across preconditioners and data
#' scales. With the Laplace preconditioner each pilot runs at temperature
#' \eqn{1 - \eta/2}{1 - eta/2}, as [sgld()]'s automatic settings do.
#'
#' Every pilot starts at one point drawn from the Laplace approximation with
#' twice its sds (the start of [sgld()]'s over-dispersed chains) and runs
#' `iter` iterations, the first half burn-in, so that a setting too slow to
#' reach the posterior in that time scores badly. The KSD is taken in the coordinates of the Laplace
#' approximation, \eqn{z = R^{-\top}(w - \hat w)}{z = R^(-T)(w - w_hat)} with \eqn{S = R^\top R}{S = R^T R},
#' where the posterior is close to a standard normal, so the kernel's unit
#' scale suits every parameter whatever its units. Its score is KSD times the square root of its cost per
#' iteration (item gradients: the batch size, twice that with control
#' variates): the Monte Carlo part of the KSD falls as one over the square
#' root of the number of iterations, so this compares settings at equal
#' computing budget. The cost is counted rather than timed, so the table is
#' the same for the same seed; the measured seconds are in `time`.
#'
#' Two things a short pilot's KSD cannot see are checked separately. The
#' minibatch noise: each minibatch setting's sampling threshold
#' \eqn{\alpha}{alpha} (Welling and Teh's section 4.1, at 3 points drawn from the
#' Laplace approximation; see [diagnostics_every()]) widens the sds by about
#' \eqn{\sqrt{1 + \alpha}}{sqrt(1 + alpha)}, so settings with \eqn{\alpha > 0.1}{alpha > 0.1} rank after all
#' others (and a warning says so if no setting is below). The shape: where the
#' posterior is far from its Laplace approximation (the departure check of
#' [sgld()]'s automatic settings), the temperature correction is no longer
#' exact, and steps above 0.1 are left out, as `sgld()` itself does.
#'
#' @param model A model, e.g. from [model_logistic()], or a formula with
#'   `data` and `family` as for [sgld()] (see [sgld_formula]).
#' @param step Learning rates relative to the stiffest direction (see Details).
#' @param batch_size Batch sizes; those above the number of observations are
#'   dropped. The default: the full data if n is at most 100,000, and 100 and
#'   1,000 when smaller than n.
#' @param precondition Any of `"laplace"` (the Laplace covariance at the mode)
#'   and `"none"`.
#' @param control_variates Any of `TRUE` (at the mode) and `FALSE`; they
#'   apply only to batches smaller than n.
#' @param iter Iterations of each pilot.
#' @param max_draws Draws used for each KSD ([ksd()]).
#' @param target_ess Effective draws the recommended run aims at, which sets
#'   its `iter` from the autocorrelation time of the chosen step.
#' @param ... With a formula for `model`: `data`, `family` and the model's
#'   arguments ([sgld_formula]); otherwise an error.
#' @return An object of class `sgld_tune`: `table`, a data frame with one row
#'   per setting (`step`, `lr`, `batch_size`, `precondition`,
#'   `control_variates`, `alpha`, `ksd`, `cost`, `score`), best first; `best`, a list
#'   of arguments for [sgld()] (run them with `sgld(model, tune = result)`, or
#'   `do.call(sgld, c(list(model), result$best))`);
#'   `time`, the seconds each pilot took; `mode` and `covariance`. `plot()`
#'   draws the score against the step, one line per batch and preconditioner.
#' @references Coullon, J., South, L. and Nemeth, C. (2023). Efficient and
#'   generalizable tuning strategies for stochastic gradient MCMC.
#'   *Statistics and Computing* 33, 66.
#' @examples
#' m <- model_logistic(type ~ glu + bmi + age, data = MASS::Pima.tr)
#' set.seed(1)
#' tuned <- tune_sgld(m, step = c(0.05, 0.25), iter = 1000)
#' tuned
#' fit <- sgld(m, tune = tuned)
#' # the same settings, 4 chains from over-dispersed starts
#' fit4 <- sgld(m, tune = tuned, chains = 4)
#' @export
tune_sgld <- function(model, step = c(0.01, 0.05, 0.1, 0.25, 0.5), batch_size = NULL,
                      precondition = c("laplace", "none"), control_variates = c(TRUE, FALSE),
                      iter = 2000, max_draws = 500, target_ess = 2000, ...) {
  if (missing(model) || is_formula(model))
    return(formula_face(tune_sgld, match.call(), parent.frame()))  # R/formula-face.R
  check_dots_empty(...)
  check_model(model)
  batch_size <- tune_check_args(model, step, batch_size, precondition, control_variates,
                                iter, max_draws, target_ess)
  pm <- auto_laplace(model, "tune_sgld()")
  # Where the posterior is far from its Laplace approximation the temperature
  # 1 - step/2 no longer cancels the step's bias, and a short pilot's KSD is
  # too noisy to see a bias of a few tenths of an sd in one coordinate of
  # many: on Adult (a9a), step 0.25 was off by 0.31 sd where 0.1 was right
  # (R/auto.R). The steps are capped as sgld()'s automatic ones are.
  departure <- laplace_departure(model, pm)
  capped <- departure > 1 && any(step > auto_eta_skewed)
  if (capped) {
    step <- step[step <= auto_eta_skewed]
    if (!length(step)) step <- auto_eta_skewed
  }
  grid <- tune_grid(model, pm, step, batch_size, precondition, control_variates)
  piloted <- tune_pilots(model, pm, grid$table, iter, max_draws)
  table <- piloted$table
  table$cost <- table$batch_size * ifelse(table$control_variates, 2, 1)
  table$score <- table$ksd * sqrt(table$cost)
  ord <- order(table$alpha > tune_alpha_max, table$score, na.last = TRUE)
  table <- table[ord, c("step", "lr", "batch_size", "precondition", "control_variates", "alpha",
                        "ksd", "cost", "score")]
  rownames(table) <- NULL
  if (all(is.na(table$score))) abort("tune_sgld(): every pilot run failed; try smaller steps.")
  if (table$alpha[1] > tune_alpha_max)
    sgld_warn("threshold", "tune_sgld(): every setting's minibatch noise is large (sampling threshold ",
            format(table$alpha[1], digits = 2), " or more), so its run's sds are too wide; ",
            "try larger batches (the full data: batch_size = ", model$n, ") or control variates.")
  structure(list(table = table, best = tune_best(table[1, ], grid$curvature, pm, target_ess),
                 time = piloted$time[ord], mode = pm$mode, covariance = pm$covariance,
                 iter = iter, sampler = pm$sampler, names = model$names,
                 laplace_departure = departure, steps_capped = capped), class = "sgld_tune")
}

# tune_sgld()'s arguments checked; returns the batch sizes to try.
tune_check_args <- function(model, step, batch_size, precondition, control_variates, iter,
                            max_draws, target_ess) {
  if (!is.numeric(step) || !length(step) || any(!is.finite(step)) || any(step <= 0 | step >= 2))
    abort("`step` must be numbers between 0 and 2 (learning rates relative to the ",
          "stiffest direction), not ", describe(step), ".")
  n <- model$n
  if (is.null(batch_size)) batch_size <- c(if (n <= 1e5) n, c(100, 1000)[c(100, 1000) < n])
  if (!is.numeric(batch_size) || !length(batch_size) || any(batch_size < 1) ||
      any(batch_size != round(batch_size)))
    abort("`batch_size` must be whole numbers from 1, not ", describe(batch_size), ".")
  if (!is.character(precondition) || !length(precondition) ||
      !all(precondition %in% c("laplace", "none")))
    abort("`precondition` must hold \"laplace\" and/or \"none\".")
  if (!is.logical(control_variates) || !length(control_variates) || anyNA(control_variates))
    abort("`control_variates` must hold TRUE and/or FALSE.")
  check_count(iter, "iter", lower = 20)
  check_count(max_draws, "max_draws", lower = 10)
  check_count(target_ess, "target_ess", lower = 10)
  sort(unique(pmin(batch_size, n)))
}

# The settings to try, each with its learning rate and the sampling
# threshold of its minibatch estimator (Welling and Teh's section 4.1): the
# variance its noise adds relative to the injected noise, proportional to
# the learning rate. A pilot's KSD cannot see the sds it widens by
# sqrt(1 + alpha) (on Adult, batch 1000 with alpha near 70 had the best KSD
# score and sds 4 times too wide), so settings above tune_alpha_max rank
# after all others.
tune_grid <- function(model, pm, step, batch_size, precondition, control_variates) {
  n <- model$n
  S <- pm$covariance
  grid <- expand.grid(step = sort(unique(step)), batch_size = batch_size,
                      precondition = unique(precondition),
                      control_variates = unique(control_variates), stringsAsFactors = FALSE)
  # control variates only mean something for minibatches
  grid <- grid[!(grid$batch_size >= n & grid$control_variates), , drop = FALSE]
  rownames(grid) <- NULL
  curvature <- list(laplace = c(1, 1),
                    none = range(eigen(solve(S), symmetric = TRUE, only.values = TRUE)$values))
  grid$lr <- grid$step / vapply(grid$precondition, function(p) curvature[[p]][2], numeric(1))
  noise <- unique(grid[grid$batch_size < n, c("batch_size", "precondition", "control_variates")])
  grid$alpha <- 0
  for (k in seq_len(nrow(noise))) {
    g <- noise[k, ]
    lambda <- auto_alpha(model, pm, g$batch_size, g$control_variates, eta = 2,
                         factor = if (g$precondition == "laplace") t(chol(S)) else NULL)
    at <- grid$batch_size == g$batch_size & grid$precondition == g$precondition &
      grid$control_variates == g$control_variates
    grid$alpha[at] <- grid$lr[at] / 2 * lambda
  }
  list(table = grid, curvature = curvature)
}

# One short pilot a setting, scored by the kernel Stein discrepancy of its
# draws. Every pilot starts from one point drawn from N(w_hat, 4 S), as
# sgld()'s chains do: a pilot started at the mode that never moves looks
# like a sample of the posterior's centre, and on Adult a step 10^9 times
# too small along the soft directions (no preconditioner) had the best score.
tune_pilots <- function(model, pm, grid, iter, max_draws) {
  grid$ksd <- NA_real_
  start_at <- auto_init(model, pm, 2)[1, ]
  time <- numeric(nrow(grid))
  for (i in seq_len(nrow(grid))) {
    g <- grid[i, ]
    P <- if (g$precondition == "laplace") pm$covariance else NULL
    start <- proc.time()[["elapsed"]]
    fit <- tryCatch(suppressWarnings(sgld(
      model, lr = g$lr, batch_size = g$batch_size, iter = iter, burnin = floor(iter / 2),
      thin = 1, chains = 1, precondition = P,
      control_variates = if (g$control_variates) pm$mode else FALSE,
      temperature = if (is.null(P)) 1 else 1 - g$step / 2, init = start_at)),
      error = function(e) NULL)
    time[i] <- proc.time()[["elapsed"]] - start
    if (!is.null(fit) && all(fit$status == "done") && ndraws(fit) > 1)
      grid$ksd[i] <- tryCatch(ksd_whitened(fit, pm, max_draws), error = function(e) NA_real_)
  }
  list(table = grid, time = time)
}

# The best setting's run: long enough for target_ess effective draws of the
# slowest direction, whose autocorrelation time at relative step h is
# (2 - h) / h for a Gaussian.
tune_best <- function(top, curvature, pm, target_ess) {
  slow <- top$step * curvature[[top$precondition]][1] / curvature[[top$precondition]][2]
  tau_int <- (2 - slow) / slow
  burnin <- max(200, ceiling(0.1 * target_ess * tau_int))
  laplace <- top$precondition == "laplace"
  list(lr = top$lr, batch_size = top$batch_size,
       iter = ceiling(target_ess * tau_int) + burnin, burnin = burnin,
       thin = max(1, floor(tau_int / 4)),
       temperature = if (laplace) 1 - top$step / 2 else 1,
       init = pm$mode,
       precondition = if (laplace) pm$covariance else "none",
       control_variates = if (top$control_variates) pm$mode else FALSE)
}

tune_alpha_max <- 0.1  # noisiest estimator ranked normally: sds at most sqrt(1.1) = 5% wide

# sgld(model, tune = result): the tuned settings, each replaced by the
# argument of the same name given to sgld() (`given`, evaluated).
tuned_sgld <- function(model, tune, given) {
  if (!inherits(tune, "sgld_tune"))
    abort("`tune` must be the result of tune_sgld(), not ", describe(tune), ".")
  if (!identical(length(tune$mode), as.integer(model$d)) ||
      (!is.null(tune$names) && !identical(tune$names, model$names)))
    abort("`tune` was made for another model (", length(tune$mode), " parameters",
          if (!is.null(tune$names)) paste0(": ", paste(utils::head(tune$names, 3), collapse = ", "),
                                          if (length(tune$names) > 3) ", ..."),
          "), not this one with ", model$d, ". Tune this model: tune_sgld(model).")
  if ("lr" %in% names(given) && identical(given$lr, "auto"))
    abort("`lr = \"auto\"` and `tune` choose the same settings two ways: give one of them.")
  args <- utils::modifyList(tune$best, given, keep.null = TRUE)
  # several chains start over-dispersed, as with lr = "auto" (R/auto.R)
  chains <- if (is.null(given$chains)) formals(sgld)$chains else given$chains
  if (!"init" %in% names(given) && is.numeric(chains) && length(chains) == 1 && chains > 1)
    args$init <- auto_init(model, list(mode = tune$mode, sampler = tune$sampler,
                                       covariance = tune$covariance), chains)
  do.call(sgld, c(list(model), args))
}

#' @export
print.sgld_tune <- function(x, digits = 3, ...) {
  cat("KSD tuning of sgld(): ", nrow(x$table), " pilot runs of ",
      format(x$iter, big.mark = ","), " iterations (", format(sum(x$time), digits = 3),
      " s); score = KSD x sqrt(item gradients per iteration), lower is better\n", sep = "")
  if (isTRUE(x$steps_capped))
    cat("Steps above ", auto_eta_skewed, " left out: the posterior is far from its Laplace ",
        "approximation (departure ", format(x$laplace_departure, digits = 2), ").\n", sep = "")
  print(utils::head(x$table, 10), digits = digits, row.names = FALSE)
  b <- x$best
  cat("Best: lr = ", format(b$lr, digits = 3), ", batch_size = ", b$batch_size,
      ", precondition = ", if (is.matrix(b$precondition)) "Laplace covariance" else "none",
      ", control_variates = ", !isFALSE(b$control_variates), ", iter = ",
      format(b$iter, big.mark = ","), "; run it with sgld(model, tune = <this result>)\n",
      sep = "")
  invisible(x)
}

#' @export
plot.sgld_tune <- function(x, ...) {
  tab <- x$table[is.finite(x$table$score), ]
  groups <- split(tab, paste0("batch ", tab$batch_size, ", ", tab$precondition,
                              ifelse(tab$control_variates, ", cv", "")))
  graphics::plot(range(tab$step), range(tab$score), type = "n", log = "xy",
                 xlab = "step (relative to the stiffest direction)",
                 ylab = "KSD x sqrt(cost)", ...)
  for (k in seq_along(groups)) {
    g <- groups[[k]][order(groups[[k]]$step), ]
    graphics::lines(g$step, g$score, type = "b", col = k, pch = k)
  }
  graphics::legend("topright", legend = names(groups), col = seq_along(groups),
                   pch = seq_along(groups), lty = 1, bty = "n", cex = 0.8)
  invisible(x)
}

# KSD in the Laplace coordinates z = R^{-T} (w - w_hat), S = R^T R, where
# the posterior is close to N(0, I): the kernel's unit scale then matches the
# posterior's in every direction, so too narrow, too wide and off-centre
# count alike whatever the parameters' units (on the sampler's scale a
# posterior sd of 0.007, as for glucose in Pima, is far inside the kernel's
# width and narrowness goes unseen). The score transforms as R g.
ksd_whitened <- function(fit, pm, max_draws) {
  x <- as.matrix(fit, scale = "sampler")
  keep <- unique(round(seq(1, nrow(x), length.out = min(max_draws, nrow(x)))))
  x <- x[keep, , drop = FALSE]
  model <- fit$model
  g <- t(apply(x, 1, function(w) {
    e <- .Call(C_sgld_model_eval, model, as.double(w))
    e$grad_loglik + e$grad_logprior
  }))
  if (model$d == 1) g <- t(g)
  R <- chol(pm$covariance)
  z <- t(backsolve(R, t(sweep(x, 2, pm$sampler)), transpose = TRUE))
  ksd.matrix(z, scores = g %*% t(R), max_draws = max_draws)
}
