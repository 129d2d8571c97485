# The default call on a multilevel model against stan_glmer (4 chains, its
# defaults) and lme4::glmer, at 10^3, 10^4 and 10^5 rows (bench/glmm-speed.md).
# Simulated binary outcome y ~ x + (1 | g): 20 groups of 50 rows at 10^3, 200
# groups at 10^4 (of 50) and 10^5 (of 500). stan_glmer runs once per size up to
# `stan_max` rows; its timings are kept in bench/glmm-speed-stan.rds so that the
# sgld part can be rerun alone.
#   Rscript bench/glmm-speed.R [stan|sgld|all]
suppressMessages({library(sgld); library(lme4)})
what <- commandArgs(TRUE)[1]
if (is.na(what)) what <- "all"
sizes <- c(1e3, 1e4, 1e5)
stan_max <- 1e4
groups <- c(20, 200, 200)
simulate <- function(n, G, seed = 1) {
  set.seed(seed)
  g <- factor(sprintf("g%04d", rep(seq_len(G), length.out = n)))
  x <- rnorm(n)
  data.frame(y = rbinom(n, 1, plogis(-0.5 + 0.8 * x + rnorm(G, 0, 1)[g])), x = x, g = g)
}
times <- function(expr) {
  t <- system.time(expr)
  c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]] +
      sum(t[c("user.child", "sys.child")], na.rm = TRUE))
}
stan_file <- "bench/glmm-speed-stan.rds"
if (what %in% c("stan", "all")) {
  stan <- list()
  for (i in which(sizes <= stan_max)) {
    d <- simulate(sizes[i], groups[i])
    tm <- times(fit <- rstanarm::stan_glmer(y ~ x + (1 | g), data = d, family = binomial,
                                           chains = 4, cores = 1, seed = 1, refresh = 0))
    stan[[as.character(sizes[i])]] <- list(time = tm, load = unname(parallel::detectCores()),
      loadavg = readLines("/proc/loadavg"), mean = colMeans(as.matrix(fit)),
      sd = apply(as.matrix(fit), 2, sd))
    cat("stan_glmer n =", sizes[i], ":", tm, "\n")
    saveRDS(stan, stan_file, version = 2)
  }
}
if (what %in% c("sgld", "all")) {
  stan <- if (file.exists(stan_file)) readRDS(stan_file) else list()
  # SIZES=10000 Rscript bench/glmm-speed.R sgld: some sizes only
  only <- as.numeric(strsplit(Sys.getenv("SIZES", paste(sizes, collapse = ",")), ",")[[1]])
  for (i in which(sizes %in% only)) {
    d <- simulate(sizes[i], groups[i])
    d$x_c <- d$x - mean(d$x)
    # stan_glmer's default priors for this design: the intercept N(0, 2.5) on
    # the centred predictor, the slope N(0, 2.5 / sd(x)), decov()'s defaults
    m <- sgld:::model_glmm(y ~ x_c + (1 | g), d, "binomial",
                           prior_scale = c(2.5, 2.5 / sd(d$x)))
    t_lme4 <- times(g <- lme4::glmer(y ~ x + (1 | g), d, family = binomial))
    set.seed(1)
    t_sgld <- times(fit <- suppressWarnings(sgld(m)))
    draws <- as.matrix(fit, scale = "sampler")
    st <- stan[[as.character(sizes[i])]]
    acc <- if (!is.null(st)) {
      s <- sqrt(st$mean[["Sigma[g:(Intercept),(Intercept)]"]])
      # fixed effects against stan_glmer's (same priors), in its sds
      c(slope = abs(mean(draws[, "x_c"]) - st$mean[["x"]]) / st$sd[["x"]],
        slope_sd = sd(draws[, "x_c"]) / st$sd[["x"]] - 1)
    }
    cat(sprintf(paste0("n = %g, %d groups: glmer %.1f s elapsed (%.1f CPU); sgld %.1f s ",
                       "elapsed (%.1f CPU), %s iterations/chain, smallest ESS %.0f%s%s\n"),
                sizes[i], groups[i], t_lme4[["elapsed"]], t_lme4[["cpu"]], t_sgld[["elapsed"]],
                t_sgld[["cpu"]], format(fit$auto$iter, big.mark = ","),
                fit$checks$convergence$ess_min,
                if (!is.null(st)) sprintf("; stan_glmer %.1f s elapsed (%.1f CPU): %.0fx elapsed, %.0fx CPU",
                                          st$time[["elapsed"]], st$time[["cpu"]],
                                          st$time[["elapsed"]] / t_sgld[["elapsed"]],
                                          st$time[["cpu"]] / t_sgld[["cpu"]]) else "",
                if (!is.null(acc)) sprintf("; slope %.3f sd off stan's, sd %+.1f%%", acc[1],
                                           100 * acc[2]) else ""))
  }
  cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
}
