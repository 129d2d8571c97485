# The variational optima that bbb() is checked against, computed here from
# the data alone, without the package: the mean-field (and full-rank)
# Gaussian that maximises the ELBO of a logistic regression, by
# Gauss-Hermite quadrature of each observation's expected log likelihood and
# BFGS from the Laplace approximation; and the mean-field optimum of the
# normal linear model, whose ELBO has a closed form.

# Nodes and weights for E[f(Z)], Z ~ N(0, 1), by the Golub-Welsch eigenproblem
gauss_hermite <- function(k) {
  J <- matrix(0, k, k)
  b <- sqrt(seq_len(k - 1))
  J[cbind(1:(k - 1), 2:k)] <- b
  J[cbind(2:k, 1:(k - 1))] <- b
  e <- eigen(J, symmetric = TRUE)
  list(x = e$values, w = e$vectors[1, ]^2)
}

# log sigmoid(t), without overflow
log_sigmoid <- function(t) -pmax(-t, 0) - log1p(exp(-abs(t)))

# Gauss-Legendre nodes and weights on [lo, hi] (Golub-Welsch)
gauss_legendre <- function(k, lo, hi) {
  b <- seq_len(k - 1) / sqrt(4 * seq_len(k - 1)^2 - 1)
  J <- matrix(0, k, k)
  J[cbind(1:(k - 1), 2:k)] <- b
  J[cbind(2:k, 1:(k - 1))] <- b
  e <- eigen(J, symmetric = TRUE)
  list(x = (hi - lo) / 2 * e$values + (hi + lo) / 2, w = (hi - lo) * e$vectors[1, ]^2)
}

# Quadrature for E[h(t)], t ~ N(a, v), h built from the logistic function:
# Gauss-Hermite with 40 nodes in the standard normal's coordinate while
# sqrt(v) <= 1; for wider t (a rare level with a wide q: v up to 65 on
# Adult, where 40 Hermite nodes leave errors of 1e-3) the integrand's
# features of width 1 in t are resolved in t itself: log sigmoid(t) =
# min(t, 0) - log1p(exp(-|t|)), the first term in closed form, the rest and
# the derivatives split into even and odd parts on t >= 0, integrated by
# Gauss-Legendre on [0, 1], [1, 2], [2, 4], ..., [32, 64] against
# N(t; a, v) +- N(-t; a, v). Checked against integrate() in the tests.
t_nodes <- local({
  cuts <- c(0, 2^(0:6))
  parts <- lapply(seq_len(length(cuts) - 1), function(k) gauss_legendre(24, cuts[k], cuts[k + 1]))
  list(x = unlist(lapply(parts, `[[`, "x")), w = unlist(lapply(parts, `[[`, "w")))
})

# For t_i ~ N(a_i, v_i) and f = log sigmoid: E[f(t_i)], E[f'(t_i)] =
# E[sigmoid(-t_i)], -E[f''(t_i)] = E[sigmoid(t_i) sigmoid(-t_i)] and, with
# `higher`, E[f'''] and E[f''''] (see t_nodes above)
logistic_expectations <- function(a, v, gh = gauss_hermite(40), higher = FALSE) {
  out <- list(f = numeric(length(a)), f1 = numeric(length(a)), f2 = numeric(length(a)),
              f3 = numeric(length(a)), f4 = numeric(length(a)))
  derivs <- function(t) {
    s <- stats::plogis(t)
    s1 <- s * (1 - s)
    list(f1 = 1 - s, f2 = s1, f3 = -s1 * (1 - 2 * s), f4 = -(s1 * (1 - 2 * s)^2 - 2 * s1^2))
  }
  narrow <- v <= 1
  if (any(narrow)) {
    t <- outer(a[narrow], rep(1, length(gh$x))) + outer(sqrt(v[narrow]), gh$x)
    dv <- derivs(t)
    out$f[narrow] <- drop(log_sigmoid(t) %*% gh$w)
    for (k in c("f1", "f2", "f3", "f4")) out[[k]][narrow] <- drop(dv[[k]] %*% gh$w)
  }
  if (any(!narrow)) {
    aw <- a[!narrow]
    sw <- sqrt(v[!narrow])
    t <- t_nodes$x
    dens <- function(sign) stats::dnorm(outer(-aw, sign * t, "+") / sw) / sw
    even <- sweep(dens(1) + dens(-1), 2, t_nodes$w, "*")
    odd <- sweep(dens(1) - dens(-1), 2, t_nodes$w, "*")
    dv <- derivs(t)
    # E[min(t, 0)] in closed form; log1p(exp(-|t|)) and sigmoid(t) sigmoid(-t)
    # are even, sigmoid(-t) = 1{t < 0} + sign(t) sigmoid(-|t|), f''' odd, f'''' even
    out$f[!narrow] <- aw * stats::pnorm(-aw / sw) - sw * stats::dnorm(aw / sw) -
      drop(even %*% log1p(exp(-t)))
    out$f1[!narrow] <- stats::pnorm(-aw / sw) + drop(odd %*% dv$f1)
    out$f2[!narrow] <- drop(even %*% dv$f2)
    out$f3[!narrow] <- drop(odd %*% dv$f3)
    out$f4[!narrow] <- drop(even %*% dv$f4)
  }
  if (!higher) out[c("f3", "f4")] <- NULL
  out
}


