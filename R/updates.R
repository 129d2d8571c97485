#' Preconditioners for SGLD and optimisers for SGD
#'
#' Update rules other than the plain step. `precond_rmsprop()` is the
#' preconditioner of pSGLD (Li et al. 2016) for [sgld()]'s `precondition`
#' argument; the `opt_*()` functions are optimisers for [sgd()]'s `optimizer`
#' argument. All of them ascend the log posterior \eqn{U}{U} with the minibatch
#' estimate \eqn{\hat g}{g_hat} of its gradient, element-wise:
#' \describe{
#'   \item{pSGLD}{\eqn{v \leftarrow \alpha v + (1-\alpha)\bar g^2}{v <- alpha v + (1-alpha)g_bar^2},
#'     \eqn{G = 1/(\lambda + \sqrt v)}{G = 1/(lambda + sqrt(v))},
#'     \eqn{w \leftarrow w + \eta G \hat g + \sqrt{2\eta\tau G}\,\xi}{w <- w + eta G g_hat + sqrt(2 eta tau G) xi}, where
#'     \eqn{\bar g}{g_bar} is the minibatch mean of the per-observation likelihood
#'     gradients, so `v` does not grow with the number of observations.
#'     The correction term \eqn{\Gamma}{Gamma} of the exact dynamics is left out (as
#'     recommended by Li et al.; it vanishes as \eqn{\alpha \to 1}{alpha -> 1}), so with a
#'     constant step the chain carries a small bias on top of SGLD's. A larger
#'     bias appears when `v` averages over too short a stretch of the chain:
#'     then `v` follows the chain's position, the preconditioner varies across
#'     the posterior, and the chain samples roughly
#'     \eqn{\pi(w)(\lambda + \sqrt{v(w)})}{pi(w)(lambda + sqrt(v(w)))} instead of \eqn{\pi(w)}{pi(w)}, too wide where
#'     the mean gradient grows faster than its minibatch noise. On the handout's
#'     regression with batches of 1000 and a small step the sd of `sigma2`
#'     came out 1.33 times too large at \eqn{\alpha = 0.99}{alpha = 0.99} and right at
#'     0.999; raise `alpha` when the chain moves slowly.}
#'   \item{momentum}{\eqn{v \leftarrow \beta v + \hat g}{v <- beta v + g_hat}, \eqn{w \leftarrow w + \eta v}{w <- w + eta v}.}
#'   \item{AdaGrad}{\eqn{s \leftarrow s + \hat g^2}{s <- s + g_hat^2},
#'     \eqn{w \leftarrow w + \eta \hat g / (\sqrt s + \epsilon)}{w <- w + eta g_hat / (sqrt(s) + epsilon)}.}
#'   \item{RMSprop}{\eqn{v \leftarrow \rho v + (1-\rho) \hat g^2}{v <- rho v + (1-rho) g_hat^2},
#'     \eqn{w \leftarrow w + \eta \hat g / (\sqrt v + \epsilon)}{w <- w + eta g_hat / (sqrt(v) + epsilon)}.}
#'   \item{Adam}{\eqn{m \leftarrow \beta_1 m + (1-\beta_1)\hat g}{m <- beta_1 m + (1-beta_1)g_hat},
#'     \eqn{v \leftarrow \beta_2 v + (1-\beta_2)\hat g^2}{v <- beta_2 v + (1-beta_2)g_hat^2},
#'     \eqn{w \leftarrow w + \eta \hat m / (\sqrt{\hat v} + \epsilon)}{w <- w + eta m_hat / (sqrt(v_hat) + epsilon)} with the
#'     bias-corrected \eqn{\hat m = m/(1-\beta_1^t)}{m_hat = m/(1-beta_1^t)}, \eqn{\hat v = v/(1-\beta_2^t)}{v_hat = v/(1-beta_2^t)}.}
#' }
#' The natural gradient (`precondition = "natural"` in [sgld()] and [mala()],
#' `optimizer = "natural"` in [sgd()]; the default for [model_ica()]) is for a
#' square matrix parameter \eqn{W}{W}: with \eqn{M = W^T W}{M = W^T W} and \eqn{\hat G}{G_hat} the
#' gradient estimate as a matrix,
#' \eqn{W \leftarrow W + \eta(\hat G M + \tau (D+1) W) + \sqrt{2\eta\tau}\,\Xi M^{1/2}}{W <- W + eta(G_hat M + tau (D+1) W) + sqrt(2 eta tau) Xi M^(1/2)}
#' (Amari et al. 1996; Welling and Teh 2011, section 5.3), \eqn{\Xi}{Xi} a matrix of
#' standard normals and \eqn{M^{1/2}}{M^(1/2)} the symmetric square root from an
#' eigendecomposition. The term \eqn{(D+1)W}{(D+1)W} is the divergence of the
#' preconditioner \eqn{M \otimes I}{M (x) I}, which a state-dependent preconditioner
#' needs for the chain to target the posterior; the paper leaves it out (its
#' size relative to \eqn{\hat G M}{G_hat M} is about \eqn{(D+1)/n}{(D+1)/n}). With [mala()] the
#' same step is the proposal of the corrected Langevin sampler.
#'
#' The defaults are the customary ones (those of PyTorch for the optimisers;
#' TensorFlow Probability's pSGLD uses \eqn{\alpha = 0.95}{alpha = 0.95},
#' \eqn{\lambda = 10^{-8}}{lambda = 10^-8} and starts `v` at 1). The running averages and
#' momenta are part of each chain's state: they are returned in `fit$state`
#' and carried on when a run is continued with `init = fit`.
#'
#' @param alpha,rho Weight of the old average of squared gradients, in \[0, 1).
#' @param lambda,eps Positive constant added to the root mean square.
#' @param v_init Starting value (>= 0) of the averages of squared gradients.
#' @param momentum Momentum \eqn{\beta}{beta}, in \[0, 1).
#' @param beta1,beta2 Adam's decay rates of the first and second moments, in \[0, 1).
#' @return An object of class `sgld_rule`.
#' @references Li, C., Chen, C., Carlson, D. and Carin, L. (2016). Preconditioned
#'   stochastic gradient Langevin dynamics for deep neural networks. *AAAI*.
#'
#'   Kingma, D. P. and Ba, J. (2015). Adam: a method for stochastic
#'   optimization. *ICLR*.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' coef(sgd(m, lr = 0.01, batch_size = 100, iter = 3000, optimizer = opt_adam()))
#' set.seed(1)
#' fit <- sgld(m, lr = 1e-4, batch_size = 100, iter = 5000,
#'             precondition = precond_rmsprop())
#' @name update_rules
NULL

