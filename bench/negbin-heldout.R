# The default call on negative-binomial regressions not used while the
# small-data route (R/auto.R auto_sgld_full(), "mala-gaussian") was
# designed on MASS::quine, MASS::epil and sacramento: AER's PhDPublications
# (915 rows) and RecreationDemand (659 rows), against rstanarm's
# stan_glm(family = neg_binomial_2()) at its defaults (4 chains of 2,000,
# the same priors as sgld's defaults), seeds 1-3.
#   AER_DATA_DIR=<AER's data/> nice Rscript bench/negbin-heldout.R
# Figures: bench/hmc.md.
library(sgld)
source("bench/aer-data.R")
cases <- list(
  phd = list(f = articles ~ gender + married + kids + prestige + mentor,
             data = function() aer("PhDPublications")),
  recreation = list(f = trips ~ quality + ski + income + userfee + costC + costS + costH,
                    data = function() aer("RecreationDemand")))
for (name in names(cases)) {
  cs <- cases[[name]]
  data <- cs$data()
  if (is.null(data)) next
  tm <- system.time(sf <- rstanarm::stan_glm(cs$f, data = data,
                                             family = rstanarm::neg_binomial_2(),
                                             refresh = 0, cores = 1, seed = 51))
  x <- as.matrix(sf)
  ess <- min(posterior::summarise_draws(posterior::as_draws_array(as.array(sf)),
                                        "ess_bulk")$ess_bulk)
  cat(sprintf("%s: %d rows; stan_glm %.1f s CPU, smallest bulk ESS %.0f\n", name, nrow(data),
              tm[["user.self"]] + tm[["sys.self"]], ess))
  ref_mean <- colMeans(x)
  ref_sd <- apply(x, 2, sd)
  for (seed in 1:3) {
    set.seed(seed)
    tf <- system.time(fit <- sgld(cs$f, data = data, family = "negbin"))
    y <- as.matrix(fit)
    colnames(y)[colnames(y) == "phi"] <- "reciprocal_dispersion"
    nm <- names(ref_mean)
    z <- abs(colMeans(y[, nm]) - ref_mean) / ref_sd
    r <- abs(apply(y[, nm], 2, sd) / ref_sd - 1)
    cat(sprintf("  seed %d: %s, %.2f s CPU (%.0fx stan_glm), max |mean err|/sd %.3f (%s), max |sd ratio - 1| %.3f (%s)\n",
                seed, fit$auto$strategy, tf[["user.self"]] + tf[["sys.self"]],
                (tm[["user.self"]] + tm[["sys.self"]]) / (tf[["user.self"]] + tf[["sys.self"]]),
                max(z), nm[which.max(z)], max(r), nm[which.max(r)]))
  }
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