# The Laplace approximation of a logistic regression with y in {-1, +1} and
# independent N(loc_j, scale_j^2) priors, by Newton's method
logistic_laplace <- function(X, y, loc, scale) {
  b <- loc
  for (it in 1:100) {
    eta <- drop(X %*% b)
    g <- drop(crossprod(X, y * stats::plogis(-y * eta))) - (b - loc) / scale^2
    if (max(abs(g)) < 1e-9) break
    H <- crossprod(X, X * stats::dlogis(eta)) + diag(1 / scale^2, length(b))
    b <- b + solve(H, g)
  }
  H <- crossprod(X, X * stats::dlogis(drop(X %*% b))) + diag(1 / scale^2, length(b))
  list(mode = b, precision = H)
}

# The mean-field optimum: q = N(m, diag(s^2)) maximising
# ELBO = sum_i E[log sigmoid(t_i)] - sum_j ((m_j - loc_j)^2 + s_j^2) / (2 scale_j^2)
#        + sum_j log s_j + const,   t_i = y_i x_i'w ~ N(y_i x_i'm, sum_j x_ij^2 s_j^2),
# by BFGS on (m, log s) from the Laplace approximation.
meanfield_logistic_optimum <- function(X, y, loc, scale) {
  X2 <- X^2
  p <- ncol(X)
  gh <- gauss_hermite(40)
  value <- function(th, grad = FALSE) {
    m <- th[1:p]
    s <- exp(th[p + 1:p])
    e <- logistic_expectations(y * drop(X %*% m), drop(X2 %*% s^2), gh)
    elbo <- sum(e$f) - sum(((m - loc)^2 + s^2) / (2 * scale^2)) + sum(log(s))
    if (!grad) return(elbo)
    c(drop(crossprod(X, y * e$f1)) - (m - loc) / scale^2,
      -s^2 * (drop(crossprod(X2, e$f2)) + 1 / scale^2) + 1)
  }
  # the Hessian in (m, log s): with a_i = y_i x_i'm and v_i = sum_j x_ij^2 s_j^2,
  # d/da = E[f'], d/dv = E[f''] / 2, d2/da2 = E[f''], d2/dadv = E[f'''] / 2,
  # d2/dv2 = E[f''''] / 4
  hessian <- function(th) {
    m <- th[1:p]
    s <- exp(th[p + 1:p])
    e <- logistic_expectations(y * drop(X %*% m), drop(X2 %*% s^2), gh, higher = TRUE)
    dv <- sweep(X2, 2, 2 * s^2, "*")              # dv_i / du_j
    Hmm <- -crossprod(X, X * e$f2) - diag(1 / scale^2, p)
    Hmu <- crossprod(X, dv * (y * e$f3 / 2))
    Huu <- crossprod(dv, dv * (e$f4 / 4)) + diag(drop(crossprod(dv, -e$f2)) - 2 * s^2 / scale^2, p)
    rbind(cbind(Hmm, Hmu), cbind(t(Hmu), Huu))
  }
  lp <- logistic_laplace(X, y, loc, scale)
  th <- c(lp$mode, -0.5 * log(diag(lp$precision)))
  # Newton's method with halving steps from the Laplace approximation,
  # then BFGS in whitened coordinates should Newton not reach 1e-8
  th <- newton(value, hessian, th)
  if (max(abs(value(th, TRUE))) > 1e-8)
    th <- bfgs_whitened(value, th, t(chol(solve(lp$precision))), p)
  list(mean = th[1:p], sd = exp(th[p + 1:p]), elbo = value(th), gradient = value(th, TRUE),
       laplace = lp)
}

