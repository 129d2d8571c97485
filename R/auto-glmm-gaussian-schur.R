# The collapsed sampler's cheap moves of small terms' sds (R/auto-glmm-gaussian.R
# has the maths of the collapsed system; bench/glmm-gaussian.md the figures).
#
# Split v = (v1, v2), v2 the columns J of the "small" terms: scalar terms
# ((1 | g), one sd each) with few levels, as InstEval's 28-cell dept:service.
# Their columns of W are W2 = Z2 T, T = diag(t), t the sd of each column's
# term. With A = M11 (which no small sd enters), K = A^-1 W1'Z2 and
#   H = Z2'Z2 - Z2'W1 A^-1 W1'Z2,   u = Z2'r - K'W1'r   (m x m, m),
# the Schur complement of A in M is S(t) = T H T + sigma^2 I, and
#   log det M(t) = log det A + log det S(t),
#   r'W M(t)^-1 W'r = r'W1 A^-1 W1'r + (T u)' S(t)^-1 (T u),
# so log p(y | theta) as the small sds change, the others held, costs one
# m x m Cholesky factor. All of it comes from the factor of M at one theta
# (t_f): the m columns Y = M^-1 E_J (one solve with m right-hand sides) give
# S(t_f) = Y[J, ]^-1, hence H; u = T_f^-1 S(t_f) mean_J; and
# K = -Y[-J, ] S(t_f) T_f^-1. On InstEval (m = 28) that solve costs 10 ms
# against 128 ms for the factor.
#
# One iteration of the sampler is then a Gibbs cycle, each part exact:
# (1) the other coordinates of theta by independence Metropolis-Hastings,
# the proposal the fitted t's conditional given the small sds (one factor);
# (2) each small log sd by slice sampling (Neal 2003) on the cheap
# conditional above. Why: the small terms' sds are the posterior's skewed,
# poorly determined coordinates (28 cells say little about their sd), which
# an independence proposal fits worst; on their own they cost almost nothing.
# The effects are drawn given the current theta from the factor at t_f:
# v ~ N(mean_f, sigma^2 M_f^-1) split as v1 | v2 at t_f, then v2 drawn from
# its own Gaussian at t, N(S^-1 T u, sigma^2 S^-1), and v1 moved by the
# change of its conditional mean, -K (t v2 - t_f v2_f) (its conditional
# covariance sigma^2 A^-1 is free of t).
auto_glmm_gaussian_schur_levels <- 50L  # a small term: one sd, at most this many levels
auto_glmm_gaussian_schur_columns <- 100L  # the small terms' columns in all: at most
auto_glmm_gaussian_schur_min_q <- 1000L   # and only in a system at least this large
auto_glmm_gaussian_slice_sweeps <- 5L     # slice updates of each small sd per iteration

# The terms whose sds the cheap moves update: scalar terms with few levels,
# in a system large enough that its factor costs far more than their dense
# block; integer(0) when none (then every move is a joint one).
glmm_schur_terms <- function(model) {
  q <- model$p + length(model$b_names)
  small <- which(model$r == 1L & model$G <= auto_glmm_gaussian_schur_levels)
  if (q < auto_glmm_gaussian_schur_min_q || !length(small) ||
      sum(model$G[small]) > auto_glmm_gaussian_schur_columns) return(integer())
  small
}

# What the cheap moves need of the system: the columns J of the small terms,
# each column's term (as an index into J's sds), and the positions of those
# sds in theta.
glmm_schur_setup <- function(model, terms) {
  if (!length(terms)) return(NULL)
  q <- model$p + length(model$b_names)
  first_col <- model$p + cumsum(c(0L, model$r * model$G))
  first_theta <- cumsum(c(0L, model$r + model$r * (model$r - 1L) / 2L))
  cols <- unlist(lapply(terms, function(k) first_col[k] + seq_len(model$G[k])))
  list(terms = terms, columns = cols,
       column_sd = rep(seq_along(terms), model$G[terms]),
       theta_index = first_theta[terms] + 1L,
       unit = Matrix::sparseMatrix(i = cols, j = seq_along(cols), x = 1,
                                   dims = c(q, length(cols))))
}

# The Schur quantities at the state's factor (cond, at theta).
glmm_schur_state <- function(sys, cond, theta) {
  sc <- sys$schur
  J <- sc$columns
  Y <- as.matrix(Matrix::solve(cond$factor, sc$unit, system = "A"))
  R <- Y[J, , drop = FALSE]
  S <- chol2inv(chol((R + t(R)) / 2))
  s2 <- cond$sigma^2
  tf <- exp(theta[sc$theta_index])[sc$column_sd]
  H <- S
  diag(H) <- diag(H) - s2
  H <- H / outer(tf, tf)
  Sm <- drop(S %*% cond$mean[J])
  list(H = (H + t(H)) / 2, u = Sm / tf, sd = tf, quad_a = cond$quad - sum(cond$mean[J] * Sm),
       logdet_a = cond$logdet - as.double(determinant(S)$modulus),
       K = -sweep(Y[-J, , drop = FALSE] %*% S, 2, tf, "/"))
}

