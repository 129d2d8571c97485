# Stochastic volatility (model_sv()): Keng's random-walk model with t returns
# on MASS::SP500 (T = 2780).
#   1. The conditioning of the path, centred against non-centred (the choice
#      documented in ?model_sv).
#   2. Accuracy and time of SGLD (and its Richardson combination) against
#      rstan NUTS on the same model (the references of data-raw/sv-reference.R),
#      on MASS::SP500 and on the simulated series of the accuracy tests.
#   3. Cost per iteration as T grows from 10^3 to 10^6 (simulated series).
#
#   Rscript bench/sv.R       (from the package directory, after installing it)
suppressPackageStartupMessages(library(sgld))
y <- MASS::SP500
m <- model_sv(y, type = "rw")
n <- length(y)

cat("## Stochastic volatility (model_sv(), random walk with t returns, MASS::SP500)\n\n")

# ---- 1. conditioning of the path at typical globals ------------------------
# The negative Hessian of the log posterior in the path, with the data's
# curvature replaced by its expectation (Fisher information of a t scale,
# 2 nu / (nu + 3) per day), at sigma = 0.05 and nu = 8 (near the posterior).
# Centred: the path s itself; non-centred: standardised innovations eta with
# s = s_1 + sigma cumsum(eta), s_1 kept as is.
cond_numbers <- function(T, sigma = 0.05, nu = 8) {
  f <- 2 * nu / (nu + 3)
  Q <- matrix(0, T, T)
  diag(Q) <- c(1, rep(2, T - 2), 1) / sigma^2 + f
  Q[1, 1] <- Q[1, 1] + 1 / 100^2
  Q[cbind(1:(T - 1), 2:T)] <- Q[cbind(2:T, 1:(T - 1))] <- -1 / sigma^2
  ev_c <- eigen(Q, symmetric = TRUE, only.values = TRUE)$values
  # non-centred: coordinates (s_1, eta_2..eta_T); s = A z with A lower
  # triangular (first column ones, then sigma on and below the diagonal)
  A <- matrix(0, T, T)
  A[, 1] <- 1
  A[lower.tri(A, diag = TRUE) & col(A) > 1] <- sigma
  H <- crossprod(A, f * A)
  diag(H) <- diag(H) + c(1 / 100^2, rep(1, T - 1))
  ev_n <- eigen(H, symmetric = TRUE, only.values = TRUE)$values
  c(centred = max(ev_c) / min(ev_c), non_centred = max(ev_n) / min(ev_n))
}
cn <- rbind(`T = 500` = cond_numbers(500), `T = 2780` = cond_numbers(n))
cat("### Conditioning of the path (condition number of the negative Hessian)\n\n")
cat("| series | centred | non-centred |\n|---|---|---|\n")
for (i in seq_len(nrow(cn)))
  cat(sprintf("| %s | %.3g | %.3g |\n", rownames(cn)[i], cn[i, 1], cn[i, 2]))
cat("\n")

# ---- 2. accuracy and time against NUTS --------------------------------------
summ <- function(fit_globals, path_mean, path_sd, ref, time, label) {
  gm <- colMeans(fit_globals)
  gs <- apply(fit_globals, 2, sd)
  sprintf("| %s | %.1f | %s | %s | %.4f | %.2f |", label, time,
          paste(sprintf("%+.2f", (gm - ref$gmean) / ref$gsd), collapse = ", "),
          paste(sprintf("%.2f", gs / ref$gsd), collapse = ", "),
          cor(path_mean, ref$pmean), mean(path_sd / ref$psd))
}
from_fit <- function(fit, label) {
  mom <- sgld:::pooled_moments(fit$moments, fit$chain_ids)
  p <- m$k + seq_len(n)
  list(g = as.matrix(fit)[, c("sigma", "nu")], pm = mom$mean[p], ps = mom$sd[p],
       time = fit$time, label = label)
}

# The NUTS reference and its cost come from data-raw/sv-reference.R (rstan,
# centred, 4 chains; stored in inst/extdata with its wall time and ESS).
ref_file <- system.file("extdata", "sv-sp500-reference.rds", package = "sgld")
if (!nzchar(ref_file)) {
  # without it the runs are still reported against a placeholder reference
  # (the last run's own moments), so only their spread is meaningful
  cat("No stored NUTS reference for MASS::SP500 (run `Rscript data-raw/sv-reference.R sp500`",
      "and reinstall); the errors below are against the last SGHMC run.\n\n")
}
ref <- if (nzchar(ref_file)) readRDS(ref_file) else NULL
if (!is.null(ref)) cat(sprintf(paste0("NUTS (%s): %.0f s (warm-up %.0f, sampling %.0f), %d divergences; ",
                   "sigma %.4f (sd %.4f, ESS %.0f), nu %.2f (sd %.2f, ESS %.0f); ",
                   "ESS/s (whole run) sigma %.2f, nu %.2f.\n\n"),
            ref$method, ref$seconds, ref$seconds_warmup, ref$seconds_sampling, ref$divergences,
            ref$gmean[1], ref$gsd[1], ref$gess[1], ref$gmean[2], ref$gsd[2], ref$gess[2],
            ref$gess[1] / ref$seconds, ref$gess[2] / ref$seconds))