# Maximise value(th) from th by damped Newton steps (Levenberg-Marquardt:
# -H + mu I, mu grown until the step raises the value and shrunk after),
# which also cross regions where the ELBO is not concave
newton <- function(value, hessian, th, maxit = 100) {
  mu <- 0
  f0 <- value(th)
  for (it in seq_len(maxit)) {
    g <- value(th, TRUE)
    if (max(abs(g)) < 1e-10) break
    H <- -hessian(th)
    H <- (H + t(H)) / 2
    repeat {
      R <- tryCatch(chol(H + diag(mu, length(th))), error = function(e) NULL)
      if (!is.null(R)) {
        step <- backsolve(R, forwardsolve(t(R), g))
        f1 <- value(th + step)
        if (is.finite(f1) && f1 >= f0 - 1e-12 * abs(f0)) break
      }
      mu <- max(2 * mu, 1e-6 * max(abs(diag(H))))
      if (mu > 1e12 * max(abs(diag(H)))) return(th)
    }
    th <- th + step
    f0 <- f1
    mu <- mu / 4
  }
  th
}

# Maximise value(th) (value(th, TRUE): its gradient) by BFGS, the first p
# coordinates (the means) in the coordinates z of th[1:p] = start[1:p] + C z,
# C a factor of the Laplace covariance, where the ELBO's curvature is near 1
# in every direction and BFGS reaches a gradient of 1e-8 in a few passes.
bfgs_whitened <- function(value, start, C, p) {
  k <- length(start)
  to_th <- function(z) c(start[1:p] + drop(C %*% z[1:p]), z[-(1:p)])
  z <- c(numeric(p), start[-(1:p)])
  for (pass in 1:10) {
    opt <- stats::optim(z, function(z) -value(to_th(z)), function(z) {
      g <- value(to_th(z), TRUE)
      -c(drop(crossprod(C, g[1:p])), g[-(1:p)])
    }, method = "BFGS", control = list(maxit = 10000, reltol = 1e-16))
    z <- opt$par
    if (max(abs(value(to_th(z), TRUE))) < 1e-8) break
  }
  to_th(z)
}

# The full-rank optimum: q = N(m, L L'), t_i ~ N(y_i x_i'm, |L'x_i|^2), the
# prior term with tr(D^-1 L L'), the entropy log det L. L = L0 M with L0 the
# Laplace covariance's Cholesky factor and M lower triangular with
# log-diagonal parameters (M = I at the start), where BFGS is well scaled.
fullrank_logistic_optimum <- function(X, y, loc, scale) {
  p <- ncol(X)
  low <- which(lower.tri(diag(p)))
  gh <- gauss_hermite(40)
  lp <- logistic_laplace(X, y, loc, scale)
  L0 <- t(chol(solve(lp$precision)))
  unpack <- function(th) {
    M <- diag(exp(th[p + 1:p]), p)
    M[low] <- th[2 * p + seq_along(low)]
    list(m = th[1:p], M = M, L = L0 %*% M)
  }
  value <- function(th, grad = FALSE) {
    u <- unpack(th)
    XL <- X %*% u$L
    e <- logistic_expectations(y * drop(X %*% u$m), rowSums(XL^2), gh)
    elbo <- sum(e$f) - sum(((u$m - loc)^2 + rowSums(u$L^2)) / (2 * scale^2)) +
      sum(th[p + 1:p])
    if (!grad) return(elbo)
    GM <- crossprod(L0, -crossprod(X, XL * e$f2) - u$L / scale^2)
    c(drop(crossprod(X, y * e$f1)) - (u$m - loc) / scale^2,
      diag(GM) * diag(u$M) + 1, GM[low])
  }
  th <- bfgs_whitened(value, c(lp$mode, numeric(p), numeric(length(low))), L0, p)
  u <- unpack(th)
  S <- tcrossprod(u$L)
  list(mean = u$m, sd = sqrt(diag(S)), cov = S, elbo = value(th),
       gradient = value(th, TRUE))
}

