# The exact references for the wide models' lr = "auto" test
# (tests/testthat/test-sparse-design.R): posterior means and sds of the four
# regressions on the text-like design of helper-sparse-design.R at
# 2,000 x 60 (5% non-zeros), from 20,000 MALA iterations of 4 chains each
# (Laplace-preconditioned; about 3 minutes of CPU in all).
#   Rscript data-raw/sparse-wide-reference.R
library(sgld)
source("tests/testthat/helper-sparse-design.R")
data <- sparse_text_design(2000, 60, 0.05)
models <- list(logistic = model_logistic(data$X, data$y),
               poisson = model_poisson(data$X, data$counts),
               linear = model_linear(data$X, data$response),
               negbin = model_negbin(data$X, data$counts))
out <- lapply(models, function(m) {
  set.seed(2)
  r <- as.matrix(suppressWarnings(mala(m, iter = 20000)))
  list(mean = colMeans(r), sd = apply(r, 2, sd))
})
saveRDS(out, "tests/testthat/sparse-wide-reference.rds", version = 2)
