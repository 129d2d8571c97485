# The held-out multilevel data set (not used while designing R/auto-glmm.R):
# lme4::Penicillin, diameter ~ 1 + (1 | plate) + (1 | sample), crossed
# (24 plates x 6 samples, 144 rows), gaussian; sgld(model) at its defaults,
# seeds 1-3, against stan_glmer's NUTS (bench/glmm-heldout-reference.rds from
# data-raw/glmm-reference.R). Results in bench/glmm-defaults.md.
suppressMessages(library(sgld))
source("tests/testthat/helper-glmm-auto.R")
ref <- readRDS("bench/glmm-heldout-reference.rds")$penicillin
m <- glmm_reference_model(diameter ~ 1 + (1 | plate) + (1 | sample), lme4::Penicillin,
                          "gaussian", ref)
for (seed in 1:3) {
  set.seed(seed)
  warned <- character()
  t <- system.time(fit <- withCallingHandlers(sgld(m, pars = TRUE), warning = function(w) {
    warned <<- c(warned, conditionMessage(w))
    invokeRestart("muffleWarning")
  }))
  e <- glmm_reference_errors(glmm_reference_draws(m, fit), ref)
  cat(sprintf("penicillin seed %d d %d: mean %.3f sd (%s), sd %.1f%% (%s), %d quantities; ESS %.0f; %.1f s CPU; %s\n",
              seed, m$d, e$mean, e$mean_at, 100 * e$sd, e$sd_at, e$quantities,
              fit$checks$convergence$ess_min, t[["user.self"]] + t[["sys.self"]],
              if (length(warned)) paste("WARNING:", warned, collapse = " | ") else "no warning"))
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
