# The reference for sgld(model) at the default priors on the rare-levels
# simulation at 10,000 rows (tests/testthat/helper-auto.R:
# rare_levels_data(10000); levels h and i with 12 and 5 rows and no events,
# j with 3 rows all events), for tests/testthat/test-auto.R: stan_glm() at
# its defaults (autoscaled normal(0, 2.5); the prior sds of the three rare
# levels are 2.5 / sd of their columns, 96-241, and so are their
# posteriors' spreads, half-flat out to the prior's reach). There the
# Laplace departure is 170, beyond the 100 up to which the coordinate
# updates were measured before (R/auto.R: auto_coord_rho2_far).
# 4 chains of 5,000 iterations (half warm-up), 10,000 draws; stored small
# as data-raw/rstanarm-defaults-reference.R stores its sets.
# Made with rstanarm 2.21.3 (Debian r-cran-rstanarm), seed 4748:
#   cd <package root> && nice Rscript data-raw/rare-levels-defaults-reference.R
library(rstanarm)
source("tests/testthat/helper-auto.R")   # rare_levels_data()
f <- y ~ x1 + x2 + group
fit <- stan_glm(f, data = rare_levels_data(10000), family = binomial(), chains = 4,
                iter = 5000, cores = 1, seed = 4748, refresh = 0)
draws <- as.matrix(fit)
ess <- posterior::summarise_draws(posterior::as_draws_array(as.array(fit)), "ess_bulk", "rhat")
out <- list(formula = f, mean = colMeans(draws), sd = apply(draws, 2, stats::sd),
            ess_bulk = stats::setNames(as.numeric(ess$ess_bulk), ess$variable),
            rhat = stats::setNames(as.numeric(ess$rhat), ess$variable),
            seconds = sum(rstan::get_elapsed_time(fit$stanfit)))
print(out[c("ess_bulk", "rhat", "seconds")])
saveRDS(out, "tests/testthat/rare-levels-defaults-reference.rds", version = 2)
