#' Objects exported from other packages
#'
#' So that `as.mcmc.list(fit)` works without attaching coda.
#' @importFrom coda as.mcmc.list
#' @export
coda::as.mcmc.list

#' @importFrom coda as.mcmc
#' @export
coda::as.mcmc
