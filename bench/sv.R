# Stochastic volatility (model_sv()): Keng's random-walk model with t returns
# on MASS::SP500 (T = 2780).
#   1. The conditioning of the path, centred against non-centred (the choice
#      documented in ?model_sv).
#   2. Accuracy and time of SGLD, pSGLD and MALA against rstan NUTS on the
#      same model (when rstan is installed).
#   3. Cost per iteration as T grows from 10^3 to 10^6 (simulated series).
#
#   Rscript bench/sv.R       (after installing the package)
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

ref <- NULL
if (requireNamespace("rstan", quietly = TRUE)) {
  code <- "
data { int<lower=2> T; vector[T] y; }
parameters { real<lower=0> sigma; real<lower=0> nu; vector[T] s; }
model {
  sigma ~ exponential(10);
  nu ~ exponential(0.1);
  s[1] ~ normal(0, 100);
  s[2:T] ~ normal(s[1:(T - 1)], sigma);
  y ~ student_t(nu, 0, exp(s));
}"
  sm <- tryCatch(rstan::stan_model(model_code = code), error = function(e) {
    cat("rstan is installed but cannot compile a model here:", conditionMessage(e), "\n\n")
    NULL
  })
}
if (exists("sm") && !is.null(sm)) {
  init <- function() list(sigma = 0.1, nu = 10, s = m$default_init[-(1:2)])
  t0 <- proc.time()[["elapsed"]]
  nuts <- rstan::sampling(sm, data = list(T = n, y = as.double(y)), chains = 2, cores = 1,
                          iter = 2000, warmup = 1000, seed = 1, refresh = 0, init = init)
  t_nuts <- proc.time()[["elapsed"]] - t0
  dr <- as.matrix(nuts)
  sc <- paste0("s[", seq_len(n), "]")
  ref <- list(gmean = colMeans(dr[, c("sigma", "nu")]), gsd = apply(dr[, c("sigma", "nu")], 2, sd),
              pmean = colMeans(dr[, sc]), psd = apply(dr[, sc], 2, sd))
  ess <- rstan::summary(nuts)$summary[c("sigma", "nu"), "n_eff"]
  cat(sprintf(paste0("NUTS (rstan, 2 chains x 1000 draws after 1000 warm-up): %.0f s ",
                     "sampling and warm-up; sigma %.4f (sd %.4f, ESS %.0f), nu %.2f (sd %.2f, ",
                     "ESS %.0f).\n\n"), t_nuts, ref$gmean[1], ref$gsd[1], ess[1], ref$gmean[2],
              ref$gsd[2], ess[2]))
}

runs <- list(
  function() from_fit(sgld(m, lr = 2e-5, iter = 4e5, burnin = 1e5, thin = 100, progress = FALSE),
                      "SGLD lr 2e-5, 4e5 iterations"),
  function() from_fit(psgld(m, lr = 1e-6, alpha = 0.9999, iter = 4e5, burnin = 1e5, thin = 100,
                            progress = FALSE),
                      "pSGLD lr 1e-6, alpha 0.9999, 4e5 iterations"),
  function() from_fit(mala(m, lr = 5e-5, iter = 4e5, burnin = 1e5, thin = 100, progress = FALSE),
                      "MALA lr 5e-5, 4e5 iterations")
)
set.seed(1)
res <- lapply(runs, function(f) f())
if (!is.null(ref)) {
  cat("### Accuracy against NUTS\n\n")
  cat("Posterior means of (sigma, nu) off by (in reference sds), sds as a ratio to the",
      "reference, correlation of the path's posterior means, mean ratio of the path's sds.\n\n")
  cat("| method | seconds | mean error (sd) | sd ratio | path mean cor | path sd ratio |\n")
  cat("|---|---|---|---|---|---|\n")
  for (r in res) cat(summ(r$g, r$pm, r$ps, ref, r$time, r$label), "\n", sep = "")
  cat(sprintf("| NUTS | %.1f | 0 | 1 | 1 | 1 |\n\n", t_nuts))
} else {
  cat("No NUTS reference (rstan is not installed, or cannot compile).\n\n")
  for (r in res) cat(sprintf("- %s: %.1f s; sigma %.4f, nu %.2f\n", r$label, r$time,
                             mean(r$g[, 1]), mean(r$g[, 2])))
  cat("\n")
}

# ---- 2b. a short simulated series against a long MALA reference ------------
# T = 200 (random walk, sigma = 0.15, t_8 returns): MALA at acceptance about
# 0.36 is the reference; SGLD at three step sizes with lr x iterations fixed.
cat("### Simulated series (T = 200) against a long MALA reference\n\n")
set.seed(5)
ns <- 200
ys <- exp(cumsum(c(0, rnorm(ns - 1, 0, 0.15)))) * rt(ns, 8)
msim <- model_sv(ys, type = "rw")
ps <- msim$k + seq_len(ns)
set.seed(7)
fr <- mala(msim, lr = 5e-4, iter = 3e6, burnin = 2e5, thin = 100, pars = TRUE, progress = FALSE)
R <- as.matrix(fr)
refs <- list(gmean = colMeans(R)[1:2], gsd = apply(R, 2, sd)[1:2], pmean = colMeans(R)[ps],
             psd = apply(R, 2, sd)[ps])
ess <- coda::effectiveSize(fr$draws)
cat(sprintf("MALA: acceptance %.2f, %.0f s, ESS sigma %.0f, nu %.0f, latents %.0f to %.0f.\n\n",
            fr$acceptance, fr$time, ess[1], ess[2], min(ess[ps]), max(ess[ps])))
cat("| method | seconds | mean error (sd) | sd ratio | path mean cor | path sd ratio |\n")
cat("|---|---|---|---|---|---|\n")
for (a in list(c(1e-4, 8e5), c(5e-5, 1.6e6), c(2e-5, 4e6))) {
  set.seed(2)
  f <- sgld(msim, lr = a[1], iter = a[2], burnin = a[2] / 10, thin = a[2] / 2e4, progress = FALSE)
  mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
  cat(summ(as.matrix(f), mom$mean[ps], mom$sd[ps], refs, f$time,
           sprintf("SGLD lr %g, %g iterations", a[1], a[2])), "\n", sep = "")
}
set.seed(2)
f <- psgld(msim, lr = 1e-5, alpha = 0.9999, iter = 8e5, burnin = 8e4, thin = 40, progress = FALSE)
mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
cat(summ(as.matrix(f), mom$mean[ps], mom$sd[ps], refs, f$time,
         "pSGLD lr 1e-5, alpha 0.9999, 8e5 iterations"), "\n\n", sep = "")

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
