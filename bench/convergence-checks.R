# Time of the R-hat computed at the end of every run and in summary():
# coda::gelman.diag(multivariate = FALSE) against sgld's psrf() (the same
# point estimate, variable by variable), on two chains of 1,000 draws.
#
#   Rscript bench/convergence-checks.R      from the package root
library(sgld)
set.seed(1)
load_avg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
cat(format(Sys.time(), "%Y-%m-%d %H:%M %Z"), "load", load_avg(), "\n")
for (d in c(100, 500, 2000)) {
  x <- coda::mcmc.list(lapply(1:2, function(k) coda::mcmc(matrix(rnorm(1000 * d), 1000, d))))
  t_coda <- system.time(a <- coda::gelman.diag(x, autoburnin = FALSE,
                                               multivariate = FALSE)$psrf[, 1])[["elapsed"]]
  t_ours <- system.time(b <- sgld:::psrf(x))[["elapsed"]]
  cat(sprintf("%5d parameters: coda %6.2f s, psrf() %5.3f s, largest difference %.1e\n",
              d, t_coda, t_ours, max(abs(a - b))))
}
