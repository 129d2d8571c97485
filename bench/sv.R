# Stochastic volatility (model_sv()): Keng's random-walk model with t returns
# on MASS::SP500 (T = 2780).
#   (The AR(1) model with normal errors against NUTS and stochvol, the
#   acceptance of its default, is bench/sv-ar1.R.)
#   1. The exact reference: the package's mala() with the path whitened, long
#      (inst/extdata/sv-sp500-reference.rds, made by data-raw/sv-reference.R).
#   2. Time to accuracy on MASS::SP500: for each sampler, runs of growing
#      length, five seeds each, until every seed meets the bar (the globals'
#      means within 0.2 reference sd and sds within 20%, the path's means
#      correlated above 0.99 and its sds within 20% on average); against
#      rstan's NUTS on the same model and priors (centred and non-centred).
#   3. The simulated series of the accuracy tests (T = 500) against its
#      NUTS reference (tests/testthat/sv-reference.rds).
#   4. Cost per iteration as T grows from 10^3 to 10^6.
#
#   Rscript bench/sv.R       (from the package directory, after installing it)
#   SV_NUTS=0 Rscript bench/sv.R     without the NUTS runs (about 20 minutes)
suppressPackageStartupMessages(library(sgld))
y <- MASS::SP500
m <- model_sv(y, type = "rw")
n <- length(y)
p <- m$k + seq_len(n)
seeds <- 1:5

cat("## Stochastic volatility (model_sv(), random walk with t returns, MASS::SP500)\n\n")
cat(sprintf("Load average at the start: %s.\n\n", paste(readLines("/proc/loadavg"), collapse = "")))

# ---- 1. the exact reference --------------------------------------------------
ref_file <- system.file("extdata", "sv-sp500-reference.rds", package = "sgld")
if (!nzchar(ref_file)) stop("no inst/extdata/sv-sp500-reference.rds: run data-raw/sv-reference.R sp500")
ref <- readRDS(ref_file)
cat("### The reference\n\n")
cat(sprintf(paste0("%s: %.0f s on 2 threads, acceptance %s; sigma %.5f (sd %.5f, ESS %.0f, R-hat %.4f), ",
                   "nu %.3f (sd %.3f, ESS %.0f, R-hat %.4f).\n\n"),
            ref$method, ref$seconds, paste(sprintf("%.2f", ref$acceptance), collapse = ", "),
            ref$gmean[1], ref$gsd[1], ref$gess[1], ref$grhat[1], ref$gmean[2], ref$gsd[2],
            ref$gess[2], ref$grhat[2]))

accuracy <- function(gm, gs, pm, ps, r = ref) {
  a <- c(err_sigma = (gm[[1]] - r$gmean[[1]]) / r$gsd[[1]],
         err_nu = (gm[[2]] - r$gmean[[2]]) / r$gsd[[2]],
         sd_sigma = gs[[1]] / r$gsd[[1]], sd_nu = gs[[2]] / r$gsd[[2]],
         path_cor = cor(pm, r$pmean), path_sd = mean(ps / r$psd))
  a[["pass"]] <- all(abs(a[1:2]) < 0.2, abs(a[3:4] - 1) < 0.2, a[[5]] > 0.99, abs(a[[6]] - 1) < 0.2)
  a
}
# a run and its whole wall time (setup such as the whitened rule's step
# covariance included, which fit$time leaves out)
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  f <- suppressWarnings(expr)
  f$wall <- proc.time()[["elapsed"]] - t0
  f
}
fit_accuracy <- function(f, r = ref, mm = m) {
  g <- as.matrix(f)[, c("sigma", "nu")]
  mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
  pp <- mm$k + seq_len(mm$n)
  c(accuracy(colMeans(g), apply(g, 2, sd), mom$mean[pp], mom$sd[pp], r),
    seconds = if (is.null(f$wall)) f$time else f$wall,
    ess_sigma = coda::effectiveSize(f$draws)[[1]])
}
fmt <- function(a) sprintf("%+.2f, %+.2f | %.2f, %.2f | %.4f | %.3f", a[["err_sigma"]], a[["err_nu"]],
                           a[["sd_sigma"]], a[["sd_nu"]], a[["path_cor"]], a[["path_sd"]])

