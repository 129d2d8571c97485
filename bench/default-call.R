# The whole default call against glm() / MASS::glm.nb() and against
# rstanarm's stan_glm(), each at its defaults, once each, on the development
# data sets of issue 51: Adult (a9a design with an intercept), the nearly
# separated simulation (tests/testthat/helper-auto.R), and the negative
# binomial count sets (MASS::quine, MASS::epil, AER's NMES1988 and
# DoctorVisits, the 5,000-row simulation of tests/testthat/helper-counts.R).
# sgld's default priors are stan_glm()'s (R/priors.R), so stan_glm()'s 4,000
# draws are also the accuracy reference (their Monte Carlo error: about
# 0.02-0.03 posterior sd in a mean, 1.5-2% in an sd). Adult's reference is
# the long mala() run of data-raw/adult-defaults-reference.R instead:
# stan_glm() is not run there (hours on this geometry; see the .md).
# stan_glm()'s results are kept in bench/default-call-stan.rds, so that a
# rerun times sgld and glm again but not Stan (delete it to rerun Stan).
# AER's data are read if AER is installed, or from AER_DATA_DIR (the data/
# folder of its unpacked source); without either those two rows are left out.
#   Rscript bench/default-call.R   (from the package's top directory)
library(sgld)
source("tests/testthat/helper-auto.R")     # nearly_separated_data()
source("tests/testthat/helper-counts.R")   # negbin_simulated_data()

source("bench/aer-data.R")                # aer()
# Adult through the matrix face: its one-hot design holds identical columns
# (education=HS-grad and education_num=[9,9]), which the formula face
# refuses; glm() drops the aliased ones, sgld keeps them under their priors
adult_data <- function() {
  d <- adult[adult$set == "train", ]
  list(X = cbind("(Intercept)" = 1, adult_design(d)), y = adult_response(d))
}
sep_formula <- y ~ income + debt + ratio + age + owner + savings + members + years + visits +
  score + cards
nmes_formula <- visits ~ hospital + health + chronic + adl + region + age + afam + gender +
  married + school + income + employed + insurance + medicaid
cases <- list(
  adult = list(f = NULL, data = adult_data, family = "binomial"),
  nearly_separated = list(f = sep_formula, data = nearly_separated_data, family = "binomial"),
  quine = list(f = Days ~ Eth + Sex + Age + Lrn, data = function() MASS::quine,
               family = "negbin"),
  epil = list(f = y ~ lbase * trt + lage + V4, data = function() MASS::epil, family = "negbin"),
  nmes1988 = list(f = nmes_formula, data = function() aer("NMES1988"), family = "negbin"),
  doctorvisits = list(f = visits ~ ., data = function() aer("DoctorVisits"), family = "negbin"),
  simulated_negbin = list(f = y ~ ., data = negbin_simulated_data, family = "negbin"))
only <- Sys.getenv("SGLD_BENCH_ONLY")
if (nzchar(only)) cases <- cases[strsplit(only, ",")[[1]]]

stan_file <- "bench/default-call-stan.rds"
stan <- if (file.exists(stan_file)) readRDS(stan_file) else list()
seconds <- function(tm) c(wall = tm[["elapsed"]], cpu = tm[["user.self"]] + tm[["sys.self"]])

rows <- list()
for (name in names(cases)) {
  cs <- cases[[name]]
  data <- cs$data()
  if (is.null(data)) next
  nb <- cs$family == "negbin"
  glm_time <- seconds(system.time(
    if (name == "adult") stats::glm.fit(data$X, data$y, family = binomial())
    else if (nb) MASS::glm.nb(cs$f, data = data)
    else stats::glm(cs$f, data = data, family = binomial())))
  if (name != "adult" && is.null(stan[[name]])) {
    tm <- system.time(sf <- rstanarm::stan_glm(
      cs$f, data = data, family = if (nb) rstanarm::neg_binomial_2() else binomial(),
      refresh = 0, cores = 1, seed = 51))
    x <- as.matrix(sf)
    stan[[name]] <- list(time = seconds(tm), mean = colMeans(x), sd = apply(x, 2, sd),
                         min_ess = min(posterior::summarise_draws(
                           posterior::as_draws_array(as.array(sf)), "ess_bulk")$ess_bulk))
    saveRDS(stan, stan_file, version = 2)
  }
  ref <- if (name == "adult") readRDS("tests/testthat/adult-defaults-reference.rds") else stan[[name]]
  set.seed(1)
  tm <- system.time(fit <- if (name == "adult") sgld(suppressWarnings(model_logistic(data$X, data$y)))
                           else sgld(cs$f, data = data, family = if (nb) "negbin" else binomial()))
  x <- as.matrix(fit)
  colnames(x)[colnames(x) == "phi"] <- "reciprocal_dispersion"
  nm <- names(ref$mean)
  s <- seconds(tm)
  rows[[name]] <- data.frame(
    data = name, n = fit$model$n, d = ncol(x), strategy = fit$auto$strategy,
    sgld_wall = s[["wall"]], sgld_cpu = s[["cpu"]], glm_wall = glm_time[["wall"]],
    glm_cpu = glm_time[["cpu"]],
    stan_wall = if (name == "adult") NA else stan[[name]]$time[["wall"]],
    stan_cpu = if (name == "adult") NA else stan[[name]]$time[["cpu"]],
    cpu_over_glm = s[["cpu"]] / glm_time[["cpu"]],
    stan_cpu_over_sgld = if (name == "adult") NA else stan[[name]]$time[["cpu"]] / s[["cpu"]],
    max_mean_err_sd = max(abs(colMeans(x[, nm]) - ref$mean) / ref$sd),
    max_sd_err = max(abs(apply(x[, nm], 2, sd) / ref$sd - 1)))
}
out <- do.call(rbind, rows)
print(format(out, digits = 3), row.names = FALSE)
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load average:", readLines("/proc/loadavg"), "\n")
