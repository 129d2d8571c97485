# A logistic regression's exact reference, shared by the simulations'
# scripts (nearly-separated-reference.R, rare-levels-reference.R): posterior
# means and sds from 2,000,000 iterations of mala() with the Laplace
# preconditioner (20,000 burn-in, every 100th kept), saved to `out` first;
# then, where rstan is installed, compared with NUTS (4 chains of 20,000
# after 5,000 warm-up, its default diagonal metric adapted, the same
# normal(0, 10) prior): prints both means, their z-scores by the two Monte
# Carlo errors and the sd ratios, and stores NUTS's figures beside.
mala_nuts_reference <- function(m, X, y, seed, out) {
  set.seed(seed)
  ref <- mala(m, iter = 2020000, burnin = 20000, thin = 100)
  r <- as.matrix(ref)
  s <- summary(ref)$statistics
  cat("MALA: acceptance", format(ref$acceptance, digits = 3), " smallest ESS",
      format(min(s[, "ess"]), digits = 4), " seconds", format(ref$time, digits = 3), "\n")
  res <- list(mean = colMeans(r), sd = apply(r, 2, sd), ess = s[, "ess"])
  saveRDS(res, out, version = 2)
  if (!requireNamespace("rstan", quietly = TRUE)) return(invisible(res))
  code <- "
    data { int<lower=0> n; int<lower=1> p; matrix[n, p] X; int<lower=0, upper=1> y[n]; }
    parameters { vector[p] beta; }
    model { beta ~ normal(0, 10); y ~ bernoulli_logit(X * beta); }"
  # Debian's r-cran-bh is a virtual package over libboost-dev: its headers are
  # in /usr/include, where rstan does not look by itself
  boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
  fit <- rstan::sampling(rstan::stan_model(model_code = code, boost_lib = boost),
                         data = list(n = nrow(X), p = ncol(X), X = X, y = y), chains = 4,
                         cores = 1, iter = 25000, warmup = 5000, seed = seed, refresh = 0)
  b <- as.matrix(fit, pars = "beta")
  nuts_ess <- rstan::summary(fit)$summary[seq_len(ncol(X)), "n_eff"]
  se <- sqrt(apply(r, 2, var) / res$ess + apply(b, 2, var) / nuts_ess)
  cat("NUTS: smallest ESS", format(min(nuts_ess), digits = 4), "\n")
  print(round(rbind(mala_mean = res$mean, nuts_mean = colMeans(b),
                    z = (res$mean - colMeans(b)) / se,
                    sd_ratio = res$sd / apply(b, 2, sd)), 4))
  res$nuts <- list(mean = colMeans(b), sd = apply(b, 2, sd), ess = nuts_ess)
  saveRDS(res, out, version = 2)
  invisible(res)
}
