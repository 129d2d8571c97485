# Local reparameterisation (Kingma, Salimans and Welling 2015) in bbb():
# how much it changes the variance of the ELBO's gradient estimate, and what
# that does to a fit, against the ordinary estimator (one w per minibatch).
#
# Run from the package root:   Rscript bench/vi-local.R
#   VI_LOCAL_MODELS=linear,logistic20,adult,mlp   (default: all)
#   VI_LOCAL_N=2000     independent estimates per estimator (default 2000)
#   VI_LOCAL_BATCH=100  the batch size (default: 100)
#   VI_LOCAL_FITS=0     skip part 2 (the fits)
#   VI_LOCAL_TTA=1      part 3 instead of 1 and 2: time to the optimum
#
# 1. Gradient variance. At the mean-field optimum's (mu, sd) (mode of the
#    posterior and sd_j = 1 / sqrt(H_jj), H the Hessian of minus the log
#    posterior: the optimum of a near-Gaussian posterior; for the network, a
#    short BBB fit's q), N one-iteration runs of bbb(optimizer = "sgd", lr = 1e-4)
#    give N independent estimates of the gradient in (mu, log sd) (the move of
#    theta), each with its own minibatch and normals. Reported: the ratio
#    var(ordinary) / var(local) per coordinate, summarised over the mu and
#    the log sd coordinates (median, min, max): above 1, local wins.
# 3. (VI_LOCAL_TTA=1, regressions) Time to the mean-field optimum: budgets of
#    2000 x 2^k iterations, each run from scratch with the same seed, until q's
#    means are within 0.1 optimum sd and its sds within 5% for every
#    coordinate, or 512000 iterations; the time is that run's.
# 2. A fit's accuracy against time: bbb() with the default schedule from
#    mu = 0 at a few iteration budgets, local on and off (same seed);
#    reported are the time, the largest |mu - mu*| / sd* and the largest
#    |sd / sd* - 1| over the coordinates (mu*, sd*: the optimum of 1.).
suppressPackageStartupMessages(library(sgld))
say <- function(...) cat(sprintf(...), "\n", sep = "")
N <- as.integer(Sys.getenv("VI_LOCAL_N", "2000"))
which_models <- strsplit(Sys.getenv("VI_LOCAL_MODELS", "linear,logistic20,adult,mlp"), ",")[[1]]
options(warn = -1)   # the short fits' convergence warnings are expected
batch <- as.integer(Sys.getenv("VI_LOCAL_BATCH", "100"))
fits <- Sys.getenv("VI_LOCAL_FITS", "1") != "0"
say("uptime: %s", system("uptime", intern = TRUE))

models <- list(
  linear = function() list(m = model_linear(y ~ x, data = sgld::handout, prior = prior_nig()), batch = batch),
  logistic20 = function() {
    set.seed(20)
    n <- 10000
    X <- matrix(rnorm(n * 20), n, 20)
    beta <- seq(-1, 1, length.out = 20)
    y <- as.integer(runif(n) < plogis(drop(X %*% beta) / 2))
    list(m = model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL), batch = batch)
  },
  adult = function() {
    # 0/1 indicators: stored sparse (model_logistic()'s default for them)
    a <- sgld::adult[!is.na(sgld::adult$income), ]
    list(m = model_logistic(adult_design(a), adult_response(a), prior = prior_normal(0, 10), prior_intercept = NULL), batch = batch)
  },
  mlp = function() {
    set.seed(5)
    n <- 2000
    X <- matrix(rnorm(n * 4), n, 4)
    y <- sin(X[, 1]) + 0.5 * X[, 2] * X[, 3] + rnorm(n, sd = 0.3)
    list(m = model_mlp(X, y, hidden = 8), batch = batch)
  }
)

# the mean-field optimum (sampler's scale)
optimum <- function(m, batch) {
  if (!grepl("^mlp", m$type)) {
    pm <- posterior_mode(m, covariance = TRUE)
    return(list(mu = unname(pm$sampler), sd = unname(1 / sqrt(diag(solve(pm$covariance))))))
  }
  set.seed(1)
  f <- bbb(m, iter = 20000, batch_size = batch, init_scale = 0.01, elbo_draws = 0, draws = 2,
           local = TRUE, laplace = FALSE)
  list(mu = unname(f$variational$mean[1, ]), sd = unname(f$variational$sd[1, ]))
}

