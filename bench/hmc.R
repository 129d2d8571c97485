# The default call on the small count sets (issue 51, brief 51-hmc): CPU
# time, passes over the data and accuracy against stan_glm()'s stored draws
# (bench/default-call-stan.rds), several seeds. Run it once with each
# installed version to compare (R_LIBS pointing at each):
#   R_LIBS=<library> Rscript bench/hmc.R [seeds]
#   SGLD_FULL_LEAPFROG=2 SGLD_FULL_STEP=0.7 Rscript bench/hmc.R   (another
#   leapfrog count and step for the route, R/auto.R: auto_full_*)
library(sgld)
for (v in c(leapfrog = "SGLD_FULL_LEAPFROG", step = "SGLD_FULL_STEP"))
  if (nzchar(Sys.getenv(v)) && "auto_full_step" %in% ls(asNamespace("sgld"), all.names = TRUE))
    utils::assignInNamespace(if (v == "SGLD_FULL_STEP") "auto_full_step" else "auto_full_leapfrog",
                             if (v == "SGLD_FULL_STEP") as.numeric(Sys.getenv(v))
                             else as.integer(Sys.getenv(v)), "sgld")
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
  steps <- if (is.null(fit$auto$leapfrog)) 1 else fit$auto$leapfrog
  rows[[length(rows) + 1]] <- data.frame(
    data = name, seed = seed, strategy = fit$auto$strategy,
    iter = fit$settings$iter, passes = fit$settings$iter * fit$settings$chains * steps,
    cpu = tm[["user.self"]] + tm[["sys.self"]], sampling = fit$auto$sampling_time,
    ess_min = min(summary(fit)$statistics[, "n_eff"]),
    ess_sq_min = min(sgld:::ess(coda::mcmc.list(lapply(fit$draws, function(ch)
      coda::mcmc(sweep(unclass(ch), 2, colMeans(x))^2))))),
    stan_over_sgld = ref$time[["cpu"]] / (tm[["user.self"]] + tm[["sys.self"]]),
    mean_err_sd = max(abs(colMeans(x[, nm]) - ref$mean) / ref$sd),
    sd_err = max(abs(apply(x[, nm], 2, sd) / ref$sd - 1)))
}
out <- do.call(rbind, rows)
print(format(out, digits = 3), row.names = FALSE)
cat("medians: cpu", tapply(out$cpu, out$data, median), " stan / sgld",
    tapply(out$stan_over_sgld, out$data, median), "\n")
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
