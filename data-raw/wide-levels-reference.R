# The exact reference for the wide recipe on a factor of many levels
# (tests/testthat/test-wide-levels.R): rstanarm's stan_glm() at its defaults
# (the priors sgld's formula face copies: autoscaled N(0, (2.5 / sd)^2) on
# each level's indicator, N(0, 2.5^2) on the intercept of centred
# predictors) for y ~ x + g on wide_levels_data(1000, 10000) of
# tests/testthat/helper-wide-levels.R: 1,000 levels of about 10 rows, some
# all events or none (half-flat posteriors out to their priors' reach,
# sds up to about 60). NUTS, 4 chains of 3,000 iterations (half warm-up), started at zero (random
# starts failed to initialise),
# sparse design. Stored: means, sds and bulk ESS of every coefficient.
#   cd <package root> && nice Rscript data-raw/wide-levels-reference.R
library(rstanarm)
source("tests/testthat/helper-wide-levels.R")
dat <- wide_levels_data(1000, 10000)
fit <- stan_glm(y ~ x + g, data = dat, family = binomial(), sparse = TRUE, chains = 4,
                iter = 3000, cores = 1, seed = 4949, refresh = 0,
                init = 0)
draws <- as.matrix(fit)
ess <- apply(rstan::extract(fit$stanfit, permuted = FALSE)[, , seq_len(ncol(draws)),
                                                          drop = FALSE], 3,
             rstan::ess_bulk)
out <- list(mean = colMeans(draws), sd = apply(draws, 2, stats::sd), ess = ess,
            versions = c(rstanarm = as.character(utils::packageVersion("rstanarm")),
                         rstan = as.character(utils::packageVersion("rstan"))))
print(summary(out$ess))
saveRDS(out, "tests/testthat/wide-levels-reference.rds", version = 2)
