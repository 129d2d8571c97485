# An exact reference sampler for y ~ covariates + g, g a factor of many
# levels (issue 49), under the priors of sgld's model for that formula
# (read off the model object: rstanarm's autoscaled normals on the
# coefficients, the intercept's normal on centred predictors, for
# gaussian the exponential prior on sigma). Families: binomial (logit,
# 0/1 response), poisson (log), gaussian (identity). NUTS mixes slowly along
# the levels whose rows are all events or none (half-flat out to their
# priors' reach; bench/sparse.md), so this is a Gibbs sampler instead:
#
# Parameters: a_j = intercept + b_j, the level means at covariates 0 (a_1 the
# intercept, level 1 the baseline of treatment contrasts), the covariates'
# slopes gamma and, for gaussian, log sigma. The map (intercept, b) -> a is
# linear with Jacobian 1, so the prior carries over as it is. Given a_1 and
# gamma, the likelihood of level j's rows depends on a_j alone and its
# prior N(a_j - a_1; loc_j, s_j^2) too: the level means are conditionally
# independent but for the centred intercept's prior, which ties them through
# one weighted sum u'w with weights the levels' shares of rows (about 1 / K).
#
# A sweep:
#  1. every level mean j >= 2 by its own slice sampler (stepping out from a
#     random grid of width w_j, then shrinkage; Neal 2003), all levels at
#     once, each on its own slice, on the target without the centred term.
#     Each 1-D slice sampler is reversible for its conditional, so their
#     product is reversible for the product of the conditionals, and used as
#     a Metropolis-Hastings proposal for the whole posterior its acceptance
#     ratio is the centred term's ratio alone (accepted about always: the
#     sum moves by about sd / sqrt(K));
#  2. a_1, each slope and log sigma in turn by scalar slice samplers on their
#     full conditionals (centred term included).
# Widths w are tuned to 2.5 posterior sds in the warm-up only, then fixed.
# Every step leaves the posterior invariant; nothing is approximated.
#
# Functions: levels_target(model, data, factor, covariates) and
# gibbs_levels(target, iter, warmup, chains, seed). Used by
# data-raw/wide-levels-reference.R and bench/wide-levels-accuracy.R.

# The posterior of `model` (an sgld model of formula y ~ covariates + factor
# on `data`) in the level-mean parameterisation, rows sorted by level.
levels_target <- function(model, data, factor = "g", covariates = "x") {
  family <- switch(model$type, logistic = "binomial", poisson = "poisson",
                   linear = "gaussian", stop("unsupported model type ", model$type))
  g <- data[[factor]]
  stopifnot(is.factor(g), !anyNA(g))
  K <- nlevels(g)
  level_cols <- paste0(factor, levels(g))
  names_w <- model$names[seq_len(model$p)]
  want <- c("(Intercept)", covariates, level_cols[-1])
  stopifnot(setequal(names_w, want))
  pos <- match(want, names_w)          # model column of each parameter below
  ord <- order(as.integer(g))
  lev <- as.integer(g)[ord]
  Z <- as.matrix(data[ord, covariates, drop = FALSE])
  y <- data[[all.vars(model$formula)[1]]][ord]
  if (family == "binomial") y <- as.numeric(y)
  len <- tabulate(lev, nbins = K)
  P <- length(covariates)
  loc <- model$prior_loc[pos]
  scale <- model$prior_scale[pos]
  stopifnot(!is.finite(scale[1]), all(is.finite(scale[-1])))
  list(family = family, K = K, P = P, n = length(y), y = y, lev = lev, Z = Z,
       start = c(1L, cumsum(len)[-K] + 1L), len = len,
       gamma_loc = loc[1 + seq_len(P)], gamma_scale = scale[1 + seq_len(P)],
       b_loc = c(NA, loc[-(1:(P + 1))]), b_scale = c(NA, scale[-(1:(P + 1))]),
       centre = model$prior_centre[pos], centre_loc = model$prior_centre_loc,
       centre_scale = model$prior_centre_scale,
       sigma_rate = if (family == "gaussian") model$prior_sigma_rate,
       names = c(want, if (family == "gaussian") "sigma2"), pos = pos)
}

# log p(y_i | eta_i) up to constants; sigma for gaussian.
row_loglik <- function(t, y, eta, sigma = 1) {
  switch(t$family,
         binomial = y * eta - (pmax(eta, 0) + log1p(exp(-abs(eta)))),
         poisson = y * eta - exp(eta),
         gaussian = -0.5 * ((y - eta) / sigma)^2)
}

