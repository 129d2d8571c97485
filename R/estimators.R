#' Posterior expectations from a fit, plain or step-weighted
#'
#' Estimates \eqn{E[h(w) \mid data]}{E[h(w) | data]} from the kept draws of all chains, either
#' by the plain average \eqn{\frac1K \sum_k h(w_k)}{1/K sum_k h(w_k)} or by weighting each draw
#' by its learning rate, \eqn{\sum_k \eta_k h(w_k) / \sum_k \eta_k}{sum_k eta_k h(w_k) / sum_k eta_k} (Welling
#' and Teh, section 4.2): with a decreasing schedule the later draws are more
#' correlated, and the weights put each draw's share in proportion to the
#' chain time it stands for. With a constant learning rate both agree.
#'
#' @param fit An `sgld_fit`.
#' @param fun A function of one draw (a named numeric vector on the user's
#'   scale) returning a number or a numeric vector.
#' @param weighted Weight the draws by their learning rate?
#' @return `posterior_expectation()`: the estimate of `E[fun(w)]`;
#'   `posterior_mean()` and `posterior_var()`: the mean and the variance of
#'   each parameter.
#' @examples
#' set.seed(1)
#' fit <- sgld(model_linear(y ~ x, data = handout), lr = lr_poly(1e-6, 100, 0.55),
#'             batch_size = 1000, iter = 20000)
#' posterior_mean(fit)
#' posterior_mean(fit, weighted = FALSE)
#' posterior_expectation(fit, function(w) w[["x"]] > 0.9)
#' @export
posterior_expectation <- function(fit, fun, weighted = TRUE) {
  if (!inherits(fit, "sgld_fit")) abort("`fit` must be an sgld_fit, not ", describe(fit), ".")
  if (!is.function(fun)) abort("`fun` must be a function, not ", describe(fun), ".")
  check_flag(weighted, "weighted")
  if (ndraws(fit) == 0) abort("the fit has no kept draws.")
  require_all_draws(fit, "posterior_expectation()")
  x <- pooled(fit)
  values <- lapply(seq_len(nrow(x)), function(i) fun(x[i, ]))
  lens <- lengths(values)
  if (any(lens != lens[1]) || !all(vapply(values, is.numeric, NA) | vapply(values, is.logical, NA)))
    abort("`fun` must return numbers of the same length for every draw.")
  h <- matrix(as.double(unlist(values)), nrow = nrow(x), byrow = TRUE,
              dimnames = list(NULL, names(values[[1]])))
  weighted_average(h, fit, weighted)
}

#' @rdname posterior_expectation
#' @export
posterior_mean <- function(fit, weighted = TRUE) {
  if (!inherits(fit, "sgld_fit")) abort("`fit` must be an sgld_fit, not ", describe(fit), ".")
  check_flag(weighted, "weighted")
  if (!all_kept(fit)) return(parameter_means(fit, weighted = weighted))
  weighted_average(pooled(fit), fit, weighted)
}

#' @rdname posterior_expectation
#' @export
posterior_var <- function(fit, weighted = TRUE) {
  mu <- posterior_mean(fit, weighted)
  require_all_draws(fit, "posterior_var()")
  x <- pooled(fit)
  weighted_average(sweep(x, 2, mu)^2, fit, weighted)
}

weighted_average <- function(h, fit, weighted) {
  w <- if (weighted) as.vector(fit$lr) else rep(1, nrow(h))
  out <- colSums(h * w) / sum(w)
  if (length(out) == 1L && is.null(names(out))) unname(out) else out
}
