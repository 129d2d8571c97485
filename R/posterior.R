# Draws for the posterior package (and through it bayesplot), when installed.
# posterior is only suggested, so its generics get our methods when it loads
# rather than through NAMESPACE.

as_draws_array_sgld <- function(x, ...) posterior::as_draws_array(as.array(x))
as_draws_df_sgld <- function(x, ...) posterior::as_draws_df(as_draws_array_sgld(x))
as_draws_sgld <- function(x, ...) as_draws_array_sgld(x)

register_posterior_methods <- function(...) {
  ns <- asNamespace("posterior")
  registerS3method("as_draws", "sgld_fit", as_draws_sgld, envir = ns)
  registerS3method("as_draws_array", "sgld_fit", as_draws_array_sgld, envir = ns)
  registerS3method("as_draws_df", "sgld_fit", as_draws_df_sgld, envir = ns)
}

.onLoad <- function(libname, pkgname) {
  if (isNamespaceLoaded("posterior")) register_posterior_methods()
  setHook(packageEvent("posterior", "onLoad"), register_posterior_methods)
}
