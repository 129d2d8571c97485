# loo(fit) at 5,000 rows and the default draws, elapsed and CPU seconds
# (median of 3), with the load average beside: the "under 2 s" figure of
# bench/loo-speed.md. Run from the package's root: Rscript bench/loo-5000.R
library(sgld)
source(textConnection(paste(readLines("bench/loo-speed.R")[13:30], collapse = "\n")))
d <- simulate(5000)
fit <- sgld(y ~ ., data = d, family = binomial())
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "draws", nrow(as.matrix(fit)), "\n")
print(time(loo(fit), 3))
cat("load", readLines("/proc/loadavg"), "\n")
