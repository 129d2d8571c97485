# sgld()'s default call on the negative-binomial multilevel references
# (data-raw/glmm-negbin-reference.R: stan_glmer.nb at its defaults), seeds
# 1-3: the largest errors against the reference, CPU and elapsed seconds,
# against stan's stored times (bench/glmm-negbin.md).
#   SEEDS=1,2,3 nice Rscript bench/glmm-negbin.R [grouseticks simulated]
suppressMessages(library(sgld))
source("tests/testthat/helper-glmm-negbin.R")
which <- commandArgs(TRUE)
if (!length(which)) which <- names(negbin_reference_cases)
seeds <- as.integer(unlist(strsplit(Sys.getenv("SEEDS", "1,2,3"), ",")))
for (nm in which) {
  ref <- negbin_reference(nm)
  cat(sprintf("%s: stan_glmer.nb (4 chains, iter 4000, cores 2) %.0f s elapsed, chains' sum %.0f s\n",
              nm, ref$seconds, sum(ref$chain_seconds)))
  for (seed in seeds) {
    r <- negbin_default_call(nm, seed)
    e <- r$errors
    cat(sprintf(paste0("  seed %d: mean %.3f sd (%s), sd %.1f%% (%s), %d quantities; ESS %.0f; ",
                       "%s iterations/chain; moves %s; %.1f s CPU, %.1f s elapsed; %s\n"),
                seed, e$mean, e$mean_at, 100 * e$sd, e$sd_at, e$quantities,
                min(r$fit$checks$convergence$ess_min), format(r$fit$auto$iter, big.mark = ","),
                r$fit$auto$exact_moves, r$cpu, r$elapsed,
                if (length(r$warnings)) paste("WARNING:", substr(r$warnings, 1, 90), collapse = " | ")
                else "no warning"))
  }
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
