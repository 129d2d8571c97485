# loo(), waic() and log_lik() on default fits of a logistic regression of
# 753 rows and 8 coefficients, the size of carData::Mroz's lfp ~ . (used
# when carData is installed, else a simulation with its shape: two count
# predictors, age, two indicators, two continuous), by sgld(m) with one
# chain (the default) and with four (rstanarm's 4 x 1,000 draws). Elapsed
# and CPU seconds, medians of 3 runs; the first loo() call, which loads loo, is
# left out of the medians.
#   Rscript bench/loo.R
library(sgld)
mroz <- if (requireNamespace("carData", quietly = TRUE)) carData::Mroz else local({
  set.seed(40)
  n <- 753
  d <- data.frame(k5 = rpois(n, 0.24), k618 = rpois(n, 1.35), age = round(runif(n, 30, 60)),
                  wc = factor(ifelse(runif(n) < 0.28, "yes", "no")),
                  hc = factor(ifelse(runif(n) < 0.39, "yes", "no")),
                  lwg = rnorm(n, 1.1, 0.59), inc = rgamma(n, 4, 0.2))
  eta <- 3.2 - 1.46 * d$k5 - 0.06 * d$k618 - 0.063 * d$age + 0.81 * (d$wc == "yes") +
    0.11 * (d$hc == "yes") + 0.6 * d$lwg - 0.034 * d$inc
  d$lfp <- factor(ifelse(runif(n) < plogis(eta), "yes", "no"))
  d
})
m <- model_logistic(lfp ~ ., data = mroz)
# "elapsed (CPU)" seconds: on a shared machine the elapsed time grows with
# the load, the CPU time (user + system) much less
time <- function(expr) {
  e <- substitute(expr)
  f <- parent.frame()
  t <- vapply(1:3, function(i) {
    s <- system.time(eval(e, f))
    c(s[["elapsed"]], s[["user.self"]] + s[["sys.self"]])
  }, numeric(2))
  sprintf("%.3f (%.3f)", median(t[1, ]), median(t[2, ]))
}
invisible(suppressWarnings(loo::loo(rstantools::log_lik(sgld(m, lr = 1e-3, iter = 100)))))
cat(sprintf("data: %s, %d rows, %d coefficients; load average %s\n",
            if (requireNamespace("carData", quietly = TRUE)) "carData::Mroz" else "simulated",
            nrow(mroz), m$d, paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
for (chains in c(1, 4)) {
  set.seed(1)
  t_fit <- system.time(fit <- sgld(m, chains = chains))[["elapsed"]]
  draws <- nrow(as.matrix(fit))
  cat(sprintf(paste0("chains %d: %d draws kept (thin %d of %d iterations a chain), ",
                     "sgld() %.2f s; log_lik %s s, loo %s s, waic %s s\n"),
              chains, draws, fit$settings$thin, fit$settings$iter, t_fit,
              time(rstantools::log_lik(fit)), time(loo::loo(fit)), time(loo::waic(fit))))
}
