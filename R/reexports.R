# So that as.mcmc.list(fit) and as.mcmc(fit) work without attaching coda.

#' @importFrom coda as.mcmc.list
#' @export
coda::as.mcmc.list

#' @importFrom coda as.mcmc
#' @export
coda::as.mcmc
