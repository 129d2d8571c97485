# Where the time of sgld(model) on Adult goes, and how many full passes
# other full-data samplers need per effective draw. Adult: a9a design with
# an intercept (n = 32,561, d = 124), the default prior, against the stored
# 150,000-iteration MALA reference (data-raw/adult-reference.R).
#  1. the default call under Rprof: its phases, passes, step and the
#     effective sample sizes of its draws;
#  2. mala() from the mode at three steps, preconditioned by the Laplace
#     covariance S, by the covariance of 3,000 MALA warm-up draws, and by S
#     rescaled to the warm-up's marginal variances;
#  3. Hamiltonian Monte Carlo with the full data and the Laplace metric
#     (leapfrog in the coordinates z, w = w_hat + R'z, S = R'R; step jittered
#     by a uniform factor 0.8-1.2, trajectory length `traj` in those
#     coordinates), written here in R over log_posterior(): its passes per
#     effective draw are what a C implementation would need; its time is not.
# Effective sample sizes: coda's, of the second half of each run (1, 2) or
# after 100 iterations (3). One thread.
#   Rscript bench/adult-samplers.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
d <- adult[adult$set == "train", ]
m <- suppressWarnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL))
ref <- readRDS("tests/testthat/adult-reference.rds")
errors <- function(x) c(mean = max(abs(colMeans(x) - ref$mean) / ref$sd),
                        sd = max(abs(apply(x, 2, sd) / ref$sd - 1)))
cat(format(Sys.time(), "%Y-%m-%d %H:%M"), "load:", readLines("/proc/loadavg"), "\n")

# 1. the default call
set.seed(1)
prof <- tempfile()
Rprof(prof, interval = 0.02)
tm <- system.time(fit <- sgld(m))
Rprof(NULL)
e <- sgld:::ess(fit$draws)
a <- fit$auto
cat(sprintf(paste0("sgld(m): cpu %.1f s, wall %.1f s; strategy %s, step %.2f, warm-up %d + run %d ",
                   "full-data iterations (spread %.2f), thin %d; sampling %.1f s, setup %.2f s; ",
                   "ESS min %.0f, median %.0f; min ESS per cpu second %.1f; errors %.3f sd, %.3f\n"),
            tm[["user.self"]] + tm[["sys.self"]], tm[["elapsed"]], a$strategy, a$lr, a$burnin,
            a$iter - a$burnin, a$warmup_spread, a$thin, a$sampling_time, a$setup_time,
            min(e), stats::median(e), min(e) / (tm[["user.self"]] + tm[["sys.self"]]),
            errors(as.matrix(fit))[1], errors(as.matrix(fit))[2]))
print(head(summaryRprof(prof)$by.total[, 1:2], 30))

pm <- posterior_mode(m, covariance = TRUE)
S <- pm$covariance

# 2. MALA
mala_row <- function(P, lr, iter, init, label) {
  set.seed(5)
  t <- system.time(f <- suppressWarnings(mala(m, lr = lr, iter = iter, burnin = 0,
                                              precondition = P, init = init)))
  x <- as.matrix(f)
  h <- x[-seq_len(nrow(x) / 2), ]
  e <- sgld:::ess(coda::mcmc(h))
  cat(sprintf("mala %-8s lr %.2f: acceptance %.3f, iterations per effective draw %.0f (slowest), %.0f (median)\n",
              label, lr, f$acceptance, nrow(h) / min(e), nrow(h) / stats::median(e)))
  invisible(f)
}
warm <- mala_row(S, 0.27, 6000, pm$mode, "laplace")
x0 <- as.matrix(warm)[3001:6000, ]
Sw <- stats::cov(x0)
D <- sqrt(pmax(1, apply(x0, 2, stats::var) / diag(S)))
last <- as.matrix(warm)[6000, ]
for (lr in c(0.27, 0.4, 0.55)) mala_row(S, lr, 6000, last, "laplace")
for (lr in c(0.27, 0.4, 0.55)) mala_row(Sw, lr, 6000, last, "warm-up")
mala_row(S * outer(D, D), 0.27, 6000, last, "rescaled")

# 3. HMC
R <- chol(S)
lp <- function(z) {
  a <- log_posterior(m, pm$mode + drop(z %*% R))
  list(lp = a$logpost, g = drop(R %*% a$grad_logpost))
}
hmc <- function(iter, eps, traj, seed) {
  set.seed(seed)
  z <- rep(0, m$d)
  cur <- lp(z)
  out <- matrix(0, iter, m$d)
  acc <- 0
  passes <- 0
  for (t in seq_len(iter)) {
    e <- eps * stats::runif(1, 0.8, 1.2)
    L <- max(1, round(traj / e))
    p <- stats::rnorm(m$d)
    z1 <- z
    p1 <- p + e / 2 * cur$g
    for (l in seq_len(L)) {
      z1 <- z1 + e * p1
      s <- lp(z1)
      passes <- passes + 1
      if (l < L) p1 <- p1 + e * s$g
    }
    p1 <- p1 + e / 2 * s$g
    if (is.finite(s$lp) &&
        log(stats::runif(1)) < (-cur$lp + sum(p^2) / 2) - (-s$lp + sum(p1^2) / 2)) {
      z <- z1
      cur <- s
      acc <- acc + 1
    }
    out[t, ] <- pm$mode + drop(z %*% R)
  }
  list(x = out, acceptance = acc / iter, passes = passes)
}
for (cfg in list(c(0.3, 1.5, 800, 11), c(0.4, 1.5, 800, 11), c(0.3, 2.5, 800, 11),
                 c(0.35, 2.5, 1500, 12), c(0.35, 3.5, 800, 12), c(0.45, 3, 800, 12),
                 c(0.35, 2.5, 3000, 13))) {
  r <- hmc(cfg[3], cfg[1], cfg[2], cfg[4])
  h <- r$x[-(1:100), ]
  e <- sgld:::ess(coda::mcmc(h))
  err <- errors(h)
  cat(sprintf(paste0("hmc step %.2f traj %.1f, %d iterations: acceptance %.2f, %d passes, ESS min %.0f ",
                     "(%.1f passes each), median %.0f; errors %.3f sd, %.3f\n"),
              cfg[1], cfg[2], cfg[3], r$acceptance, r$passes, min(e), r$passes / min(e),
              stats::median(e), err[1], err[2]))
}
