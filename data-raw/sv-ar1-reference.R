# Exact references for model_sv(type = "ar1") with normal errors (the model
# of the stochvol package, with its default priors, as ?model_sv states
# them: mu ~ N(0, 100^2), (phi + 1)/2 ~ Beta(5, 1.5), sigma ~ |N(0, 1)|):
# rstan's NUTS on exactly that model, the path non-centred (h = mu + sigma
# times a standardised AR(1) of innovations), on three series:
#   sp500  MASS::SP500, demeaned (T = 2780; its two exact zeros are not zero
#          once demeaned);
#   sim    simulated, T = 2000, mu = -0.5, phi = 0.98, sigma = 0.15
#          (set.seed(42), below), demeaned;
#   dax    datasets::EuStockMarkets' DAX: percent log returns of the daily
#          closes with the 73 days on which the close did not change (the
#          market's holidays, on which the series repeats the last price)
#          dropped (price_returns(zeros = "drop"), T = 1786), demeaned.
# 4 chains from the same starts: on sp500 3,000 draws each after 1,000
# warm-up with adapt_delta 0.95; on sim and dax (shorter series, made on a
# machine shared with other work) 2,500 after 800 with adapt_delta 0.9. The
# script says so when the ESS of mu, phi or sigma is below 2,000 or an R-hat
# above 1.01 (then run it longer: nuts_ar1(draws = )). Stored, per series, in
# inst/extdata/sv-ar1-<name>-reference.rds (about 100 kB each): the returns,
# the globals' means, sds, quantiles and ESS, the path's means and sds, the
# run's diagnostics and time; no draws. The tests
# (tests/testthat/test-model-sv.R), bench/sv.R and the vignette read them.
# The same script also runs stochvol::svsample() on each series (100,000
# draws after 10,000, the path's draws thinned by 10, its defaults
# otherwise) and stores its means and sds beside NUTS's (`stochvol`), to say
# how far its auxiliary-mixture approximation is from the exact posterior.
#   Rscript data-raw/sv-ar1-reference.R [stochvol] [sp500|sim|dax ...]    (all when none)
# The compiled Stan program is cached in the file SV_STAN_CACHE names
# (default /tmp/sv-ar1-stan.rds).
suppressPackageStartupMessages({library(sgld); library(rstan)})
what <- commandArgs(TRUE)
# "stochvol" first: only stochvol's run beside existing references
only_stochvol <- identical(what[1], "stochvol")
what <- setdiff(what, "stochvol")
if (!length(what)) what <- c("sp500", "sim", "dax")

sv_ar1_series <- function(name) {
  y <- switch(name,
    sp500 = as.double(MASS::SP500),
    sim = {
      set.seed(42)
      T <- 2000
      h <- numeric(T)
      h[1] <- -0.5 + rnorm(1, 0, 0.15 / sqrt(1 - 0.98^2))
      for (t in 2:T) h[t] <- -0.5 + 0.98 * (h[t - 1] + 0.5) + rnorm(1, 0, 0.15)
      exp(h / 2) * rnorm(T)
    },
    dax = as.double(price_returns(EuStockMarkets[, "DAX"], zeros = "drop")),
    stop("unknown series ", name))
  y - mean(y)
}

stan_ar1 <- "
data { int<lower=2> T; vector[T] y; }
parameters {
  real mu;
  real<lower=-1, upper=1> phi;
  real<lower=0> sigma;
  vector[T] h_std;
}
transformed parameters {
  vector[T] h = h_std * sigma;
  h[1] /= sqrt(1 - phi^2);
  h += mu;
  for (t in 2:T) h[t] += phi * (h[t - 1] - mu);
}
model {
  mu ~ normal(0, 100);
  target += beta_lpdf((phi + 1) / 2 | 5, 1.5);
  sigma ~ normal(0, 1);
  h_std ~ std_normal();
  y ~ normal(0, exp(h / 2));
}"

cache <- Sys.getenv("SV_STAN_CACHE", "/tmp/sv-ar1-stan.rds")
# Debian's r-cran-bh is a virtual package over libboost-dev: its headers are
# in /usr/include, where rstan does not look by itself
boost <- if (nzchar(system.file("include", "boost", package = "BH"))) NULL else "/usr/include"
sm <- if (file.exists(cache)) readRDS(cache) else {
  s <- stan_model(model_code = stan_ar1, boost_lib = boost)
  saveRDS(s, cache)
  s
}

nuts_settings <- list(sp500 = list(draws = 3000, warmup = 1000, adapt_delta = 0.95),
                      sim = list(draws = 2500, warmup = 800, adapt_delta = 0.9),
                      dax = list(draws = 2500, warmup = 800, adapt_delta = 0.9))