#' @rdname update_rules
#' @export
precond_rmsprop <- function(alpha = 0.99, lambda = 1e-5, v_init = 0) {
  check_number(alpha, "alpha", lower = 0, upper = 1, upper_open = TRUE)
  check_number(lambda, "lambda", lower = 0, lower_open = TRUE)
  check_number(v_init, "v_init", lower = 0)
  update_rule("psgld", "pSGLD (RMSprop preconditioner)",
              list(alpha = alpha, lambda = lambda, v_init = v_init), sampler = TRUE)
}

#' @rdname update_rules
#' @export
opt_momentum <- function(momentum = 0.9) {
  check_number(momentum, "momentum", lower = 0, upper = 1, upper_open = TRUE)
  update_rule("momentum", "SGD with momentum", list(momentum = momentum))
}

#' @rdname update_rules
#' @export
opt_adagrad <- function(eps = 1e-8) {
  check_number(eps, "eps", lower = 0, lower_open = TRUE)
  update_rule("adagrad", "SGD (AdaGrad)", list(eps = eps))
}

#' @rdname update_rules
#' @export
opt_rmsprop <- function(rho = 0.99, eps = 1e-8) {
  check_number(rho, "rho", lower = 0, upper = 1, upper_open = TRUE)
  check_number(eps, "eps", lower = 0, lower_open = TRUE)
  update_rule("rmsprop", "SGD (RMSprop)", list(rho = rho, eps = eps))
}

#' @rdname update_rules
#' @export
opt_adam <- function(beta1 = 0.9, beta2 = 0.999, eps = 1e-8) {
  check_number(beta1, "beta1", lower = 0, upper = 1, upper_open = TRUE)
  check_number(beta2, "beta2", lower = 0, upper = 1, upper_open = TRUE)
  check_number(eps, "eps", lower = 0, lower_open = TRUE)
  update_rule("adam", "SGD (Adam)", list(beta1 = beta1, beta2 = beta2, eps = eps))
}

