# Time to accuracy: sgld against rstan's NUTS on simulated logistic regression.
#
# Acceptance criterion measured here (the issue's wording):
#   "Time to accuracy: simulated logistic regression with d = 20 and n = 10^5
#    and 10^6; rstan NUTS (Debian r-cran-rstan) 4 chains x 1000 draws as the
#    reference posterior; wall time for sgld (best of plain, pSGLD, control
#    variates) to reach posterior means within 0.1 reference sd and sds within
#    10%, against NUTS's wall time."   Target: at n = 10^6 sgld >= 10x faster.
#
# Run from the package root:   Rscript bench/nuts.R
#   NUTS_N=1e5 Rscript bench/nuts.R      only the smaller size (about 15 min)
#   NUTS_N=1e5,1e6 (the default)          both sizes (about an hour on 2 cores;
#                                         the n = 10^6 NUTS run alone is ~27 min)
#   NUTS_DRAWS=250 / NUTS_WARMUP=250      force a shorter NUTS run (default: 1000
#                                         and 1000, shortened automatically at a
#                                         size whose full run is predicted to
#                                         take more than NUTS_MAX_MIN = 25 minutes)
#   NUTS_REFERENCE=laplace                skip Stan and use the Laplace
#                                         approximation as the reference (quick
#                                         check of the sgld half only)
#   NUTS_CAP=300                          longest wall time (s) one sgld
#                                         configuration may use before it is
#                                         declared "not reached"
# The markdown section goes to stdout; progress goes to stderr when it is a
# terminal or BENCH_PROGRESS=1 is set; warnings are collected into the section.
#
# ---------------------------------------------------------------------------
# Definitions (also printed in the markdown section)
#
# Model: y_i ~ Bernoulli(logit^-1(x_i' beta)), x_i = (1, z_i), z_i ~ N(0, I_19),
# beta_j ~ N(0, 10^2) for all 20 coefficients including the intercept. This is
# sgld's model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL) with X holding an
# "(Intercept)" column: prior_normal(mean, sd) takes a standard deviation, and
# prior_intercept = NULL gives the intercept the same prior. The Stan program
# below is the same model, written with bernoulli_logit_glm (Stan's fastest
# form of a logistic likelihood: one matrix-vector product and an analytic
# gradient per evaluation).
#
# NUTS: rstan::sampling(), 4 chains, warmup 1000, 1000 draws each, cores = 2,
# default adaptation. Its time is the elapsed time of the sampling() call
# (forking the chains, warmup, sampling, collecting the results); compilation
# is reported separately and not counted. The reference is its posterior means and sds.
#
# sgld: every configuration runs 2 chains on 2 threads, batch 100. "Time to
# accuracy" of a configuration is the wall time of the cheapest run, among
# budgets T = T0, T0 sqrt(2), 2 T0, ... iterations per chain (default burn-in:
# the first half of the run is discarded), whose kept draws meet, for all 20
# coefficients at once,
#   |mean_sgld - mean_NUTS| <= 0.1 sd_NUTS,  |sd_sgld / sd_NUTS - 1| <= 0.10,
# and whose smallest effective sample size (coda::effectiveSize summed over
# chains) is at least 400, so that the Monte Carlo error of a mean is at most
# 0.05 sd, half the tolerance (a pass is then not luck). The budgets are
# searched by continuing one pair of chains (init = fit, burnin = 0, which the
# package guarantees gives the draws of one long run); the first budget T* that
# passes is then re-run from scratch as one sgld(iter = T*, burnin = T*/2) call
# with the same seed, and its elapsed time, plus the time of any set-up
# (posterior_mode(), with or without covariance = TRUE), is the reported wall
# time. The re-run must reproduce the draws of the search exactly (checked).
# Learning rates: a small grid per method, scaled with n as the theory of each
# method says (below); the best configuration is the fastest over the grid, so
# the time of choosing the learning rate is not counted (for NUTS, step-size
# adaptation is part of its warmup and is counted).
# ---------------------------------------------------------------------------

