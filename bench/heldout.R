# sgld(model) with every setting left to lr = "auto", on regressions whose
# data its defaults were not designed on (bench/heldout-models.R), against
# exact references (data-raw/heldout-references.R: conjugate posteriors and
# 400,000-iteration mala() runs). Prints, per data set, the strategy chosen,
# the coefficients drawn alone (`alone`, R/auto.R: auto_coordinates()),
# the whole call's time beside its sampling time, and the largest
# |mean error| / sd and |sd ratio - 1| over the parameters.
#   Rscript bench/heldout.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
source("bench/heldout-models.R")
refs <- readRDS("bench/heldout-references.rds")
rows <- lapply(names(heldout_models), function(name) {
  m <- suppressWarnings(heldout_models[[name]]())
  ref <- refs[[name]]
  set.seed(7)
  warned <- character()
  wall <- system.time(fit <- withCallingHandlers(sgld(m), warning = function(w) {
    warned <<- c(warned, conditionMessage(w))
    invokeRestart("muffleWarning")
  }))[["elapsed"]]
  # the model's parameters, as the reference (as.matrix() of a linear fit also has sigma)
  x <- as.matrix(fit)[, fit$model$names]
  ess <- summary(fit)$statistics[, "n_eff"]
  data.frame(data = name, n = m$n, d = m$d, strategy = fit$auto$strategy,
             departure = signif(fit$auto$laplace_departure, 2),
             alone = length(fit$auto$coordinates), iter = fit$settings$iter,
             wall = round(wall, 2), sampling = round(fit$auto$sampling_time, 2),
             min_ess = round(min(ess)),
             max_mean_err_sd = round(max(abs(colMeans(x) - ref$mean) / ref$sd), 3),
             max_sd_err = round(max(abs(apply(x, 2, sd) / ref$sd - 1)), 3),
             warnings = length(warned))
})
res <- do.call(rbind, rows)
print(res, right = FALSE)
cat("all within 0.15 sd and 10%:", all(res$max_mean_err_sd < 0.15 & res$max_sd_err < 0.10), "\n")
