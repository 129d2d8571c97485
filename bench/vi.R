# Bayes by Backprop (sgld::bbb()) against rstan::vb() (ADVI, mean-field) on
# simulated logistic regression, d = 20, n = 10^5 and 10^6.
#
# Acceptance criterion measured here (issue 17): "BBB reaches the mean-field
# optimum (means within 0.05 sd of NUTS) in less time than rstan::vb() (ADVI
# mean-field, Stan's logistic GLM) takes to converge on the same model; both
# times and accuracies in bench/RESULTS.md. Target: at least 10x faster."
#
# (Local reparameterisation, bbb(local = ): bench/vi-local.R.)
#
# Run from the package root:   Rscript bench/vi.R
#   VI_N=1e5            only the smaller size (default: 1e5,1e6)
#   VI_SKIP_STAN=1      skip rstan::vb() (the BBB half only)
#   VI_SKIP_PLAIN=1     skip BBB without control variates (its search takes
#                       about 10 minutes per size on a loaded 2-core machine)
#
# Model and data: those of bench/nuts.R (same simulation, same seeds, same
# Stan program with bernoulli_logit_glm and a N(0, 10^2) prior on all 20
# coefficients).
#
# Reference: the Laplace approximation from sgld::posterior_mode(covariance =
# TRUE) (a full-data BFGS fit): its mode stands for the posterior mean (for a
# logistic posterior with n >= 10^5 the two differ by O(1/n), about 0.003
# posterior sd here) and sqrt(diag(covariance)) for the posterior sd; the
# mean-field optimum's sds are sqrt(1 / H_jj), H the Hessian of the negative
# log posterior at the mode. bench/nuts.R's NUTS runs on the same data agree
# with that reference (see its section); NUTS itself is not rerun here.
#
# BBB as it was before its automatic settings (bench/vi-defaults.R times
# those): in the model's coordinates (laplace = FALSE), one draw of w per
# minibatch (local = FALSE), one chain, one thread, batch 100, Adam,
# lr = lr_exp(0.01, 1e-4) over the run, init_scale 0.001, averaged over the
# last half; with
# control variates (centred at posterior_mode(), whose time is counted; the
# chain starts there) and without (start at 0). Iteration budgets T = 2000,
# 2000 sqrt(2), ... are each run from scratch (seed fixed) until q's means
# are within 0.05 reference sd of the reference means for all 20
# coefficients, or a run takes over 120 s (then "not reached"); the time is
# that run's elapsed time. The sds are reported against the mean-field
# optimum. Without control variates the minibatch noise needs about
# (n sd_item sd_post / 0.02)^2 item gradients for that accuracy (thousands of
# passes over the data): measured, not tuned away.
#
# ADVI: rstan::vb(algorithm = "meanfield") with Stan's defaults (iter 10000,
# tol_rel_obj 0.01, adaptive eta, grad_samples 1, elbo_samples 100,
# output_samples 1000); its time is the elapsed time of the vb() call
# (compilation reported separately, not counted). Its means are those of its
# output draws (1000: Monte Carlo error 0.03 of q's sd), its sds theirs.
#
# The machine is shared (other jobs run meanwhile): CPU seconds are given
# next to wall seconds.
suppressPackageStartupMessages(library(sgld))
now <- function() proc.time()[["elapsed"]]
cpu <- function() sum(proc.time()[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
say <- function(...) message(sprintf(...))
sizes <- as.numeric(strsplit(Sys.getenv("VI_N", "1e5,1e6"), ",")[[1]])
use_stan <- !nzchar(Sys.getenv("VI_SKIP_STAN")) && requireNamespace("rstan", quietly = TRUE)
use_plain <- !nzchar(Sys.getenv("VI_SKIP_PLAIN"))

d <- 20
prior_sd <- 10
source("bench/logistic-sim.R")   # beta_true, simulate(n), stan_code
compile_time <- NA_real_
stan_model <- local({
  sm <- NULL
  function() {
    if (!is.null(sm)) return(sm)
    suppressPackageStartupMessages(library(rstan))
    if (!file.exists(rstan::rstan_options("boost_lib")) && file.exists("/usr/include/boost"))
      rstan::rstan_options(boost_lib = "/usr/include")
    t0 <- now()
    sm <<- rstan::stan_model(model_code = stan_code, model_name = "logistic")
    compile_time <<- now() - t0
    sm
  }
})

run_advi <- function(dat) {
  sm <- stan_model()
  t0 <- now(); c0 <- cpu()
  fit <- rstan::vb(sm, data = list(N = nrow(dat$X), K = d, X = dat$X, y = as.integer(dat$y),
                                   prior_sd = prior_sd),
                   algorithm = "meanfield", seed = 20240612, refresh = 0)
  wall <- now() - t0; cpu_s <- cpu() - c0
  draws <- as.matrix(fit, pars = "beta")
  list(mean = unname(colMeans(draws)), sd = unname(apply(draws, 2, sd)), wall = wall, cpu = cpu_s)
}

run_bbb <- function(m, ref, cv) {
  T <- 2000
  repeat {
    set.seed(1)
    t0 <- now(); c0 <- cpu()
    # control variates: the mode is part of the time
    centre <- if (cv) posterior_mode(m)$mode else FALSE
    fit <- bbb(m, iter = T, batch_size = 100, lr = lr_exp(0.01, 1e-4), init_scale = 0.001,
               init = if (cv) NULL else rep(0, d), control_variates = centre,
               draws = 10, elbo_draws = 0, threads = 1, laplace = FALSE, optimizer = "adam",
               local = FALSE)
    wall <- now() - t0; cpu_s <- cpu() - c0
    mu <- fit$variational$mean[1, ]
    s <- fit$variational$sd[1, ]
    err <- max(abs(mu - ref$mean) / ref$sd)
    say("  BBB%s T = %d: %.2f s, max |mean error| %.3f sd, sd / mean-field optimum %.3f-%.3f",
        if (cv) " (control variates)" else "", T, wall, err, min(s / ref$mf_sd), max(s / ref$mf_sd))
    if (err <= 0.05 || wall > 120)
      return(list(T = T, wall = wall, cpu = cpu_s, err = err, sd_ratio = range(s / ref$mf_sd),
                  passed = err <= 0.05))
    T <- round(T * sqrt(2))
  }
}

cat("## Variational inference: Bayes by Backprop vs rstan::vb (ADVI)\n\n")
cat(sprintf("*`Rscript bench/vi.R`, %s; R %s, sgld %s; load average at start: %s.*\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), packageVersion("sgld"),
            paste(readLines("/proc/loadavg", warn = FALSE)[1], collapse = "")))
cat("Logistic regression, d = 20 (intercept + 19 N(0, 1) covariates), prior N(0, 10^2), the data of bench/nuts.R. ",
    "Reference: the Laplace approximation (mode for the mean, sqrt(1/H_jj) for the mean-field sds). ",
    "BBB: 1 chain, 1 thread, batch 100, Adam, lr_exp(0.01, 1e-4), init_scale 0.001, averaged over the last half; with control variates (the time of posterior_mode() included) and without; the smallest budget T (from 2000, x sqrt(2)) whose q has all 20 means within 0.05 reference sd (a run over 120 s stops the search: not reached). ",
    "ADVI: rstan::vb(algorithm = \"meanfield\"), Stan's defaults (convergence by tol_rel_obj = 0.01), time of the vb() call without compilation.\n\n", sep = "")
rows <- list()
for (n in sizes) {
  say("n = %g: simulating ...", n)
  dat <- simulate(n)
  m <- model_logistic(dat$X, dat$y, prior = prior_normal(0, prior_sd), prior_intercept = NULL)
  t0 <- now()
  pm <- posterior_mode(m, covariance = TRUE)
  H <- solve(pm$covariance)
  ref <- list(mean = unname(pm$mode), sd = unname(sqrt(diag(pm$covariance))),
              mf_sd = unname(sqrt(1 / diag(H))))
  say("  reference in %.1f s", now() - t0)
  bc <- run_bbb(m, ref, cv = TRUE)
  bp <- if (use_plain) run_bbb(m, ref, cv = FALSE)
        else list(T = NA, wall = NA, cpu = NA, err = NA, sd_ratio = c(NA, NA), passed = NA)
  a <- if (use_stan) {
    say("  ADVI ...")
    tryCatch(run_advi(dat), error = function(e) { say("  ADVI failed: %s", conditionMessage(e)); NULL })
  }
  na <- function(x) if (is.null(a)) NA else x
  rows[[length(rows) + 1]] <- data.frame(
    n = format(n, big.mark = ",", scientific = FALSE),
    method = c("BBB, control variates (sgld::bbb)", "BBB, plain (sgld::bbb)", "ADVI (rstan::vb)"),
    wall_s = c(bc$wall, bp$wall, na(a$wall)),
    cpu_s = c(bc$cpu, bp$cpu, na(a$cpu)),
    iterations = c(bc$T, bp$T, NA),
    passed = c(bc$passed, bp$passed, NA),
    max_mean_err_sd = c(bc$err, bp$err, na(max(abs(a$mean - ref$mean) / ref$sd))),
    sd_over_mf_optimum = c(sprintf("%.3f-%.3f", bc$sd_ratio[1], bc$sd_ratio[2]),
                           sprintf("%.3f-%.3f", bp$sd_ratio[1], bp$sd_ratio[2]),
                           na(sprintf("%.3f-%.3f", min(a$sd / ref$mf_sd), max(a$sd / ref$mf_sd)))),
    stringsAsFactors = FALSE)
  rm(dat, m)
  gc(verbose = FALSE)
}
tab <- do.call(rbind, rows)
cat("| n | method | wall s | CPU s | iterations | max mean error (sd) | sd / mean-field optimum |\n")
cat("|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(tab)))
  cat(sprintf("| %s | %s | %.2f | %.2f | %s | %.3f | %s |\n", tab$n[i], tab$method[i], tab$wall_s[i],
              tab$cpu_s[i], if (is.na(tab$iterations[i])) "-"
                            else paste0(tab$iterations[i], if (isFALSE(tab$passed[i])) " (not reached)"),
              tab$max_mean_err_sd[i], tab$sd_over_mf_optimum[i]))
if (use_stan) cat(sprintf("\nStan compilation (not counted): %.0f s.\n", compile_time))
for (nn in unique(tab$n)) {
  r <- tab[tab$n == nn, ]
  if (all(is.finite(r$wall_s[c(1, 3)])))
    cat(sprintf("\nn = %s: BBB with control variates is %.1fx faster than ADVI in wall time (%.1fx in CPU time).\n",
                nn, r$wall_s[3] / r$wall_s[1], r$cpu_s[3] / r$cpu_s[1]))
}
