# lr = "auto" for wide models: more than auto_wide_d parameters (text
# features, factors of thousands of levels), where the recipe of R/auto.R
# would build, factor and take eigenvalues of d x d matrices. Measured on a
# 10^5 x 2,000 sparse logistic regression (1% non-zeros, bench/sparse.md):
# that recipe spent over 100 s in d x d algebra before its run (eigen() of
# the gradient covariance 22 s, chol() 10 s, crossprod() 40 s), and each
# step through the 2,000 x 2,000 preconditioner factor cost O(d^2).
# Here nothing is d x d:
#  (a) the mode by L-BFGS-B (O(d) memory), each evaluation a pass in C;
#  (b) the diagonal of the posterior precision at the mode, H_jj, from
#      Hessian-vector products (central differences of full-data gradients):
#      with unit vectors for the few coordinates coupled to many, one probe
#      per group of columns that share no row (a factor's levels), random
#      +-1 vectors for the rest (Hutchinson's estimator); coordinates far
#      from Gaussian on few rows (levels whose rows are all events) are
#      then drawn alone by slice sampling, and (c)-(d) concern the rest;
#  (c) the fixed diagonal preconditioner P = diag(1 / H_jj), corrected
#      along the few directions where it fits worst (the extreme Ritz
#      pairs of the Lanczos iteration on the preconditioned precision, from
#      the same products, in rounds): P = L L^T, L = S (I + V C V^T), O(d k) a step
#      (src/update_precond.c);
#  (d) the largest and smallest curvatures of the corrected posterior by
#      the Lanczos iteration again: the step is auto_wide_eta over the
#      largest, the run's length from the smallest (Leimkuhler-Matthews
#      steps, below);
#  (e) batch and control variates as in R/auto.R, the sampling threshold
#      from the gradients' covariance through its draws x draws Gram matrix,
#      formed from blocks of draws (never all draws x d at once).
# A diagonal preconditioner leaves curvatures that differ (from 0.13 to 6.7
# on a 10^4 x 500 text design; 0.67-1.4 after the correction on the
# designs of bench/sparse.md, where the rest of the spectrum is the bulk of
# X'WX itself, 0.72-1.30 at n / d = 50: no low-rank correction narrows it).
# Euler's step widens a direction of step e by 1 / (1 - e / 2), and no one
# temperature cancels that for every direction: at e = 0.2 and a
# temperature splitting it, runs took 20,000 full-data steps on the
# 10^5 x 2,000 design, 124 s of CPU. The steps are Leimkuhler-Matthews'
# instead (update_precond.c): exact for a Gaussian posterior at any step
# below 2 along every direction at once, O(e^2) bias otherwise, and at
# step 0.8 along the stiffest direction the sds came within 6% of MALA's
# on all four regressions (0.2, 0.5, 0.8 and 1.0 all within 6%;
# bench/sparse.md), in a quarter of the steps. The slowest direction
# (on text designs the intercept and the common words together) gets
# auto_wide_ess effective draws: its means to 3% of an sd; every
# coefficient that mixes faster gets more.
auto_wide_d <- 1000      # above this many parameters, the diagonal recipe
# (the option sgld.auto_wide_d moves the bar, as the tests do at small sizes)
auto_wide_limit <- function() getOption("sgld.auto_wide_d", auto_wide_d)
auto_wide_eta <- 0.8     # step along the stiffest preconditioned direction
# and when some coordinates are drawn alone (a factor with levels on few
# rows): the other few-row levels and the intercept (the baseline level's
# mean) are far from Gaussian too, where Leimkuhler-Matthews steps have an
# O(e^2) bias. At 1,000 levels x 10^4 rows (intercept on the baseline's 5
# rows; runs of 4,200-8,000 iterations against an exact Gibbs reference,
# bench/sparse.md) the intercept's sd came out 5-6% wide at 0.8 (and every
# level's with it, b_j = a_j - intercept), 0.7% at 0.5, 0.6% at 0.4
auto_wide_eta_alone <- 0.5
auto_wide_ess <- 1000    # effective draws along the slowest (all chains)
# and when levels are drawn alone: the other few-row levels mix more slowly
# than the slowest Gaussian direction the plan reads, and the bar is met by
# the worst of a thousand or more skewed coefficients, so the run aims at
# 1.5 times the dense recipe's auto_target_ess (R/auto.R). At 1,000-1,300
# levels (Poisson, binomial and a held-out binomial against exact Gibbs
# references, seeds 1-3; bench/sparse.md) the planned 1,452 iterations left
# errors up to 0.177 sd and 17% in sd, a target of 2,000 up to 0.125 sd and
# 11.3%: Monte Carlo error, not bias (three times the iterations: 0.079 sd
# and 6.7%)
auto_wide_ess_alone <- function() 1.5 * auto_target_ess