suppressPackageStartupMessages(library(sgld))

t_script <- proc.time()[["elapsed"]]
now <- function() proc.time()[["elapsed"]]
# CPU seconds of this process (all its threads) and of its reaped children
# (rstan's forked chains): insensitive to other load on the machine
cpu <- function() sum(proc.time()[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
# Progress goes to stderr only on a terminal or with BENCH_PROGRESS=1: bench/run-all.R
# captures stderr together with stdout, and the markdown must come first.
progress <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress) message(sprintf(...))
env_num <- function(name, default) {
  v <- Sys.getenv(name, "")
  if (nzchar(v)) as.numeric(v) else default
}

sizes <- as.numeric(strsplit(Sys.getenv("NUTS_N", "1e5,1e6"), ",")[[1]])
reference_kind <- Sys.getenv("NUTS_REFERENCE", "nuts")
cap <- env_num("NUTS_CAP", 300)
rerun_max <- 120      # re-run a passing budget from scratch when its search took at most this
nuts_max_min <- env_num("NUTS_MAX_MIN", 25)
d <- 20
batch <- 100
chains <- 2
threads <- 2
prior_sd <- 10
min_ess <- 400
tol_mean <- 0.1
tol_sd <- 0.1
load_start <- readLines("/proc/loadavg")

source("bench/logistic-sim.R")   # beta_true, simulate(n), stan_code

stan_model_cache <- NULL
compile_time <- NA_real_
get_stan_model <- function() {
  if (!is.null(stan_model_cache)) return(stan_model_cache)
  suppressPackageStartupMessages(library(rstan))
  # Debian's r-cran-bh puts Boost in /usr/include, where rstan does not look
  if (!file.exists(rstan::rstan_options("boost_lib")) && file.exists("/usr/include/boost"))
    rstan::rstan_options(boost_lib = "/usr/include")
  say("compiling the Stan model ...")
  t0 <- now()
  sm <- rstan::stan_model(model_code = stan_code, model_name = "logistic")
  compile_time <<- now() - t0
  say("  compiled in %.1f s", compile_time)
  stan_model_cache <<- sm
  sm
}

run_nuts <- function(dat, warmup, draws) {
  sm <- get_stan_model()
  n <- nrow(dat$X)
  say("NUTS n = %g: 4 chains, warmup %d, draws %d, cores = 2 ...", n, warmup, draws)
  t0 <- now()
  c0 <- cpu()
  fit <- rstan::sampling(sm, data = list(N = n, K = d, X = dat$X, y = as.integer(dat$y),
                                         prior_sd = prior_sd),
                         chains = 4, warmup = warmup, iter = warmup + draws, cores = 2,
                         seed = 20240612, refresh = 0, open_progress = FALSE)
  wall <- now() - t0
  cpu_s <- cpu() - c0
  s <- rstan::summary(fit, pars = "beta")$summary
  et <- rstan::get_elapsed_time(fit)
  sp <- rstan::get_sampler_params(fit, inc_warmup = TRUE)
  leap_warm <- sum(sapply(sp, function(x) sum(x[seq_len(warmup), "n_leapfrog__"])))
  leap_samp <- sum(sapply(sp, function(x) sum(x[-seq_len(warmup), "n_leapfrog__"])))
  out <- list(mean = unname(s[, "mean"]), sd = unname(s[, "sd"]), ess = unname(s[, "n_eff"]),
              rhat = unname(s[, "Rhat"]), wall = wall, cpu = cpu_s, warmup = warmup, draws = draws,
              chain_warmup = et[, "warmup"], chain_sample = et[, "sample"],
              leapfrog_warmup = leap_warm, leapfrog_sample = leap_samp,
              divergent = rstan::get_num_divergent(fit),
              treedepth = rstan::get_num_max_treedepth(fit),
              stepsize = mean(sapply(sp, function(x) x[warmup + 1, "stepsize__"])))
  say("  NUTS wall %.1f s, CPU %.1f s (chains: warmup %s s, sampling %s s); min n_eff %.0f, max Rhat %.3f",
      wall, cpu_s, paste(round(out$chain_warmup), collapse = "/"),
      paste(round(out$chain_sample), collapse = "/"), min(out$ess), max(out$rhat))
  rm(fit)
  gc(verbose = FALSE)
  out
}

laplace_reference <- function(pmc) {
  list(mean = unname(pmc$mode), sd = unname(sqrt(diag(pmc$covariance))), ess = rep(Inf, d),
       rhat = rep(1, d), wall = NA_real_, cpu = NA_real_, warmup = 0, draws = 0)
}

## ---- sgld time to accuracy ----------------------------------------------

# statistics of the kept draws with iteration > from, pooled over chains
window_stats <- function(parts, from) {
  per_chain <- lapply(parts, function(p) p$draws[p$iteration > from, , drop = FALSE])
  K <- min(vapply(per_chain, nrow, 1L))
  per_chain <- lapply(per_chain, function(u) u[seq_len(K), , drop = FALSE])
  all <- do.call(rbind, per_chain)
  ess <- if (K >= 10) Reduce(`+`, lapply(per_chain, coda::effectiveSize)) else rep(0, d)
  rhat <- if (K >= 10) {
    coda::gelman.diag(coda::mcmc.list(lapply(per_chain, coda::mcmc)), autoburnin = FALSE,
                      multivariate = FALSE)$psrf[, 1]
  } else rep(NA, d)
  list(mean = colMeans(all), sd = apply(all, 2, stats::sd), ess = unname(ess),
       rhat = unname(rhat), kept = K)
}

score <- function(st, ref) {
  mean_err <- max(abs(st$mean - ref$mean) / ref$sd)
  sd_err <- max(abs(st$sd / ref$sd - 1))
  list(mean_err = mean_err, sd_err = sd_err, min_ess = min(st$ess),
       max_rhat = max(st$rhat),
       pass = is.finite(mean_err) && mean_err <= tol_mean && sd_err <= tol_sd &&
              min(st$ess) >= min_ess)
}

# cfg: name, sampler (function), lr, thin, T0, args (extra sampler arguments),
# setup (seconds of set-up counted in the wall time), seed
time_to_accuracy <- function(m, cfg, ref, cap) {
  say("  %s, lr = %.3g, thin %d ...", cfg$name, cfg$lr, cfg$thin)
  step <- 2 * cfg$thin
  budgets <- unique(step * round(cfg$T0 * sqrt(2)^(0:60) / step))
  call_sampler <- function(iter, burnin, init) {
    do.call(cfg$sampler, c(list(m, lr = cfg$lr, batch_size = batch, iter = iter,
                                burnin = burnin, thin = cfg$thin, chains = chains,
                                init = init, threads = threads), cfg$args))
  }
  set.seed(cfg$seed)
  fit <- NULL
  done <- 0
  spent <- cfg$setup
  spent_cpu <- cfg$setup_cpu
  parts <- lapply(seq_len(chains), function(c) list(draws = NULL, iteration = NULL))
  trail <- list()
  res <- NULL
  for (T in budgets) {
    # do not start a chunk that would end well past the cap (rate so far)
    if (done > 0 && spent + (spent - cfg$setup) * (T - done) / done > 1.1 * cap) break
    t0 <- now()
    c0 <- cpu()
    fit <- call_sampler(T - done, 0, fit)
    spent <- spent + (now() - t0)
    spent_cpu <- spent_cpu + (cpu() - c0)
    if (!all(fit$status == "done")) {
      say("    budget %g: a chain stopped (%s)", T, paste(fit$status, collapse = ", "))
      res <- list(pass = FALSE, diverged = TRUE, T = T, spent = spent)
      break
    }
    done <- T
    for (c in seq_len(chains)) {
      parts[[c]]$draws <- rbind(parts[[c]]$draws, unclass(fit$draws[[c]])[, , drop = FALSE])
      parts[[c]]$iteration <- c(parts[[c]]$iteration, fit$iteration[, c])
    }
    st <- window_stats(parts, T / 2)
    sc <- score(st, ref)
    trail[[length(trail) + 1]] <- c(T = T, spent = spent, sc[c("mean_err", "sd_err", "min_ess")])
    say("    T = %-9g search time %7.1f s: max |mean err| %.3f sd, max |sd err| %.3f, min ESS %.0f%s",
        T, spent, sc$mean_err, sc$sd_err, sc$min_ess, if (sc$pass) "  PASS" else "")
    res <- c(sc, list(T = T, spent = spent, spent_cpu = spent_cpu, stats = st, diverged = FALSE))
    if (sc$pass || spent > cap) break
  }
  res$trail <- trail
  if (isTRUE(res$pass) && res$spent - cfg$setup > rerun_max) {
    # a long search: the sum of its calls is the run's time (the calls add no
    # full-data work for a run without control variates, and only one pass
    # each with them); not repeated, to keep the benchmark's length in bounds
    res$run_wall <- res$spent - cfg$setup
    res$run_cpu <- res$spent_cpu - cfg$setup_cpu
    res$reproduced <- NA
    res$rerun <- FALSE
    res$wall <- res$spent
    res$cpu <- res$spent_cpu
    say("    time to accuracy = the search's calls: %.2f s (CPU %.2f s)", res$wall, res$cpu)
  } else if (isTRUE(res$pass)) {
    # the same run as one call, from scratch: its time is the one reported
    set.seed(cfg$seed)
    t0 <- now()
    c0 <- cpu()
    one <- call_sampler(res$T, res$T / 2, NULL)
    res$run_wall <- now() - t0
    res$run_cpu <- cpu() - c0
    res$rerun <- TRUE
    res$engine <- one$time
    a <- do.call(rbind, lapply(seq_len(chains), function(c) unclass(one$draws[[c]])))
    b <- do.call(rbind, lapply(seq_len(chains), function(c)
      parts[[c]]$draws[parts[[c]]$iteration > res$T / 2, , drop = FALSE]))
    res$reproduced <- identical(dim(a), dim(b)) && isTRUE(all.equal(unname(a), unname(b),
                                                                      tolerance = 0))
    res$wall <- cfg$setup + res$run_wall
    res$cpu <- cfg$setup_cpu + res$run_cpu
    say("    single run of T* = %g: %.2f s, CPU %.2f s (+ set-up %.2f s); draws reproduced: %s",
        res$T, res$run_wall, res$run_cpu, cfg$setup, res$reproduced)
  } else {
    res$wall <- res$cpu <- NA_real_
  }
  res
}

## ---- one size ------------------------------------------------------------

run_size <- function(n, nuts_plan) {
  say("=== n = %g ===", n)
  t0 <- now()
  dat <- simulate(n)
  m <- model_logistic(dat$X, dat$y, prior = prior_normal(0, prior_sd), prior_intercept = NULL)
  say("data and model: %.1f s", now() - t0)

  # set-up costs, each timed on its own (BFGS is deterministic: same mode)
  t0 <- now()
  c0 <- cpu()
  pm <- posterior_mode(m)
  t_mode <- now() - t0
  c_mode <- cpu() - c0
  t0 <- now()
  c0 <- cpu()
  pmc <- posterior_mode(m, covariance = TRUE)
  t_mode_cov <- now() - t0
  c_mode_cov <- cpu() - c0
  say("posterior_mode(): %.1f s (%d gradient evaluations); with covariance = TRUE: %.1f s",
      t_mode, pm$iterations, t_mode_cov)

  ref <- if (reference_kind == "laplace") {
    laplace_reference(pmc)
  } else {
    run_nuts(dat, nuts_plan$warmup, nuts_plan$draws)
  }
  # a configuration slower than NUTS is not worth following further
  size_cap <- if (is.finite(ref$wall)) min(cap, ref$wall) else cap
  X_bytes <- object.size(dat$X)
  rm(dat)
  gc(verbose = FALSE)

  # Learning-rate grids, scaled with n (posterior precision grows like n):
  #  * plain SGLD and pSGLD: the minibatch noise inflates a variance by about
  #    1 + eta * (n^2 / m) * v / 2 (v: per-item gradient variance, about 0.2
  #    here), so for sds within 10% eta must shrink like m / n^2;
  #  * control variates: the noise nearly vanishes at the posterior scale, and
  #    eta is limited by the discretisation, eta * lambda_max(H) ~ 0.1 with
  #    H ~ n * E[p (1 - p) x x'], so eta ~ 1 / n;
  #  * fixed preconditioner P = Laplace covariance with control variates:
  #    P H ~ I, so eta is dimensionless.
  s <- 1e5 / n
  plain_lr <- c(1e-8, 2e-8) * s^2
  psgld_lr <- c(3e-10, 6e-10) * s^2
  cv_lr <- c(1e-6, 3e-6, 1e-5) * s
  pcv_lr <- c(0.05, 0.1, 0.2)
  # thinning (draws kept every ~10th of an autocorrelation time) and first budget
  plain_thin <- round(100 / s)
  cfgs <- c(
    lapply(plain_lr, function(lr) list(name = "SGLD", sampler = sgld, lr = lr,
                                       thin = plain_thin, T0 = 40 * plain_thin, args = list(),
                                       setup = 0, setup_cpu = 0, seed = 1)),
    lapply(psgld_lr, function(lr) list(name = "pSGLD", sampler = psgld, lr = lr,
                                       thin = plain_thin, T0 = 40 * plain_thin, args = list(),
                                       setup = 0, setup_cpu = 0, seed = 2)),
    lapply(cv_lr, function(lr) list(name = "SGLD + control variates", sampler = sgld, lr = lr,
                                    thin = 2, T0 = 400,
                                    args = list(control_variates = pm$mode),
                                    setup = t_mode, setup_cpu = c_mode, seed = 3)),
    lapply(pcv_lr, function(lr) list(name = "SGLD + control variates + Laplace preconditioner",
                                     sampler = sgld, lr = lr, thin = 2, T0 = 400,
                                     args = list(control_variates = pmc$mode,
                                                 precondition = pmc$covariance),
                                     setup = t_mode_cov, setup_cpu = c_mode_cov, seed = 4))
  )
  results <- lapply(cfgs, function(cfg) {
    r <- time_to_accuracy(m, cfg, ref, size_cap)
    r$cfg <- cfg
    r
  })
  list(n = n, ref = ref, results = results, cap = size_cap, t_mode = t_mode, t_mode_cov = t_mode_cov,
       mode_evals = pm$iterations, X_bytes = X_bytes)
}

## ---- NUTS plan: full run unless predicted too long -------------------------

nuts_plan_for <- function(n, previous) {
  forced_w <- env_num("NUTS_WARMUP", NA)
  forced_d <- env_num("NUTS_DRAWS", NA)
  plan <- list(warmup = 1000L, draws = 1000L, predicted = NA_real_, shortened = FALSE)
  if (!is.null(previous) && is.finite(previous$ref$wall)) {
    # NUTS cost is one full pass over the data per leapfrog step: linear in n
    plan$predicted <- previous$ref$wall * (n / previous$n) *
      (2000 / (previous$ref$warmup + previous$ref$draws))
    if (plan$predicted > 60 * nuts_max_min) {
      plan$warmup <- 250L
      plan$draws <- 250L
      plan$shortened <- TRUE
    }
  }
  if (is.finite(forced_w)) plan$warmup <- as.integer(forced_w)
  if (is.finite(forced_d)) plan$draws <- as.integer(forced_d)
  plan$shortened <- plan$warmup < 1000L || plan$draws < 1000L
  plan
}

runs <- list()
warns <- character()
for (n in sort(sizes)) {
  plan <- nuts_plan_for(n, if (length(runs)) runs[[length(runs)]] else NULL)
  r <- withCallingHandlers(run_size(n, plan), warning = function(w) {
    warns <<- c(warns, sprintf("n = %g: %s", n, conditionMessage(w)))
    invokeRestart("muffleWarning")
  })
  r$plan <- plan
  runs[[length(runs) + 1]] <- r
}

## ---- markdown --------------------------------------------------------------

fmt_t <- function(x) ifelse(is.na(x), "-", ifelse(x < 10, sprintf("%.2f", x), sprintf("%.0f", x)))
fmt_n <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)
fmt_x <- function(a, b) if (is.finite(a) && is.finite(b)) sprintf("%.1fx", a / b) else "-"
loadavg <- function(x) paste(strsplit(x, " ")[[1]][1:3], collapse = " ")

