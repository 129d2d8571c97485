# The package's exact sampler on the AR(1) stochastic volatility model:
# mala(model_sv(y, type = "ar1")) with nothing else (its lr = "auto": the path
# whitened given the globals, a Metropolis-adjusted step, a warm-up that sets
# the globals' step covariance and the run's length), on the three series of
# the NUTS references (inst/extdata/sv-ar1-<series>-reference.rds, made by
# data-raw/sv-ar1-reference.R). It prints the errors of the means of mu, phi
# and sigma in NUTS sds, their sd ratios, the ESS of each and the CPU time of
# the whole call: MALA is exact, so what is left is Monte Carlo error.
#   Rscript bench/sv-ar1-mala.R     (after installing the package)
suppressPackageStartupMessages(library(sgld))
cat("## mala() on the AR(1) model against NUTS\n\n")
cat(sprintf("%s; load average at the start: %s.\n\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            paste(readLines("/proc/loadavg"), collapse = "")))
cat("| series | mean error mu, phi, sigma (NUTS sds) | sd ratio mu, phi, sigma | ESS mu, phi, sigma | iterations | CPU s |\n")
cat("|---|---|---|---|---|---|\n")
for (s in c("sp500", "sim", "dax")) {
  ref <- readRDS(system.file("extdata", sprintf("sv-ar1-%s-reference.rds", s), package = "sgld"))
  m <- model_sv(ref$y, type = "ar1")
  set.seed(1)
  t0 <- proc.time()
  fit <- mala(m)
  t1 <- proc.time() - t0
  g <- c("mu", "phi", "sigma")
  x <- as.matrix(fit)[, g]
  err <- (colMeans(x) - ref$gmean[g]) / ref$gsd[g]
  ratio <- apply(x, 2, stats::sd) / ref$gsd[g]
  ess <- coda::effectiveSize(coda::as.mcmc.list(fit)[, g])
  cat(sprintf("| %s | %s | %s | %s | %s | %.1f |\n", s,
              paste(sprintf("%+.3f", err), collapse = ", "),
              paste(sprintf("%.3f", ratio), collapse = ", "),
              paste(round(ess), collapse = ", "), format(fit$auto$iter, big.mark = ","),
              t1[["user.self"]] + t1[["sys.self"]]))
}
