# The default call on the small count sets (issue 51, brief 51-hmc): CPU
# time, passes over the data and accuracy against stan_glm()'s stored draws
# (bench/default-call-stan.rds), several seeds. Run it once with each
# installed version to compare (R_LIBS pointing at each):
#   R_LIBS=<library> Rscript bench/hmc.R [seeds]
library(sgld)
args <- commandArgs(TRUE)
seeds <- if (length(args)) seq_len(as.integer(args[1])) else 1:5
stan <- readRDS("bench/default-call-stan.rds")
cases <- list(
  quine = list(f = Days ~ Eth + Sex + Age + Lrn, data = MASS::quine),
  epil = list(f = y ~ lbase * trt + lage + V4, data = MASS::epil))
rows <- list()
for (name in names(cases)) for (seed in seeds) {
  cs <- cases[[name]]
  set.seed(seed)
  tm <- system.time(fit <- sgld(cs$f, data = cs$data, family = "negbin"))
  x <- as.matrix(fit)
  colnames(x)[colnames(x) == "phi"] <- "reciprocal_dispersion"
  ref <- stan[[name]]
  nm <- names(ref$mean)
  steps <- if (identical(fit$auto$strategy, "hmc")) fit$auto$leapfrog else 1
  rows[[length(rows) + 1]] <- data.frame(
    data = name, seed = seed, strategy = fit$auto$strategy,
    iter = fit$settings$iter, passes = fit$settings$iter * fit$settings$chains * steps,
    cpu = tm[["user.self"]] + tm[["sys.self"]], sampling = fit$auto$sampling_time,
    ess_min = min(summary(fit)$statistics[, "n_eff"]),
    stan_over_sgld = ref$time[["cpu"]] / (tm[["user.self"]] + tm[["sys.self"]]),
    mean_err_sd = max(abs(colMeans(x[, nm]) - ref$mean) / ref$sd),
    sd_err = max(abs(apply(x[, nm], 2, sd) / ref$sd - 1)))
}
out <- do.call(rbind, rows)
print(format(out, digits = 3), row.names = FALSE)
cat("medians: cpu", tapply(out$cpu, out$data, median), " stan / sgld",
    tapply(out$stan_over_sgld, out$data, median), "\n")
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