# The state's coefficients on the model's scale: intercept, slopes, b_j.
state_coefficients <- function(s) c(s$a[1], s$gamma, s$a[-1] - s$a[1])

# The centred intercept's log prior at the state.
centred_logprior <- function(t, s) {
  stats::dnorm(sum(t$centre * state_coefficients(s)), t$centre_loc, t$centre_scale, log = TRUE)
}

# The whole log posterior at the state (constants dropped), on the scale of
# (a, gamma, log sigma): for checking against sgld's log_posterior().
levels_logpost <- function(t, s) {
  sigma <- exp(s$log_sigma)
  eta <- s$a[t$lev] + drop(t$Z %*% s$gamma)
  b <- s$a[-1] - s$a[1]
  lp <- sum(row_loglik(t, t$y, eta, sigma)) +
    sum(stats::dnorm(s$gamma, t$gamma_loc, t$gamma_scale, log = TRUE)) +
    sum(stats::dnorm(b, t$b_loc[-1], t$b_scale[-1], log = TRUE)) + centred_logprior(t, s)
  if (t$family == "gaussian")
    lp <- lp - t$n * s$log_sigma + stats::dexp(sigma, t$sigma_rate, log = TRUE) + s$log_sigma
  lp
}

# log f_j(v_j) for levels J at values v: the rows of each level plus its own
# prior, given a_1, gamma, sigma (offsets: the rows' Z gamma).
level_logf <- function(t, s, offset, v, J) {
  rows <- sequence(t$len[J], t$start[J])
  ll <- row_loglik(t, t$y[rows], rep(v, t$len[J]) + offset[rows], exp(s$log_sigma))
  # per-level sums by rowsum(), not differences of one cumulative sum: a
  # level stepped out to exp(eta) ~ 1e300 (poisson) would swamp the rest
  sums <- numeric(length(J))
  some <- t$len[J] > 0
  if (any(some)) sums[some] <- rowsum(ll, rep.int(seq_along(J), t$len[J]), reorder = TRUE)[, 1]
  sums + stats::dnorm(v - s$a[1], t$b_loc[J], t$b_scale[J], log = TRUE)
}

# One slice sampling step for each coordinate x0[i] of independent targets
# logf(values, indices) at once: stepping out from a random grid of widths w
# (no limit on the steps), then shrinkage, each coordinate its own slice.
slice_vector <- function(x0, w, logf) {
  k <- length(x0)
  idx <- seq_len(k)
  logv <- logf(x0, idx) - stats::rexp(k)
  L <- x0 - w * stats::runif(k)
  R <- L + w
  i <- idx
  while (length(i)) {
    out <- logf(L[i], i) > logv[i]
    L[i[out]] <- L[i[out]] - w[i[out]]
    i <- i[out]
  }
  i <- idx
  while (length(i)) {
    out <- logf(R[i], i) > logv[i]
    R[i[out]] <- R[i[out]] + w[i[out]]
    i <- i[out]
  }
  x1 <- x0
  i <- idx
  while (length(i)) {
    prop <- L[i] + stats::runif(length(i)) * (R[i] - L[i])
    ok <- logf(prop, i) > logv[i]
    x1[i[ok]] <- prop[ok]
    bad <- i[!ok]
    below <- prop[!ok] < x0[bad]
    L[bad[below]] <- prop[!ok][below]
    R[bad[!below]] <- prop[!ok][!below]
    i <- bad
  }
  x1
}

# One scalar slice sampling step (stepping out, shrinkage).
slice_scalar <- function(x0, w, logf) slice_vector(x0, w, function(v, i) vapply(v, logf, 0))

