# The exact reference for sgld(model) on the nearly separated simulation of
# tests/testthat/helper-auto.R (nearly_separated_data(): 1,300 rows, 12
# coefficients, prior_normal(0, 10) on every raw coefficient,
# the former default): 2,000,000 MALA iterations,
# compared with NUTS (data-raw/mala-nuts-reference.R).
#   Rscript data-raw/nearly-separated-reference.R   (from the package's top directory)
library(sgld)
source("tests/testthat/helper-auto.R")
source("data-raw/mala-nuts-reference.R")
d <- nearly_separated_data()
X <- model.matrix(y ~ income + debt + ratio + age + owner + savings + members + years +
                    visits + score + cards, d)
mala_nuts_reference(nearly_separated_model(), X, d$y, seed = 36,
                    out = "tests/testthat/nearly-separated-reference.rds")
