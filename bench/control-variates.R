# Control variates for SGLD: does the acceptance criterion hold?
#
#   "On simulated logistic regression with n = 10^6 and batch 100, the variance
#    of the gradient estimator near the mode is at least 10x smaller than
#    without, and the posterior sds are within 15% of an exact reference."
#
# Run from the package root:  Rscript bench/control-variates.R
# (a few minutes on two cores; most of it is the full-data MALA reference).

library(sgld)

t_start <- proc.time()[["elapsed"]]
elapsed <- function(t0) proc.time()[["elapsed"]] - t0
threads <- 2L

## Data ---------------------------------------------------------------------

n <- 1e6
beta_true <- c(-0.5, 0.8, -0.6, 0.4, -0.3, 0.2, 0.1, -0.1, 0.5, 0)
d <- length(beta_true)
set.seed(20240611)
X <- cbind(1, matrix(rnorm(n * (d - 1)), n, d - 1))
colnames(X) <- c("(Intercept)", paste0("x", seq_len(d - 1)))
# as.numeric(): the model wants 0/1 doubles (an integer 0/1 vector is refused)
y <- as.numeric(runif(n) < plogis(drop(X %*% beta_true)))
prior_sd <- 10
m <- model_logistic(X, y, prior = prior_normal(0, prior_sd), prior_intercept = NULL)

cat("sgld control-variates benchmark\n")
cat(sprintf("Logistic regression: n = %s, d = %d (intercept + %d standard normal covariates), prior N(0, %g^2)\n",
            format(n, big.mark = ",", scientific = FALSE), d, d - 1, prior_sd))

## Mode and Laplace approximation --------------------------------------------

t0 <- proc.time()[["elapsed"]]
pm <- posterior_mode(m)
t_mode <- elapsed(t0)
w_hat <- pm$mode
cat(sprintf("\nposterior_mode(): %.1f s, %d BFGS iterations, converged = %s, max |gradient| = %.2g\n",
            t_mode, pm$iterations, pm$converged, max(abs(pm$gradient))))

# The negative Hessian of the logistic log posterior is X' diag(p(1-p)) X plus
# the prior precision; at n = 10^6 the posterior is Gaussian to high accuracy,
# so its inverse also gives the scales that define "near the mode".
p_hat <- plogis(drop(X %*% w_hat))
H <- crossprod(X * sqrt(p_hat * (1 - p_hat))) + diag(1 / prior_sd^2, d)
S <- solve(H)
sd_laplace <- sqrt(diag(S))
lambda <- eigen(H, symmetric = TRUE, only.values = TRUE)$values
rm(p_hat)
cat(sprintf("Laplace: posterior sds %.5f to %.5f; eigenvalues of H from %.4g to %.4g\n",
            min(sd_laplace), max(sd_laplace), min(lambda), max(lambda)))

## Gradient noise near the mode ----------------------------------------------

batch <- 100
times <- 2000
set.seed(1)
unit <- function(j) replace(numeric(d), j, 1)
direction <- rnorm(d)
R_S <- chol(S)
# S^(1/2) u with |u| = 1 is at Mahalanobis distance exactly 1 from the mode
random_dir <- drop(crossprod(R_S, direction / sqrt(sum(direction^2))))
points <- c(
  list("mode" = w_hat),
  setNames(lapply(seq_len(d), function(j) w_hat + sd_laplace[j] * unit(j)),
           paste0("+1 sd ", colnames(X))),
  setNames(lapply(seq_len(d), function(j) w_hat - sd_laplace[j] * unit(j)),
           paste0("-1 sd ", colnames(X))),
  list("random dir., 1 sd" = w_hat + random_dir),
  # a typical posterior draw sits about sqrt(d) sds out: not "near", for context
  list("Laplace draw" = w_hat + drop(crossprod(R_S, rnorm(d))))
)

t0 <- proc.time()[["elapsed"]]
noise <- lapply(names(points), function(nm) {
  at <- points[[nm]]
  plain <- stochastic_gradients(m, at, batch_size = batch, times = times)
  cv <- stochastic_gradients(m, at, batch_size = batch, times = times,
                             control_variates = w_hat)
  g_full <- log_posterior(m, at)$grad_logpost
  v_plain <- apply(plain, 2, var)
  v_cv <- apply(cv, 2, var)
  # unbiasedness, in Monte Carlo standard errors; at the mode the control-variate
  # estimator is a constant, so there only rounding can separate it from g_full
  z <- function(draws, v) max(abs(colMeans(draws) - g_full) / pmax(sqrt(v / times), 1e-300))
  list(name = nm, mahal = sqrt(drop(crossprod(at - w_hat, H %*% (at - w_hat)))),
       v_plain = v_plain, v_cv = v_cv, tr_plain = sum(v_plain), tr_cv = sum(v_cv),
       z_plain = z(plain, v_plain), z_cv = if (nm == "mode") NA else z(cv, v_cv),
       cov_plain = if (nm == "mode") cov(plain),
       cov_cv = if (nm == "Laplace draw") cov(cv))
})
t_noise <- elapsed(t0)
names(noise) <- names(points)