# The step along the stiffest direction and the effective draws the run aims
# at: smaller, and more, when levels are drawn alone (above).
wide_aim <- function(coords) {
  if (length(coords$index)) list(eta = auto_wide_eta_alone, ess = auto_wide_ess_alone())
  else list(eta = auto_wide_eta, ess = auto_wide_ess)
}
auto_wide_probes <- 64   # random vectors for the Hessian's diagonal
auto_wide_power <- 40    # Lanczos steps for the extreme curvatures
auto_wide_band <- 1.5    # curvatures beyond [1/1.5, 1.5] are corrected,
auto_wide_rank <- 20     # along at most this many directions a round,
# in at most this many rounds, each on the posterior the last left: on
# Adult's a9a design made full rank (d = 106 with the bar moved), the first
# round's 17 directions left curvatures 0.0014-1.4 (its smallest hidden
# behind the largest, 10.8, before), a second round's 3 more 0.67-1.4
auto_wide_rounds <- 3
# chains start from N(mode, spread^2 P): at R/auto.R's spread 2, steps of
# 0.8 from such starts diverged in 4 of 24 chains of a negative binomial on
# tf-idf values (bench/sparse-heldout.R's design, seeds 1-6), in none at 1.5
auto_wide_spread <- 1.5

auto_sgld_wide <- function(model, args, given, call, made) {
  start <- proc.time()[["elapsed"]]
  check_count(args$chains, "chains", lower = 1, upper = 1000)
  auto_laplace_capable(model, "sgld()")
  chains <- args$chains
  d <- model$d
  pm <- wide_mode(model, "sgld()")
  hvp <- hessian_product(model, pm$sampler)
  exact <- coupled_coordinates(model)
  groups <- orthogonal_groups(model, setdiff(seq_len(d), exact))
  h <- hessian_diagonal(hvp, d, exact, groups)
  P <- 1 / h
  # coordinates far from Gaussian on few rows are drawn alone (slice
  # sampling, src/coordinate.c); the Langevin steps move the rest, A
  coords <- wide_coordinates(model, pm, hvp, h, unlist(groups, use.names = FALSE))
  A <- setdiff(seq_len(d), coords$index)
  s <- sqrt(P)
  s[coords$index] <- 0
  fix <- NULL
  for (round in seq_len(auto_wide_rounds)) {
    ops <- precondition_ops(s, fix$basis, fix$coef)
    more <- low_rank_correction(lanczos(function(v) ops$Lt(hvp(ops$L(v))), d, support = A))
    if (is.null(more)) break
    fix <- merge_corrections(fix, more)
  }
  ops <- precondition_ops(s, fix$basis, fix$coef)
  curv <- preconditioned_curvatures(hvp, ops, d, A)
  aim <- wide_aim(coords)
  lr <- aim$eta / curv[2]
  eta_slow <- lr * curv[1]
  chosen <- auto_batch(model, args, given, function(batch, use_cv)
    wide_alpha(model, pm, ops, batch, use_cv, lr))
  batch <- chosen$batch
  cv <- chosen$cv
  alpha <- chosen$alpha
  lr <- lr * chosen$shrink
  eta_slow <- eta_slow * chosen$shrink
  if (isTRUE(cv)) cv <- pm$mode
  # Leimkuhler-Matthews steps: the AR(1) of a Gaussian direction of step e
  # with MA(1) noise has integrated autocorrelation time 2 / e
  plan <- auto_run_length(eta_slow, aim$ess, chains, args, given,   # R/auto.R
                          tau_int = 2 / eta_slow)
  tau_int <- plan$tau_int
  burnin <- plan$burnin
  iter <- plan$iter
  # draws of d coefficients are the run's largest output (4 chains of 1,300
  # draws of 2,000 at thin 1: 83 MB, 3.6 times the 10^5 x 2,000 design's
  # non-zeros): two per autocorrelation time of the slowest direction keep
  # its effective draws, and twice as many in all as it has
  thin <- if ("thin" %in% given) args$thin else max(1, floor(tau_int / 2))
  temperature <- if ("temperature" %in% given) args$temperature else 1
  init <- if ("init" %in% given && !is.null(args$init)) args$init
          else if (chains == 1) pm$mode
          else to_user_scale(model, matrix(pm$sampler, chains, d, byrow = TRUE) +
                                       auto_wide_spread * t(apply(matrix(stats::rnorm(chains * d),
                                                                    d), 2, ops$L)))
  setup <- proc.time()[["elapsed"]] - start
  rule <- update_rule("precond_lm", paste0(
    "SGLD with a fixed diagonal preconditioner", if (!is.null(fix))
      sprintf(", corrected along %d directions", length(fix$coef)),
    " (Leimkuhler-Matthews steps)"),
    c(list(scale = s), fix), sampler = TRUE)
  fit <- auto_phase(made, "run", run_sampler(
    model, lr = lr, batch_size = batch, iter = iter, burnin = burnin, thin = thin,
    temperature = temperature, chains = chains, init = init, replace = args$replace,
    clip = args$clip, monitor = args$monitor, threads = args$threads,
    diagnostics = args$diagnostics, rule = rule, control_variates = cv, method = "sgld",
    call = call, pars = args$pars, progress = args$progress, parallel = args$parallel,
    coordinates = coords$settings))
  fit$auto <- list(
    lr = lr, batch_size = batch, control_variates = !isFALSE(cv), iter = iter,
    burnin = burnin, thin = thin, temperature = temperature, mode = pm$mode,
    precondition = P, laplace_precondition = FALSE, curvature = curv, alpha = alpha,
    target_ess = aim$ess, autocorrelation_time = tau_int,
    overdispersed = chains > 1 && !"init" %in% given, setup_time = setup,
    coordinates = model$sampler_names[coords$index],
    strategy = "langevin-diagonal",
    reason = sprintf(paste0(
      "lr = \"auto\": %d parameters, so a diagonal preconditioner (the inverse of the ",
      "posterior precision's diagonal at the mode%s) and step %s along its stiffest direction ",
      "(curvatures %s to %s, temperature %s), %s; %s iterations for about %d effective ",
      "draws along the slowest direction%s%s."),
      d, if (is.null(fix)) "" else sprintf(", corrected along %d directions", length(fix$coef)),
      format(aim$eta * chosen$shrink, digits = 3), format(curv[1], digits = 2),
      format(curv[2], digits = 2), format(temperature, digits = 3),
      if (batch >= model$n) "full data in every step"
      else sprintf("batch %d%s (sampling threshold %s)", batch,
                   if (!isFALSE(cv)) " with control variates at the mode" else "",
                   format(alpha, digits = 2)),
      format(iter, big.mark = ","), aim$ess,
      if (chains > 1 && !"init" %in% given) "; chains start over-dispersed around the mode"
      else "",
      if (length(coords$index))
        sprintf("; %d coefficients far from Gaussian (each on few rows) drawn alone by slice sampling",
                length(coords$index))
      else ""))
  fit$auto$sampling_time <- fit$sampling_time
  fit$time <- fit$time + setup
  fit
}

