# Exact references for model_sv(type = "rw") (Keng's random walk with t
# returns, the package's default priors sigma ~ Exp(10), nu ~ Exp(0.1),
# s[1] ~ N(0, 100^2)): rstan's NUTS on the same model and priors, and on
# MASS::SP500 a long exact run of the package itself, cross-checked by NUTS.
#   1. A simulated series, T = 500 (s a random walk with sigma = 0.3, t_8
#      returns, set.seed(5)): 4 chains x 10000 draws after 1000 warm-up,
#      cross-checked against the package's long mala(). Stored as
#      tests/testthat/sv-reference.rds (the accuracy tests of test-model-sv.R
#      read it). ("funnel": the same for bench/sv.R's earlier series, T = 200,
#      sigma = 0.15, printed only.)
#   2. MASS::SP500 (T = 2780): the package's exact mala() with the path
#      whitened, cross-checked by rstan's non-centred NUTS. Stored as
#      inst/extdata/sv-sp500-reference.rds (the vignette, bench/sv.R and the
#      tests read it).
# Each stores the globals' means, sds and ESS, and the path's means and sds;
# no draws of the path (a few tens of kB).
#   3. "sp500-draws": 2,000 draws of the globals for the vignette's densities
#      (nu's posterior is skewed, so a normal with the reference's mean and sd
#      misdraws it), from a second, shorter exact run, added to the
#      MASS::SP500 reference as `gdraws` with their quantiles.
#   Rscript data-raw/sv-reference.R [sim|funnel|sp500|sp500-nuts|sp500-draws]   (all when no argument)
suppressPackageStartupMessages({library(sgld); library(rstan)})
what <- commandArgs(TRUE)
if (!length(what)) what <- c("sim", "funnel", "sp500", "sp500-nuts", "sp500-draws")

# The Stan program in both parameterisations of the path: centred (s itself,
# as model_sv() samples it) and non-centred (s[t] = s[t-1] + sigma z[t],
# z ~ N(0, 1)); the same posterior. Each series uses the one NUTS handles:
# on the T = 200 series (sigma's posterior 0.033 +- 0.027, a funnel) centred
# NUTS failed (7042 of 20000 transitions at the maximum tree depth, ESS of
# sigma 23, R-hat 1.5) and non-centred worked; on the T = 500 series (sigma
# well identified) non-centred NUTS ran over 15 minutes without finishing,
# as the data's information in the innovations grows like sigma^2 T^2 (see
# ?model_sv), and centred is the one to use.
stan_centred <- "
data { int<lower=2> T; vector[T] y; }
parameters { real<lower=0> sigma; real<lower=0> nu; vector[T] s; }
model {
  sigma ~ exponential(10);
  nu ~ exponential(0.1);
  s[1] ~ normal(0, 100);
  s[2:T] ~ normal(s[1:(T - 1)], sigma);
  y ~ student_t(nu, 0, exp(s));
}"
stan_noncentred <- "
data { int<lower=2> T; vector[T] y; }
parameters { real<lower=0> sigma; real<lower=0> nu; real s1; vector[T - 1] z; }
transformed parameters {
  vector[T] s;
  s[1] = s1;
  for (t in 2:T) s[t] = s[t - 1] + sigma * z[t - 1];
}
model {
  sigma ~ exponential(10);
  nu ~ exponential(0.1);
  s1 ~ normal(0, 100);
  z ~ std_normal();
  y ~ student_t(nu, 0, exp(s));
}"
# Debian's r-cran-bh is a virtual package over libboost-dev: its headers are
# in /usr/include, where rstan does not look by itself
boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
stan_programs <- list(centred = stan_centred, noncentred = stan_noncentred)
compiled <- list()
stan_program <- function(param) {
  if (is.null(compiled[[param]]))
    compiled[[param]] <<- stan_model(model_code = stan_programs[[param]], boost_lib = boost)
  compiled[[param]]
}

