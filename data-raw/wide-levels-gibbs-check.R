# Checks of the reference sampler of data-raw/wide-levels-gibbs.R before its
# references are trusted (figures: bench/sparse.md):
#  1. its log posterior equals sgld's log_posterior() up to a constant, for
#     binomial, poisson and gaussian models of y ~ x + g at 40 levels (the
#     priors read off the model, the Jacobian of the level means);
#  2. on a tiny case (3 levels, one of 4 rows all events or all zeros, so
#     half-flat) its means and sds against a long mala() run, 4 chains each.
#   cd <package root> && nice Rscript data-raw/wide-levels-gibbs-check.R
library(sgld)
source("tests/testthat/helper-wide-levels.R")
source("data-raw/wide-levels-gibbs.R")
builder <- list(binomial = model_logistic, poisson = model_poisson, gaussian = model_linear)
set.seed(7)
for (fam in names(builder)) {
  dat <- wide_levels_data(40, 400, family = fam)
  m <- builder[[fam]](y ~ x + g, data = dat)
  t <- levels_target(m, dat)
  diffs <- replicate(20, {
    s <- list(a = stats::rnorm(t$K), gamma = stats::rnorm(t$P, 0, 0.3),
              log_sigma = stats::rnorm(1, 0, 0.3))
    w <- numeric(m$d)
    w[t$pos] <- state_coefficients(s)
    if (fam == "gaussian") w[m$d] <- 2 * s$log_sigma   # sgld samples log sigma2
    levels_logpost(t, s) - log_posterior(m, w)$logpost
  })
  cat(sprintf("%s: log posterior minus sgld's, spread over 20 points %.1e\n", fam,
              diff(range(diffs))))
}
for (fam in names(builder)) {
  set.seed(11)
  dat <- data.frame(g = factor(rep(c("A", "B", "C"), c(20, 20, 4))), x = stats::rnorm(44))
  eta <- 0.3 + 0.5 * dat$x + c(0, -0.5, 1)[as.integer(dat$g)]
  dat$y <- switch(fam, binomial = stats::rbinom(44, 1, stats::plogis(eta)),
                  poisson = stats::rpois(44, exp(eta)), gaussian = eta + stats::rnorm(44))
  # level C half-flat: all events (binomial), all zeros (poisson)
  if (fam == "binomial") dat$y[dat$g == "C"] <- 1
  if (fam == "poisson") dat$y[dat$g == "C"] <- 0
  m <- builder[[fam]](y ~ x + g, data = dat)
  t <- levels_target(m, dat)
  s <- levels_summary(gibbs_levels(t, iter = 10000, warmup = 500, chains = 4, seed = 1))
  set.seed(2)
  fm <- mala(m, iter = 200000, chains = 4)
  ref_mean <- posterior_mean(fm)[names(s$mean)]
  ref_sd <- sqrt(posterior_var(fm)[names(s$mean)])
  cat(sprintf("%s, 3 levels: Gibbs ESS %.0f-%.0f, R-hat <= %.4f; MALA smallest ESS %.0f\n",
              fam, min(s$ess_bulk), max(s$ess_bulk), max(s$rhat), fm$checks$convergence$ess_min))
  print(round(rbind(gibbs_mean = s$mean, mala_mean = ref_mean,
                    `diff / sd` = (s$mean - ref_mean) / ref_sd,
                    gibbs_sd = s$sd, mala_sd = ref_sd, `sd ratio` = s$sd / ref_sd), 4))
}
