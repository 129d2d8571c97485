# rstanarm's posteriors for vignette("rstanarm", package = "sgld"), computed
# once and stored small in inst/extdata/rstanarm-reference.rds, so that the
# vignette builds without rstanarm. For each data set of
# inst/extdata/rstanarm-data.R: stan_glm() with rstanarm's defaults for the
# sampler (4 chains, iter = 2000 of which half warm-up, NUTS), the prior
# matched to sgld's default N(0, 10^2) on every coefficient, seed 4141;
# chains run one after another (cores = 1) so that the process's CPU time is
# the sampler's. Stored: posterior means, sds, 2.5/50/97.5% quantiles, bulk
# ESS and R-hat of each coefficient; wall and CPU time of stan_glm(), each
# chain's warm-up and sampling time; rstanarm and rstan versions; the
# machine's load average before and after.
#   cd <package root> && nice Rscript data-raw/rstanarm-reference.R
library(rstanarm)
source("inst/extdata/rstanarm-data.R")
sets <- rstanarm_datasets()

reference <- function(set, seed = 4141) {
  d <- data.frame(y = set$y)
  d$X <- set$X
  load_before <- readLines("/proc/loadavg")
  time <- system.time(fit <- stan_glm(
    y ~ 0 + X, family = binomial(), data = d,
    prior = normal(0, 10, autoscale = FALSE), chains = 4, cores = 1,
    seed = seed, refresh = 0))
  load_after <- readLines("/proc/loadavg")
  draws <- as.matrix(fit)
  colnames(draws) <- colnames(set$X)
  arr <- posterior::as_draws_array(as.array(fit))
  list(mean = colMeans(draws), sd = apply(draws, 2, stats::sd),
       quantiles = t(apply(draws, 2, stats::quantile, c(0.025, 0.5, 0.975))),
       # plain numbers: summarise_draws() gives tibble columns of class
       # pillar_num, whose arithmetic fails once vctrs' methods are loaded
       ess_bulk = setNames(as.numeric(posterior::summarise_draws(arr, "ess_bulk")$ess_bulk),
                           colnames(draws)),
       rhat = setNames(as.numeric(posterior::summarise_draws(arr, "rhat")$rhat),
                       colnames(draws)),
       draws_kept = nrow(draws),
       wall_seconds = unname(time["elapsed"]),
       cpu_seconds = unname(time["user.self"] + time["sys.self"]),
       chain_seconds = rstan::get_elapsed_time(fit$stanfit),
       n = nrow(set$X), d = ncol(set$X), seed = seed,
       loadavg_before = load_before, loadavg_after = load_after)
}

out <- list(small = reference(sets$small), large = reference(sets$large),
            rstanarm = as.character(packageVersion("rstanarm")),
            rstan = as.character(packageVersion("rstan")),
            R = R.version.string, cores = parallel::detectCores(),
            date = format(Sys.time(), tz = "UTC", usetz = TRUE))
str(out[c("rstanarm", "rstan", "date")])
for (s in c("small", "large"))
  cat(s, ": wall", round(out[[s]]$wall_seconds), "s, CPU", round(out[[s]]$cpu_seconds),
      "s, load", out[[s]]$loadavg_before, "\n")
saveRDS(out, "inst/extdata/rstanarm-reference.rds", version = 2)