nuts_reference <- function(y, iter, warmup, seed, param) {
  m <- model_sv(y, type = "rw")
  s0 <- m$default_init[-(1:2)]
  init <- function() list(sigma = 0.1, nu = 10, s = s0, s1 = s0[1], z = diff(s0) / 0.1)
  t0 <- proc.time()[["elapsed"]]
  fit <- sampling(stan_program(param), data = list(T = length(y), y = as.double(y)), chains = 4, cores = 1,
                  iter = iter, warmup = warmup, seed = seed, refresh = 0, init = init,
                  control = list(adapt_delta = 0.95, max_treedepth = 12))
  seconds <- proc.time()[["elapsed"]] - t0
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  div <- sum(vapply(sp, function(x) sum(x[, "divergent__"]), 0))
  tsum <- summary(fit)$summary
  dr <- as.matrix(fit)
  sc <- paste0("s[", seq_along(y), "]")
  times <- get_elapsed_time(fit)
  list(y = as.double(y), gmean = colMeans(dr[, c("sigma", "nu")]),
       gsd = apply(dr[, c("sigma", "nu")], 2, sd),
       gess = tsum[c("sigma", "nu"), "n_eff"],
       pmean = unname(colMeans(dr[, sc])), psd = unname(apply(dr[, sc], 2, sd)),
       pess = unname(tsum[sc, "n_eff"]), rhat_max = max(tsum[, "Rhat"], na.rm = TRUE),
       divergences = div, draws = nrow(dr), seconds = seconds,
       seconds_warmup = sum(times[, "warmup"]), seconds_sampling = sum(times[, "sample"]),
       method = sprintf("rstan NUTS, 4 chains x %d draws after %d warm-up, adapt_delta 0.95, %s",
                        iter - warmup, warmup, param))
}

report <- function(r, label) {
  cat(sprintf(paste0("%s: %.0f s (warm-up %.0f, sampling %.0f), %d divergences, max R-hat %.4f\n",
                     "  sigma %.5f (sd %.5f, ESS %.0f), nu %.3f (sd %.3f, ESS %.0f)\n",
                     "  path ESS %.0f to %.0f\n"),
              label, r$seconds, r$seconds_warmup, r$seconds_sampling, r$divergences, r$rhat_max,
              r$gmean[1], r$gsd[1], r$gess[1], r$gmean[2], r$gsd[2], r$gess[2],
              min(r$pess), max(r$pess)))
}

simulated_reference <- function(ns, sigma, seed, mala_lr, mala_iter, file, param) {
  set.seed(seed)
  ys <- exp(cumsum(c(0, rnorm(ns - 1, 0, sigma)))) * rt(ns, 8)
  ref <- nuts_reference(ys, iter = 11000, warmup = 1000, seed = 1, param = param)
  if (!is.null(file)) saveRDS(ref, file, version = 2)
  report(ref, sprintf("simulated T = %d, sigma = %g", ns, sigma))
  # the cross-check: the package's long MALA on the same model
  msim <- model_sv(ys, type = "rw")
  set.seed(7)
  fr <- mala(msim, lr = mala_lr, iter = mala_iter, burnin = mala_iter / 10,
             thin = mala_iter / 2e4, pars = TRUE, progress = FALSE)
  R <- as.matrix(fr)
  ess <- coda::effectiveSize(fr$draws)
  ps <- 2 + seq_len(ns)
  z_g <- (colMeans(R)[1:2] - ref$gmean) / (ref$gsd / sqrt(ess[1:2]))
  z_p <- (colMeans(R)[ps] - ref$pmean) / (ref$psd / sqrt(ess[ps]))
  ref$mala_check <- list(lr = mala_lr, iter = mala_iter, acceptance = fr$acceptance,
                         seconds = fr$time, mean_globals = colMeans(R)[1:2],
                         ess_globals = ess[1:2], ess_path = range(ess[ps]), z_globals = z_g,
                         z_path_max = max(abs(z_p)),
                         sd_ratio_globals = apply(R, 2, sd)[1:2] / ref$gsd,
                         sd_ratio_path = mean(apply(R[, ps], 2, sd) / ref$psd))
  cat(sprintf(paste0("  MALA (lr %g, %g iterations, acceptance %.2f, %.0f s): sigma %.4f, nu %.2f, ",
                     "off by %+.2f, %+.2f MALA standard errors (ESS %.0f, %.0f); ",
                     "path: largest |z| %.2f of %d; sd ratios %.3f, %.3f, path %.3f\n"),
              mala_lr, mala_iter, fr$acceptance, fr$time, colMeans(R)[1], colMeans(R)[2],
              z_g[1], z_g[2], ess[1], ess[2], max(abs(z_p)), ns,
              ref$mala_check$sd_ratio_globals[1], ref$mala_check$sd_ratio_globals[2],
              ref$mala_check$sd_ratio_path))
  if (!is.null(file)) saveRDS(ref, file, version = 2)
  invisible(ref)
}