# The mode of a wide model (posterior_mode() by L-BFGS-B), or an error
# saying why lr = "auto" cannot go on.
wide_mode <- function(model, what) {
  tryCatch(posterior_mode(model), error = function(e)
    abort(what, ": `lr = \"auto\"` needs the posterior mode, which failed: ",
          conditionMessage(e), " Give `lr` yourself."))
}

# v -> H v, H the negative Hessian of the log posterior at w (sampler's
# scale), by central differences of full-data gradients: two passes.
hessian_product <- function(model, w) {
  function(v) {
    eps <- 1e-4 / max(1, sqrt(sum(v^2)) / sqrt(length(v)))
    -(full_gradient(model, w + eps * v) - full_gradient(model, w - eps * v)) / (2 * eps)
  }
}

# diag(H): exactly, by a product with each unit vector, for the
# coordinates in `exact`; for the others by Hutchinson's estimator, the mean
# of v * (H v) over random +-1 vectors v that are zero on `exact`. Its error
# for coordinate j is sqrt(sum_k H_jk^2 / probes) over the k it draws, so
# the coordinates coupled to many others (the intercept and the columns
# non-zero on many rows, whose products with every column are large) are
# taken exactly, and the rest, coupled weakly, by the probes. Floored at a
# millionth of the largest, as noise can leave a weak coordinate's estimate
# small or negative.
hessian_diagonal <- function(hvp, d, exact = integer(0), groups = list(),
                             probes = auto_wide_probes) {
  h <- numeric(d)
  for (j in exact) h[j] <- hvp(replace(numeric(d), j, 1))[j]
  grouped <- unlist(groups, use.names = FALSE)
  rest <- setdiff(seq_len(d), c(exact, grouped))
  with_seed_kept({
    set.seed(1)
    if (length(rest)) h[rest] <- rowMeans(vapply(seq_len(probes), function(k) {
      v <- numeric(d)
      v[rest] <- sample(c(-1, 1), length(rest), replace = TRUE)
      (v * hvp(v))[rest]
    }, numeric(length(rest))))
    for (g in groups) {
      v <- numeric(d)
      v[g] <- sample(c(-1, 1), length(g), replace = TRUE)
      h[g] <- (v * hvp(v))[g]
    }
  })
  floor <- 1e-6 * max(h)
  h[rest] <- pmax(h[rest], floor)
  # exact up to the prior's couplings: a level whose rows are all events has
  # a curvature far below the floor (its mode is out where the prior alone
  # holds it), and the floor would shrink its steps a hundredfold
  h[grouped] <- pmax(h[grouped], 1e-12 * max(h))
  h
}