# log p(y | theta) by the Schur complement: theta differs from the state's
# factored one in the small sds only. The Cholesky factor of S comes back too.
glmm_schur_loglik <- function(sys, st, theta) {
  sc <- sys$schur
  log_sigma <- theta[length(theta)]
  s2 <- exp(2 * log_sigma)
  t <- exp(theta[sc$theta_index])[sc$column_sd]
  S <- st$H * outer(t, t)
  diag(S) <- diag(S) + s2
  R <- tryCatch(chol(S), error = function(e) NULL)
  if (is.null(R)) return(list(value = -Inf))
  b <- backsolve(R, t * st$u, transpose = TRUE)
  q <- sys$p + sys$nz
  logdet <- st$logdet_a + 2 * sum(log(diag(R)))
  list(value = -sys$n / 2 * log(2 * pi) - (sys$n - q) * log_sigma - logdet / 2 -
         (sys$rr - st$quad_a - sum(b^2)) / (2 * s2),
       chol = R, t = t, s2 = s2)
}

glmm_schur_logpost <- function(sys, st, theta) {
  if (any(!is.finite(theta)) || any(abs(theta) > 300)) return(-Inf)
  v <- glmm_schur_loglik(sys, st, theta)$value + glmm_theta_logprior(sys, theta)
  if (is.finite(v)) v else -Inf
}

# The fitted t's conditional for the coordinates `keep` given the others at
# `given` (a Gaussian's conditional mean and covariance, the same df and
# widening): a proposal for those coordinates alone, the others held.
glmm_t_conditional <- function(prop, keep, given) {
  V <- prop$covariance
  o <- -keep
  B <- V[keep, o, drop = FALSE] %*% solve(V[o, o, drop = FALSE])
  glmm_t_proposal(prop$location[keep] + drop(B %*% (given - prop$location[o])),
                  V[keep, keep, drop = FALSE] - B %*% V[o, keep, drop = FALSE], prop$df)
}

# One slice-sampling update (stepping out, then shrinking) of coordinate j
# of x under log density f, from its value f0 there; width w.
glmm_slice_update <- function(x, j, f, f0, w, max_steps = 50L) {
  level <- f0 - stats::rexp(1)
  lo <- x[j] - w * stats::runif(1)
  hi <- lo + w
  at <- function(v) {
    x[j] <- v
    f(x)
  }
  steps <- max_steps
  while (steps > 0L && at(lo) > level) {
    lo <- lo - w
    steps <- steps - 1L
  }
  steps <- max_steps
  while (steps > 0L && at(hi) > level) {
    hi <- hi + w
    steps <- steps - 1L
  }
  repeat {
    v <- stats::runif(1, lo, hi)
    fv <- at(v)
    if (fv > level) {
      x[j] <- v
      return(list(x = x, value = fv))
    }
    if (v < x[j]) lo <- v else hi <- v
  }
}

# One iteration with cheap moves: the state s carries theta, its log
# posterior value, the factored theta_f with its conditional cond, and the
# Schur quantities at theta_f (made when first needed).
glmm_schur_step <- function(s, prop, post, sys) {
  sc <- sys$schur
  js <- sc$theta_index
  jb <- seq_along(s$theta)[-js]
  if (is.null(s$value)) s$value <- s$cond$value
  # (1) the other coordinates, given the small sds
  cp <- glmm_t_conditional(prop, jb, s$theta[js])
  th <- s$theta
  th[jb] <- glmm_t_draw(cp)
  cand <- post(th)
  moved <- FALSE
  if (log(stats::runif(1)) < cand$value - s$value + glmm_t_logdens(cp, s$theta[jb]) -
      glmm_t_logdens(cp, th[jb])) {
    s <- list(theta = th, cond = cand, value = cand$value, schur = NULL)
    moved <- TRUE
  }
  # (2) the small sds, the factor kept
  if (is.null(s$schur)) {
    s$schur <- glmm_schur_state(sys, s$cond, s$theta)
    s$schur$theta <- s$theta
  }
  f <- function(x) glmm_schur_logpost(sys, s$schur, x)
  for (sweep in seq_len(auto_glmm_gaussian_slice_sweeps)) for (j in js) {
    up <- glmm_slice_update(s$theta, j, f, s$value, 2 * sqrt(prop$covariance[j, j]))
    s$theta <- up$x
    s$value <- up$value
  }
  s$moved <- moved
  s
}

# One draw of v (the fixed effects on C's scale and z) given the state's
# theta, from its factor at theta_f (the header's correction).
glmm_schur_effects_draw <- function(sys, s) {
  cond <- s$cond
  vf <- glmm_effects_v(sys, cond)
  if (is.null(s$schur) || identical(s$theta, s$schur$theta)) return(glmm_effects_scale(sys, vf))
  J <- sys$schur$columns
  at <- glmm_schur_loglik(sys, s$schur, s$theta)
  mean2 <- backsolve(at$chol, backsolve(at$chol, at$t * s$schur$u, transpose = TRUE))
  v2 <- mean2 + sqrt(at$s2) * backsolve(at$chol, stats::rnorm(length(J)))
  v <- vf
  v[J] <- v2
  v[-J] <- vf[-J] - drop(s$schur$K %*% (at$t * v2 - s$schur$sd * vf[J]))
  glmm_effects_scale(sys, v)
}