# the series of the accuracy tests: T = 500, sigma = 0.3, where sigma is
# well identified (no funnel)
if ("sim" %in% what)
  simulated_reference(500, 0.3, seed = 5, mala_lr = 1e-3, mala_iter = 2e6,
                      file = "tests/testthat/sv-reference.rds", param = "centred")
# bench/sv.R's earlier series, T = 200, sigma = 0.15: a funnel (printed only)
if ("funnel" %in% what)
  simulated_reference(200, 0.15, seed = 5, mala_lr = 5e-4, mala_iter = 3e6, file = NULL,
                      param = "noncentred")

# MASS::SP500 (T = 2780): the package's own exact sampler, mala() with the
# path whitened given the globals (precondition = "whiten", the default for
# model_sv()), 4 chains x 250,000 iterations after a warm-up, from
# over-dispersed starts; "sp500-nuts" below cross-checks it with rstan's
# non-centred NUTS (centred NUTS is no reference here: with adapt_delta 0.95
# and a maximum tree depth of 12 every transition hit that depth, ESS of
# sigma 3 after 236 s, R-hat 1.97). bench/sv.R times both against it.
if ("sp500" %in% what) {
  m <- model_sv(MASS::SP500, type = "rw")
  set.seed(11)
  chains <- 4
  g <- sgld:::whiten_globals(m)
  # starts: the globals over-dispersed around the maximum of the whitened
  # profile, the path drawn from its Gaussian approximation given them
  # (whiten_init(), as lr = "auto" does); then 20,000 iterations of sgld() at
  # lr 0.05 in the same coordinates, which carry the chains into the bulk
  # of the posterior without rejections (MALA started away from it can
  # reject every proposal: it did from three of four starts at z = 0), and
  # mala() continues them exactly
  init <- sgld:::whiten_init(m, list(theta = g$theta, R = t(chol(g$cov))), chains)
  t0 <- proc.time()[["elapsed"]]
  warm <- sgld(m, lr = 0.05, iter = 20000, burnin = 0, chains = chains, init = init, threads = 2,
               progress = FALSE)
  iter <- 250000
  fit <- mala(m, lr = 0.1, iter = iter, burnin = 25000, thin = 25, chains = chains,
              init = warm, threads = 2, progress = FALSE)
  seconds <- proc.time()[["elapsed"]] - t0
  mom <- sgld:::pooled_moments(fit$moments, fit$chain_ids)
  G <- as.matrix(fit)
  ess <- coda::effectiveSize(fit$draws)
  rhat <- coda::gelman.diag(fit$draws, autoburnin = FALSE)$psrf[, 1]
  p <- m$k + seq_len(m$n)
  ref <- list(y = as.double(MASS::SP500), gmean = colMeans(G), gsd = apply(G, 2, sd),
              gess = ess, grhat = rhat, pmean = unname(mom$mean[p]), psd = unname(mom$sd[p]),
              acceptance = fit$acceptance, seconds = seconds, iterations = iter,
              chains = chains, draws = nrow(G),
              method = sprintf(paste0("mala(precondition = \"whiten\", lr = 0.1), %d chains x %d ",
                                      "iterations after 20,000 of sgld() and %d of mala() as ",
                                      "warm-up, thinned by 25"),
                               chains, iter - 25000, 25000))
  cat(sprintf(paste0("MASS::SP500: %.0f s, acceptance %s\n  sigma %.5f (sd %.5f, ESS %.0f, ",
                     "R-hat %.4f), nu %.3f (sd %.3f, ESS %.0f, R-hat %.4f)\n"),
              seconds, paste(round(fit$acceptance, 3), collapse = " "), ref$gmean[1], ref$gsd[1],
              ess[1], rhat[1], ref$gmean[2], ref$gsd[2], ess[2], rhat[2]))
  dir.create("inst/extdata", showWarnings = FALSE, recursive = TRUE)
  saveRDS(ref, "inst/extdata/sv-sp500-reference.rds", version = 2)
}