nuts_ar1 <- function(y, draws = 3000, warmup = 1000, adapt_delta = 0.95, seed = 1) {
  m <- model_sv(y, type = "ar1")
  h0 <- m$default_init[-(1:3)]
  init <- function() list(mu = mean(h0), phi = 0.95, sigma = 0.2,
                          h_std = c((h0[1] - mean(h0)) * sqrt(1 - 0.95^2),
                                    (h0[-1] - mean(h0) - 0.95 * (h0[-length(h0)] - mean(h0)))) / 0.2)
  fit <- sampling(sm, data = list(T = length(y), y = y), chains = 4, cores = 1,
                  iter = warmup + draws, warmup = warmup, seed = seed, refresh = 0, init = init,
                  control = list(adapt_delta = adapt_delta, max_treedepth = 12))
  g <- c("mu", "phi", "sigma")
  dr <- as.matrix(fit, pars = c(g, "h"))
  sc <- paste0("h[", seq_along(y), "]")
  s <- summary(fit, pars = c(g, "h"))$summary
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  tm <- get_elapsed_time(fit)
  list(y = y, gmean = colMeans(dr[, g]), gsd = apply(dr[, g], 2, sd),
       gquantiles = apply(dr[, g], 2, quantile, probs = c(0.025, 0.25, 0.5, 0.75, 0.975)),
       gess = s[g, "n_eff"], grhat = s[g, "Rhat"],
       gdraws = dr[round(seq(1, nrow(dr), length.out = 2000)), g],
       pmean = unname(colMeans(dr[, sc])), psd = unname(apply(dr[, sc], 2, sd)),
       pess = unname(s[sc, "n_eff"]), rhat_max = max(s[, "Rhat"], na.rm = TRUE),
       divergences = sum(vapply(sp, function(x) sum(x[, "divergent__"]), 0)),
       max_depth = sum(vapply(sp, function(x) sum(x[, "treedepth__"] >= 12), 0)),
       draws = nrow(dr), seconds = sum(tm),
       method = sprintf(paste0("rstan %s NUTS, non-centred path, 4 chains x %d draws after %d ",
                               "warm-up, adapt_delta %s, max_treedepth 12"),
                        as.character(packageVersion("rstan")), draws, warmup, format(adapt_delta)))
}

stochvol_ar1 <- function(y, draws = 100000, burnin = 10000) {
  set.seed(3)
  t0 <- proc.time()[["elapsed"]]
  r <- stochvol::svsample(y, draws = draws, burnin = burnin, thinlatent = 10, quiet = TRUE)
  secs <- proc.time()[["elapsed"]] - t0
  S <- as.matrix(r$para[[1]])[, c("mu", "phi", "sigma")]
  H <- as.matrix(r$latent[[1]])
  list(gmean = colMeans(S), gsd = apply(S, 2, sd), gess = coda::effectiveSize(S),
       pmean = unname(colMeans(H)), psd = unname(apply(H, 2, sd)), seconds = secs,
       method = sprintf("stochvol %s svsample(), %d draws after %d (the path's thinned by 10), its defaults",
                        as.character(packageVersion("stochvol")), draws, burnin))
}

# NUTS on every series first, then stochvol on each (the references are
# saved as soon as they exist)
for (name in if (!only_stochvol) what) {
  y <- sv_ar1_series(name)
  ref <- do.call(nuts_ar1, c(list(y), nuts_settings[[name]]))
  ref$series <- name
  cat(sprintf(paste0("%s (T = %d): %.0f s, %d divergences, %d at the maximum depth, max R-hat %.4f\n",
                     "  mu %.4f (sd %.4f, ESS %.0f), phi %.5f (sd %.5f, ESS %.0f), ",
                     "sigma %.4f (sd %.4f, ESS %.0f); path ESS %.0f to %.0f\n"),
              name, length(y), ref$seconds, ref$divergences, ref$max_depth, ref$rhat_max,
              ref$gmean[1], ref$gsd[1], ref$gess[1], ref$gmean[2], ref$gsd[2], ref$gess[2],
              ref$gmean[3], ref$gsd[3], ref$gess[3], min(ref$pess), max(ref$pess)))
  if (min(ref$gess) < 2000 || ref$rhat_max > 1.01)
    cat("  NOT A REFERENCE YET: ESS below 2,000 or R-hat above 1.01; run longer\n")
  dir.create("inst/extdata", showWarnings = FALSE, recursive = TRUE)
  saveRDS(ref, sprintf("inst/extdata/sv-ar1-%s-reference.rds", name), version = 2)
}
if (requireNamespace("stochvol", quietly = TRUE)) for (name in what) {
  file <- sprintf("inst/extdata/sv-ar1-%s-reference.rds", name)
  ref <- readRDS(file)
  sv <- stochvol_ar1(ref$y)
  sv$z <- (sv$gmean - ref$gmean) / ref$gsd
  sv$sd_ratio <- sv$gsd / ref$gsd
  sv$path_cor <- cor(sv$pmean, ref$pmean)
  sv$path_sd_ratio <- mean(sv$psd / ref$psd)
  ref$stochvol <- sv
  cat(sprintf(paste0("%s, stochvol (%.0f s): means off by %s NUTS sds, sds %s of NUTS's; ",
                     "path: cor %.5f, sd ratio %.4f\n"), name, sv$seconds,
              paste(sprintf("%+.3f", sv$z), collapse = ", "),
              paste(sprintf("%.3f", sv$sd_ratio), collapse = ", "), sv$path_cor, sv$path_sd_ratio))
  saveRDS(ref, file, version = 2)
}