cat(sprintf("\nGradient-noise variance, batch %d, %d minibatches per point (%.1f s)\n",
            batch, times, t_noise))
cat("tr = trace of the estimator's covariance; coord = smallest per-coordinate variance ratio;\n")
cat("|z| = largest |column mean - full-data gradient| / MCSE (unbiasedness)\n\n")
cat(sprintf("%-26s %6s %11s %11s %11s %10s %8s %8s\n", "point", "dist", "tr plain",
            "tr CV", "ratio", "coord", "|z| pl.", "|z| CV"))
for (r in noise) {
  ratio <- r$tr_plain / r$tr_cv
  coord <- min(r$v_plain / r$v_cv)
  cat(sprintf("%-26s %6.2f %11.4g %11.4g %11.4g %10.4g %8.2f %8s\n", r$name, r$mahal,
              r$tr_plain, r$tr_cv, ratio, coord, r$z_plain,
              if (is.na(r$z_cv)) "-" else sprintf("%.2f", r$z_cv)))
}
cat("\n(At the mode itself the control-variate estimate is G(w_hat) + prior gradient for every\n",
    "minibatch: its variance is exactly 0 and the ratio infinite.)\n", sep = "")
rd <- noise[["random dir., 1 sd"]]
cat("Per-coordinate variance ratios, random direction at 1 sd:\n")
print(signif(rd$v_plain / rd$v_cv, 3))

near <- noise[setdiff(names(noise), c("mode", "Laplace draw"))]
ratio_near <- vapply(near, function(r) r$tr_plain / r$tr_cv, numeric(1))
coord_near <- vapply(near, function(r) min(r$v_plain / r$v_cv), numeric(1))

## Exact reference: MALA ------------------------------------------------------

# With P = S the target is close to N(0, I) in the preconditioner's metric, so
# one step size suits every direction; 0.6 gave acceptance near 0.6 and the
# best effective sample size per iteration in trial runs. Starting at the mode
# leaves only a short relaxation to discard.
mala_lr <- 0.6
mala_iter <- 1100
mala_burnin <- 100
set.seed(2)
fit_mala <- mala(m, lr = mala_lr, iter = mala_iter, burnin = mala_burnin, chains = 2,
                 init = w_hat, precondition = S, threads = threads)
st_mala <- summary(fit_mala)$statistics
cat(sprintf("\nMALA (exact reference): lr %.2f with P = Laplace covariance, 2 chains x %d iterations (burn-in %d)\n",
            mala_lr, mala_iter, mala_burnin))
cat(sprintf("  acceptance %s; ESS %.0f to %.0f (median %.0f); %.1f s (status: %s)\n",
            paste(sprintf("%.3f", fit_mala$acceptance), collapse = " / "),
            min(st_mala[, "n_eff"]), max(st_mala[, "n_eff"]), median(st_mala[, "n_eff"]),
            fit_mala$time, paste(unique(fit_mala$status), collapse = ", ")))

## SGLD with and without control variates -----------------------------------

# For a Gaussian target of precision H, constant-step SGLD is the linear
# recursion w' = (I - eta H) w + sqrt(2 eta) xi + eta eps (eps: gradient noise,
# covariance V). Its stationary covariance C solves C = A C A' + 2 eta I + eta^2 V
# with A = I - eta H; without gradient noise C = H^-1 (I - eta H / 2)^-1, i.e. the
# variance along an eigenvector is inflated by 1 / (1 - eta lambda / 2). eta
# lambda_max = 0.05 keeps that below 2.6% in variance (1.3% in sd) while the
# slowest direction still decorrelates in about 2 / (eta lambda_min) iterations.
eta_lambda <- 0.05
eta <- eta_lambda / max(lambda)
stationary_sd <- function(V) {
  A <- diag(d) - eta * H
  Q <- 2 * eta * diag(d) + eta^2 * V
  C <- matrix(solve(diag(d^2) - kronecker(A, A), as.vector(Q)), d, d)
  sqrt(diag(C))
}
pred_cv <- stationary_sd(noise[["Laplace draw"]]$cov_cv)
pred_plain <- stationary_sd(noise[["mode"]]$cov_plain)

sgld_iter <- 1e5
sgld_burnin <- 2000
sgld_thin <- 10
set.seed(3)
fit_cv <- sgld(m, lr = eta, batch_size = batch, iter = sgld_iter, burnin = sgld_burnin,
               thin = sgld_thin, chains = 2, control_variates = w_hat, threads = threads)
set.seed(4)
fit_plain <- sgld(m, lr = eta, batch_size = batch, iter = sgld_iter, burnin = sgld_burnin,
                  thin = sgld_thin, chains = 2, init = w_hat, threads = threads)
st_cv <- summary(fit_cv)$statistics
st_plain <- summary(fit_plain)$statistics
cat(sprintf("\nSGLD, batch %d, constant lr %.4g (eta * lambda_max = %.3f, eta * lambda_min = %.3f),\n",
            batch, eta, eta * max(lambda), eta * min(lambda)))
