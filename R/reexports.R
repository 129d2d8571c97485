# rstanarm's generics, re-exported so that library(sgld) alone gives a user
# every method a fit answers (rstantools and loo are imported).

#' @importFrom rstantools log_lik posterior_predict posterior_epred posterior_linpred
#' @importFrom rstantools posterior_interval predictive_interval prior_summary bayes_R2 loo_R2
#' @importFrom loo loo waic
NULL

#' @export
rstantools::log_lik
#' @export
rstantools::posterior_predict
#' @export
rstantools::posterior_epred
#' @export
rstantools::posterior_linpred
#' @export
rstantools::posterior_interval
#' @export
rstantools::predictive_interval
#' @export
rstantools::prior_summary
#' @export
rstantools::bayes_R2
#' @export
rstantools::loo_R2
#' @export
loo::loo
#' @export
loo::waic
