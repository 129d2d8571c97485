# The default call sgld(model) on negative-binomial regressions (issue 51,
# item 2): its wall and CPU time, the batch and control variates it chose,
# and its accuracy, beside MASS::glm.nb()'s time. Data: MASS::quine (146
# rows) and MASS::epil (236), against the stored NUTS references
# (tests/testthat/count-reference.rds); AER's NMES1988 (4,406 rows, 19
# parameters) and DoctorVisits (5,190 rows, 13), and a simulated 5,000-row
# regression (tests/testthat/helper-counts.R), against long mala() runs
# from the mode (2 chains of 60,000 iterations; computed once, kept in
# bench/negbin-references.rds and, for the simulation, by
# data-raw/negbin-simulated-reference.R in tests/testthat/). AER is
# read if installed, or from the data/ folder of its unpacked source in
# AER_DATA_DIR; without either, those two rows are left out.
# The references, and the figures in bench/negbin-defaults.md, are for the
# priors that were the defaults then: N(0, 10^2) on every coefficient and a
# half-normal(0, 1) prior on 1/phi, which the models below now state.
#   Rscript bench/negbin-defaults.R   (from the package's top directory)
library(sgld)
options(sgld.threads = 1)
source("tests/testthat/helper-counts.R")   # negbin_simulated_data()

source("bench/aer-data.R")                # aer()
nmes_formula <- visits ~ hospital + health + chronic + adl + region + age + afam + gender +
  married + school + income + employed + insurance + medicaid
cases <- list(
  quine = list(f = Days ~ Eth + Sex + Age + Lrn, data = function() MASS::quine),
  epil = list(f = y ~ lbase * trt + lage + V4, data = function() MASS::epil),
  nmes1988 = list(f = nmes_formula, data = function() aer("NMES1988")),
  doctorvisits = list(f = visits ~ ., data = function() aer("DoctorVisits")),
  simulated = list(f = y ~ ., data = negbin_simulated_data))

ref_file <- "bench/negbin-references.rds"
refs <- if (file.exists(ref_file)) readRDS(ref_file) else list()
stored <- c(readRDS("tests/testthat/count-reference.rds"),
            list(simulated = readRDS("tests/testthat/negbin-simulated-reference.rds")))
reference <- function(name, m) {
  if (!is.null(stored[[name]])) return(stored[[name]])
  if (is.null(refs[[name]])) {
    set.seed(7)
    fit <- mala(m, iter = 60000, burnin = 2000, chains = 2, init = posterior_mode(m)$mode)
    x <- as.matrix(fit)
    refs[[name]] <<- list(mean = colMeans(x), sd = apply(x, 2, stats::sd),
                          min_ess = min(coda::effectiveSize(fit$draws)))
    saveRDS(refs, ref_file, version = 2)
  }
  refs[[name]]
}

rows <- list()
for (name in names(cases)) {
  data <- cases[[name]]$data()
  if (is.null(data)) next
  f <- cases[[name]]$f
  # the priors of its references: the defaults before rstanarm's
  # (bench/default-call.R measures the default call at rstanarm's, against
  # stan_glm())
  m <- model_negbin(f, data = data, prior = prior_normal(0, 10), prior_intercept = NULL,
                    prior_overdispersion = 1)
  ref <- reference(name, m)
  glm_time <- system.time(MASS::glm.nb(f, data = data))[["elapsed"]]
  for (seed in 1:2) {
    set.seed(seed)
    tm <- system.time(fit <- suppressWarnings(sgld(m, progress = FALSE)))
    x <- as.matrix(fit)
    rows[[length(rows) + 1]] <- data.frame(
      data = name, n = m$n, d = m$d, seed = seed, wall = tm[["elapsed"]],
      cpu = tm[["user.self"]] + tm[["sys.self"]], glm.nb = glm_time,
      batch = fit$auto$batch_size, cv = fit$auto$control_variates,
      iter = fit$auto$iter, setup = round(fit$auto$setup_time, 2),
      mean_err = max(abs(colMeans(x) - ref$mean) / ref$sd),
      sd_err = max(abs(apply(x, 2, stats::sd) / ref$sd - 1)))
  }
}
out <- do.call(rbind, rows)
print(format(out, digits = 3), row.names = FALSE)
cat("load average:", readLines("/proc/loadavg"), "\n")
