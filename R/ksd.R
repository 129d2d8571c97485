#' Kernel Stein discrepancy
#'
#' How far a set of draws is from the posterior, measured without knowing the
#' posterior: the kernel Stein discrepancy of Gorham and Mackey (2017) with
#' the inverse multiquadric kernel \eqn{k(x, y) = (c^2 + \|x - y\|^2)^\beta}{k(x, y) = (c^2 + ||x - y||^2)^beta}.
#' With \eqn{b_i = \nabla \log \pi(x_i)}{b_i = grad log pi(x_i)} the full-data score of draw
#' \eqn{x_i}{x_i}, \eqn{r = x - y}{r = x - y} and \eqn{u = c^2 + \|r\|^2}{u = c^2 + ||r||^2},
#' \deqn{k_0(x, y) = b_x^\top b_y u^\beta - 2\beta\, b_x^\top r\, u^{\beta-1}
#'   + 2\beta\, b_y^\top r\, u^{\beta-1} - 2\beta d\, u^{\beta-1}
#'   - 4\beta(\beta-1) \|r\|^2 u^{\beta-2},}{k_0(x, y) = b_x^T b_y u^beta - 2beta b_x^T r u^(beta-1) + 2beta b_y^T r u^(beta-1) - 2beta d u^(beta-1) - 4beta(beta-1) ||r||^2 u^(beta-2),}
#' \deqn{\mathrm{KSD} = \frac1N \sqrt{\textstyle\sum_{i,j} k_0(x_i, x_j)}.}{KSD = (1/N) sqrt(sum_i,j k_0(x_i, x_j)).}
#' It is 0 only for the posterior itself (in the limit of many draws) and,
#' with \eqn{\beta \in (-1, 0)}{beta in (-1, 0)}, it grows when draws are too wide, too
#' narrow, off centre or not converged: lower is better, which makes it the
#' score for comparing settings ([tune_sgld()]).
#'
#' The double sum runs in C over at most `max_draws` draws, evenly thinned;
#' each draw's score takes one pass over the full data. KSD depends on the
#' parameters' scale: it is computed on the sampler's (unconstrained) scale,
#' e.g. `log_sigma2` for [model_linear()], and only values on the same model
#' and scale are comparable.
#'
#' @param x An `sgld_fit`, or a matrix of draws (one row per draw, one column
#'   per parameter).
#' @param model For a matrix: the model whose posterior the draws should
#'   follow (not needed when `scores` are given).
#' @param scores For a matrix: the scores \eqn{\nabla\log\pi}{grad log pi} at its draws (same
#'   dimensions), instead of `model`.
#' @param scale For a matrix with a model: are its draws on the `"user"`'s
#'   scale (e.g. `sigma2`, as `as.matrix(fit)` gives) or the `"sampler"`'s?
#' @param chains For a fit: `"pooled"` for one KSD of all chains' draws
#'   together, or `"separate"` for one per chain.
#' @param max_draws Largest number of draws used (per chain with
#'   `chains = "separate"`); more are thinned evenly. The cost grows with its
#'   square.
#' @param c,beta The kernel's scale \eqn{c > 0}{c > 0} and exponent
#'   \eqn{\beta \in (-1, 0)}{beta in (-1, 0)}.
#' @param ... Not used.
#' @return The KSD: a number, or with `chains = "separate"` one per chain.
#' @references Gorham, J. and Mackey, L. (2017). Measuring sample quality with
#'   kernels. *Proceedings of the 34th ICML*.
#' @examples
#' m <- model_linear(mpg ~ wt + hp, data = mtcars)
#' set.seed(1)
#' good <- sgld(m)
#' bad <- suppressWarnings(sgld(m, lr = 1e-7))
#' c(good = ksd(good), bad = ksd(bad))
#' @export
ksd <- function(x, ...) UseMethod("ksd")

#' @rdname ksd
#' @export
ksd.sgld_fit <- function(x, chains = c("pooled", "separate"), max_draws = 2000, c = 1,
                         beta = -0.5, ...) {
  check_dots_empty(...)
  chains <- check_choice(chains, c("pooled", "separate"), "chains")
  if (ndraws(x) == 0) abort("the fit has no kept draws.")
  a <- as.array(x, scale = "sampler")
  if (chains == "pooled") {
    w <- do.call(rbind, lapply(seq_len(dim(a)[2]), function(k) a[, k, ]))
    return(ksd.matrix(matrix(w, ncol = dim(a)[3]), model = x$model, scale = "sampler",
                      max_draws = max_draws, c = c, beta = beta))
  }
  out <- vapply(seq_len(dim(a)[2]), function(k)
    ksd.matrix(matrix(a[, k, ], ncol = dim(a)[3]), model = x$model, scale = "sampler",
               max_draws = max_draws, c = c, beta = beta), numeric(1))
  names(out) <- paste("chain", x$chain_ids)
  out
}

#' @rdname ksd
#' @export
ksd.matrix <- function(x, model = NULL, scores = NULL, scale = c("user", "sampler"),
                       max_draws = 2000, c = 1, beta = -0.5, ...) {
  check_dots_empty(...)
  scale <- check_choice(scale, c("user", "sampler"), "scale")
  check_count(max_draws, "max_draws", lower = 2)
  check_number(c, "c", lower = 0, lower_open = TRUE)
  check_number(beta, "beta", lower = -1, upper = 0, lower_open = TRUE, upper_open = TRUE)
  if (!is.numeric(x) || nrow(x) < 1 || any(!is.finite(x)))
    abort("`x` must be a finite numeric matrix with one row per draw.")
  keep <- unique(round(seq(1, nrow(x), length.out = min(max_draws, nrow(x)))))
  x <- x[keep, , drop = FALSE]
  if (is.null(scores)) {
    if (is.null(model)) abort("`model` or `scores` must be given to compute the scores.")
    check_model(model)
    check_densities(model, "ksd()")
    if (ncol(x) != model$d)
      abort("`x` must have ", model$d, " columns (", paste(model$names, collapse = ", "),
            "), not ", ncol(x), ".")
    if (scale == "user") {
      check_user_values(model, x, "x")
      x <- to_sampler_scale(model, x)
    }
    scores <- t(apply(x, 1, function(w) {
      e <- .Call(C_sgld_model_eval, model, as.double(w))
      e$grad_loglik + e$grad_logprior
    }))
    stop_on_failure(model)
    if (model$d == 1) scores <- t(scores)
  } else {
    if (!is.numeric(scores) || !is.matrix(scores) || any(!is.finite(scores)))
      abort("`scores` must be a finite numeric matrix like `x`.")
    scores <- scores[keep, , drop = FALSE]
    if (!identical(dim(scores), dim(x)))
      abort("`scores` must have the dimensions of `x` (", nrow(x), " x ", ncol(x), ").")
  }
  if (any(!is.finite(scores))) abort("the scores are not finite at some draws of `x`.")
  total <- .Call(C_sgld_ksd, t(unname(x)) + 0, t(unname(scores)) + 0, as.double(c),
                 as.double(beta))
  sqrt(max(total, 0)) / nrow(x)
}