cat(sprintf("  2 chains x %s iterations (burn-in %d, thin %d), started at the mode\n",
            format(sgld_iter, big.mark = ",", scientific = FALSE), sgld_burnin, sgld_thin))
cat(sprintf("  with control variates: %.1f s, ESS %.0f to %.0f (status: %s)\n", fit_cv$time,
            min(st_cv[, "n_eff"]), max(st_cv[, "n_eff"]), paste(unique(fit_cv$status), collapse = ", ")))
cat(sprintf("  without:                %.1f s, ESS %.0f to %.0f (status: %s)\n", fit_plain$time,
            min(st_plain[, "n_eff"]), max(st_plain[, "n_eff"]), paste(unique(fit_plain$status), collapse = ", ")))

sd_mala <- st_mala[, "sd"]
ratio_cv <- st_cv[, "sd"] / sd_mala
ratio_plain <- st_plain[, "sd"] / sd_mala
mean_diff <- (st_cv[, "mean"] - st_mala[, "mean"]) / sd_mala
# delta method: a sd estimated from E effective draws has relative error ~ 1/sqrt(2E)
mcse_ratio <- sqrt(1 / (2 * st_mala[, "n_eff"]) + 1 / (2 * st_cv[, "n_eff"]))
mcse_mean <- sqrt(1 / st_mala[, "n_eff"] + 1 / st_cv[, "n_eff"])

cat("\nPosterior sds. CV ratio = SGLD-CV sd / MALA sd (MCSE: its Monte Carlo error); CV/Lap. =\n")
cat("SGLD-CV sd / Laplace sd, a check free of the reference's Monte Carlo error since at this n\n")
cat("the posterior is Gaussian to high accuracy; pred. = stationary sd of the linearised chain /\n")
cat("Laplace sd; dmean/sd = (SGLD-CV mean - MALA mean) / MALA sd; no-CV = plain SGLD sd / MALA sd\n\n")
cat(sprintf("%-12s %9s %9s %5s | %8s %6s %7s %6s %5s %8s | %6s %6s\n", "", "Laplace", "MALA", "ESS",
            "CV ratio", "MCSE", "CV/Lap.", "pred.", "ESS", "dmean/sd", "no-CV", "pred."))
for (j in seq_len(d)) {
  cat(sprintf("%-12s %9.6f %9.6f %5.0f | %8.3f %6.3f %7.3f %6.3f %5.0f %8.3f | %6.2f %6.2f\n",
              colnames(X)[j], sd_laplace[j], sd_mala[j], st_mala[j, "n_eff"], ratio_cv[j],
              mcse_ratio[j], st_cv[j, "sd"] / sd_laplace[j], pred_cv[j] / sd_laplace[j],
              st_cv[j, "n_eff"], mean_diff[j], ratio_plain[j], pred_plain[j] / sd_laplace[j]))
}
cat(sprintf("\nMALA sd / Laplace sd: %.3f to %.3f\n", min(sd_mala / sd_laplace), max(sd_mala / sd_laplace)))

## Verdict -------------------------------------------------------------------

max_err <- max(abs(ratio_cv - 1))
verdict <- function(ok) if (ok) "PASS" else "FAIL"
ok_var <- min(ratio_near) >= 10
ok_sd <- max_err <= 0.15
cat("\nVerdict\n")
cat(sprintf("  variance reduction within 1 sd of the mode (%d points): trace ratio min %.4g, median %.4g;\n",
            length(ratio_near), min(ratio_near), median(ratio_near)))
cat(sprintf("    smallest per-coordinate ratio %.4g; at the mode: infinite  [target >= 10]  %s\n",
            min(coord_near), verdict(ok_var)))
cat(sprintf("  SGLD-CV sds vs MALA: max relative error %.3f (largest 3 x MCSE %.3f)  [target <= 0.15]  %s\n",
            max_err, 3 * max(mcse_ratio), verdict(ok_sd)))
cat(sprintf("  SGLD-CV sds vs Laplace: max relative error %.3f (largest 3 x MCSE %.3f)\n",
            max(abs(st_cv[, "sd"] / sd_laplace - 1)), 3 / sqrt(2 * min(st_cv[, "n_eff"]))))
cat(sprintf("  SGLD-CV means vs MALA: max |difference| %.3f MALA sds (largest 3 x MCSE %.3f)\n",
            max(abs(mean_diff)), 3 * max(mcse_mean)))
cat(sprintf("  contrast, SGLD without control variates at the same step: sds %.1f to %.1f times MALA's\n",
            min(ratio_plain), max(ratio_plain)))
cat(sprintf("  CRITERION %s\n", if (ok_var && ok_sd) "MET" else "NOT MET"))
cat(sprintf("\nTotal time %.0f s (mode %.0f s, MALA %.0f s)\n", elapsed(t_start), t_mode, fit_mala$time))
