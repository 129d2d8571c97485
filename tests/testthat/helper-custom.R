# The handout's linear model (model_linear(y ~ x, data = handout, prior = prior_nig()) with the
# default prior_nig()) written as R functions for model_custom(), on the same
# scale w = (beta0, beta1, log sigma2).
linear_custom_functions <- function(mu = 0, V = 100, a = 1, b = 1) {
  p <- 2
  const <- -0.5 * p * log(2 * pi) - 0.5 * p * log(V) + a * log(b) - lgamma(a)
  list(
    grad_loglik = function(w, batch) {
      r <- batch[, 3] - batch[, 1] * w[1] - batch[, 2] * w[2]
      prec <- exp(-w[3])
      c(prec * sum(r * batch[, 1]), prec * sum(r * batch[, 2]),
        -0.5 * nrow(batch) + 0.5 * prec * sum(r^2))
    },
    loglik = function(w, batch) {
      r <- batch[, 3] - batch[, 1] * w[1] - batch[, 2] * w[2]
      -0.5 * nrow(batch) * (log(2 * pi) + w[3]) - 0.5 * exp(-w[3]) * sum(r^2)
    },
    grad_logprior = function(w) {
      prec <- exp(-w[3])
      q <- sum((w[1:2] - mu)^2) / V
      c(-prec * (w[1:2] - mu) / V, -0.5 * p + 0.5 * prec * q - (a + 1) + b * prec + 1)
    },
    logprior = function(w) {
      prec <- exp(-w[3])
      q <- sum((w[1:2] - mu)^2) / V
      const - 0.5 * p * w[3] - 0.5 * prec * q - (a + 1) * w[3] - b * prec + w[3]
    }
  )
}

handout_matrix <- function(data = sgld::handout) cbind("(Intercept)" = 1, x = data$x, y = data$y)

log_transform <- list(to_user = function(w) c(w[1:2], exp(w[3])),
                      to_sampler = function(theta) c(theta[1:2], log(theta[3])))

# model_custom() of the handout model; `...` replaces any of its arguments
handout_custom <- function(data = sgld::handout, ...) {
  f <- linear_custom_functions()
  args <- utils::modifyList(list(data = handout_matrix(data), grad_loglik = f$grad_loglik,
                                 loglik = f$loglik, grad_logprior = f$grad_logprior,
                                 logprior = f$logprior, names = c("(Intercept)", "x", "sigma2"),
                                 transform = log_transform,
                                 init = c(0, 0, var(data$y))), list(...))
  do.call(model_custom, args)
}