cat("## Time to accuracy against NUTS\n\n")
cat(sprintf("*`Rscript bench/nuts.R`, %s, sizes %s; R %s, sgld %s; 2 vCPUs; load average at start: %s.*\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), paste(fmt_n(sizes), collapse = " and "),
            getRversion(), as.character(utils::packageVersion("sgld")), loadavg(load_start)))
cat("**Set-up.** Logistic regression, d = 20: an intercept and 19 independent N(0, 1)",
    "covariates, true coefficients", sprintf("(%s),", paste(beta_true, collapse = ", ")),
    "prior N(0, 10^2) on every coefficient including the intercept",
    "(`model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)`; `prior_normal()` takes an sd, and",
    "`prior_intercept = NULL` gives the intercept the same prior). The Stan program is the same",
    "model (`beta ~ normal(0, 10); y ~ bernoulli_logit_glm(X, 0, beta)`, Stan's fastest logistic",
    "likelihood).",
    if (reference_kind == "laplace")
      "**Reference: the Laplace approximation (NUTS_REFERENCE=laplace), not NUTS.**"
    else sprintf(paste("Reference: rstan %s NUTS, 4 chains, `cores = 2` (2 chains at a time),",
                       "default adaptation; its time is the elapsed (wall) time of the `sampling()`",
                       "call: warmup, sampling and rstan's overhead; compiling the model (%.0f s,",
                       "once) is not counted."),
                 as.character(utils::packageVersion("rstan")), compile_time),
    "\n\n")
