# Full-data Hamiltonian trajectories against the default call's batches
# with control variates, on the count sets where the default call
# subsamples (AER's DoctorVisits, 5,190 rows; NMES1988, 4,406 rows): CPU
# seconds per effective draw of the slowest parameter. The trajectories
# run as the default call's small-n route does (R/auto.R: auto_sgld_hmc(),
# step 0.9 (8 / d)^(1/4) in Laplace coordinates, 1 to 3 leapfrog steps, 200
# warm-up iterations, 4 chains from the mode) for 800 iterations after
# their warm-up. AER's data as in bench/aer-data.R (AER_DATA_DIR).
#   Rscript bench/hmc-batch.R
library(sgld)
options(sgld.threads = 1)
source("bench/aer-data.R")
nmes_formula <- visits ~ hospital + health + chronic + adl + region + age + afam + gender +
  married + school + income + employed + insurance + medicaid
cases <- list(doctorvisits = list(f = visits ~ ., data = "DoctorVisits"),
              nmes1988 = list(f = nmes_formula, data = "NMES1988"))
cpu <- function(tm) tm[["user.self"]] + tm[["sys.self"]]
for (name in names(cases)) {
  data <- aer(cases[[name]]$data)
  if (is.null(data)) next
  set.seed(1)
  t_default <- system.time(fit <- sgld(cases[[name]]$f, data = data, family = "negbin"))
  m <- fit$model
  pm <- posterior_mode(m, covariance = TRUE)
  eps <- 0.9 * (8 / max(8, m$d))^(1 / 4)
  set.seed(1)
  t_hmc <- system.time(hmc <- suppressWarnings(mala(
    m, lr = eps^2 / 2, iter = 1000, burnin = 200, thin = 1, chains = 4, init = pm$mode,
    precondition = pm$covariance, leapfrog = 2)))
  ess_default <- min(summary(fit)$statistics[, "n_eff"])
  ess_hmc <- min(summary(hmc)$statistics[, "n_eff"])
  cat(sprintf(paste0("%s (n = %d, d = %d): default %s, batch %d: %.2f CPU s, smallest ESS %.0f, ",
                     "%.2f ms per effective draw; full-data HMC: %.2f CPU s (mode included), ",
                     "acceptance %.2f, smallest ESS %.0f, %.2f ms per effective draw\n"),
              name, as.integer(m$n), m$d, fit$auto$strategy, as.integer(fit$auto$batch_size),
              cpu(t_default), ess_default, 1000 * cpu(t_default) / ess_default,
              cpu(t_hmc), mean(hmc$acceptance), ess_hmc, 1000 * cpu(t_hmc) / ess_hmc))
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