# SGLD at two steps, lr and 2 lr, the second with half the iterations; the
# Richardson combination 2 a(lr) - a(2 lr) of their means and sds removes the
# bias that is linear in the step (which dominates here: see ?model_sv).
runs <- list(list("sgld", 2e-4, 5e5), list("sgld", 1e-4, 5e5), list("sgld", 5e-5, 1e6),
             list("sghmc", 5e-5, 5e5), list("sghmc", 2e-5, 5e5))
run_one <- function(model, a, from) {
  f <- get(a[[1]])(model, lr = a[[2]], iter = a[[3]], burnin = a[[3]] / 10, thin = 10,
                   progress = FALSE)
  r <- from(f, sprintf("%s lr %g, %g iterations", toupper(a[[1]]), a[[2]], a[[3]]))
  r$ess <- coda::effectiveSize(f$draws)
  r
}
set.seed(1)
res <- lapply(runs, run_one, model = m, from = from_fit)
if (is.null(ref)) {
  last <- res[[length(res)]]
  ref <- list(gmean = colMeans(last$g), gsd = apply(last$g, 2, sd), pmean = last$pm,
              psd = last$ps, seconds = NA, gess = c(NA, NA))
}
cat("### Accuracy against NUTS\n\n")
cat("Posterior means of (sigma, nu) off by (in reference sds), sds as a ratio to the",
    "reference, correlation of the path's posterior means, mean ratio of the path's sds;",
    "ESS per second of sigma and nu.\n\n")
cat("| method | seconds | mean error (sd) | sd ratio | path mean cor | path sd ratio | ESS/s |\n")
cat("|---|---|---|---|---|---|---|\n")
for (r in res)
  cat(summ(r$g, r$pm, r$ps, ref, r$time, r$label),
      sprintf(" %.1f, %.1f |\n", r$ess[1] / r$time, r$ess[2] / r$time), sep = "")
rich <- function(a, b, ref, ess_col = TRUE) {
  gm <- 2 * colMeans(a$g) - colMeans(b$g)
  gs <- 2 * apply(a$g, 2, sd) - apply(b$g, 2, sd)
  sprintf("| Richardson: 2 x (%s) - (%s) | %.1f | %s | %s | %.4f | %.2f |%s", a$label, b$label,
          a$time + b$time, paste(sprintf("%+.2f", (gm - ref$gmean) / ref$gsd), collapse = ", "),
          paste(sprintf("%.2f", gs / ref$gsd), collapse = ", "),
          cor(2 * a$pm - b$pm, ref$pmean), mean((2 * a$ps - b$ps) / ref$psd),
          if (ess_col) " |" else "")
}
cat(rich(res[[2]], res[[1]], ref), "\n", sep = "")
cat(rich(res[[3]], res[[2]], ref), "\n", sep = "")
cat(sprintf("| NUTS | %.1f | 0 | 1 | 1 | 1 | %.2f, %.2f |\n\n", ref$seconds,
            ref$gess[1] / ref$seconds, ref$gess[2] / ref$seconds))

# ---- 2b. simulated series against their NUTS references ---------------------
# T = 500, sigma = 0.3 (the series of the accuracy tests; reference in
# tests/testthat/sv-reference.rds), SGLD at four steps with lr x iterations
# fixed, and the Richardson combinations.
cat("### Simulated series (T = 500, sigma = 0.3) against NUTS\n\n")
refs <- readRDS("tests/testthat/sv-reference.rds")
msim <- model_sv(refs$y, type = "rw")
ns <- msim$n
ps <- msim$k + seq_len(ns)
cat("| method | seconds | mean error (sd) | sd ratio | path mean cor | path sd ratio |\n")
cat("|---|---|---|---|---|---|\n")
sim_from <- function(f, label) {
  mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
  list(g = as.matrix(f), pm = mom$mean[ps], ps = mom$sd[ps], time = f$time, label = label)
}
sim_runs <- lapply(list(list("sgld", 2e-3, 2.5e5), list("sgld", 1e-3, 5e5),
                        list("sgld", 5e-4, 1e6), list("sgld", 2.5e-4, 2e6),
                        list("sghmc", 5e-4, 5e5), list("sghmc", 2.5e-4, 5e5),
                        list("sghmc", 2.5e-4, 1e6)), function(a) {
  set.seed(2)
  r <- run_one(msim, a, sim_from)
  cat(summ(r$g, r$pm, r$ps, refs, r$time, r$label), "\n", sep = "")
  r
})
for (i in 2:4) cat(rich(sim_runs[[i]], sim_runs[[i - 1]], refs, FALSE), "\n", sep = "")
cat("\n")

# ---- 3. cost per iteration against T ----------------------------------------
cat("### Cost per iteration against T (SGLD, full data, simulated series)\n\n")
cat("| T | us per iteration | ns per day |\n|---|---|---|\n")
for (T in 10^(3:6)) {
  set.seed(T)
  s <- cumsum(rnorm(T, 0, 0.05))
  yy <- exp(s) * rt(T, 8)
  mt <- model_sv(yy, type = "rw")
  it <- max(20, 2e6 / T)
  f <- sgld(mt, lr = 1e-6, iter = it, burnin = it - 1, progress = FALSE)
  cat(sprintf("| %.0e | %.1f | %.1f |\n", T, 1e6 * f$time / it, 1e9 * f$time / it / T))
}
cat("\n")
