# The exact reference for sgld(model) on the nearly separated simulation of
# tests/testthat/helper-auto.R (nearly_separated_data(): 1,300 rows, 12
# coefficients, the default prior_normal(0, 10)): posterior means and sds
# from 2,000,000 iterations of mala() with the Laplace preconditioner
# (20,000 burn-in, every 100th kept), saved first; then compared with rstan's
# NUTS (4 chains of 20,000 after 5,000 warm-up, its default diagonal metric
# adapted): the script prints both means, their z-scores by the two Monte
# Carlo errors and the sd ratios, and stores NUTS's figures beside.
#   Rscript data-raw/nearly-separated-reference.R   (from the package's top directory)
library(sgld)
source("tests/testthat/helper-auto.R")
m <- nearly_separated_model()
d <- nearly_separated_data()
set.seed(36)
ref <- mala(m, iter = 2020000, burnin = 20000, thin = 100)
r <- as.matrix(ref)
s <- summary(ref)$statistics
cat("MALA: acceptance", format(ref$acceptance, digits = 3), " smallest ESS",
    format(min(s[, "ess"]), digits = 4), " seconds", format(ref$time, digits = 3), "\n")
out <- list(mean = colMeans(r), sd = apply(r, 2, sd), ess = s[, "ess"])
saveRDS(out, "tests/testthat/nearly-separated-reference.rds", version = 2)
if (requireNamespace("rstan", quietly = TRUE)) {
  code <- "
    data { int<lower=0> n; int<lower=1> p; matrix[n, p] X; int<lower=0, upper=1> y[n]; }
    parameters { vector[p] beta; }
    model { beta ~ normal(0, 10); y ~ bernoulli_logit(X * beta); }"
  X <- model.matrix(y ~ income + debt + ratio + age + owner + savings + members + years +
                      visits + score + cards, d)
  # Debian's r-cran-bh is a virtual package over libboost-dev: its headers are
  # in /usr/include, where rstan does not look by itself
  boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
  fit <- rstan::sampling(rstan::stan_model(model_code = code, boost_lib = boost),
                         data = list(n = nrow(X), p = ncol(X), X = X, y = d$y), chains = 4,
                         cores = 1, iter = 25000, warmup = 5000, seed = 36, refresh = 0)
  b <- as.matrix(fit, pars = "beta")
  nuts_ess <- rstan::summary(fit)$summary[seq_len(ncol(X)), "n_eff"]
  se <- sqrt(apply(r, 2, var) / out$ess + apply(b, 2, var) / nuts_ess)
  cat("NUTS: smallest ESS", format(min(nuts_ess), digits = 4), "\n")
  print(round(rbind(mala_mean = out$mean, nuts_mean = colMeans(b),
                    z = (out$mean - colMeans(b)) / se,
                    sd_ratio = out$sd / apply(b, 2, sd)), 4))
  out$nuts <- list(mean = colMeans(b), sd = apply(b, 2, sd), ess = nuts_ess)
}
saveRDS(out, "tests/testthat/nearly-separated-reference.rds", version = 2)
