# The fit-time convergence check's ESS at 1,001 stored parameters x 4 chains
# x 1,000 draws (issue 49, item 3): R/fit.R's ess() (ess_ar(), every column
# at once) against coda::effectiveSize() column by column, on AR(1) draws
# of autocorrelation 0.5, and the whole check (convergence_check(): ESS and
# R-hat) on a fit of that shape. Figures: bench/sparse.md.
#   Rscript bench/ess-check.R
library(sgld)
set.seed(1)
d <- 1001
chains <- lapply(1:4, function(k) {
  x <- matrix(0, 1000, d)
  x[1, ] <- stats::rnorm(d)
  for (t in 2:1000) x[t, ] <- 0.5 * x[t - 1, ] + sqrt(0.75) * stats::rnorm(d)
  coda::mcmc(x)
})
draws <- coda::mcmc.list(chains)
cpu <- function(expr) {
  t <- system.time(expr)
  t[["user.self"]] + t[["sys.self"]]
}
fast <- cpu(e1 <- sgld:::ess(draws))
slow <- cpu(e2 <- coda::effectiveSize(draws))
cat(sprintf("ess() %.2f s CPU, coda::effectiveSize() %.2f s; largest relative difference %.1e\n",
            fast, slow, max(abs(e1 - e2) / e2)))
cat(sprintf("R-hat (psrf()) %.2f s CPU\n", cpu(sgld:::psrf(draws))))

# the check on a default fit of 1,001 stored parameters (y ~ x + g, g of
# 1,000 levels x 10^4 rows, logistic): what the run's checks compute
source("tests/testthat/helper-wide-levels.R")
dat <- wide_levels_data(1000, 10000)
set.seed(1)
fit <- suppressWarnings(sgld(y ~ x + g, data = dat, family = binomial()))
cat(sprintf("fit: %d parameters stored x %d chains x %d draws; sgld() %.1f s elapsed\n",
            length(sgld:::kept_indices(fit)), length(fit$draws), sgld:::ndraws(fit), fit$time))
cat(sprintf("convergence_check(): %.2f s CPU\n",
            cpu(suppressWarnings(sgld:::convergence_check(fit, warn = FALSE)))))
cat(sprintf("summary(): %.2f s CPU\n", cpu(suppressWarnings(summary(fit)))))
