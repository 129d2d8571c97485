# The gaussian and Poisson faces with a factor of many levels at the
# defaults (issue 49): on wide_levels_data(levels, n, family = ...) of
# tests/testthat/helper-wide-levels.R, one call per process, under GNU time
# for the whole process's peak memory:
#   /usr/bin/time -v Rscript bench/wide-faces.R <family> <face> <levels> <n>
# family: gaussian, poisson or binomial; face: "formula" (sgld(y ~ x + g,
# data, family = ...)), "model" (sgld(model_<family>(y ~ x + g, data))) or
# "matrix" (sgld(model_<family>(X, y)), X = Matrix::sparse.model.matrix()).
# Prints the build and call times (CPU and elapsed), the recipe's reason,
# the size of the fit's draws and the design's own size, and the peak
# resident memory above the data (VmHWM after a reset of the counter).
# Figures: bench/sparse.md.
library(sgld)
source("tests/testthat/helper-wide-levels.R")
args <- commandArgs(TRUE)
family <- if (length(args) >= 1) args[1] else "gaussian"
face <- if (length(args) >= 2) args[2] else "formula"
levels <- if (length(args) >= 3) as.numeric(args[3]) else 10000
n <- if (length(args) >= 4) as.numeric(args[4]) else 1e5
dat <- wide_levels_data(levels, n, family = family, coef = c(-0.5, 0.5))
X <- Matrix::sparse.model.matrix(~ x + g, dat)
rownames(X) <- NULL   # the matrix's own size, not 10^5 row names
cat(sprintf("%s, %s face, %d levels x %d rows; sparse design %.1f MB (object.size)\n",
            family, face, levels, n, as.numeric(utils::object.size(X)) / 2^20))
if (face != "matrix") rm(X)
gc()
status <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
base <- status("VmRSS")
try(writeLines("5", "/proc/self/clear_refs"), silent = TRUE)
timed <- function(what, expr) {
  t <- system.time(value <- expr)
  cat(sprintf("%s: %.1f s CPU, %.1f s elapsed\n", what, t[["user.self"]] + t[["sys.self"]],
              t[["elapsed"]]))
  value
}
builder <- switch(family, gaussian = model_linear, poisson = model_poisson,
                  binomial = model_logistic)
glm_family <- switch(family, gaussian = gaussian(), poisson = poisson(),
                     binomial = binomial())
set.seed(1)
fit <- switch(face,
  formula = timed("sgld(y ~ x + g, data, family)",
                  sgld(y ~ x + g, data = dat, family = glm_family)),
  model = {
    m <- timed("build", builder(y ~ x + g, data = dat))
    timed("sgld(m)", sgld(m))
  },
  matrix = {
    m <- timed("build", builder(X, dat$y))
    timed("sgld(m)", sgld(m))
  })
cat(fit$auto$reason, "\n")
cat(sprintf("setup %.1f s, sampling %.1f s (elapsed); %d drawn alone\n", fit$auto$setup_time,
            fit$auto$sampling_time, length(fit$auto$coordinates)))
conv <- fit$checks$convergence
if (!is.null(conv))
  cat(sprintf("stored: %d parameters; smallest ESS %.0f, largest R-hat %.3f\n",
              length(sgld:::kept_indices(fit)), conv$ess_min, conv$rhat_max))
cat(sprintf("fit: %.1f MB (object.size)\n", as.numeric(utils::object.size(fit)) / 2^20))
cat(sprintf("resident %.0f MB after the data; peak since %.0f MB (+%.0f MB)\n", base,
            status("VmHWM"), status("VmHWM") - base))
