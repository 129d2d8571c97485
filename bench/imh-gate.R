# The independence sampler's gate above auto_full_n rows (R/auto-imh.R:
# imh_pays()): the whole default call with the route forced off
# (subsampling with control variates) and forced on, CPU s, seed 1, on the
# count sets of 4,406-5,190 rows and the simulated negative binomial of
# tests/testthat/helper-counts.R at 2,500, 5,000 and 10,000 rows; and what
# the gate chose, with the plan's rows (batch x iterations) it compared.
#   AER_DATA_DIR=<AER's data/> nice Rscript bench/imh-gate.R
# Figures: bench/imh.md.
library(sgld)
source("bench/aer-data.R")
source("tests/testthat/helper-counts.R")   # negbin_simulated_data()
cpu <- function(tm) tm[["user.self"]] + tm[["sys.self"]]
nmes_formula <- visits ~ hospital + health + chronic + adl + region + age + afam + gender +
  married + school + income + employed + insurance + medicaid
cases <- list(
  NMES1988 = list(f = nmes_formula, data = function() aer("NMES1988")),
  DoctorVisits = list(f = visits ~ ., data = function() aer("DoctorVisits")),
  simulated_2500 = list(f = y ~ ., data = function() negbin_simulated_data(2500)),
  simulated_5000 = list(f = y ~ ., data = function() negbin_simulated_data(5000)),
  simulated_10000 = list(f = y ~ ., data = function() negbin_simulated_data(10000)))
ns <- asNamespace("sgld")
gate <- get("imh_pays.sgld_model_negbin", ns)
use <- function(f) {
  unlockBinding("imh_pays.sgld_model_negbin", ns)
  assign("imh_pays.sgld_model_negbin", f, ns)
  lockBinding("imh_pays.sgld_model_negbin", ns)
}
rows <- list()
for (name in names(cases)) {
  data <- cases[[name]]$data()
  if (is.null(data)) next
  plan_rows <- NA
  for (route in c("gate", "subsampled", "imh")) {
    use(switch(route,
               gate = function(model, plan) {
                 if (!is.null(plan)) plan_rows <<- plan$batch * plan$iter
                 gate(model, plan)
               },
               subsampled = function(model, plan) FALSE,
               imh = function(model, plan) TRUE))
    set.seed(1)
    tm <- system.time(fit <- sgld(cases[[name]]$f, data = data, family = "negbin"))
    rows[[length(rows) + 1]] <- data.frame(
      data = name, n = nrow(data), route = route, strategy = fit$auto$strategy,
      cpu = round(cpu(tm), 3), plan_rows = plan_rows,
      imh_rows = sgld:::auto_imh_evaluations * nrow(data))
    print(rows[[length(rows)]], row.names = FALSE)
  }
}
use(gate)
print(do.call(rbind, rows), row.names = FALSE)
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