cat("**sgld time to accuracy.** 2 chains on 2 threads, batch 100, first half of every run",
    "discarded. A run *passes* when, for all 20 coefficients, |mean - mean_NUTS| <= 0.1 sd_NUTS",
    "and |sd / sd_NUTS - 1| <= 10%, **and** the smallest ESS (coda, summed over chains) is",
    "at least 400 (Monte Carlo error of a mean <= 0.05 sd, half the tolerance, so a pass is not",
    "luck). Iteration budgets T per chain grow by sqrt(2), searched by continuing the same chains",
    "(`init = fit`); the first budget T* that passes is re-run from scratch as one",
    "`sgld(iter = T*, burnin = T*/2)` call with the same seed (it reproduces the search's draws",
    "bit for bit), and the reported time is that call's elapsed time plus the set-up it needs:",
    "`posterior_mode()` for control variates, `posterior_mode(covariance = TRUE)` (BFGS plus 2d",
    "more full-data gradients) for the Laplace preconditioner, none for plain SGLD and pSGLD",
    "(they start at 0).",
    sprintf("When the search itself took more than %.0f s, the re-run is skipped and the time is", rerun_max),
    "the sum of the search's calls (marked †). Learning rates: a small grid per method, scaled with",
    "n as each method's theory says (plain and pSGLD: eta ~ m/n^2, since minibatch noise inflates",
    "variances by about 1 + eta n^2 v/(2m), v the per-item gradient variance; control variates:",
    "eta ~ 1/n, limited by the discretisation; Laplace preconditioner: eta dimensionless); the",
    "best is taken over the grid, so the time spent choosing a learning rate is not counted (NUTS's",
    "step-size adaptation is in its warmup and is counted). A configuration that has not passed",
    sprintf("after min(NUTS's wall time, %.0f s) of search is stopped and reported as not reached,", cap),
    "with the time at which its ESS would reach 400 if it kept growing linearly (a lower bound on",
    "its time to accuracy, which also needs the errors within tolerance). The machine is shared",
    "(other jobs ran meanwhile), so CPU seconds (all threads and child processes, insensitive to",
    "that load) are given next to wall seconds.\n\n")

