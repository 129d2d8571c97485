#' sgld: Bayesian learning with stochastic gradients
#'
#' Stochastic gradient descent for posterior modes and stochastic gradient
#' Langevin dynamics (Welling and Teh, 2011) for posterior sampling, with the
#' models, gradients and the sampling loop in C.
#'
#' @section Parameterisation:
#' Every sampler moves the unconstrained parameter \eqn{w}{w} by
#' \deqn{w \leftarrow w + \eta_t \hat g(w) + \sqrt{2 \eta_t \tau}\, \xi,
#'   \qquad \xi \sim N(0, I),}{w <- w + eta_t g_hat(w) + sqrt(2 eta_t tau) xi,
#'   xi ~ N(0, I),}
#' where \eqn{\hat g(w) = \nabla \log f(w) + (n/m) \sum_{i \in J_t} \nabla \log f(z_i \mid w)}{g_hat(w) = grad log f(w) + (n/m) sum_(i in J_t) grad log f(z_i | w)}
#' is the minibatch estimate of the gradient of the log posterior, \eqn{\eta_t}{eta_t}
#' the learning rate (`lr`) and \eqn{\tau}{tau} the temperature. At \eqn{\tau = 1}{tau = 1} the
#' chain targets the posterior; at \eqn{\tau = 0}{tau = 0} it is stochastic gradient
#' ascent on the log posterior. Welling and Teh write the same update with
#' \eqn{\epsilon_t = 2 \eta_t}{epsilon_t = 2 eta_t}; a 2023 version of the lecture handout wrote the
#' noise as \eqn{\sqrt{\eta_t \tau}}{sqrt(eta_t tau)}, which is this update at temperature
#' \eqn{\tau / 2}{tau / 2}.
#'
#' @section Getting started:
#' Build a model with [model_linear()], then draw from its posterior with
#' [sgld()] or follow gradient ascent with [sgd()]; see
#' `vignette("getting-started", package = "sgld")`. The relatives of SGLD are
#' [psgld()] (and fixed preconditioners through `sgld(precondition = )`),
#' [sghmc()], control variates (`control_variates = TRUE` in any sampler) and,
#' as the exact reference, [mala()]; [sgd()] offers momentum, AdaGrad, RMSprop
#' and Adam ([update_rules]).
#'
#' @useDynLib sgld, .registration = TRUE, .fixes = "C_"
#' @importFrom coda mcmc mcmc.list as.mcmc as.mcmc.list mcpar effectiveSize gelman.diag
#' @importFrom stats model.frame model.matrix model.response terms var sd quantile
#'   pt dt dgamma coef vcov delete.response .getXlevels na.pass
#' @importFrom graphics plot
#' @keywords internal
#' @docType package
#' @name sgld-package
NULL
