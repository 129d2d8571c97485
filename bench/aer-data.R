# AER's data sets for the count benchmarks (bench/negbin-defaults.R,
# bench/default-call.R): read if AER is installed, or from AER_DATA_DIR (the
# data/ folder of its unpacked source); NULL without either. AER sets its
# own base levels on some factors (NMES1988's health: "average"). sgld's
# formula face follows a factor's contrasts as glm() does (checked on
# NMES1988, 2026-11-29: the same columns as glm()); the factors still come
# plain so that the stored stan_glm() results of bench/default-call-stan.rds,
# made on plain factors, stay comparable.
aer <- function(name) {
  e <- new.env()
  if (requireNamespace("AER", quietly = TRUE)) utils::data(list = name, package = "AER", envir = e)
  else if (nzchar(Sys.getenv("AER_DATA_DIR")))
    load(file.path(Sys.getenv("AER_DATA_DIR"), paste0(name, ".rda")), envir = e)
  d <- e[[name]]
  if (!is.null(d)) for (v in names(d)) if (is.factor(d[[v]])) attr(d[[v]], "contrasts") <- NULL
  d
}
