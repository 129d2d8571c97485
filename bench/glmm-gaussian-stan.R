# stan_glmer (4 chains, its defaults, cores = 1) on the simulated gaussian
# data set of bench/glmm-gaussian.R, once: its time and draws are stored in
# bench/glmm-gaussian-stan.rds, which bench/glmm-gaussian.R compares with.
#   nice Rscript bench/glmm-gaussian-stan.R
source("bench/glmm-gaussian-data.R")
d <- glmm_gaussian_data()
load0 <- readLines("/proc/loadavg")
t <- system.time(fit <- rstanarm::stan_glmer(glmm_gaussian_formula, data = d, chains = 4,
                                             cores = 1, seed = 1, refresh = 0))
draws <- as.matrix(fit)
# every parameter's mean and sd; the draws of all but the 200 group effects
# (all of them would be 6 MB)
saveRDS(list(time = c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]]),
             loadavg = c(start = load0, end = readLines("/proc/loadavg")),
             date = format(Sys.time(), tz = "UTC", usetz = TRUE),
             mean = colMeans(draws), sd = apply(draws, 2, sd),
             draws = draws[, !grepl("^b\\[", colnames(draws))],
             prior = rstanarm::prior_summary(fit)),
        "bench/glmm-gaussian-stan.rds", version = 2)
print(t)
