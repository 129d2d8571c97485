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
#' Every pilot starts at the posterior mode and runs `iter` iterations, the
#' first half burn-in. The KSD is taken in the coordinates of the Laplace
#' approximation, \eqn{z = R^{-\top}(w - \hat w)}{z = R^(-T)(w - w_hat)} with \eqn{S = R^\top R}{S = R^T R},
#' where the posterior is close to a standard normal, so the kernel's unit
#' scale suits every parameter whatever its units. Its score is KSD times the square root of its cost per
#' iteration (item gradients: the batch size, twice that with control
#' variates): the Monte Carlo part of the KSD falls as one over the square
#' root of the number of iterations, so this compares settings at equal
#' computing budget. The cost is counted rather than timed, so the table is
#' the same for the same seed; the measured seconds are in `time`.
#'
#' @param model A model, e.g. from [model_logistic()].
#' @param step Learning rates relative to the stiffest direction (see Details).
#' @param batch_size Batch sizes; those above the number of observations are
#'   dropped. The default: the full data if n is at most 10,000, and 100 and
#'   1,000 when smaller than n.
#' @param precondition Any of `"laplace"` (the Laplace covariance at the mode)
#'   and `"none"`.
#' @param control_variates Any of `TRUE` (at the mode) and `FALSE`; they
#'   apply only to batches smaller than n.
#' @param iter Iterations of each pilot.
#' @param max_draws Draws used for each KSD ([ksd()]).
#' @param target_ess Effective draws the recommended run aims at, which sets
#'   its `iter` from the autocorrelation time of the chosen step.
#' @return An object of class `sgld_tune`: `table`, a data frame with one row
#'   per setting (`step`, `lr`, `batch_size`, `precondition`,
#'   `control_variates`, `ksd`, `cost`, `score`), best first; `best`, a list
#'   of arguments for [sgld()] (use `do.call(sgld, c(list(model), best))`);
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
#' fit <- do.call(sgld, c(list(m), tuned$best))
#' @export
tune_sgld <- function(model, step = c(0.01, 0.05, 0.1, 0.25, 0.5), batch_size = NULL,
                      precondition = c("laplace", "none"), control_variates = c(TRUE, FALSE),
                      iter = 2000, max_draws = 500, target_ess = 2000) {
  check_model(model)
  if (!is.numeric(step) || !length(step) || any(!is.finite(step)) || any(step <= 0 | step >= 2))
    abort("`step` must be numbers between 0 and 2 (learning rates relative to the ",
          "stiffest direction), not ", describe(step), ".")
  n <- model$n
  if (is.null(batch_size)) batch_size <- c(if (n <= 1e4) n, c(100, 1000)[c(100, 1000) < n])
  if (!is.numeric(batch_size) || !length(batch_size) || any(batch_size < 1) ||
      any(batch_size != round(batch_size)))
    abort("`batch_size` must be whole numbers from 1, not ", describe(batch_size), ".")
  batch_size <- sort(unique(pmin(batch_size, n)))
  if (!is.character(precondition) || !length(precondition) ||
      !all(precondition %in% c("laplace", "none")))
    abort("`precondition` must hold \"laplace\" and/or \"none\".")
  if (!is.logical(control_variates) || !length(control_variates) || anyNA(control_variates))
    abort("`control_variates` must hold TRUE and/or FALSE.")
  check_count(iter, "iter", lower = 20)
  check_count(max_draws, "max_draws", lower = 10)
  check_count(target_ess, "target_ess", lower = 10)
  pm <- auto_laplace(model, "tune_sgld()")
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
  grid$ksd <- NA_real_
  time <- numeric(nrow(grid))
  for (i in seq_len(nrow(grid))) {
    g <- grid[i, ]
    P <- if (g$precondition == "laplace") S else NULL
    start <- proc.time()[["elapsed"]]
    fit <- tryCatch(suppressWarnings(sgld(
      model, lr = g$lr, batch_size = g$batch_size, iter = iter, burnin = floor(iter / 2),
      precondition = P, control_variates = if (g$control_variates) pm$mode else FALSE,
      temperature = if (is.null(P)) 1 else 1 - g$step / 2, init = pm$mode)),
      error = function(e) NULL)
    time[i] <- proc.time()[["elapsed"]] - start
    if (!is.null(fit) && all(fit$status == "done") && ndraws(fit) > 1)
      grid$ksd[i] <- tryCatch(ksd_whitened(fit, pm, max_draws), error = function(e) NA_real_)
  }
  grid$cost <- grid$batch_size * ifelse(grid$control_variates, 2, 1)
  grid$score <- grid$ksd * sqrt(grid$cost)
  ord <- order(grid$score, na.last = TRUE)
  grid <- grid[ord, c("step", "lr", "batch_size", "precondition", "control_variates", "ksd",
                      "cost", "score")]
  time <- time[ord]
  rownames(grid) <- NULL
  if (all(is.na(grid$score))) abort("tune_sgld(): every pilot run failed; try smaller steps.")
  top <- grid[1, ]
  slow <- top$step * curvature[[top$precondition]][1] / curvature[[top$precondition]][2]
  tau_int <- (2 - slow) / slow
  burnin <- max(200, ceiling(0.1 * target_ess * tau_int))
  best <- list(lr = top$lr, batch_size = top$batch_size,
               iter = ceiling(target_ess * tau_int) + burnin, burnin = burnin,
               thin = max(1, floor(tau_int / 4)),
               temperature = if (top$precondition == "laplace") 1 - top$step / 2 else 1,
               init = pm$mode,
               precondition = if (top$precondition == "laplace") S else "none",
               control_variates = if (top$control_variates) pm$mode else FALSE)
  structure(list(table = grid, best = best, time = time, mode = pm$mode, covariance = S,
                 iter = iter), class = "sgld_tune")
}

#' @export
print.sgld_tune <- function(x, digits = 3, ...) {
  cat("KSD tuning of sgld(): ", nrow(x$table), " pilot runs of ",
      format(x$iter, big.mark = ","), " iterations (", format(sum(x$time), digits = 3),
      " s); score = KSD x sqrt(item gradients per iteration), lower is better\n", sep = "")
  print(utils::head(x$table, 10), digits = digits, row.names = FALSE)
  b <- x$best
  cat("Best: lr = ", format(b$lr, digits = 3), ", batch_size = ", b$batch_size,
      ", precondition = ", if (is.matrix(b$precondition)) "Laplace covariance" else "none",
      ", control_variates = ", !isFALSE(b$control_variates), ", iter = ",
      format(b$iter, big.mark = ","), "; run it with do.call(sgld, c(list(model), x$best))\n",
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
