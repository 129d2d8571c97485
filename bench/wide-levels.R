# The formula face with a factor of many levels at the defaults (issue 49):
# sgld(y ~ x + g, data, family = binomial()) on wide_levels_data(levels, n)
# of tests/testthat/helper-wide-levels.R (level effects N(0, 0.5^2)). One
# configuration per process, under GNU time for the peak memory:
#   /usr/bin/time -v Rscript bench/wide-levels.R <levels> <n> [formula]
# (with a third argument, also the formula face's call, on the same data)
# Prints the build and call times (CPU and elapsed), the recipe's plan and
# the coefficients drawn alone. Figures: bench/sparse.md.
library(sgld)
source("tests/testthat/helper-wide-levels.R")
args <- suppressWarnings(as.numeric(commandArgs(TRUE)))
levels <- if (length(args) >= 1) args[1] else 10000
n <- if (length(args) >= 2) args[2] else 1e5
dat <- wide_levels_data(levels, n)
timed <- function(what, expr) {
  t <- system.time(value <- expr)
  cat(sprintf("%s: %.1f s CPU, %.1f s elapsed\n", what, t[["user.self"]] + t[["sys.self"]],
              t[["elapsed"]]))
  value
}
m <- timed("build", model_logistic(y ~ x + g, data = dat))
set.seed(1)
fit <- timed("sgld(m)", sgld(m))
cat(fit$auto$reason, "\n")
cat(sprintf("setup %.1f s, sampling %.1f s (elapsed); %d drawn alone\n", fit$auto$setup_time,
            fit$auto$sampling_time, length(fit$auto$coordinates)))
if (length(args) >= 3) {
  rm(fit)
  set.seed(1)
  fit2 <- timed("sgld(y ~ x + g, data, family = binomial())",
                sgld(y ~ x + g, data = dat, family = binomial()))
}