# Groups of coordinates whose columns share no row (greedily, the columns
# on most rows first, in at most `colours` groups; the rest are left out).
# Within a group the likelihood's Hessian has no cross terms, so one probe
# with random signs on the group gives each member's H_jj up to the prior's
# couplings (the centred intercept's, mean_j mean_k / s^2). The levels of
# a factor are one group: Hutchinson's estimator would need thousands of
# probes for the relative accuracy that one probe gives them here, and the
# floor it needs took the curvature of levels whose rows are all events
# (1e-4, against the intercept's 4,000 at 2,000 levels x 20,000 rows) up
# 40-fold, leaving 81 directions beyond [0.9, 1.1] after the diagonal
# (4 with the exact diagonal).
orthogonal_groups <- function(model, candidates, colours = 30L) {
  if (!length(candidates)) return(list())
  rows <- model_coordinate_rows(model, candidates)
  if (is.null(rows)) return(list())
  ok <- lengths(rows) > 0
  candidates <- candidates[ok]
  rows <- rows[ok]
  taken <- integer(model$n)   # per row, a bit for each group it is in
  bits <- as.integer(2^(seq_len(colours) - 1))
  group <- integer(length(candidates))
  for (k in order(lengths(rows), decreasing = TRUE)) {
    r <- rows[[k]] + 1
    used <- taken[r]
    for (c in seq_len(colours)) if (!any(bitwAnd(used, bits[c]) > 0L)) {
      group[k] <- c
      taken[r] <- bitwOr(used, bits[c])
      break
    }
  }
  unname(split(candidates[group > 0], group[group > 0]))
}

