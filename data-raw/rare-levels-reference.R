# The exact reference for sgld(model) on the rare-levels simulation of
# tests/testthat/helper-auto.R (rare_levels_data(): 3,000 rows, 12
# coefficients, a factor whose levels h and i have no events and j only
# events; prior_normal(0, 10) on every raw coefficient,
# the former default): 2,000,000 MALA iterations,
# compared with NUTS (data-raw/mala-nuts-reference.R). Run on 2026-11-26:
# MALA acceptance 0.694, smallest ESS 9,369; NUTS smallest ESS 39,059; the
# two means within 1.3 Monte Carlo standard errors, sds within 1.1%.
#   Rscript data-raw/rare-levels-reference.R   (from the package's top directory)
library(sgld)
source("tests/testthat/helper-auto.R")
source("data-raw/mala-nuts-reference.R")
d <- rare_levels_data()
mala_nuts_reference(rare_levels_model(), model.matrix(y ~ x1 + x2 + group, d), d$y,
                    seed = 39, out = "tests/testthat/rare-levels-reference.rds")
