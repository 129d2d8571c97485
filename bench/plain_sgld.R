# SGLD written in plain, vectorised R: what a careful R user would write for
# the two throughput workloads of bench/throughput.R, with the package's
# update convention (REFERENCE.md §1)
#   w <- w + eta * g_hat + sqrt(2 * eta * tau) * xi,
#   g_hat = grad log prior(w) + (n / m) * sum over the batch of grad log lik,
# a batch being m distinct items drawn afresh each iteration (sample.int),
# rnorm for the noise, a preallocated iter x d output and every draw kept.
# Per iteration the work is matrix arithmetic on the batch's rows only.
#
# Two choices a careful user would make for speed, both measured here:
#  - the design is passed transposed (`Xt`, p x n: one observation per
#    column, as the package stores it), so a batch is m contiguous columns;
#    on Adult, Xt[, i] is about 3x faster than X[i, ] at m = 100;
#  - sample.int(n, m, useHash = TRUE): without useHash, R below n = 1e7
#    builds and shuffles all of 1:n for every batch (O(n)); the hashed draw
#    is O(m), about 3x faster at n = 32,561. Both are exact uniform m-subsets.
#
# Sourced by bench/throughput.R; each plain_sgld_*() returns the iter x d
# matrix of draws on the sampler's scale (for the linear model: b0, b1,
# log sigma2); plain_grad_*() is its g_hat, which with every item and scale 1
# is the full-data gradient that log_posterior() computes in C (checked by
# bench/throughput.R).

# Linear model with the normal-inverse-gamma prior of prior_nig() (diagonal
# V^-1 as `vinv`, mean `mu`, IG(a, b)), in w = (beta, gamma = log sigma^2); the
# log prior includes the Jacobian of sigma^2 = e^gamma (see ?prior_nig); its
# gradient:
#   d/dbeta  = -e^-gamma V^-1 (beta - mu)
#   d/dgamma = -p/2 + e^-gamma Q / 2 - (a + 1) + b e^-gamma + 1
# g_hat at w from the batch's columns Xb (p x m) and responses yb, scale n/m:
plain_grad_linear <- function(Xb, yb, w, scale, mu = 0, vinv = 0.01, a = 1, b = 1) {
  p <- nrow(Xb)
  beta <- w[seq_len(p)]
  prec <- exp(-w[p + 1L])
  r <- yb - drop(crossprod(Xb, beta))
  db <- beta - mu
  c(scale * prec * drop(Xb %*% r) - prec * vinv * db,
    scale * (-0.5 * length(yb) + 0.5 * prec * sum(r * r)) -
      0.5 * p + 0.5 * prec * sum(vinv * db * db) - (a + 1) + b * prec + 1)
}

# Xt: p x n transposed design (with the intercept row), y: response; init on
# the sampler's scale.
plain_sgld_linear <- function(Xt, y, lr, batch_size, iter, init, mu = 0, vinv = 0.01,
                              a = 1, b = 1, temperature = 1) {
  n <- ncol(Xt)
  p <- nrow(Xt)
  d <- p + 1L
  m <- batch_size
  scale <- n / m
  sd <- sqrt(2 * lr * temperature)
  draws <- matrix(0, iter, d)
  w <- init
  for (t in seq_len(iter)) {
    i <- sample.int(n, m, useHash = TRUE)
    g <- plain_grad_linear(Xt[, i, drop = FALSE], y[i], w, scale, mu, vinv, a, b)
    w <- w + lr * g + sd * rnorm(d)
    draws[t, ] <- w
  }
  draws
}

# Logistic regression, y in {-1, +1}, independent Laplace(loc, s) priors:
#   grad log lik_i = sigma(-y_i x_i' beta) y_i x_i,
#   grad log prior = -sign(beta - loc) / s   (0 at the kink, as the package).
plain_grad_logistic <- function(Xb, yb, w, scale, loc = 0, s = 1) {
  c <- yb * plogis(-yb * drop(crossprod(Xb, w)))
  scale * drop(Xb %*% c) - sign(w - loc) / s
}

# Xt: p x n dense transposed design (with the intercept row), y in {-1, +1}.
plain_sgld_logistic <- function(Xt, y, lr, batch_size, iter, init = rep(0, nrow(Xt)),
                                loc = 0, s = 1, temperature = 1) {
  n <- ncol(Xt)
  d <- nrow(Xt)
  m <- batch_size
  scale <- n / m
  sd <- sqrt(2 * lr * temperature)
  draws <- matrix(0, iter, d)
  w <- init
  for (t in seq_len(iter)) {
    i <- sample.int(n, m, useHash = TRUE)
    g <- plain_grad_logistic(Xt[, i, drop = FALSE], y[i], w, scale, loc, s)
    w <- w + lr * g + sd * rnorm(d)
    draws[t, ] <- w
  }
  draws
}
