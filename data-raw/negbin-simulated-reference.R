# The reference of the 5,000-row negative-binomial simulation
# (tests/testthat/helper-counts.R, negbin_simulated_data()) for
# test-model-negbin.R and bench/negbin-defaults.R: mala() from the mode,
# 2 chains of 60,000 iterations (2,000 burn-in), smallest ESS 1,797.
# About 12 minutes on a loaded 2-core machine.
#   Rscript data-raw/negbin-simulated-reference.R   (from the package's top directory)
library(sgld)
source("tests/testthat/helper-counts.R")
m <- model_negbin(y ~ ., data = negbin_simulated_data())
set.seed(7)
fit <- mala(m, iter = 60000, burnin = 2000, chains = 2, init = posterior_mode(m)$mode)
x <- as.matrix(fit)
ref <- list(mean = colMeans(x), sd = apply(x, 2, stats::sd),
            min_ess = min(coda::effectiveSize(fit$draws)))
saveRDS(ref, "tests/testthat/negbin-simulated-reference.rds", version = 2)
