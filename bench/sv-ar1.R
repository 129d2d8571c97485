# The AR(1) stochastic volatility model (model_sv(type = "ar1"): normal
# errors, stochvol's default priors) on three series, against exact NUTS
# references (inst/extdata/sv-ar1-<series>-reference.rds, made by
# data-raw/sv-ar1-reference.R: demeaned MASS::SP500, a simulated series with
# phi = 0.98, and EuStockMarkets' DAX without its holidays) and against
# stochvol::svsample() with its defaults:
#   1. accuracy of sgld(model) with nothing else, three seeds per series:
#      the errors of the means of mu, phi and sigma in NUTS sds, their sd
#      ratios, the correlation of the path's means and the mean ratio of its
#      sds; the bar is 0.15 sd, 10%, 0.995 and 10%;
#   2. time to the same number of effective draws of the least-mixed global
#      parameter: each call timed whole by the wall clock around it
#      (sgld()'s set-up and warm-up, stochvol's burn-in), effective draws by
#      coda::effectiveSize() over the draws each returns; stochvol's time
#      scaled to sgld()'s effective draws (its whole call's time times
#      ESS_sgld / ESS_stochvol, which counts its burn-in in proportion, in
#      its favour), by the wall clock and by CPU time. The target: sgld() at
#      least as fast on every series, twice as fast as the aim.
#   Rscript bench/sv-ar1.R          (from the package directory, after installing it)
suppressPackageStartupMessages(library(sgld))
if (!requireNamespace("stochvol", quietly = TRUE)) stop("bench/sv-ar1.R needs the stochvol package")
cat("## The AR(1) stochastic volatility model against NUTS and stochvol\n\n")
cat(sprintf("%s; load average at the start: %s; stochvol %s.\n\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            paste(readLines("/proc/loadavg"), collapse = ""),
            as.character(utils::packageVersion("stochvol"))))

# wall-clock and CPU seconds (this process's user and system time: on a
# machine shared with other work the wall clock also counts the others)
timed <- function(expr) {
  t0 <- proc.time()
  value <- expr
  t1 <- proc.time() - t0
  list(value = value, seconds = t1[["elapsed"]], cpu = t1[["user.self"]] + t1[["sys.self"]])
}
accuracy <- function(gmean, gsd, pmean, psd, ref)
  c(err = unname((gmean - ref$gmean) / ref$gsd), ratio = unname(gsd / ref$gsd),
    path_cor = cor(pmean, ref$pmean), path_sd = mean(psd / ref$psd))
passes <- function(a)
  all(abs(a[1:3]) < 0.15, abs(a[4:6] - 1) < 0.1, a[["path_cor"]] > 0.995, abs(a[["path_sd"]] - 1) < 0.1)
fmt <- function(a) sprintf("%+.3f, %+.3f, %+.3f | %.3f, %.3f, %.3f | %.5f | %.3f", a[1], a[2], a[3],
                           a[4], a[5], a[6], a[["path_cor"]], a[["path_sd"]])

series <- c("sp500", "sim", "dax")
refs <- lapply(setNames(series, series), function(s) {
  f <- system.file("extdata", sprintf("sv-ar1-%s-reference.rds", s), package = "sgld")
  if (!nzchar(f)) stop("no reference for ", s, ": run data-raw/sv-ar1-reference.R")
  readRDS(f)
})

cat("### The references\n\n| series | T | method | mu | phi | sigma | ESS (mu, phi, sigma) | max R-hat |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (s in series) {
  r <- refs[[s]]
  cat(sprintf("| %s | %d | %s | %.4f (%.4f) | %.5f (%.5f) | %.4f (%.4f) | %s | %.4f |\n", s, length(r$y),
              r$method, r$gmean[1], r$gsd[1], r$gmean[2], r$gsd[2], r$gmean[3], r$gsd[3],
              paste(round(r$gess), collapse = ", "), r$rhat_max))
}
cat("\n")

cat("### sgld(model) with nothing else, and stochvol, against NUTS\n\n")
cat("Columns: errors of the means of (mu, phi, sigma) in NUTS sds | their sd ratios | path mean",
    "correlation | path sd ratio; whole-call seconds; effective draws of the least-mixed global.\n\n")
cat("| series | sampler | accuracy | at the bar | seconds (CPU) | min ESS | ESS per second (per CPU second) |\n")
cat("|---|---|---|---|---|---|---|\n")
speed <- list()
for (s in series) {
  ref <- refs[[s]]
  m <- model_sv(ref$y)
  p <- m$k + seq_len(m$n)
  runs <- lapply(1:3, function(seed) {
    set.seed(seed)
    r <- timed(sgld(m, progress = FALSE))
    f <- r$value
    g <- as.matrix(f)
    mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
    a <- accuracy(colMeans(g), apply(g, 2, sd), mom$mean[p], mom$sd[p], ref)
    ess <- min(coda::effectiveSize(f$draws))
    cat(sprintf("| %s | sgld(), seed %d | %s | %s | %.1f (%.1f) | %.0f | %.1f (%.1f) |\n", s, seed,
                fmt(a), if (passes(a)) "yes" else "no", r$seconds, r$cpu, ess, ess / r$seconds,
                ess / r$cpu))
    c(seconds = r$seconds, cpu = r$cpu, ess = ess)
  })
  sg <- colMeans(do.call(rbind, runs))
  set.seed(1)
  r <- timed(stochvol::svsample(ref$y, draws = 30000, quiet = TRUE))
  S <- as.matrix(r$value$para[[1]])[, c("mu", "phi", "sigma")]
  H <- as.matrix(r$value$latent[[1]])
  a <- accuracy(colMeans(S), apply(S, 2, sd), colMeans(H), apply(H, 2, sd), ref)
  ess <- min(coda::effectiveSize(S))
  cat(sprintf("| %s | stochvol, 30,000 draws | %s | %s | %.1f (%.1f) | %.0f | %.1f (%.1f) |\n", s,
              fmt(a), if (passes(a)) "yes" else "no", r$seconds, r$cpu, ess, ess / r$seconds,
              ess / r$cpu))
  speed[[s]] <- c(sgld_seconds = sg[["seconds"]], sgld_cpu = sg[["cpu"]], sgld_ess = sg[["ess"]],
                  stochvol_equal = r$seconds * sg[["ess"]] / ess,
                  stochvol_equal_cpu = r$cpu * sg[["ess"]] / ess)
}
cat("\n### Time to the same effective draws of the least-mixed global\n\n")
cat("| series | sgld() seconds, mean of 3 (CPU) | its min ESS | stochvol's seconds for that ESS (CPU) | stochvol / sgld (CPU) | target |\n")
cat("|---|---|---|---|---|---|\n")
for (s in series) {
  x <- speed[[s]]
  ratio <- x[["stochvol_equal"]] / x[["sgld_seconds"]]
  ratio_cpu <- x[["stochvol_equal_cpu"]] / x[["sgld_cpu"]]
  worst <- min(ratio, ratio_cpu)
  cat(sprintf("| %s | %.1f (%.1f) | %.0f | %.1f (%.1f) | %.2f (%.2f) | %s |\n", s, x[["sgld_seconds"]],
              x[["sgld_cpu"]], x[["sgld_ess"]], x[["stochvol_equal"]], x[["stochvol_equal_cpu"]],
              ratio, ratio_cpu,
              if (worst >= 2) "PASS (2x)" else if (worst >= 1) "PASS (1x), MISS (2x)" else "MISS"))
}
cat("\n")