# The cross-check of the MASS::SP500 reference: rstan's NUTS, non-centred,
# rstan's defaults (adapt_delta 0.8, maximum tree depth 10), 4 chains x
# (1,000 warm-up + 1,000 draws); stored beside the reference as `nuts_check`.
if ("sp500-nuts" %in% what) {
  ref <- readRDS("inst/extdata/sv-sp500-reference.rds")
  y <- MASS::SP500
  m <- model_sv(y, type = "rw")
  s0 <- m$default_init[-(1:2)]
  init <- function() list(sigma = 0.05, nu = 10, s1 = s0[1], z = diff(s0) / 0.05)
  fit <- sampling(stan_program("noncentred"), data = list(T = length(y), y = as.double(y)),
                  chains = 4, cores = 1, iter = 2000, warmup = 1000, seed = 4, refresh = 0,
                  init = init)
  dr <- as.matrix(fit)
  sc <- paste0("s[", seq_along(y), "]")
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  tsum <- summary(fit, pars = c("sigma", "nu"))$summary
  g <- dr[, c("sigma", "nu")]
  ref$nuts_check <- list(
    method = "rstan NUTS, non-centred, defaults, 4 chains x (1000 warm-up + 1000 draws)",
    gmean = colMeans(g), gsd = apply(g, 2, sd), gess = tsum[, "n_eff"], rhat = tsum[, "Rhat"],
    z_globals = (colMeans(g) - ref$gmean) / sqrt(ref$gsd^2 / ref$gess + apply(g, 2, var) / tsum[, "n_eff"]),
    path_cor = cor(colMeans(dr[, sc]), ref$pmean),
    path_sd_ratio = mean(apply(dr[, sc], 2, sd) / ref$psd),
    divergences = sum(vapply(sp, function(x) sum(x[, "divergent__"]), 0)),
    seconds = sum(get_elapsed_time(fit)))
  with(ref$nuts_check, cat(sprintf(paste0(
    "NUTS cross-check: sigma %.5f (sd %.5f, ESS %.0f), nu %.3f (sd %.3f, ESS %.0f); ",
    "off by %+.2f, %+.2f combined standard errors; path: correlation %.6f, sd ratio %.4f; ",
    "%d divergences, %.0f s\n"), gmean[1], gsd[1], gess[1], gmean[2], gsd[2], gess[2],
    z_globals[1], z_globals[2], path_cor, path_sd_ratio, divergences, seconds)))
  saveRDS(ref, "inst/extdata/sv-sp500-reference.rds", version = 2)
}

# Draws of the globals for the vignette's densities: mala() with the path
# whitened (exact), 4 chains x 60,000 iterations after 20,000 of sgld() as
# warm-up, from the starts of "sp500"; 2,000 evenly spaced draws kept.
if ("sp500-draws" %in% what) {
  ref <- readRDS("inst/extdata/sv-sp500-reference.rds")
  m <- model_sv(MASS::SP500, type = "rw")
  set.seed(12)
  g <- sgld:::whiten_globals(m)
  init <- sgld:::whiten_init(m, list(theta = g$theta, R = t(chol(g$cov))), 4)
  warm <- sgld(m, lr = 0.05, iter = 20000, burnin = 0, chains = 4, init = init,
               precondition = sgld:::whiten_rule(m, "Euler"), progress = FALSE)
  fit <- mala(m, lr = 0.1, iter = 60000, burnin = 0, thin = 10, chains = 4, init = warm,
              progress = FALSE)
  G <- as.matrix(fit)
  ref$gdraws <- G[round(seq(1, nrow(G), length.out = 2000)), ]
  ref$gquantiles <- apply(G, 2, quantile, probs = c(0.025, 0.25, 0.5, 0.75, 0.975))
  ref$gdraws_method <- sprintf(paste0("mala(precondition = \"whiten\", lr = 0.1), 4 chains x ",
                                      "60,000 iterations after 20,000 of sgld(); 2,000 evenly ",
                                      "spaced draws (ESS of sigma %.0f, nu %.0f)"),
                               coda::effectiveSize(fit$draws)[1], coda::effectiveSize(fit$draws)[2])
  cat(ref$gdraws_method, "\n")
  print(rbind(reference = ref$gmean, draws = colMeans(G)))
  saveRDS(ref, "inst/extdata/sv-sp500-reference.rds", version = 2)
}
