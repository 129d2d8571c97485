# AER's data sets for the count benchmarks (bench/negbin-defaults.R,
# bench/default-call.R): read if AER is installed, or from AER_DATA_DIR (the
# data/ folder of its unpacked source); NULL without either. AER sets its
# own base levels on some factors (NMES1988's health: "average"); sgld's
# design uses the first level whatever a factor's contrasts attribute says,
# so the factors come plain, and glm()/stan_glm() see the same columns.
aer <- function(name) {
  e <- new.env()
  if (requireNamespace("AER", quietly = TRUE)) utils::data(list = name, package = "AER", envir = e)
  else if (nzchar(Sys.getenv("AER_DATA_DIR")))
    load(file.path(Sys.getenv("AER_DATA_DIR"), paste0(name, ".rda")), envir = e)
  d <- e[[name]]
  if (!is.null(d)) for (v in names(d)) if (is.factor(d[[v]])) attr(d[[v]], "contrasts") <- NULL
  d
}