# ---- 2. time to accuracy -------------------------------------------------------
cat("### Time to accuracy on MASS::SP500\n\n")
cat("Each row: five seeds at that length (iterations after a burn-in of 2,000 from the model's",
    "default start); the columns are the medians over the seeds of the errors of the means of",
    "(sigma, nu) in reference sds, their sd ratios, the correlation of the path's means and the",
    "mean ratio of the path's sds, with the number of seeds that met the bar and the median",
    "seconds of one run (one chain, one thread).\n\n")
cat("| sampler | iterations | mean error (sd) | sd ratio | path mean cor | path sd ratio | seeds at the bar | seconds |\n")
cat("|---|---|---|---|---|---|---|---|\n")
sweep <- function(label, run, lengths) {
  for (len in lengths) {
    res <- sapply(seeds, function(s) {
      set.seed(s)
      fit_accuracy(timed(run(len)))
    })
    med <- apply(res, 1, stats::median)
    npass <- sum(res["pass", ] == 1)
    cat(sprintf("| %s | %s | %s | %d of %d | %.2f |\n", label, format(len, big.mark = ","),
                fmt(med), npass, length(seeds), med[["seconds"]]))
    if (npass == length(seeds)) return(c(iterations = len, seconds = med[["seconds"]]))
  }
  c(iterations = NA, seconds = NA)
}
lengths <- c(1250, 2500, 5000, 10000, 20000, 40000, 80000)
best <- list(
  sgld = sweep("sgld(), whitened, Leimkuhler-Matthews, lr 0.4", function(len)
    sgld(m, lr = 0.4, iter = 2000 + len, burnin = 2000, progress = FALSE), lengths),
  mala = sweep("mala(), whitened, lr 0.1", function(len)
    mala(m, lr = 0.1, iter = 2000 + len, burnin = 2000, progress = FALSE), lengths))
auto <- sapply(seeds, function(s) {
  set.seed(s)
  fit_accuracy(timed(sgld(m, progress = FALSE)))
})
cat(sprintf("| sgld(m), every setting automatic | %s | %s | %d of %d | %.2f |\n\n",
            "(its own)", fmt(apply(auto, 1, stats::median)), sum(auto["pass", ] == 1),
            length(seeds), stats::median(auto["seconds", ])))

cat("Other samplers, one seed each, at the settings tried before the path was whitened",
    "(`precondition = \"none\"`: the path moved as itself), and Keng's pSGLD and Bayes by",
    "Backprop:\n\n")
cat("| sampler | mean error (sd) | sd ratio | path mean cor | path sd ratio | at the bar | seconds |\n")
cat("|---|---|---|---|---|---|---|\n")
others <- list(
  "sgld(), path as itself, lr 5e-5, 1e6 iterations" = function()
    sgld(m, lr = 5e-5, iter = 1e6, burnin = 1e5, thin = 10, precondition = "none", progress = FALSE),
  "sghmc(), lr 2e-5, 1e6 iterations" = function()
    sghmc(m, lr = 2e-5, iter = 1e6, burnin = 1e5, thin = 10, progress = FALSE),
  "psgld(), lr 1e-6, alpha 0.9999, 2e5 iterations" = function()
    psgld(m, lr = 1e-6, alpha = 0.9999, iter = 2e5, burnin = 2e4, thin = 10, progress = FALSE),
  "psgld(), lr 1e-5, alpha 0.9999, 2e5 iterations" = function()
    psgld(m, lr = 1e-5, alpha = 0.9999, iter = 2e5, burnin = 2e4, thin = 10, progress = FALSE))
