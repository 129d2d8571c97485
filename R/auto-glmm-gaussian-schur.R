# The collapsed sampler's cheap moves (R/auto-glmm-gaussian.R has the maths
# of the collapsed system; bench/glmm-gaussian.md the figures).
#
# Split v = (v1, v2): v2 the columns J of the fixed effects and of the
# "small" terms (scalar terms, (1 | g), with few levels, as InstEval's
# 28-cell dept:service), v1 the other ("big") terms' effects. J's columns of
# W are W2 = Z2 T, T = diag(t): t the sd of each small term's column, 1 for
# the fixed effects (their scale s0 is in Z2). The big terms' columns are
# W1 = sigma W1r, W1r their design times their factors relative to sigma.
# With A = W1'W1 + sigma^2 I = sigma^2 (W1r'W1r + I) and
#   H = Z2'Z2 - Z2'W1 A^-1 W1'Z2,   u = Z2'r - Z2'W1 A^-1 W1'r   (m x m, m),
# both free of sigma and t as long as the big terms' sds relative to sigma
# are held, the Schur complement of A in M is S = T H T + sigma^2 I and
#   log det M = log det A + log det S,  log det A = q1 log sigma^2 + const,
#   r'W M^-1 W'r = r'W1 A^-1 W1'r (free of sigma, t) + (T u)' S^-1 (T u),
# so log p(y | theta) along those moves costs one m x m Cholesky factor.
# All of it comes from the factor of M at one theta (theta_f): the m
# columns Y = M^-1 E_J (one solve, m right-hand sides) give S_f = Y[J, ]^-1,
# H = T_f^-1 (S_f - sigma_f^2 I) T_f^-1, u = T_f^-1 S_f mean_J and
# K = A_f^-1 W1_f'Z2 = -Y[-J, ] S_f T_f^-1. On InstEval (m = 30) that solve
# costs 10 ms against 128 ms for a factor.
#
# One iteration is a cycle of exact updates: (1) the big terms' log sds
# and correlations by independence Metropolis-Hastings, the proposal the
# fitted t's conditional given the rest (one factor); (2) sigma with the
# big terms' sds in proportion (a line through theta: their log sds and
# log sigma moved together), and (3) each small term's log sd, both by
# slice sampling (Neal 2003) on the cheap marginal. Why: the small terms'
# sds are the skewed, poorly determined coordinates (28 cells say little
# about their sd), which an independence proposal fits worst, and sigma,
# sharply determined, costs the joint proposal acceptance in every
# dimension it has to fit; here they cost almost nothing.
# The effects are drawn given the current theta from the factor at
# theta_f: v ~ N(mean_f, sigma_f^2 M_f^-1) split into v2 and v1's residual
# e1 about its conditional mean given v2 (covariance sigma^2 A^-1, the same
# at every theta of these moves); v2 drawn again from its Gaussian at
# theta, N(S^-1 T u, sigma^2 S^-1); v1 = (sigma_f / sigma) A_f^-1 (c1_f -
# W1_f'Z2 T v2) + e1.
auto_glmm_gaussian_schur_levels <- 50L  # a small term: one sd, at most this many levels
auto_glmm_gaussian_schur_columns <- 100L  # J's columns (fixed and small): at most
auto_glmm_gaussian_schur_min_q <- 1000L   # and only in a system at least this large
auto_glmm_gaussian_slice_sweeps <- 5L     # slice updates of each cheap line per iteration
# (1, 2, 3, 5 measured on InstEval: 2 looked best on a short proxy, but the
# whole default call at 2 took more CPU than at 5; bench/glmm-gaussian.md)
# the joint move's proposal sds over the fitted ones (the t's conditional
# given the cheap coordinates)
auto_glmm_gaussian_schur_widen <- 1.3
# the planned run over the independence sampler's (auto_glmm_gaussian())
auto_glmm_gaussian_schur_plan <- 0.75

# The terms whose sds the cheap moves update: scalar terms with few levels,
# in a system large enough that its factor costs far more than the dense
# block of J (the fixed effects and those terms); NULL for no cheap moves.
glmm_schur_terms <- function(model) {
  q <- model$p + length(model$b_names)
  small <- which(model$r == 1L & model$G <= auto_glmm_gaussian_schur_levels)
  if (q < auto_glmm_gaussian_schur_min_q ||
      model$p + sum(model$G[small]) > auto_glmm_gaussian_schur_columns ||
      model$p + length(small) == 0L) return(NULL)
  small
}

# What the cheap moves need of the system: the columns J, the index of each
# one's small term in `terms` (0 for a fixed effect), the small terms' log
# sds in theta, the big terms' coordinates in theta, and the line of
# sigma's moves (the big terms' log sds and log sigma).
glmm_schur_setup <- function(model, terms) {
  if (is.null(terms)) return(NULL)
  q <- model$p + length(model$b_names)
  first_col <- model$p + cumsum(c(0L, model$r * model$G))
  nt <- model$r + model$r * (model$r - 1L) / 2L
  first_theta <- cumsum(c(0L, nt))
  cols <- c(seq_len(model$p), unlist(lapply(terms, function(k) first_col[k] + seq_len(model$G[k]))))
  big <- setdiff(seq_len(model$K), terms)
  n_theta <- sum(nt) + 1L
  list(terms = terms, columns = cols, q_big = q - length(cols),
       column_sd = c(integer(model$p), rep(seq_along(terms), model$G[terms])),
       theta_index = first_theta[terms] + 1L,
       big_index = unlist(lapply(big, function(k) first_theta[k] + seq_len(nt[k]))),
       sigma_line = replace(numeric(n_theta), c(unlist(lapply(big, function(k)
         first_theta[k] + seq_len(model$r[k]))), n_theta), 1),
       unit = Matrix::sparseMatrix(i = cols, j = seq_along(cols), x = 1,
                                   dims = c(q, length(cols))))
}

