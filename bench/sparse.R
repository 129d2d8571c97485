# Wide sparse designs (issue 49): model building and the default sgld() call
# on text-like simulated data (tests/testthat/helper-sparse-design.R), against glmnet
# (one ridge penalty: the normal prior's mode) and glm() where it runs.
# One configuration per process, so that GNU time's peak memory is its own:
#   /usr/bin/time -v Rscript bench/sparse.R <face> <n> <d> <density> [sample]
# face: logistic, poisson, linear, negbin, formula (a factor of d levels and one
# numeric covariate, logistic), glmnet, glm; `sample` = 0 builds only.
# Results: bench/sparse.md.
suppressPackageStartupMessages(library(sgld))
source("tests/testthat/helper-sparse-design.R")   # run from the package's root
a <- commandArgs(TRUE)
face <- a[1]
n <- as.numeric(a[2])
d <- as.numeric(a[3])
density <- as.numeric(a[4])
sample <- length(a) < 5 || a[5] != "0"
timed <- function(label, expr) {
  t <- system.time(value <- expr)
  cat(sprintf("%-8s %-16s %8.2f s elapsed, %8.2f s CPU\n", face, label, t[["elapsed"]],
              t[["user.self"]] + t[["sys.self"]]))
  value
}
# Linux: the process's resident size now and its peak since the last reset
# (writing 5 to clear_refs resets the peak), so that building and sampling
# are measured apart from R, Matrix and the generated data
rss <- function() {
  s <- readLines("/proc/self/status")
  stats::setNames(as.numeric(gsub("\\D", "", s[grepl("^Vm(RSS|HWM)", s)])) / 1024,
                  sub(":.*", "", s[grepl("^Vm(RSS|HWM)", s)]))
}
rss_mark <- function() {
  invisible(gc())
  try(cat("5", file = "/proc/self/clear_refs"), silent = TRUE)
  rss()[["VmRSS"]]
}
base <- NULL
if (face == "formula") {
  set.seed(1)
  g <- factor(sprintf("L%05d", sample.int(d, n, replace = TRUE)))
  x <- stats::rnorm(n)
  effect <- stats::rnorm(d, 0, 0.5)
  dat <- data.frame(g = g, x = x,
                    y = stats::rbinom(n, 1, stats::plogis(-0.5 + 0.5 * x + effect[as.integer(g)])))
  base <- rss_mark()
  m <- timed("build", model_logistic(y ~ g + x, data = dat))
} else {
  data <- sparse_text_design(n, d, density)
  cat(sprintf("X: %d x %d, %d non-zeros, %.1f MB as a dgCMatrix\n", nrow(data$X), ncol(data$X),
              length(data$X@x), as.numeric(utils::object.size(data$X)) / 2^20))
  base <- rss_mark()
  m <- switch(face,
    logistic = timed("build", model_logistic(data$X, data$y)),
    negbin = timed("build", model_negbin(data$X, data$counts)),
    poisson = timed("build", model_poisson(data$X, data$counts)),
    linear = timed("build", model_linear(data$X, data$response)),
    glmnet = {
      # the normal prior N(0, 10^2)'s mode: ridge penalty lambda / 2 |b|^2 on
      # the mean log likelihood, lambda = 1 / (n 10^2), intercept unpenalised
      fit <- timed("glmnet fit", glmnet::glmnet(data$X[, -1], data$y, family = "binomial",
                                                 alpha = 0, lambda = 1 / (n * 100),
                                                 standardize = FALSE))
      NULL
    },
    glm = {
      Xd <- as.matrix(data$X)
      fit <- timed("glm fit", stats::glm.fit(Xd, data$y, family = stats::binomial()))
      NULL
    })
}
if (!is.null(m) && sample) {
  set.seed(1)
  fit <- timed("sgld()", sgld(m))
  cat(strwrap(fit$auto$reason), sep = "\n")
  cat(sprintf("setup %.2f s, sampling %.2f s, whole %.2f s\n", fit$auto$setup_time,
              fit$auto$sampling_time, fit$time))
}
r <- rss()
cat(sprintf("resident: %.0f MB with the data, before the model; peak since %.0f MB (+%.0f MB)\n",
            base, r[["VmHWM"]], r[["VmHWM"]] - base))