# An update rule of the C driver (its name in the driver's table, see
# src/update_table.c), a label for printing, and its options: the rule's own
# fields under its own names, which that rule's build() in C reads.
update_rule <- function(name, label, opts = list(), sampler = FALSE) {
  structure(list(name = name, label = label, sampler = sampler, opts = opts),
            class = "sgld_rule")
}

plain_rule <- function(label) update_rule("sgld", label, sampler = TRUE)

#' @export
print.sgld_rule <- function(x, ...) {
  # the settings that are single numbers other than 0 (not a preconditioner's factor)
  set <- Filter(function(v) length(v) == 1 && v != 0, x$opts)
  cat("Update rule: ", x$label,
      if (length(set)) paste0(" (", paste(names(set), unlist(set), sep = " = ", collapse = ", "), ")"),
      "\n", sep = "")
  invisible(x)
}

# sgd()'s `optimizer`: NULL for the model's default ("sgd" for the plain step,
# "natural" for ICA), a name, or an opt_*() object.
resolve_optimizer <- function(optimizer, model) {
  if (is.null(optimizer)) optimizer <- model$default_precondition
  if (is.null(optimizer)) return(plain_rule("SGD"))
  if (is.character(optimizer) && length(optimizer) == 1 && !is.na(optimizer)) {
    make <- list(sgd = function() plain_rule("SGD"), momentum = opt_momentum,
                 adagrad = opt_adagrad, rmsprop = opt_rmsprop, adam = opt_adam,
                 natural = function() natural_rule(model, "natural-gradient SGD"),
                 whiten = function() whiten_rule(model, "SGD with the latent path whitened"))
    if (!optimizer %in% names(make))
      abort("`optimizer` must be one of \"", paste(names(make), collapse = "\", \""),
            "\", or made by opt_momentum(), opt_adagrad(), opt_rmsprop() or opt_adam(); not \"",
            optimizer, "\".")
    return(make[[optimizer]]())
  }
  if (!inherits(optimizer, "sgld_rule") || optimizer$sampler)
    abort("`optimizer` must be NULL, a name such as \"adam\", or made by opt_momentum(), ",
          "opt_adagrad(), opt_rmsprop() or opt_adam(); not ", describe(optimizer), ".")
  optimizer
}

# sgld()'s `precondition`: the model's default (NULL), none, a fixed matrix,
# pSGLD, the natural gradient of a matrix parameter, or a latent path
# whitened given the globals.
resolve_precondition <- function(precondition, model, proposal = FALSE) {
  d <- model$d
  if (is.null(precondition)) precondition <- model$default_precondition
  if (is.null(precondition) || identical(precondition, "none")) return(plain_rule("SGLD"))
  if (identical(precondition, "rmsprop")) return(precond_rmsprop())
  if (identical(precondition, "natural")) return(natural_rule(model, "natural-gradient SGLD"))
  if (identical(precondition, "whiten"))   # R/whiten.R
    return(whiten_rule(model, "SGLD with the latent path whitened", lm = !proposal))
  if (inherits(precondition, "sgld_rule") && precondition$sampler) return(precondition)
  if (is.matrix(precondition)) {
    return(update_rule("precond", "SGLD with a fixed preconditioner",
                       list(chol = precondition_factor(precondition, d)), sampler = TRUE))
  }
  # a vector: the diagonal of P, O(d) a step and no d x d factor (wide models)
  if (is.numeric(precondition) && is.null(dim(precondition)) && length(precondition) == d) {
    if (any(!is.finite(precondition)) || any(precondition <= 0))
      abort("`precondition`, a vector, is the diagonal of the preconditioner: ", d,
            " positive finite numbers.")
    return(update_rule("precond", "SGLD with a fixed diagonal preconditioner",
                       list(scale = sqrt(as.double(precondition))), sampler = TRUE))
  }
  abort("`precondition` must be NULL, \"none\", \"rmsprop\", precond_rmsprop(), ",
        "\"natural\" (for model_ica()), \"whiten\" (for model_sv()), a symmetric ",
        "positive definite ", d, " x ", d, " matrix, or its diagonal (", d,
        " positive numbers); not ", describe(precondition), ".")
}

# The natural gradient post-multiplies by W^T W: only for a square matrix parameter.
natural_rule <- function(model, label) {
  if (!model_capabilities(model)$natural_gradient)
    abort("the natural gradient (\"natural\") needs a matrix parameter, as in model_ica().")
  update_rule("natural", label, sampler = TRUE)
}
