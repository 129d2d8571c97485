# Exact references for the negative-binomial multilevel model
# (tests/testthat/test-glmm-negbin.R, bench/glmm-negbin.R): rstanarm::stan_glmer.nb()
# at its defaults (priors, 4 chains; 4,000 iterations per chain, half warm-up,
# rather than its 2,000, for a smaller Monte Carlo error), with fixed seeds, on
#   grouseticks: TICKS ~ YEAR + scale(HEIGHT) + (1 | BROOD) + (1 | LOCATION)
#   location:    TICKS ~ YEAR + scale(HEIGHT) + (1 | LOCATION), grouseticks with
#                one term: the default call takes seconds, for the test suite
#   simulated:   y ~ x + (1 + x | g) + offset(log(expo)), 1,500 rows in 60 groups,
#                phi = 2.5: held out (not looked at while designing the
#                sampler's route); its data are stored with the reference.
# Stored per data set: posterior means and sds of every parameter under
# rstanarm's names plus each term's sds (sd[g:coef]) and correlations; 1,000
# draws of the fixed effects, sds, correlations and reciprocal_dispersion; the
# largest Monte Carlo standard error of a mean relative to its sd and the
# smallest bulk ESS; stan's wall time and per-chain times; prior_summary()'s
# print; the versions.
#   nice Rscript data-raw/glmm-negbin-reference.R
library(rstanarm)
out <- "inst/extdata/glmm-negbin-reference.rds"

# The simulated set (seeded): 60 groups of 25 rows, correlated intercept and
# slope, exposures between 0.5 and 2.
negbin_simulated <- function() {
  set.seed(20261129)
  G <- 60
  g <- factor(rep(sprintf("g%02d", seq_len(G)), each = 25))
  x <- rnorm(G * 25)
  expo <- runif(G * 25, 0.5, 2)
  S <- matrix(c(0.5^2, 0.3 * 0.5 * 0.25, 0.3 * 0.5 * 0.25, 0.25^2), 2)
  b <- matrix(rnorm(2 * G), G) %*% chol(S)
  eta <- 0.8 + 0.4 * x + b[g, 1] + b[g, 2] * x + log(expo)
  data.frame(y = rnbinom(G * 25, size = 2.5, mu = exp(eta)), x = x, expo = expo, g = g)
}

# Each term's sds and correlations from the draws of its covariance
# Sigma[g:a,b]: the diagonal's square roots, sd[g:a], then cor[g:a,b].
term_sds_cors <- function(draws) {
  sig <- grep("^Sigma\\[", colnames(draws), value = TRUE)
  parts <- do.call(rbind, regmatches(sig, regexec("^Sigma\\[([^:]*):([^,]*),(.*)\\]$", sig)))
  diagonal <- parts[, 3] == parts[, 4]
  sd_name <- function(g, a) paste0("sd[", g, ":", a, "]")
  out <- sqrt(draws[, sig[diagonal], drop = FALSE])
  colnames(out) <- sd_name(parts[diagonal, 2], parts[diagonal, 3])
  for (j in which(!diagonal)) {
    g <- parts[j, 2]
    scale <- out[, sd_name(g, parts[j, 3])] * out[, sd_name(g, parts[j, 4])]
    out <- cbind(out, draws[, sig[j]] / scale)
    colnames(out)[ncol(out)] <- paste0("cor[", g, ":", parts[j, 4], ",", parts[j, 3], "]")
  }
  out
}

summarise_fit <- function(fit, seconds) {
  draws <- as.matrix(fit)
  draws <- draws[, !grepl("^mean_PPD|^log-posterior", colnames(draws)), drop = FALSE]
  sc <- term_sds_cors(draws)
  all <- cbind(draws, sc)
  mon <- rstan::monitor(array(all, c(nrow(all) / 4, 4, ncol(all))), warmup = 0, print = FALSE)
  keep <- c(names(fixef(fit)), colnames(sc), "reciprocal_dispersion")
  thin <- round(seq(1, nrow(all), length.out = 1000))
  list(mean = colMeans(all), sd = apply(all, 2, stats::sd), draws = all[thin, keep],
       mcse_rel = max(mon[, "se_mean"] / mon[, "sd"]), min_ess = min(mon[, "Bulk_ESS"]),
       seconds = seconds, chain_seconds = rstan::get_elapsed_time(fit$stanfit),
       prior_summary = utils::capture.output(print(prior_summary(fit))),
       settings = "stan_glmer.nb defaults, chains = 4, cores = 2, iter = 4000",
       versions = c(rstanarm = as.character(packageVersion("rstanarm")),
                    rstan = as.character(packageVersion("rstan")),
                    lme4 = as.character(packageVersion("lme4")), R = R.version.string))
}

run <- function(formula, data, seed) {
  t0 <- proc.time()[["elapsed"]]
  fit <- stan_glmer.nb(formula, data = data, chains = 4, cores = 2, iter = 4000, seed = seed,
                       refresh = 0)
  summarise_fit(fit, proc.time()[["elapsed"]] - t0)
}

refs <- if (file.exists(out)) readRDS(out) else list()
if (is.null(refs$grouseticks))
  refs$grouseticks <- run(TICKS ~ YEAR + scale(HEIGHT) + (1 | BROOD) + (1 | LOCATION),
                          lme4::grouseticks, 20261129)
saveRDS(refs, out, compress = "xz")
if (is.null(refs$location))
  refs$location <- run(TICKS ~ YEAR + scale(HEIGHT) + (1 | LOCATION), lme4::grouseticks,
                       20261131)
saveRDS(refs, out, compress = "xz")
if (is.null(refs$simulated)) {
  sim <- negbin_simulated()
  refs$simulated <- c(run(y ~ x + (1 + x | g) + offset(log(expo)), sim, 20261130),
                      list(data = sim))
}
saveRDS(refs, out, compress = "xz")