# The scale of each column of J at theta (1 for the fixed effects).
glmm_schur_scales <- function(sc, theta) {
  t <- rep(1, length(sc$columns))
  small <- sc$column_sd > 0L
  t[small] <- exp(theta[sc$theta_index])[sc$column_sd[small]]
  t
}

# The Schur quantities at the state's factor (cond, at theta).
glmm_schur_state <- function(sys, cond, theta) {
  sc <- sys$schur
  J <- sc$columns
  Y <- as.matrix(Matrix::solve(cond$factor, sc$unit, system = "A"))
  R <- Y[J, , drop = FALSE]
  S <- chol2inv(chol((R + t(R)) / 2))
  tf <- glmm_schur_scales(sc, theta)
  H <- S
  diag(H) <- diag(H) - cond$sigma^2
  H <- H / outer(tf, tf)
  Sm <- drop(S %*% cond$mean[J])
  K <- -sweep(Y[-J, , drop = FALSE] %*% S, 2, tf, "/")
  list(H = (H + t(H)) / 2, u = Sm / tf, sd = tf, theta = theta, log_sigma = log(cond$sigma),
       quad_a = cond$quad - sum(cond$mean[J] * Sm),
       logdet_a = cond$logdet - as.double(determinant(S)$modulus), K = K,
       a1 = cond$mean[-J] + drop(K %*% (tf * cond$mean[J])))
}

# log p(y | theta) by the Schur complement: theta differs from the state's
# factored one by the cheap moves only. The Cholesky factor of S comes too.
glmm_schur_loglik <- function(sys, st, theta) {
  sc <- sys$schur
  log_sigma <- theta[length(theta)]
  s2 <- exp(2 * log_sigma)
  t <- glmm_schur_scales(sc, theta)
  S <- st$H * outer(t, t)
  diag(S) <- diag(S) + s2
  R <- tryCatch(chol(S), error = function(e) NULL)
  if (is.null(R)) return(list(value = -Inf))
  b <- backsolve(R, t * st$u, transpose = TRUE)
  q <- sys$p + sys$nz
  logdet <- st$logdet_a + 2 * sc$q_big * (log_sigma - st$log_sigma) + 2 * sum(log(diag(R)))
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
                  V[keep, keep, drop = FALSE] - B %*% V[o, keep, drop = FALSE], prop$df,
                  widen = auto_glmm_gaussian_schur_widen)
}

# One slice-sampling update (stepping out, then shrinking) of x along the
# direction `line` under log density f, from its value f0 at x; width w.
glmm_slice_update <- function(x, line, f, f0, w, max_steps = 50L) {
  level <- f0 - stats::rexp(1)
  at <- function(a) f(x + a * line)
  lo <- -w * stats::runif(1)
  hi <- lo + w
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
    a <- stats::runif(1, lo, hi)
    fa <- at(a)
    if (fa > level) return(list(x = x + a * line, value = fa))
    if (a < 0) lo <- a else hi <- a
  }
}

# One iteration with cheap moves: the state s carries theta, its log
# posterior value, the conditional cond factored at theta_f, and the Schur
# quantities there (made when first needed). Without big terms there is no
# joint move (counted as accepted: the factor then never changes).
glmm_schur_step <- function(s, prop, post, sys) {
  sc <- sys$schur
  jb <- sc$big_index
  if (is.null(s$value)) s$value <- s$cond$value
  moved <- !length(jb)
  if (length(jb)) {
    # (1) the big terms' coordinates, given the rest
    cp <- glmm_t_conditional(prop, jb, s$theta[-jb])
    th <- s$theta
    th[jb] <- glmm_t_draw(cp)
    cand <- post(th)
    if (log(stats::runif(1)) < cand$value - s$value + glmm_t_logdens(cp, s$theta[jb]) -
        glmm_t_logdens(cp, th[jb])) {
      s <- list(theta = th, cond = cand, value = cand$value, schur = NULL)
      moved <- TRUE
    }
  }
  if (is.null(s$schur)) s$schur <- glmm_schur_state(sys, s$cond, s$theta)
  f <- function(x) glmm_schur_logpost(sys, s$schur, x)
  # (2) sigma, the big terms' sds in proportion; (3) the small terms' sds
  lines <- c(list(sc$sigma_line), lapply(sc$theta_index, function(j)
    replace(numeric(length(s$theta)), j, 1)))
  widths <- 2 * sqrt(c(prop$covariance[length(s$theta), length(s$theta)],
                       diag(prop$covariance)[sc$theta_index]))
  for (sweep in seq_len(auto_glmm_gaussian_slice_sweeps)) for (i in seq_along(lines)) {
    up <- glmm_slice_update(s$theta, lines[[i]], f, s$value, widths[i])
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
  st <- s$schur
  if (is.null(st) || identical(s$theta, st$theta)) return(glmm_effects_scale(sys, vf))
  J <- sys$schur$columns
  at <- glmm_schur_loglik(sys, st, s$theta)
  mean2 <- backsolve(at$chol, backsolve(at$chol, at$t * st$u, transpose = TRUE))
  v2 <- mean2 + sqrt(at$s2) * backsolve(at$chol, stats::rnorm(length(J)))
  e1 <- vf[-J] - st$a1 + drop(st$K %*% (st$sd * vf[J]))
  v <- vf
  v[J] <- v2
  v[-J] <- exp(st$log_sigma) / sqrt(at$s2) * (st$a1 - drop(st$K %*% (at$t * v2))) + e1
  glmm_effects_scale(sys, v)
}
