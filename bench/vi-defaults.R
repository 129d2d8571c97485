# bbb(m) against sgld(m), both at their defaults: the wall time of the whole
# call (mode search, run, checks) on the four data sets of bbb()'s
# acceptance tests (tests/testthat/test-vi.R): MASS::Pima.tr with its seven
# covariates on their natural scales, the handout's linear model, a
# simulated logistic regression with six predictors correlated 0.9, and
# Adult's a9a design (training set, intercept, 124 coefficients).
#
# Run from the package root:   Rscript bench/vi-defaults.R
#   VI_REPS=5          repetitions on the small data sets (default 5)
#   VI_SKIP_ADULT=1    leave Adult out (sgld(m) takes minutes there)
#
# The calls alternate (bbb, sgld, bbb, ...) so that both see the same load;
# the table gives the median of the repetitions and both figures' range.
# Warnings are muffled: the mean-field fits of the correlated posteriors
# warn by design (their k-hat is above 0.7).
suppressPackageStartupMessages(library(sgld))
source("tests/testthat/helper-vi.R")   # pima_natural(), correlated_logistic()
reps <- as.integer(Sys.getenv("VI_REPS", "5"))
quiet <- function(expr) suppressMessages(suppressWarnings(expr))
wall <- function(f) {
  t0 <- proc.time()[["elapsed"]]
  fit <- quiet(f())
  list(time = proc.time()[["elapsed"]] - t0, fit = fit)
}

sets <- list(
  "MASS::Pima.tr (7 covariates, n = 200)" = pima_natural()$model,
  "handout (linear, n = 10,000)" = model_linear(y ~ x, data = handout, prior = prior_nig()),
  "simulated, 6 predictors correlated 0.9 (n = 1,000)" = correlated_logistic()$model)
if (!nzchar(Sys.getenv("VI_SKIP_ADULT"))) {
  d <- adult[adult$set == "train", ]
  sets[["Adult, a9a design (d = 124, n = 32,561)"]] <-
    quiet(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL))
}

cat("## bbb(m) and sgld(m) at their defaults\n\n")
cat(sprintf("*`Rscript bench/vi-defaults.R`, %s; R %s, sgld %s; load average at start: %s.*\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), packageVersion("sgld"),
            readLines("/proc/loadavg", warn = FALSE)[1]))
cat("Wall time of the whole call in seconds (median of the repetitions, range in brackets;",
    "one each on Adult). bbb(m): mean-field, started at the Laplace approximation,",
    "expected log likelihoods, until converged; sgld(m): lr = \"auto\".\n\n")
cat("| data | bbb(m) s | iterations | sgld(m) s | iterations | sgld / bbb |\n")
cat("|---|---|---|---|---|---|\n")
for (name in names(sets)) {
  m <- sets[[name]]
  k <- if (grepl("^Adult", name)) 1 else reps
  tb <- ts <- numeric(k)
  for (r in seq_len(k)) {
    set.seed(r)
    b <- wall(function() bbb(m))
    set.seed(r)
    s <- wall(function() sgld(m))
    tb[r] <- b$time
    ts[r] <- s$time
    message(sprintf("%s, repetition %d: bbb %.2f s, sgld %.2f s", name, r, b$time, s$time))
  }
  range_of <- function(x) if (length(x) > 1) sprintf(" [%.2f-%.2f]", min(x), max(x)) else ""
  cat(sprintf("| %s | %.2f%s | %s | %.2f%s | %s | %.1f |\n", name, stats::median(tb), range_of(tb),
              format(b$fit$vi$iterations, big.mark = ","), stats::median(ts), range_of(ts),
              format(if (is.null(s$fit$auto)) s$fit$settings$iter else s$fit$auto$iter, big.mark = ","),
              stats::median(ts) / stats::median(tb)))
}
cat(sprintf("\nLoad average at the end: %s.\n", readLines("/proc/loadavg", warn = FALSE)[1]))