# N independent gradient estimates in (mu, log sd) at (mu, sd), in the
# model's coordinates (laplace = FALSE), in runs of up to 1000 chains
gradients <- function(m, opt, batch, local) {
  parts <- lapply(split(seq_len(N), ceiling(seq_len(N) / 1000)), function(k)
    gradients_once(m, opt, batch, local, length(k)))
  list(G = do.call(rbind, lapply(parts, `[[`, "G")),
       seconds = sum(vapply(parts, `[[`, 0, "seconds")))
}

gradients_once <- function(m, opt, batch, local, N) {
  # (the generic's methods are internal: dispatch from the namespace)
  init <- eval(quote(to_user_scale(m, matrix(mu, 1))[1, ]), list(m = m, mu = opt$mu),
               asNamespace("sgld"))
  t0 <- proc.time()[["elapsed"]]
  # a step of 1e-4 times the estimate (a step of 1 can leave the log sds' range)
  f <- bbb(m, lr = 1e-4, iter = 1, batch_size = batch, optimizer = "sgd", init = init,
           init_scale = opt$sd, chains = N, draws = 1, elbo_draws = 0, local = local,
           laplace = FALSE)
  el <- proc.time()[["elapsed"]] - t0
  theta <- sgld:::vi_theta(f, sgld:::vi_layout(m$d, "meanfield"))$theta
  list(G = t(theta - c(opt$mu, log(opt$sd))) / 1e-4, seconds = el)
}

summ <- function(r) sprintf("median %.3g, min %.3g, max %.3g", median(r), min(r), max(r))

tta <- Sys.getenv("VI_LOCAL_TTA", "0") == "1"
time_to_optimum <- function(m, opt, batch, local) {
  for (iter in 2000 * 2^(0:8)) {
    set.seed(3)
    f <- bbb(m, iter = iter, batch_size = batch, elbo_draws = 0, draws = 2, local = local,
             laplace = FALSE)
    mu_err <- max(abs(f$variational$mean[1, ] - opt$mu) / opt$sd)
    sd_err <- max(abs(f$variational$sd[1, ] / opt$sd - 1))
    if (mu_err < 0.1 && sd_err < 0.05) break
  }
  say("  local %-5s: %s after %d iterations, %.2f s (mean err %.3f, sd err %.3f)", local,
      if (mu_err < 0.1 && sd_err < 0.05) "reached" else "NOT reached", iter, f$time,
      mu_err, sd_err)
}

for (name in which_models) {
  mb <- models[[name]]()
  m <- mb$m
  d <- m$d
  say("\n== %s: d = %d, n = %d, batch %d", name, d, m$n, mb$batch)
  opt <- optimum(m, mb$batch)
  if (tta) {
    for (local in c(FALSE, TRUE)) time_to_optimum(m, opt, mb$batch, local)
    next
  }
  g0 <- gradients(m, opt, mb$batch, FALSE)
  g1 <- gradients(m, opt, mb$batch, TRUE)
  r <- apply(g0$G, 2, var) / apply(g1$G, 2, var)
  say("gradient variance, ordinary / local, over %d estimates (%.2f s / %.2f s):", N,
      g0$seconds, g1$seconds)
  say("  mu:  %s", summ(r[seq_len(d)]))
  say("  log sd: %s", summ(r[d + seq_len(d)]))
  say("  total variance, mu: ordinary %.4g, local %.4g; log sd: ordinary %.4g, local %.4g",
      sum(apply(g0$G[, seq_len(d)], 2, var)), sum(apply(g1$G[, seq_len(d)], 2, var)),
      sum(apply(g0$G[, d + seq_len(d)], 2, var)), sum(apply(g1$G[, d + seq_len(d)], 2, var)))
  if (fits) for (iter in c(2000, 8000, 32000)) {
    for (local in c(FALSE, TRUE)) {
      set.seed(3)
      f <- bbb(m, iter = iter, batch_size = mb$batch, elbo_draws = 0, draws = 2, local = local,
               laplace = FALSE)
      mu_err <- max(abs(f$variational$mean[1, ] - opt$mu) / opt$sd)
      sd_err <- max(abs(f$variational$sd[1, ] / opt$sd - 1))
      say("  iter %6d local %-5s: %6.2f s, max |mu - mu*| / sd* %.3f, max |sd / sd* - 1| %.3f",
          iter, local, f$time, mu_err, sd_err)
    }
  }
}
