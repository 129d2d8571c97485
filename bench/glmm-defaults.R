# sgld(model) at its defaults on the multilevel references, seeds 1-3
# (bench/glmm-defaults.md). Rscript bench/glmm-defaults.R [data set ...]
suppressMessages(library(sgld))
source("tests/testthat/helper-glmm-auto.R")
refs <- readRDS("inst/extdata/glmm-reference.rds")
which <- commandArgs(TRUE)
if (!length(which)) which <- intersect(names(glmm_reference_cases), names(refs))
seeds <- as.integer(Sys.getenv("SEEDS", "1,2,3") |> strsplit(",") |> unlist())
for (nm in which) {
  case <- glmm_reference_cases[[nm]]
  ref <- refs[[nm]]
  m <- glmm_reference_model(case$formula, case$data(ref), case$family, ref)
  for (seed in seeds) {
    set.seed(seed)
    warned <- character()
    t <- system.time(fit <- withCallingHandlers(sgld(m, pars = TRUE), warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    }))
    e <- glmm_reference_errors(glmm_reference_draws(m, fit), ref)
    cat(sprintf("%-12s seed %d d %4d: mean %.3f sd (%s), sd %.1f%% (%s), %d quantities; ESS %.0f; acc %.2f; %.1f s CPU, %.1f s elapsed; %s\n",
                nm, seed, m$d, e$mean, e$mean_at, 100 * e$sd, e$sd_at, e$quantities,
                min(fit$checks$convergence$ess_min), mean(fit$acceptance),
                t[["user.self"]] + t[["sys.self"]], t[["elapsed"]],
                if (length(warned)) paste("WARNING:", substr(warned, 1, 80), collapse = " | ")
                else "no warning"))
  }
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
