# Exact references for the wide recipe on a factor of many levels
# (tests/testthat/test-wide-levels.R, bench/wide-levels-accuracy.R): the
# Gibbs sampler of data-raw/wide-levels-gibbs.R (level means by vectorised
# slice sampling, exact for sgld's default priors of y ~ x + g) on the data
# of wide_levels_data() (tests/testthat/helper-wide-levels.R). One case per
# call:
#   cd <package root> && nice Rscript data-raw/wide-levels-reference.R <case>
# Cases (levels x rows, family, generator seed, effect sd):
#   binomial   1,000 x 10^4, seed 1, sd 0.5: the design case (the test)
#   heldout    1,300 x 1.5 10^4, seed 2, sd 0.8: binomial, not looked at
#              while designing
#   poisson    1,000 x 10^4, seed 1, sd 0.5
#   gaussian   1,000 x 10^4, seed 1, sd 0.5
#   big        10,000 x 10^5, seed 1, sd 0.5 (binomial; bench/sparse.md's)
# Stored: each coefficient's mean, sd, bulk and tail ESS and R-hat over 4
# chains, the case, the sweeps and the CPU time. (An earlier attempt with
# rstanarm's NUTS did not finish at 1,000 levels in 77 min and mixed slowly
# at 200 levels: bulk ESS median 60; bench/sparse.md.)
library(sgld)
source("tests/testthat/helper-wide-levels.R")
source("data-raw/wide-levels-gibbs.R")
case <- commandArgs(TRUE)[1]
cases <- list(
  binomial = list(levels = 1000, n = 1e4, seed = 1, effect_sd = 0.5, family = "binomial",
                  iter = 3000, file = "tests/testthat/wide-levels-reference.rds"),
  heldout = list(levels = 1300, n = 1.5e4, seed = 2, effect_sd = 0.8, family = "binomial",
                 iter = 3000, file = "bench/wide-levels-heldout.rds"),
  poisson = list(levels = 1000, n = 1e4, seed = 1, effect_sd = 0.5, family = "poisson",
                 iter = 3000, file = "bench/wide-levels-poisson.rds"),
  gaussian = list(levels = 1000, n = 1e4, seed = 1, effect_sd = 0.5, family = "gaussian",
                  iter = 3000, file = "bench/wide-levels-gaussian.rds"),
  big = list(levels = 10000, n = 1e5, seed = 1, effect_sd = 0.5, family = "binomial",
             iter = 1500, file = "bench/wide-levels-big.rds"))
cs <- cases[[case]]
if (is.null(cs)) stop("case must be one of ", paste(names(cases), collapse = ", "))
dat <- wide_levels_data(cs$levels, cs$n, seed = cs$seed, family = cs$family,
                        effect_sd = cs$effect_sd)
m <- switch(cs$family, binomial = model_logistic, poisson = model_poisson,
            gaussian = model_linear)(y ~ x + g, data = dat)
t <- levels_target(m, dat)
cpu <- system.time(draws <- gibbs_levels(t, iter = cs$iter, warmup = 500, chains = 4,
                                         seed = 4949))
out <- c(levels_summary(draws),
         list(case = cs[c("levels", "n", "seed", "effect_sd", "family")],
              sweeps = c(warmup = 500, iter = cs$iter, chains = 4),
              cpu = cpu[["user.self"]] + cpu[["sys.self"]]))
cat(case, ": ", length(out$mean), " coefficients, CPU ", round(out$cpu), " s\n", sep = "")
print(summary(out$ess_bulk))
print(summary(out$ess_tail))
print(summary(out$rhat))
saveRDS(out, cs$file, version = 2)
