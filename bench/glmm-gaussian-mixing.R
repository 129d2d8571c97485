# Effective draws of theta per evaluation of p(theta | y) (one sparse
# Cholesky factorisation each) of the collapsed sampler's default call on
# small gaussian multilevel models, seeds 1-3: the figure its tuning is
# measured by (bench/glmm-gaussian.md). Run with the library to measure:
#   R_LIBS=<library> nice Rscript bench/glmm-gaussian-mixing.R
suppressMessages({library(sgld); library(lme4)})
cases <- list(sleepstudy = list(Reaction ~ Days + (Days | Subject), sleepstudy),
              Penicillin = list(diameter ~ 1 + (1 | plate) + (1 | sample), Penicillin))
cat(sprintf("sgld %s; %s UTC, load %s\n", packageVersion("sgld"), format(Sys.time(), tz = "UTC"),
            readLines("/proc/loadavg")))
for (name in names(cases)) for (seed in 1:3) {
  set.seed(seed)
  fit <- suppressWarnings(sgld(cases[[name]][[1]], cases[[name]][[2]], threads = 1))
  x <- as.matrix(fit, scale = "sampler")
  th <- colnames(x)[sgld:::glmm_theta_index(fit$model)]
  n <- fit$auto$iter
  ess <- Reduce(`+`, lapply(fit$chain_ids, function(c)
    coda::effectiveSize(x[(c - 1) * n + seq_len(n), th, drop = FALSE])))
  cat(sprintf("%-10s seed %d: %4d iterations/chain, %5d evaluations, theta ESS min %4.0f, min ESS per evaluation %.3f, median %.3f\n",
              name, seed, n, fit$auto$evaluations, min(ess), min(ess) / fit$auto$evaluations,
              stats::median(ess) / fit$auto$evaluations))
}