# One sweep of the Gibbs sampler from state s (a, gamma, log_sigma).
gibbs_sweep <- function(t, s, w) {
  K <- t$K
  offset <- drop(t$Z %*% s$gamma)
  J <- 2:K
  old <- s
  # 1. the level means 2..K, each on its own slice; the centred term by MH
  prop <- s
  prop$a[J] <- slice_vector(s$a[J], w$a[J], function(v, i) level_logf(t, s, offset, v, J[i]))
  if (log(stats::runif(1)) < centred_logprior(t, prop) - centred_logprior(t, old)) s <- prop
  # 2. a_1, each slope, log sigma on their full conditionals
  base_rows <- sequence(t$len[1], t$start[1])
  s$a[1] <- slice_scalar(s$a[1], w$a[1], function(a1) {
    s1 <- s
    s1$a[1] <- a1
    sum(row_loglik(t, t$y[base_rows], a1 + offset[base_rows], exp(s$log_sigma))) +
      sum(stats::dnorm(s$a[J] - a1, t$b_loc[J], t$b_scale[J], log = TRUE)) +
      centred_logprior(t, s1)
  })
  for (k in seq_len(t$P)) {
    rest <- s$a[t$lev] + drop(t$Z[, -k, drop = FALSE] %*% s$gamma[-k])
    s$gamma[k] <- slice_scalar(s$gamma[k], w$gamma[k], function(gk) {
      s1 <- s
      s1$gamma[k] <- gk
      sum(row_loglik(t, t$y, rest + t$Z[, k] * gk, exp(s$log_sigma))) +
        stats::dnorm(gk, t$gamma_loc[k], t$gamma_scale[k], log = TRUE) + centred_logprior(t, s1)
    })
  }
  if (t$family == "gaussian") {
    rss <- sum((t$y - s$a[t$lev] - drop(t$Z %*% s$gamma))^2)
    s$log_sigma <- slice_scalar(s$log_sigma, w$log_sigma, function(ls)
      -0.5 * rss * exp(-2 * ls) - t$n * ls + stats::dexp(exp(ls), t$sigma_rate, log = TRUE) + ls)
  }
  s
}

# The reported coefficients (the model's names; sigma2 for gaussian).
state_draw <- function(t, s) c(state_coefficients(s), if (t$family == "gaussian") exp(2 * s$log_sigma))

# `chains` chains of `iter` sweeps after `warmup` (widths tuned to 2.5 sds of
# the warm-up's second half, at its midpoint and end), from over-dispersed
# starts: level means at their empirical link values, jittered. Returns an
# array iter x chains x parameters.
gibbs_levels <- function(t, iter, warmup = 500, chains = 4, seed = 1) {
  set.seed(seed)
  d <- length(t$names)
  out <- array(NA_real_, c(iter, chains, d), dimnames = list(NULL, NULL, t$names))
  for (ch in seq_len(chains)) {
    ybar <- vapply(seq_len(t$K), function(j) {
      yj <- t$y[sequence(t$len[j], t$start[j])]
      m <- (sum(yj) + 0.5) / (length(yj) + 1)
      switch(t$family, binomial = stats::qlogis(m), poisson = log(m), gaussian = m)
    }, 0)
    s <- list(a = ybar + stats::rnorm(t$K, 0, 0.5), gamma = stats::rnorm(t$P, 0, 0.2),
              log_sigma = if (t$family == "gaussian") log(stats::sd(t$y)) + stats::rnorm(1, 0, 0.2)
                          else 0)
    w <- list(a = rep(1, t$K), gamma = rep(0.2, t$P), log_sigma = 0.2)
    keep <- matrix(NA_real_, warmup, t$K + t$P + 1)
    for (it in seq_len(warmup + iter)) {
      s <- gibbs_sweep(t, s, w)
      if (it <= warmup) {
        keep[it, ] <- c(s$a, s$gamma, s$log_sigma)
        if (it %in% c(floor(warmup / 4), floor(warmup / 2), warmup)) {
          sdv <- apply(keep[ceiling(it / 2):it, , drop = FALSE], 2, stats::sd)
          sdv <- pmax(sdv, 1e-3)
          w <- list(a = 2.5 * sdv[seq_len(t$K)], gamma = 2.5 * sdv[t$K + seq_len(t$P)],
                    log_sigma = 2.5 * sdv[t$K + t$P + 1])
        }
      } else out[it - warmup, ch, ] <- state_draw(t, s)
    }
  }
  out
}

# Means, sds, bulk and tail ESS, R-hat (posterior package) of the draws.
levels_summary <- function(draws) {
  d <- dim(draws)[3]
  stat <- function(f) vapply(seq_len(d), function(k) f(draws[, , k]), 0)
  list(mean = setNames(apply(draws, 3, mean), dimnames(draws)[[3]]),
       sd = setNames(apply(draws, 3, stats::sd), dimnames(draws)[[3]]),
       ess_bulk = stat(posterior::ess_bulk), ess_tail = stat(posterior::ess_tail),
       rhat = stat(posterior::rhat))
}