for (k in names(others)) {
  set.seed(1)
  f <- timed(others[[k]]())
  a <- if (all(f$status == "done")) fit_accuracy(f) else NULL
  cat(if (is.null(a)) sprintf("| %s | stopped: %s | | | | no | %.1f |\n", k, f$status[1], f$time)
      else sprintf("| %s | %s | %s | %.1f |\n", k, fmt(a), if (a[["pass"]] == 1) "yes" else "no",
                   a[["seconds"]]))
}
set.seed(1)
fb <- bbb(m, iter = 50000, progress = FALSE)
vb <- fb$variational
ab <- accuracy(vb$user_mean[1, 1:2], vb$user_sd[1, 1:2], vb$mean[1, p], vb$sd[1, p])
cat(sprintf("| bbb(), mean field, 50,000 iterations | %s | %s | %.1f |\n\n", fmt(ab),
            if (ab[["pass"]] == 1) "yes" else "no", fb$time))

# rstan's NUTS on the same model and priors (the Stan programs of
# data-raw/sv-reference.R), rstan's defaults (adapt_delta 0.8, maximum tree
# depth 10), one chain, as many warm-up iterations as draws, growing until
# every seed meets the bar; seconds are rstan's own (warm-up and sampling,
# not the compilation, stated once).
nuts_best <- list()
if (!identical(Sys.getenv("SV_NUTS"), "0") && requireNamespace("rstan", quietly = TRUE)) {
  src <- readLines("data-raw/sv-reference.R")
  eval(parse(text = src[grep("^stan_centred <-", src):(grep("^stan_programs <-", src) - 1)]))
  boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
  s0 <- m$default_init[-(1:2)]
  nuts_seeds <- 1:3
  cat(sprintf(paste0("rstan %s NUTS, defaults, one chain with as many warm-up iterations as ",
                     "draws, %d seeds per length; the median seconds of one run (warm-up and ",
                     "sampling), the tree depth's maximum reached in how many of the draws, and ",
                     "divergences, summed over the seeds:

"),
              as.character(utils::packageVersion("rstan")), length(nuts_seeds)))
  cat("| parameterisation | draws | mean error (sd) | sd ratio | path mean cor | path sd ratio |",
      "seeds at the bar | seconds | at the maximum depth | divergences |
")
  cat("|---|---|---|---|---|---|---|---|---|---|
")
  for (param in c("centred", "noncentred")) {
    t0 <- proc.time()[["elapsed"]]
    sm <- rstan::stan_model(model_code = if (param == "centred") stan_centred else stan_noncentred,
                            boost_lib = boost)
    compile <- proc.time()[["elapsed"]] - t0
    init <- function() list(sigma = 0.05, nu = 10, s = s0, s1 = s0[1], z = diff(s0) / 0.05)
    nuts_best[[param]] <- c(draws = NA, seconds = NA)
    for (draws in c(250, 500, 1000)) {
      res <- sapply(nuts_seeds, function(sd) {
        fit <- suppressWarnings(rstan::sampling(sm, data = list(T = n, y = as.double(y)),
                                                chains = 1, iter = 2 * draws, warmup = draws,
                                                seed = sd, refresh = 0, init = init))
        dr <- as.matrix(fit)
        sc <- paste0("s[", seq_len(n), "]")
        sp <- rstan::get_sampler_params(fit, inc_warmup = FALSE)[[1]]
        c(accuracy(colMeans(dr[, c("sigma", "nu")]), apply(dr[, c("sigma", "nu")], 2, sd),
                   colMeans(dr[, sc]), apply(dr[, sc], 2, sd)),
          seconds = sum(rstan::get_elapsed_time(fit)), depth = sum(sp[, "treedepth__"] >= 10),
          divergences = sum(sp[, "divergent__"]))
      })
      med <- apply(res, 1, stats::median)
      npass <- sum(res["pass", ] == 1)
      cat(sprintf("| %s | %d | %s | %d of %d | %.1f | %d of %d | %d |\n", param, draws, fmt(med),
                  npass, length(nuts_seeds), med[["seconds"]], sum(res["depth", ]),
                  draws * length(nuts_seeds), sum(res["divergences", ])))
      if (npass == length(nuts_seeds)) {
        nuts_best[[param]] <- c(draws = draws, seconds = med[["seconds"]])
        break
      }
    }
    cat(sprintf("| (%s: compiling the Stan program took %.0f s, once) | | | | | | | | | |\n", param,
                compile))
  }
  cat("\n")
}
ours <- min(best$sgld[["seconds"]], best$mala[["seconds"]], na.rm = TRUE)
cat(sprintf("Time to the bar in every seed: sgld() whitened %.2f s, mala() whitened %.2f s.\n",
            best$sgld[["seconds"]], best$mala[["seconds"]]))
for (param in names(nuts_best)) {
  b <- nuts_best[[param]]
  cat(if (is.finite(b[["seconds"]]))
        sprintf("NUTS %s: %.1f s (%d draws); this package's best is %.1f times faster (target: 5).\n",
                param, b[["seconds"]], b[["draws"]], b[["seconds"]] / ours)
      else sprintf("NUTS %s: did not reach the bar in every seed at 1,000 draws.\n", param))
}
cat("\n")

# ---- 3. the simulated series against NUTS --------------------------------------
cat("### Simulated series (T = 500, sigma = 0.3, t_8 returns) against NUTS\n\n")
refs <- readRDS("tests/testthat/sv-reference.rds")
msim <- model_sv(refs$y, type = "rw")
cat(sprintf("NUTS (%s): sigma %.4f (sd %.4f, ESS %.0f), nu %.2f (sd %.2f, ESS %.0f).\n\n", refs$method,
            refs$gmean[1], refs$gsd[1], refs$gess[1], refs$gmean[2], refs$gsd[2], refs$gess[2]))
cat("| sampler | mean error (sd) | sd ratio | path mean cor | path sd ratio | at the bar | seconds | ESS/s of sigma |\n")
cat("|---|---|---|---|---|---|---|---|\n")
euler <- sgld:::whiten_rule(msim, "SGLD with the latent path whitened (Euler's steps)")
sim_runs <- list(
  "sgld(), whitened, Leimkuhler-Matthews, lr 0.4, 2e5 iterations" = function()
    sgld(msim, lr = 0.4, iter = 2e5, burnin = 2e4, thin = 10, progress = FALSE),
  "sgld(), whitened, Euler, lr 0.4, 2e5 iterations" = function()
    sgld(msim, lr = 0.4, iter = 2e5, burnin = 2e4, thin = 10, precondition = euler,
         progress = FALSE),
  "sgld(), whitened, Euler, lr 0.05, 2e5 iterations" = function()
    sgld(msim, lr = 0.05, iter = 2e5, burnin = 2e4, thin = 10, precondition = euler,
         progress = FALSE),
  "mala(), whitened, lr 0.1, 1e5 iterations" = function()
    mala(msim, lr = 0.1, iter = 1e5, burnin = 1e4, thin = 5, progress = FALSE),
  "sgld(), path as itself, lr 2.5e-4, 2e6 iterations" = function()
    sgld(msim, lr = 2.5e-4, iter = 2e6, burnin = 2e5, thin = 20, precondition = "none",
         progress = FALSE),
  "sghmc(), lr 2.5e-4, 1e6 iterations" = function()
    sghmc(msim, lr = 2.5e-4, iter = 1e6, burnin = 1e5, thin = 10, progress = FALSE))
for (k in names(sim_runs)) {
  set.seed(2)
  a <- fit_accuracy(timed(sim_runs[[k]]()), refs, msim)
  cat(sprintf("| %s | %s | %s | %.1f | %.0f |\n", k, fmt(a), if (a[["pass"]] == 1) "yes" else "no",
              a[["seconds"]], a[["ess_sigma"]] / a[["seconds"]]))
}
cat("\n")

# ---- 4. cost per iteration against T ---------------------------------------------
# the series: log-scales from a stationary AR(1) (phi 0.995, innovations sd
# 0.05), t_8 returns; a random walk of 10^6 steps would wander over e^(+-50)
cat("### Cost per iteration against T (full data, simulated series)\n\n")
cat("| T | sgld(), whitened: us per iteration | ns per day | sgld(), path as itself: us per iteration | ns per day |\n|---|---|---|---|---|\n")
for (T in 10^(3:6)) {
  set.seed(T)
  s <- as.numeric(stats::filter(rnorm(T, 0, 0.05), 0.995, method = "recursive"))
  yy <- exp(s) * rt(T, 8)
  mt <- model_sv(yy, type = "rw")
  it <- max(20, 2e6 / T)
  fw <- sgld(mt, lr = 0.4, iter = it, burnin = it - 1, progress = FALSE)
  fp <- sgld(mt, lr = 1e-6, iter = it, burnin = it - 1, precondition = "none", progress = FALSE)
  cat(sprintf("| %.0e | %.1f | %.1f | %.1f | %.1f |\n", T, 1e6 * fw$time / it, 1e9 * fw$time / it / T,
              1e6 * fp$time / it, 1e9 * fp$time / it / T))
}
cat("\n")

# ---- 5. the AR(1) model against stochvol -----------------------------------------
# stochvol (CRAN, not in Debian) samples the same model exactly, by Gibbs
# steps interweaving the centred and non-centred paths. Both fits on the
# demeaned returns; stochvol's defaults are model_sv()'s priors.
if (requireNamespace("stochvol", quietly = TRUE)) {
  cat("### The AR(1) model with t errors against stochvol\n\n")
  ya <- as.double(y) - mean(y)
  ma <- model_sv(ya, type = "ar1", errors = "t")
  set.seed(3)
  t0 <- proc.time()[["elapsed"]]
  sv <- stochvol::svtsample(ya, draws = 200000, burnin = 5000, thin = 10, quiet = TRUE)
  sv_secs <- proc.time()[["elapsed"]] - t0
  S <- as.matrix(sv$para[[1]])[, c("mu", "phi", "sigma", "nu")]
  sv_ess <- coda::effectiveSize(S)
  h <- as.matrix(sv$latent[[1]])
  set.seed(3)
  fa <- timed(sgld(ma, progress = FALSE))
  G <- as.matrix(fa)
  mom <- sgld:::pooled_moments(fa$moments, fa$chain_ids)
  pa <- ma$k + seq_len(ma$n)
  cat(sprintf("stochvol %s, 200,000 draws after 5,000 (thinned by 10): %.0f s, ESS %s.\n",
              as.character(utils::packageVersion("stochvol")), sv_secs,
              paste(sprintf("%s %.0f", colnames(S), sv_ess), collapse = ", ")))
  cat(sprintf("sgld(model) with every setting automatic: %.1f s, ESS %s.\n\n", fa$wall,
              paste(sprintf("%s %.0f", colnames(G), coda::effectiveSize(fa$draws)), collapse = ", ")))
  cat("| parameter | stochvol mean (sd) | sgld mean (sd) | error of the mean (stochvol sds) | sd ratio |\n")
  cat("|---|---|---|---|---|\n")
  for (j in colnames(S))
    cat(sprintf("| %s | %.4f (%.4f) | %.4f (%.4f) | %+.2f | %.2f |\n", j, mean(S[, j]), sd(S[, j]),
                mean(G[, j]), sd(G[, j]), (mean(G[, j]) - mean(S[, j])) / sd(S[, j]),
                sd(G[, j]) / sd(S[, j])))
  cat(sprintf("\nThe path: correlation of the posterior means %.5f, mean ratio of the sds %.3f.\n\n",
              cor(colMeans(h), mom$mean[pa]), mean(mom$sd[pa] / apply(h, 2, sd))))
} else {
  cat("### The AR(1) model with t errors against stochvol\n\n",
      "Not run: the stochvol package is not installed (`tools/install-deps.sh --bench`",
      "installs it from CRAN).\n\n", sep = "")
}
