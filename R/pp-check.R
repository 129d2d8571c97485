#' Posterior predictive checks
#'
#' bayesplot's `pp_check()` for fits of the regressions ([model_linear()],
#' [model_logistic()], [model_poisson()], [model_negbin()]), networks
#' ([model_mlp()]; classes as numbers, 0/1 for two and 1 to K for more) and
#' stochastic volatility ([model_sv()]: the returns), as rstanarm's:
#' the observed response against `ndraws` replicated data sets drawn by
#' [posterior_predict()][posterior_predict.sgld_fit], through bayesplot's
#' `ppc_<plotfun>()`. For the logistic model the response is 1 for the event
#' and 0 otherwise (the number of events for a `cbind(events, nonevents)`
#' response), as the replicated draws count it.
#'
#' @param object A sampler's fit of one of those models.
#' @param plotfun The name of a bayesplot `ppc_` function without its
#'   prefix: `"dens_overlay"` (the default), `"hist"`, `"ecdf_overlay"`,
#'   `"stat"`, `"intervals"`, ... (see [bayesplot::available_ppc()]).
#' @param ndraws How many replicated data sets to draw (at random among the
#'   kept draws; `set.seed()` makes them reproducible).
#' @param ... Passed to the bayesplot function (e.g. `stat = "mean"` for
#'   `plotfun = "stat"`).
#' @return A ggplot object, as bayesplot returns it.
#' @examples
#' if (requireNamespace("bayesplot", quietly = TRUE)) {
#'   set.seed(1)
#'   fit <- sgld(model_linear(y ~ x, data = handout[1:500, ]))
#'   bayesplot::pp_check(fit)
#' }
#' @exportS3Method bayesplot::pp_check
pp_check.sgld_fit <- function(object, plotfun = "dens_overlay", ndraws = 50, ...) {
  if (!requireNamespace("bayesplot", quietly = TRUE))
    abort("pp_check() draws its plots with bayesplot; install it.")
  if (!is.character(plotfun) || length(plotfun) != 1L || is.na(plotfun))
    abort("`plotfun` must be the name of a bayesplot ppc_ function, e.g. \"dens_overlay\", ",
          "not ", describe(plotfun), ".")
  name <- sub("^ppc_", "", plotfun)
  fun <- get0(paste0("ppc_", name), envir = asNamespace("bayesplot"), mode = "function")
  if (is.null(fun))
    abort("`plotfun`: bayesplot has no ppc_", name, "(); see bayesplot::available_ppc().")
  need_draws(object, "pp_check()")
  total <- ndraws(object) * length(object$draws)
  check_count(ndraws, "ndraws", lower = 1)
  yrep <- posterior_predict.sgld_fit(object, ndraws = min(ndraws, total))
  both <- model_pp_data(object$model, yrep)
  fun(both$y, both$yrep, ...)
}

# The observed response and the replicated draws as numbers on one scale,
# for bayesplot; the default is the regressions'.
model_pp_data <- function(model, yrep) UseMethod("model_pp_data")
model_pp_data.default <- function(model, yrep) list(y = replicated_response(model), yrep = yrep)

# The observed response on the scale of posterior_predict()'s draws.
replicated_response <- function(model) {
  if (!is.null(model$trials) && !is.null(model$obs_events)) return(model$obs_events)
  model_observed(model)
}