# The coordinates the wide recipe draws alone (R/auto.R's auto_coordinates()
# for wide models, where its d x d algebra is out of reach): of the
# coordinates whose curvature is exact (`grouped`) and whose columns are on
# at most auto_coord_rows of the rows, those whose conditional score departs
# from the Gaussian's by more than auto_coord_residual conditional sds
# (root mean square at `points` points, each coordinate moved by its
# conditional Laplace sd 1 / sqrt(h_j) at once: 2 `points` passes), the
# farthest first while their rows add up to at most auto_coord_rows of the
# data (so that a sweep costs at most a tenth of a pass). A level whose rows
# are all events or all non-events is half-flat out to its prior's reach:
# Langevin steps on the scale of its curvature at the mode overshoot the
# side its rows hold. Returns NULL, or the engine's settings and the
# indices.
wide_coordinates <- function(model, pm, hvp, h, grouped, points = 10) {
  if (!isTRUE(model_engine(model)$logpost_coordinate) || !length(grouped)) return(NULL)
  rows <- model_coordinate_rows(model, grouped)
  if (is.null(rows)) return(NULL)
  few <- lengths(rows) <= auto_coord_rows * model$n
  grouped <- grouped[few]
  rows <- rows[few]
  if (!length(grouped)) return(NULL)
  d <- model$d
  sd <- 1 / sqrt(h[grouped])
  # each coordinate at the same `points` normal quantiles, in its own
  # random order: with independent normal draws, a level half-flat on one
  # side (rows all zero counts) drew all 10 on its flat side often enough
  # that a few of 1,088 levels were missed, and one missed level made every
  # chain diverge (Poisson, 1,100 levels x 5,000 rows; bench/sparse.md)
  z <- stats::qnorm((seq_len(points) - 0.5) / points)
  res <- with_seed_kept({
    set.seed(3)
    order <- replicate(length(grouped), sample.int(points))
    vapply(seq_len(points), function(k) {
      u <- numeric(d)
      u[grouped] <- z[order[k, ]] * sd
      ((full_gradient(model, pm$sampler + u) + hvp(u)) [grouped] * sd)^2
    }, numeric(length(grouped)))
  })
  residual <- sqrt(rowMeans(matrix(res, length(grouped))))
  far <- which(residual > auto_coord_residual)
  if (!length(far)) return(NULL)
  far <- far[order(residual[far], decreasing = TRUE)]
  far <- far[cumsum(lengths(rows[far])) <= auto_coord_rows * model$n]
  if (!length(far)) return(NULL)
  far <- sort(far)
  B <- grouped[far]
  list(index = B, settings = list(index = as.integer(B - 1L),
                                  start = c(0, cumsum(lengths(rows[far]))),
                                  rows = as.double(unlist(rows[far])),
                                  # twice the conditional Laplace sd
                                  width = 2 * sd[far]))
}

# The coordinates hessian_diagonal() takes exactly: a regression's
# parameters that are no coefficient (a dispersion, a variance), and its
# coefficients whose columns are non-zero on more than `share` of the rows
# (at most `most` of them, the densest).
coupled_coordinates <- function(model, most = 50, share = 0.05) {
  d <- model$d
  p <- if (is.null(model$p)) d else model$p
  extra <- if (p < d) (p + 1):d else integer(0)
  counts <- column_row_counts(model)   # R/pars.R
  if (is.null(counts)) return(extra)
  o <- order(counts, decreasing = TRUE)
  c(utils::head(o[counts[o] > share * model$n], most), extra)
}