best_of <- function(r) {
  ok <- Filter(function(x) isTRUE(x$pass), r$results)
  if (length(ok)) ok[[which.min(vapply(ok, `[[`, 1, "wall"))]] else NULL
}

for (r in runs) {
  ref <- r$ref
  cat(sprintf("### n = %s (design matrix %.0f MB)\n\n", fmt_n(r$n), as.numeric(r$X_bytes) / 2^20))
  if (reference_kind != "laplace") {
    cat(sprintf(paste("NUTS: warmup %d + %d draws per chain%s: **%s s wall**, %s CPU-s (Stan's",
                      "per-chain times, which in rstan %s are CPU times: warmup %s s, sampling %s s);",
                      "%s leapfrog steps (%s in warmup), i.e. %s full-data gradients; step size %.3f;",
                      "min n_eff %.0f, max R-hat %.3f, %d divergent transitions, %d at max tree depth.%s",
                      "Monte Carlo error of the reference: a NUTS mean is within about %.3f sd",
                      "(1/sqrt(min n_eff)) of the exact posterior mean, an sd within about %.1f%%.\n\n"),
                ref$warmup, ref$draws,
                if (r$plan$shortened) " (**shortened** from 1000 + 1000)" else "",
                fmt_t(ref$wall), fmt_t(ref$cpu), as.character(utils::packageVersion("rstan")),
                paste(round(ref$chain_warmup), collapse = "/"),
                paste(round(ref$chain_sample), collapse = "/"),
                fmt_n(ref$leapfrog_warmup + ref$leapfrog_sample), fmt_n(ref$leapfrog_warmup),
                fmt_n(ref$leapfrog_warmup + ref$leapfrog_sample),
                ref$stepsize, min(ref$ess), max(ref$rhat), ref$divergent, ref$treedepth,
                if (is.finite(r$plan$predicted))
                  sprintf(paste(" The full 1000 + 1000 run was predicted (from the smaller size,",
                                "linear in n) at %.0f s%s."), r$plan$predicted,
                          if (r$plan$shortened) sprintf(", over the %.0f-minute limit", nuts_max_min) else "")
                else "",
                1 / sqrt(min(ref$ess)), 100 / sqrt(2 * min(ref$ess))))
  }
  cat(sprintf(paste("Set-up: `posterior_mode()` %s s (BFGS; `iterations` = %d gradient counts, each",
                    "evaluation a full pass); with `covariance = TRUE` %s s. Search cap for this size:",
                    "%.0f s.\n\n"),
              fmt_t(r$t_mode), r$mode_evals, fmt_t(r$t_mode_cov), r$cap))
  cat("| method | lr | T* (iterations per chain) | min ESS | max mean err (sd) | max sd err | set-up s | run s | **total wall s** | total CPU s | NUTS / sgld, wall | NUTS / sgld, CPU |\n")
  cat("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
  for (x in r$results) {
    if (isTRUE(x$pass)) {
      cat(sprintf("| %s | %.3g | %s | %.0f | %.3f | %.3f | %s | %s%s | **%s** | %s | %s | %s |\n",
                  x$cfg$name, x$cfg$lr, fmt_n(x$T), x$min_ess, x$mean_err, x$sd_err,
                  fmt_t(x$cfg$setup), fmt_t(x$run_wall), if (isTRUE(x$rerun)) "" else " †",
                  fmt_t(x$wall), fmt_t(x$cpu), fmt_x(ref$wall, x$wall), fmt_x(ref$cpu, x$cpu)))
    } else {
      ess_at <- if (!is.null(x$min_ess) && x$min_ess > 0 && x$min_ess < min_ess)
        x$cfg$setup + (x$spent - x$cfg$setup) * min_ess / x$min_ess else NA
      lower <- if (is.finite(ess_at)) ess_at else x$spent
      cat(sprintf("| %s | %.3g | not reached%s after %s s (T = %s) | %.0f | %.3f | %.3f | %s | - | > %s%s | - | %s | - |\n",
                  x$cfg$name, x$cfg$lr, if (isTRUE(x$diverged)) ", diverged" else "",
                  fmt_t(x$spent), fmt_n(x$T), if (is.null(x$min_ess)) NA else x$min_ess,
                  if (is.null(x$mean_err)) NA else x$mean_err,
                  if (is.null(x$sd_err)) NA else x$sd_err, fmt_t(x$cfg$setup), fmt_t(x$spent),
                  if (is.finite(ess_at)) sprintf(" (ESS 400 at ~%s)", fmt_t(ess_at)) else "",
                  if (is.finite(ref$wall)) paste("<", fmt_x(ref$wall, lower)) else "-"))
    }
  }
  reruns <- Filter(function(x) isTRUE(x$pass) && isTRUE(x$rerun), r$results)
  if (!all(vapply(reruns, function(x) isTRUE(x$reproduced), TRUE)))
    cat("\n**Warning:** a single re-run did not reproduce the draws of the continued search.\n")
  cat("\n")
  b <- best_of(r)
  if (!is.null(b)) {
    cat(sprintf("Best: %s (lr %.3g), **%s s** wall against NUTS's %s s: **%s faster** (CPU: %s s against %s s, %s).\n\n",
                b$cfg$name, b$cfg$lr, fmt_t(b$wall), fmt_t(ref$wall), fmt_x(ref$wall, b$wall),
                fmt_t(b$cpu), fmt_t(ref$cpu), fmt_x(ref$cpu, b$cpu)))
  } else {
    cat("No sgld configuration reached the accuracy within the search cap.\n\n")
  }
}

big <- runs[[length(runs)]]
bb <- best_of(big)
cat("**Verdict.** ")
if (reference_kind == "laplace") {
  cat("Laplace reference only; no verdict against NUTS.\n\n")
} else if (big$n < 1e6) {
  cat(sprintf("Only n = %s was run (NUTS_N); the target is stated at n = 10^6.\n\n", fmt_n(big$n)))
} else if (!is.null(bb)) {
  ratio <- big$ref$wall / bb$wall
  cat(sprintf(paste("At n = %s the best sgld configuration (%s, lr %.3g) reaches the accuracy in %s s",
                    "wall against NUTS's %s s%s: **%.0fx faster** (%.0fx in CPU time), so the target",
                    "(>= 10x) is **%s**."),
              fmt_n(big$n), bb$cfg$name, bb$cfg$lr, fmt_t(bb$wall), fmt_t(big$ref$wall),
              if (big$plan$shortened)
                sprintf(paste(" for a NUTS run shortened to %d + %d draws per chain (the full",
                              "1000 + 1000 would take about %.0f s, so against it the ratio is",
                              "about %.0fx)"), big$ref$warmup, big$ref$draws, big$plan$predicted,
                        big$plan$predicted / bb$wall) else "",
              ratio, big$ref$cpu / bb$cpu, if (ratio >= 10) "met" else "not met"))
  cat(" Plain SGLD and pSGLD (no control variates) do not share this: for sds within 10% their",
      "learning rate must shrink like m/n^2 while the posterior's scale shrinks like 1/sqrt(n), so",
      "the iterations they need grow like n, as NUTS's cost does; see their rows.\n\n")
} else {
  cat("No sgld configuration reached the accuracy at the largest size: target **not met**.\n\n")
}
if (length(warns))
  cat("Warnings during the runs:\n\n", paste0("- ", gsub("\n", " ", unique(warns)), "\n"), "\n", sep = "")
cat(sprintf("*Total time of the benchmark: %.0f s (load average at the end: %s).*\n",
            now() - t_script, loadavg(readLines("/proc/loadavg"))))
