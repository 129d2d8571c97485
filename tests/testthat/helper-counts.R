# The count models' exact references (rstan NUTS, data-raw/count-references.R).
count_reference <- function(name) readRDS(test_path("count-reference.rds"))[[name]]

# largest error of the draws' means in reference sds, and of their sds as a ratio
reference_errors <- function(draws, ref) {
  c(mean = max(abs(colMeans(draws) - ref$mean) / ref$sd),
    sd = max(abs(apply(draws, 2, sd) / ref$sd - 1)))
}