# The Lanczos iteration for the symmetric operator `op` on R^d (fully
# reorthogonalised: `steps` vectors of length d) from a random start: the
# Ritz values, vectors and residual norms, whose extreme pairs converge
# first.
lanczos <- function(op, d, steps = auto_wide_power, support = seq_len(d)) {
  steps <- min(steps, length(support))
  Q <- matrix(0, d, steps)
  alpha <- beta <- numeric(steps)
  v <- with_seed_kept({
    set.seed(2)
    stats::rnorm(d)
  })
  # an operator zero off `support` keeps the iteration there, from a start there
  v[-support] <- 0
  Q[, 1] <- v / sqrt(sum(v^2))
  k <- steps
  for (j in seq_len(steps)) {
    u <- op(Q[, j])
    # rounding leaves ~1e-17 off the support (a correction's basis), which
    # the iteration would amplify into a spurious zero curvature
    u[-support] <- 0
    alpha[j] <- sum(u * Q[, j])
    # against every column of Q, the ones not yet filled zero: a copy of
    # its first j columns at each step was 3 MB at d = 10,000 (40 steps, two
    # passes, three runs: garbage enough to raise the call's peak memory)
    for (pass in 1:2) u <- u - drop(Q %*% crossprod(Q, u))
    beta[j] <- sqrt(sum(u^2))
    if (j == steps || beta[j] < 1e-10 * abs(alpha[j])) {
      k <- j
      break
    }
    Q[, j + 1] <- u / beta[j]
  }
  T <- diag(alpha[seq_len(k)], k)
  if (k > 1) T[cbind(1:(k - 1), 2:k)] <- T[cbind(2:k, 1:(k - 1))] <- beta[seq_len(k - 1)]
  e <- eigen(T, symmetric = TRUE)
  list(values = e$values, vectors = Q[, seq_len(k), drop = FALSE] %*% e$vectors,
       residuals = abs(beta[k] * e$vectors[k, ]))
}

# The preconditioner's factor L = S (I + V C V^T) (src/update_precond.c) and
# its transpose, as functions; V NULL for the diagonal S alone.
precondition_ops <- function(s, V = NULL, c = NULL) {
  if (is.null(V)) return(list(L = function(x) s * x, Lt = function(y) s * y))
  lr <- function(x) x + drop(V %*% (c * crossprod(V, x)))
  list(L = function(x) s * lr(x), Lt = function(y) lr(s * y))
}

# The directions where the diagonal preconditioner fits worst, from the
# Lanczos iteration on S H S: converged Ritz pairs (residual below a
# twentieth of the value) whose curvature is beyond auto_wide_band of 1, at
# most auto_wide_rank of them. Each is brought to curvature 1 by c = 1 /
# sqrt(lambda) - 1. On a 10^5 x 2,000 text design the diagonal alone left
# curvatures from 0.041 to 21 (the intercept and the common words move
# together); see bench/sparse.md for what the correction leaves.
low_rank_correction <- function(ritz) {
  ok <- ritz$residuals <= 0.05 * abs(ritz$values) & ritz$values > 0 &
    (ritz$values > auto_wide_band | ritz$values < 1 / auto_wide_band)
  idx <- which(ok)
  idx <- utils::head(idx[order(abs(log(ritz$values[idx])), decreasing = TRUE)], auto_wide_rank)
  if (!length(idx)) return(NULL)
  V <- qr.Q(qr(ritz$vectors[, idx, drop = FALSE]))
  list(basis = V, coef = 1 / sqrt(ritz$values[idx]) - 1)
}

# The preconditioner S (I + V1 C1 V1') (I + V2 C2 V2'), a first correction
# `fix` (NULL: none) followed by `more` found on the posterior it left, as
# one correction of the same form: P = S M1 M2^2 M1 S = S (I + Q E Q') S on
# Q, an orthonormal basis of [V1 V2] that M1 and M2 map to itself, so
# L = S (I + Q W c W' Q') with E = W diag(e) W' and (1 + c)^2 = 1 + e (the
# same P; L differs from the product by a rotation, which the steps' law
# does not see).
merge_corrections <- function(fix, more) {
  if (is.null(fix)) return(more)
  Q <- qr.Q(qr(cbind(fix$basis, more$basis)))
  on_q <- function(part) {
    a <- crossprod(Q, part$basis)
    diag(ncol(Q)) + a %*% (part$coef * t(a))
  }
  M1 <- on_q(fix)
  M2 <- on_q(more)
  K <- M1 %*% M2 %*% M2 %*% M1
  e <- eigen((K + t(K)) / 2, symmetric = TRUE)
  keep <- abs(e$values - 1) > 1e-8
  list(basis = Q %*% e$vectors[, keep, drop = FALSE], coef = sqrt(e$values[keep]) - 1)
}

