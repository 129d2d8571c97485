# The formula face with a factor of many levels at the defaults against the
# exact references of data-raw/wide-levels-reference.R (Gibbs, level means by
# slice sampling): sgld(y ~ x + g, data, family) on the reference's data,
# seeds 1-3 (or as given), every coefficient: |mean - reference mean| /
# reference sd and sd / reference sd, against the bar 0.15 / 10%; the worst
# coefficients by kind (intercept, x, sigma2, half-flat levels: all events
# or none, all zeros; the other levels).
#   nice Rscript bench/wide-levels-accuracy.R <case> [seeds...]
# cases: binomial, heldout, poisson, gaussian, big. Figures: bench/sparse.md.
library(sgld)
source("tests/testthat/helper-wide-levels.R")
args <- commandArgs(TRUE)
case <- args[1]
seeds <- if (length(args) > 1) as.integer(args[-1]) else 1:3
file <- if (case == "binomial") "tests/testthat/wide-levels-reference.rds" else
  sprintf("bench/wide-levels-%s.rds", case)
ref <- readRDS(file)
cs <- ref$case
dat <- wide_levels_data(cs$levels, cs$n, seed = cs$seed, family = cs$family,
                        effect_sd = cs$effect_sd)
family <- switch(cs$family, binomial = binomial(), poisson = poisson(), gaussian = gaussian())
# a level is half-flat when its rows are all at one end of the response
ends <- tapply(dat$y, dat$g, function(v) all(v == 1) || all(v == 0))
half_flat <- if (cs$family == "gaussian") character(0) else paste0("g", names(ends)[ends])
kind <- function(nm) ifelse(nm %in% c("(Intercept)", "x", "sigma2"), nm,
                            ifelse(nm %in% half_flat, "half-flat level", "other level"))
cat(sprintf("%s: %d levels x %d rows, %s, %d half-flat levels; reference ESS bulk >= %.0f, tail >= %.0f, R-hat <= %.4f\n",
            case, cs$levels, cs$n, cs$family, length(half_flat), min(ref$ess_bulk),
            min(ref$ess_tail), max(ref$rhat)))
for (seed in seeds) {
  set.seed(seed)
  cpu <- system.time(fit <- sgld(y ~ x + g, data = dat, family = family))
  nm <- names(ref$mean)
  z <- abs(posterior_mean(fit)[nm] - ref$mean) / ref$sd
  # at 10,000 levels the draws are not stored: the sds from the running moments
  sds <- if (sgld:::all_kept(fit)) sqrt(posterior_var(fit))
         else setNames(sgld:::pooled_moments(fit$moments, fit$chain_ids)$sd, fit$model$names)
  r <- sds[nm] / ref$sd - 1
  worst <- function(v) tapply(v, kind(nm), function(u) max(abs(u)))
  cat(sprintf("seed %d: %s, %s iterations, %d drawn alone, %.1f s CPU; max |mean err|/sd %.3f (%s), max |sd ratio - 1| %.3f (%s)\n",
              seed, fit$auto$strategy, format(fit$auto$iter, big.mark = ","),
              length(fit$auto$coordinates), cpu[["user.self"]] + cpu[["sys.self"]],
              max(z), nm[which.max(z)], max(abs(r)), nm[which.max(abs(r))]))
  print(round(rbind(`mean err / sd` = worst(z), `|sd ratio - 1|` = worst(r),
                    `sd ratio mean` = tapply(r, kind(nm), mean) + 1,
                    `sd ratio min` = tapply(r, kind(nm), min) + 1,
                    `sd ratio max` = tapply(r, kind(nm), max) + 1), 3))
}