# The mean-field optimum of the normal linear model of model_linear():
# y ~ N(X beta, sigma2), beta | sigma2 ~ N(mu0, sigma2 V), sigma2 ~ IG(a, b),
# sampled as (beta, gamma = log sigma2), q = prod N(m_j, s_j^2) x N(m_g, s_g^2).
# With E[exp(-gamma)] = exp(-m_g + s_g^2 / 2) every term of the ELBO is in
# closed form; BFGS on (m, log s, m_g, log s_g).
meanfield_linear_optimum <- function(X, y, mu0, V, a, b) {
  p <- ncol(X)
  n <- length(y)
  Vinv <- solve(V)
  cx <- colSums(X^2)
  value <- function(th, grad = FALSE) {
    m <- th[1:p]; s <- exp(th[p + 1:p]); mg <- th[2 * p + 1]; sg <- exp(th[2 * p + 2])
    einv <- exp(-mg + sg^2 / 2)
    r <- drop(y - X %*% m)
    rss <- sum(r^2) + sum(cx * s^2)
    Q <- drop(crossprod(m - mu0, Vinv %*% (m - mu0))) + sum(diag(Vinv) * s^2)
    if (!grad)
      return(-(n + p) / 2 * mg - einv * (rss + Q) / 2 - (a + 1) * mg - b * einv + mg +
               sum(log(s)) + log(sg))
    d_einv <- -(rss + Q) / 2 - b         # the ELBO's derivative in E[exp(-gamma)]
    c(einv * (drop(crossprod(X, r)) - drop(Vinv %*% (m - mu0))),
      -einv * (cx + diag(Vinv)) * s^2 + 1,
      -(n + p) / 2 - (a + 1) + 1 - d_einv * einv,
      d_einv * einv * sg^2 + 1)
  }
  # start: the exact posterior's means and E[1 / sigma2]
  prec <- crossprod(X) + Vinv
  mn <- drop(solve(prec, Vinv %*% mu0 + crossprod(X, y)))
  an <- a + n / 2
  bn <- b + 0.5 * (sum(y^2) + drop(crossprod(mu0, Vinv %*% mu0)) - drop(crossprod(mn, prec %*% mn)))
  th <- bfgs_whitened(value, c(mn, -0.5 * log(diag(prec) * an / bn), log(bn / an), -0.5 * log(an)),
                      t(chol(solve(prec) * bn / an)), p)
  list(mean = c(th[1:p], th[2 * p + 1]), sd = exp(c(th[p + 1:p], th[2 * p + 2])),
       elbo = value(th), gradient = value(th, TRUE))
}

# ------------------------------------------------------- data and fits --

# MASS::Pima.tr with its covariates on their natural scales (correlated
# with the intercept: the mean-field sds are 10-50% of the posterior's)
pima_natural <- function() {
  f <- type ~ npreg + glu + bp + skin + bmi + ped + age
  list(model = model_logistic(f, data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL), X = model.matrix(f, MASS::Pima.tr),
       y = ifelse(MASS::Pima.tr$type == "Yes", 1, -1))
}

# A logistic regression with six predictors correlated 0.9 among themselves
# and, through their means of 2, with the intercept
correlated_logistic <- function(n = 1000, seed = 42) {
  set.seed(seed)
  p <- 6
  X <- matrix(rnorm(n * p), n, p) %*% chol(matrix(0.9, p, p) + diag(0.1, p)) + 2
  colnames(X) <- paste0("x", seq_len(p))
  y <- as.integer(runif(n) < stats::plogis(-1 + drop(X %*% c(0.8, -0.5, 0.3, 0, 0.2, -0.4))))
  d <- data.frame(y = y, X)
  f <- y ~ x1 + x2 + x3 + x4 + x5 + x6
  list(model = model_logistic(f, data = d, prior = prior_normal(0, 10), prior_intercept = NULL), X = model.matrix(f, d), y = 2 * y - 1)
}

# the optimum of a logistic example with bbb()'s default prior N(0, 10^2)
logistic_optimum <- function(ex, family = "meanfield") {
  p <- ncol(ex$X)
  if (family == "meanfield") meanfield_logistic_optimum(ex$X, ex$y, rep(0, p), rep(10, p))
  else fullrank_logistic_optimum(ex$X, ex$y, rep(0, p), rep(10, p))
}

# theta of every chain of a bbb() fit: means then scale parameters (log sds;
# full rank: M by columns), one column per chain, from the estimator's state
vi_theta_of <- function(fit) {
  lay <- sgld:::vi_layout(fit$model$d, fit$variational$family)
  sgld:::vi_theta(fit, lay)$theta
}
