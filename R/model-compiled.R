#' Models written in C by other packages
#'
#' Wraps a model compiled in another package, so that every sampler of sgld
#' ([sgld()], [sgd()], [mala()], [posterior_mode()], [log_posterior()], ...)
#' runs it at the speed of a built-in model, with chains in parallel threads
#' (`threads`) if asked. The other package fills a table of C functions (log
#' likelihood and log prior with their gradients, over its own data) and
#' hands it to sgld through the C function `sgld_model_pointer()` of the
#' header `sgld_model.h`, which returns the external pointer this function
#' takes.
#'
#' @section Writing a compiled model:
#' The header is installed with sgld, in
#' `system.file("include", "sgld_model.h", package = "sgld")`, and documents
#' every field of the table and the rules its functions follow (above all:
#' thread-safe, no R API, gradients added into their output, 0-based item
#' indices). A package that defines a model has `LinkingTo: sgld` and
#' `Imports: sgld` in its DESCRIPTION. A complete example, Bayesian Poisson
#' regression, is in `system.file("examples", "sgldpoisson", package = "sgld")`:
#' a model small enough to read in one sitting, kept as the plug-in's example
#' although [model_poisson()] is built in (whose draws it can be checked
#' against).
#'
#' A compiled model lives in one R session: an object saved with [saveRDS()]
#' and read back has lost its pointer, and using it is an error that says so.
#'
#' The table's layout has a version, `SGLD_MODEL_ABI_VERSION` in the header
#' (now 2: `loglik` takes the chain's `work` buffer, as `grad_loglik` does).
#' A plug-in built against another version, such as version 1, whose `loglik`
#' had no `work` argument, is refused by `sgld_model_pointer()` with an error
#' naming both versions: its functions have other types, which sgld cannot
#' call safely. Add the argument to the plug-in's `loglik` and reinstall it.
#'
#' @section The two scales:
#' The C functions see the unconstrained parameters \eqn{w}{w} that the samplers
#' move. Draws, the `init` here and the samplers' `init` are on the user's
#' scale \eqn{\theta}{theta}, which is \eqn{w}{w} itself unless `transform` says
#' otherwise; then draws on the sampler's scale
#' (`as.matrix(fit, scale = "sampler")`) are named `w_` and the user's name.
#' With a transformation, the log prior of the C code must include its log
#' Jacobian: it is the density of \eqn{w}{w}, not of \eqn{\theta}{theta}.
#'
#' @param pointer An external pointer returned by `sgld_model_pointer()` in C.
#' @param n,d Optional: the number of data items and of parameters, checked
#'   against the compiled model's own (which are used when not given).
#' @param names Parameter names on the user's scale: `NULL` for `w1`, `w2`,
#'   ... (as in [model_custom()]), or a character vector of length `d` without
#'   duplicates.
#' @param transform `NULL` when the user's scale is the sampler's, or a list of
#'   two functions `to_user(w)` and `to_sampler(theta)`, each taking and
#'   returning a numeric vector of length `d` (applied to one draw at a time).
#' @param init The default starting values on the user's scale, a finite
#'   numeric vector of length `d`; `NULL` for the point \eqn{w = 0}{w = 0}.
#' @return An object of class `sgld_model_compiled` (and `sgld_model_custom`,
#'   `sgld_model`) to pass to the samplers.
#' @examples
#' # where the header and the example plug-in package are
#' system.file("include", "sgld_model.h", package = "sgld")
#' system.file("examples", "sgldpoisson", package = "sgld")
#' # a pointer that was not made by sgld_model_pointer() is refused
#' try(model_compiled(NULL))
#' @export
model_compiled <- function(pointer, n = NULL, d = NULL, names = NULL, transform = NULL,
                           init = NULL) {
  info <- .Call(C_sgld_compiled_info, pointer)
  if (is.character(info))
    abort("`pointer` ", info,
          if (typeof(pointer) != "externalptr") paste0(", not ", describe(pointer)), ".")
  d_model <- as.integer(info[1])
  n_model <- info[2]
  if (!is.null(n)) {
    check_count(n, "n", lower = 1)
    if (n != n_model)
      abort("`n` is ", format(n, big.mark = ","), " but the compiled model has ",
            format(n_model, big.mark = ","), " data items.")
  }
  if (!is.null(d)) {
    check_count(d, "d", lower = 1)
    if (d != d_model)
      abort("`d` is ", d, " but the compiled model has ", d_model, " parameters.")
  }
  if (is.null(names)) names <- paste0("w", seq_len(d_model))
  check_parameter_names(names, d_model)
  model <- structure(list(
    type = "compiled", pointer = pointer, d = d_model, n = n_model,
    names = names,
    sampler_names = if (is.null(transform)) names else paste0("w_", names),
    transform = check_transform(transform)
  ), class = c("sgld_model_compiled", "sgld_model_custom", "sgld_model"))
  model$default_init <- custom_init(model, init)
  model
}

#' @export
print.sgld_model_compiled <- function(x, ...) {
  cat("Compiled model: ", format(x$n, big.mark = ","), " data items, ", x$d, " parameter",
      if (x$d > 1) "s", " (", paste(x$names, collapse = ", "), ")\n", sep = "")
  if (!is.null(x$transform)) cat("Sampled on a transformed scale (`transform`)\n")
  invisible(x)
}

# The public table has no held-out metrics, so a monitor can follow only the
# training log joint. (The scales are model_custom()'s methods: they read the
# same transform, names, d and default_init.)
held_out_model.sgld_model_compiled <- function(model, newdata) {
  abort("`monitor`: a compiled model has no held-out metrics; use monitor_every() ",
        "without `newdata` to follow the log joint probability.")
}

# the table always has both log densities (sgld_model_pointer() refuses NULL)
check_densities.sgld_model_compiled <- function(model, what) invisible()

# compiled densities hold a pointer into another package's code, which cannot
# travel to another process
model_capabilities.sgld_model_compiled <- function(model) {
  utils::modifyList(NextMethod(), list(calls_r = FALSE, portable = FALSE))
}
