# Exact references for the count models' tests (tests/testthat/test-model-poisson.R,
# test-model-negbin.R): posterior means and sds, on the user's scale, from
# rstan's NUTS on the same models written in Stan (the default priors:
# normal(0, 10) on every coefficient; for the negative binomial a
# half-normal(0, 1) prior on 1/phi), 4 chains of 10,000 iterations (5,000
# warm-up), 20,000 draws. Each entry also keeps the largest Monte Carlo
# standard error of a mean relative to its sd, and the smallest bulk ESS.
#   Rscript data-raw/count-references.R
library(sgld)
library(rstan)
options(mc.cores = 1)

poisson_code <- "
data { int n; int p; matrix[n, p] X; int<lower=0> y[n]; vector[n] offset; }
parameters { vector[p] beta; }
model {
  beta ~ normal(0, 10);
  y ~ poisson_log(X * beta + offset);
}"
negbin_code <- "
data { int n; int p; matrix[n, p] X; int<lower=0> y[n]; vector[n] offset; real s; }
parameters { vector[p] beta; real log_phi; }
transformed parameters { real phi = exp(log_phi); }
model {
  beta ~ normal(0, 10);
  target += normal_lpdf(exp(-log_phi) | 0, s) - log_phi;   // 1/phi half-normal, Jacobian
  y ~ neg_binomial_2_log(X * beta + offset, phi);
}"

fit_stan <- function(sm, m, pars) {
  X <- t(m$z[seq_len(m$p), , drop = FALSE])
  y <- as.integer(m$z[m$p + 1L, ])
  off <- if (is.null(m$obs_offset)) rep(0, nrow(X)) else m$obs_offset
  data <- list(n = nrow(X), p = ncol(X), X = X, y = y, offset = off, s = 1)
  f <- sampling(sm, data = data, chains = 4, iter = 10000, warmup = 5000, seed = 20261126,
                refresh = 0)
  s <- summary(f, pars = pars)$summary
  r <- as.matrix(f, pars = pars)
  colnames(r) <- m$names
  list(mean = colMeans(r), sd = apply(r, 2, sd),
       max_mcse_over_sd = max(s[, "se_mean"] / s[, "sd"]), min_ess = min(s[, "n_eff"]),
       max_rhat = max(s[, "Rhat"]))
}

# Debian's r-cran-bh leaves its headers in /usr/include
boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
poisson <- stan_model(model_code = poisson_code, boost_lib = boost)
negbin <- stan_model(model_code = negbin_code, boost_lib = boost)
models <- list(
  insurance = model_poisson(Claims ~ District + Group + Age, data = MASS::Insurance,
                            offset = log(Holders), prior = prior_normal(0, 10), prior_intercept = NULL),
  warpbreaks = model_poisson(breaks ~ wool * tension, data = datasets::warpbreaks, prior = prior_normal(0, 10), prior_intercept = NULL),
  quine = model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1),
  epil = model_negbin(y ~ lbase * trt + lage + V4, data = MASS::epil, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)
)
out <- lapply(models, function(m) {
  if (m$type == "poisson") fit_stan(poisson, m, "beta") else fit_stan(negbin, m, c("beta", "phi"))
})
str(out)
saveRDS(out, "tests/testthat/count-reference.rds", version = 2)
