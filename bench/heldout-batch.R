# The held-out regressions (bench/heldout-models.R) whose batch the averaged
# noise estimate can change: more than 1,000 rows and a Laplace departure of
# at most 1 (the others keep the full data or the old estimate). Same seed
# and references as bench/heldout.R; results in bench/negbin-defaults.md.
#   Rscript bench/heldout-batch.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
source("bench/heldout-models.R")
refs <- readRDS("bench/heldout-references.rds")
for (name in c("concrete", "credit", "attrition", "churn")) {
  m <- suppressWarnings(heldout_models[[name]]())
  ref <- refs[[name]]
  set.seed(7)
  warned <- character()
  tm <- system.time(fit <- withCallingHandlers(sgld(m), warning = function(w) {
    warned <<- c(warned, conditionMessage(w)); invokeRestart("muffleWarning") }))
  x <- as.matrix(fit)[, fit$model$names]
  cat(sprintf("%-10s n %5d batch %5d cv %d cpu %.2f min_ess %4.0f mean %.3f sd %.3f warnings %d\n", name, m$n,
      as.integer(fit$auto$batch_size), fit$auto$control_variates, tm[1] + tm[2], min(summary(fit)$statistics[, "n_eff"]),
      max(abs(colMeans(x) - ref$mean) / ref$sd), max(abs(apply(x, 2, sd) / ref$sd - 1)), length(warned)))
}
