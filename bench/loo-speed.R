# loo() of a default fit against loo::loo() on the same log-likelihood
# matrix (with loo::relative_eff() for its relative efficiencies, as
# loo(fit) needs them), and against rstanarm's loo() (when rstanarm is
# installed, up to 5,000 rows), on simulated logistic regressions of 1,000,
# 5,000 and 50,000 rows with 6 coefficients. The fits are sgld()'s defaults (4 chains,
# about 1,000 stored draws each). Elapsed and CPU seconds of each call,
# medians of 3 runs (1 for loo::loo() at 50,000 rows); the log likelihood
# matrix's time is included in loo(fit) and timed alone too.
#   Rscript bench/loo-speed.R [rows...]
library(sgld)
rows <- as.numeric(commandArgs(TRUE))
if (!length(rows)) rows <- c(1000, 5000, 50000)
time <- function(expr, runs = 3) {
  e <- substitute(expr)
  f <- parent.frame()
  t <- vapply(seq_len(runs), function(i) {
    s <- system.time(eval(e, f))
    c(s[["elapsed"]], s[["user.self"]] + s[["sys.self"]])
  }, numeric(2))
  c(elapsed = median(t[1, ]), cpu = median(t[2, ]))
}
fmt <- function(t) sprintf("%.2f (%.2f)", t[["elapsed"]], t[["cpu"]])
simulate <- function(n) {
  set.seed(47)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = runif(n), x4 = rbinom(n, 1, 0.3),
                  x5 = rnorm(n, 5, 2))
  eta <- -0.5 + 0.8 * d$x1 - 0.4 * d$x2 + d$x3 + 0.5 * d$x4 - 0.1 * d$x5
  d$y <- rbinom(n, 1, plogis(eta))
  d
}
have_rstanarm <- requireNamespace("rstanarm", quietly = TRUE)
cat(sprintf("%s; load average %s; %d processors available\n", format(Sys.time(), tz = "UTC", usetz = TRUE),
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""),
            sgld:::available_cores()))
invisible(suppressWarnings(loo::loo(matrix(rnorm(400), 100), r_eff = rep(1, 4))))
for (n in rows) {
  d <- simulate(n)
  fit <- sgld(y ~ ., data = d, family = binomial())
  ll <- log_lik(fit)
  chain <- rep(seq_along(fit$draws), each = nrow(fit$draws[[1]]))
  t_ll <- time(log_lik(fit))
  t_ours <- time(ours <- loo(fit))
  runs <- if (n > 10000) 1 else 3
  t_reff <- time(r <- loo::relative_eff(exp(ll), chain_id = chain), runs)
  t_loo <- time(ref <- loo::loo(ll, r_eff = r), runs)
  same <- all.equal(ours$estimates, ref$estimates, tolerance = 1e-12)
  arm <- if (have_rstanarm) "not run" else "not installed"
  # rstanarm's fit and loo at 50,000 rows would take minutes of a shared
  # machine (its log likelihood in R, 4,000 x 50,000): left out there
  if (have_rstanarm && n <= 5000) {
    set.seed(1)
    sfit <- suppressWarnings(rstanarm::stan_glm(y ~ ., data = d, family = binomial(),
                                                refresh = 0))
    arm <- fmt(time(rstanarm::loo(sfit), runs))
  }
  cat(sprintf(paste0("rows %d, draws %d: log_lik %s; loo(fit) %s; loo::relative_eff %s + ",
                     "loo::loo %s; rstanarm loo %s; elpd_loo %.4f vs %.4f (all.equal: %s)\n"),
              n, nrow(ll), fmt(t_ll), fmt(t_ours), fmt(t_reff), fmt(t_loo), arm,
              ours$estimates["elpd_loo", 1], ref$estimates["elpd_loo", 1], isTRUE(same)))
}