# The smallest and largest curvatures of the preconditioned posterior, L^T H L.
preconditioned_curvatures <- function(hvp, ops, d, support = seq_len(d)) {
  ritz <- lanczos(function(v) ops$Lt(hvp(ops$L(v))), d, support = support)
  top <- max(ritz$values)
  c(max(min(ritz$values), 1e-3 * top), top)
}

# The sampling threshold eta / 2 * lambda_max(L' Cov(g_hat) L) of the
# estimator at the batch, at the mode and at two points drawn around it.
wide_alpha <- function(model, pm, ops, batch_size, cv, eta, points = 3, times = 200) {
  max(vapply(seq_len(points), function(k) {
    w <- pm$sampler + if (k > 1) ops$L(stats::rnorm(model$d)) else 0
    at <- to_user_scale(model, matrix(w, 1))[1, ]
    wide_threshold(model, at, batch_size, if (cv) pm$mode else FALSE, eta, ops$Lt, times)
  }, numeric(1)))
}

# numbers in one block of gradient draws (2 MB): blocks drawn again cost
# 0.69 s of CPU a point at d = 10,000 (36 blocks of 25 draws), against
# 0.24 s for all 200 at once (3-6 points: 1.4-2.7 s more in a call of
# 50-70 s at 10^5 rows); at 4 MB 0.34 s, but
# the call's peak was +51 MB above the data against +36 (bench/sparse.md)
auto_wide_block <- 2.5e5

# The sampling threshold of `times` minibatch gradients at `at` (R/warnings.R's
# estimator_threshold(): the largest eigenvalue of the times x times Gram
# matrix K = Z Z' / (times - 1) of the centred gradients through L', Z = J G L
# with J = I - 1 1' / times), without holding the times x d draws at once: at
# d = 10,000 they took 16 MB, and with the copies the row-by-row product made,
# 31 MB of the default call's peak (10^5 rows, bench/sparse.md). The draws come
# in blocks of at most auto_wide_block numbers, each from its own seed, so a
# block can be drawn again: K's block (p, q) is Z_p Z_q' with blocks p and q
# held, the blocks after p drawn again for each p (B (B + 1) / 2 blocks drawn
# for B blocks, 36 for 8 at d = 10,000). Centring needs no means:
# J (G L L' G') J. It draws 8 uniforms from R's stream, as one
# stochastic_gradients() call does.
wide_threshold <- function(model, at, batch_size, cv, eta, Lt, times = 200,
                           block_size = auto_wide_block) {
  rows <- max(1L, min(times, floor(block_size / model$d)))
  ends <- unique(c(seq(rows, times, by = rows), times))
  starts <- c(1L, utils::head(ends, -1) + 1L)
  seeds <- floor(stats::runif(8) * .Machine$integer.max)
  # draws with a non-finite value make the noise unbounded: Inf
  block <- function(p) with_seed_kept({
    set.seed(seeds[1] %% 1e9 + p)
    Z <- stochastic_gradients(model, at, batch_size = batch_size,
                              times = ends[p] - starts[p] + 1, control_variates = cv)
    for (i in seq_len(nrow(Z))) Z[i, ] <- Lt(Z[i, ])
    if (all(is.finite(Z))) Z
  })
  K <- matrix(0, times, times)
  for (p in seq_along(ends)) {
    Zp <- block(p)
    if (is.null(Zp)) return(Inf)
    ip <- starts[p]:ends[p]
    K[ip, ip] <- tcrossprod(Zp)
    for (q in seq_along(ends)[-seq_len(p)]) {
      Zq <- block(q)
      if (is.null(Zq)) return(Inf)
      iq <- starts[q]:ends[q]
      K[ip, iq] <- tcrossprod(Zp, Zq)
      K[iq, ip] <- t(K[ip, iq])
    }
  }
  K <- K - rowMeans(K)
  K <- t(t(K) - colMeans(K)) / (times - 1)
  if (anyNA(K)) return(NA_real_)
  if (any(!is.finite(K))) return(Inf)
  eta / 2 * max(eigen((K + t(K)) / 2, symmetric = TRUE, only.values = TRUE)$values)
}
