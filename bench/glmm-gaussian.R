# The default call on gaussian multilevel models (the collapsed sampler,
# R/auto-glmm-gaussian.R): lme4's InstEval with its crossed model, and a
# simulated data set of 10^4 rows against stan_glmer (4 chains, its
# defaults; run once by bench/glmm-gaussian-stan.R, stored in
# bench/glmm-gaussian-stan.rds). Figures in bench/glmm-gaussian.md.
#   nice Rscript bench/glmm-gaussian.R [insteval|sim|all] [workers]
# workers: options(sgld.threads =), the chains' processes; left out, the
# default rule (chains x workers <= the processors not busy with other
# work), which on a machine loaded by other jobs runs the chains in turn.
suppressMessages({library(sgld); library(lme4)})
source("bench/glmm-gaussian-data.R")
what <- commandArgs(TRUE)[1]
if (is.na(what)) what <- "all"
if (!is.na(commandArgs(TRUE)[2])) options(sgld.threads = as.integer(commandArgs(TRUE)[2]))
# CPU: this process's and its reaped children's (the chains' workers)
times <- function(expr) {
  t <- system.time(expr)
  c(elapsed = t[["elapsed"]], cpu = sum(t[c("user.self", "sys.self", "user.child", "sys.child")],
                                        na.rm = TRUE))
}
say <- function(...) cat(sprintf(...), "\n", sep = "")
if (what %in% c("insteval", "all")) {
  f <- y ~ service + (1 | s) + (1 | d) + (1 | dept:service)   # lme4's own example
  say("InstEval: %s, %d rows; %s UTC, load %s", deparse(f), nrow(InstEval),
      format(Sys.time(), tz = "UTC"), readLines("/proc/loadavg"))
  set.seed(1)
  t_sgld <- times(fit <- sgld(f, InstEval, progress = TRUE))
  say("sgld(f, InstEval): %.1f s CPU (%.1f elapsed), %d worker(s); load after %s",
      t_sgld[["cpu"]], t_sgld[["elapsed"]], fit$auto$workers, readLines("/proc/loadavg"))
  say(paste("mode of theta %.1f s (%d evaluations); iterations per chain %d (+ %d warm-up,",
            "%d of them extended); acceptance %s; %d evaluations of p(theta | y) in all; sampling %.1f s"),
      fit$auto$setup_time, fit$auto$mode_evaluations, fit$auto$iter, fit$auto$warmup,
      fit$auto$extended, paste(format(fit$auto$acceptance, digits = 2), collapse = " "),
      fit$auto$evaluations, fit$sampling_time)
  conv <- fit$checks$convergence
  if (is.null(conv)) say("the fit's own convergence check: skipped at this size (4,136 parameters)")
  else say("all parameters: smallest ESS %.0f, largest R-hat %.3f", conv$ess_min, conv$rhat_max)
  # theta's own R-hat and ESS (the sampler's coordinates: log sds, log sigma)
  x <- as.matrix(fit, scale = "sampler")
  th <- colnames(x)[sgld:::glmm_theta_index(fit$model)]
  per <- coda::mcmc.list(lapply(fit$chain_ids, function(c)
    coda::mcmc(x[(c - 1) * fit$auto$iter + seq_len(fit$auto$iter), th, drop = FALSE])))
  print(data.frame(theta = th, rhat = round(sgld:::psrf(per), 4), ess = round(sgld:::ess(per))))
  t_lmer <- times(fl <- lmer(f, InstEval))
  say("lmer (REML): %.1f s CPU (%.1f elapsed)", t_lmer[["cpu"]], t_lmer[["elapsed"]])
  # lmer's REML estimates against the posterior (a sanity check: no NUTS
  # reference at this size; the collapsed sampler is exact)
  u <- as.matrix(fit)
  vc <- as.data.frame(VarCorr(fl))
  group <- !is.na(vc$var1)
  cols <- ifelse(group, paste0("Sigma[", vc$grp, ":(Intercept),(Intercept)]"), "sigma")
  q <- cbind(sqrt(u[, cols[group], drop = FALSE]), u[, c("sigma", names(fixef(fl)))])
  colnames(q) <- c(paste0("sd[", vc$grp[group], "]"), "sigma", names(fixef(fl)))
  cmp <- data.frame(lmer = c(vc$sdcor[group], vc$sdcor[!group], fixef(fl)), mean = colMeans(q),
                    sd = apply(q, 2, sd))
  cmp$z <- (cmp$mean - cmp$lmer) / cmp$sd
  print(signif(cmp, 4))
}
if (what %in% c("sim", "all")) {
  d <- glmm_gaussian_data()
  stan <- readRDS("bench/glmm-gaussian-stan.rds")
  say("simulated: %s, %d rows, %d groups; load %s", deparse(glmm_gaussian_formula), nrow(d),
      nlevels(d$g), readLines("/proc/loadavg"))
  t_lmer <- times(fl <- lmer(glmm_gaussian_formula, d))
  set.seed(1)
  t_sgld <- times(fit <- sgld(glmm_gaussian_formula, d))
  x <- as.matrix(fit)
  z <- abs(colMeans(x) - stan$mean[colnames(x)]) / stan$sd[colnames(x)]
  ratio <- apply(x, 2, sd) / stan$sd[colnames(x)]
  say("lmer %.2f s CPU; sgld %.1f s CPU (%.1f elapsed); stan_glmer %.1f s CPU (%.1f elapsed), %s",
      t_lmer[["cpu"]], t_sgld[["cpu"]], t_sgld[["elapsed"]], stan$time[["cpu"]],
      stan$time[["elapsed"]], stan$date)
  say("speed-up: %.0fx CPU, %.0fx elapsed", stan$time[["cpu"]] / t_sgld[["cpu"]],
      stan$time[["elapsed"]] / t_sgld[["elapsed"]])
  say("largest |mean diff| / sd %.3f (%s); sd ratio %.3f-%.3f; %d quantities",
      max(z), names(which.max(z)), min(ratio), max(ratio), length(z))
  conv <- fit$checks$convergence
  say("smallest ESS %.0f, largest R-hat %.3f; iterations per chain %d; load after %s",
      conv$ess_min, conv$rhat_max, fit$auto$iter, readLines("/proc/loadavg"))
}
