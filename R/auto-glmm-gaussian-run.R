# The collapsed sampler's chains (R/auto-glmm-gaussian.R has the maths) and
# the sgld_fit they make, so that every method reads them as any run's.
#
# All chains first run their warm-up from starts drawn from the proposal
# fitted at the mode; the proposal is then refitted to the pooled warm-up
# draws (an independence sampler started from a draw of a proposal close to
# the target needs no burn-in; mean and covariance: the marginal of theta can be
# skewed where the data say little, and the mode's curvature misses that),
# and each chain in turn runs its kept iterations from where its warm-up
# ended. An interrupt (Ctrl-C) in the run keeps what was drawn: finished
# chains, the current chain's draws so far ("interrupted"), later chains
# "not run"; in the warm-up, which keeps nothing, it ends the call.
glmm_collapsed_warmup <- function(sys, post, prop, chains, warm, progress) {
  ti <- glmm_theta_index(sys$model)
  bar <- glmm_progress(progress, chains * warm, "warm-up")
  states <- vector("list", chains)
  pooled <- list()
  moved <- 0
  for (c in seq_len(chains)) {
    repeat {                                     # a start inside the model's domain
      th <- glmm_t_draw(prop)
      s <- list(theta = th, cond = post(th), lq = glmm_t_logdens(prop, th))
      if (is.finite(s$cond$value)) break
    }
    W <- matrix(NA_real_, warm, length(ti))
    for (i in seq_len(warm)) {
      s <- glmm_imh_step(s, prop, post)
      moved <- moved + s$moved
      W[i, ] <- s$theta
      bar$tick()
    }
    states[[c]] <- s
    pooled[[c]] <- W
  }
  bar$close()
  pooled <- do.call(rbind, pooled)
  if (nrow(pooled) > 4 * length(ti)) {
    # shrunk towards the mode's covariance by k / (draws + k)
    a <- nrow(pooled) / (nrow(pooled) + length(ti))
    S <- a * stats::cov(pooled) + (1 - a) * prop$covariance
    prop <- glmm_t_proposal(colMeans(pooled), S)
  }
  list(states = states, proposal = prop, acceptance = moved / (chains * warm))
}

# One independence Metropolis-Hastings step from state s (theta, its
# conditional, the proposal's log density there).
glmm_imh_step <- function(s, prop, post) {
  th <- glmm_t_draw(prop)
  cand <- post(th)
  lq <- glmm_t_logdens(prop, th)
  if (log(stats::runif(1)) < cand$value - s$cond$value + s$lq - lq)
    return(list(theta = th, cond = cand, lq = lq, moved = TRUE))
  s$moved <- FALSE
  s
}

# A progress bar on stderr (or nothing): tick() and close().
glmm_progress <- function(show, total, what) {
  if (!show || total < 1) return(list(tick = function() NULL, close = function() NULL))
  message("collapsed sampler: ", what)
  bar <- utils::txtProgressBar(0, total, style = 3, file = stderr())
  n <- 0
  list(tick = function() {
         n <<- n + 1
         if (n %% 10 == 0 || n == total) utils::setTxtProgressBar(bar, n)
       },
       close = function() close(bar))
}

glmm_collapsed_chains <- function(sys, post, warmed, iter, keep, progress, centre = NULL) {
  model <- sys$model
  d <- model$d
  ti <- glmm_theta_index(model)
  prop <- warmed$proposal
  chains <- length(warmed$states)
  n_keep <- if (is.null(keep)) d else length(keep)
  st <- new.env(parent = emptyenv())
  st$draws <- lapply(seq_len(chains), function(c) matrix(NA_real_, iter, n_keep))
  st$theta <- lapply(seq_len(chains), function(c) matrix(NA_real_, iter, length(ti)))
  st$states <- warmed$states
  st$kept <- st$accepted <- numeric(chains)
  st$status <- rep(4L, chains)                   # the engine's code for "not run"
  st$last <- vapply(warmed$states, function(s) c(glmm_effects_draw(sys, s$cond), s$theta),
                    numeric(d))
  st$sum <- st$sumsq <- matrix(0, d, chains)
  # running sums about the first chain's start, against cancellation
  if (is.null(centre)) centre <- st$last[, 1]
  bar <- glmm_progress(progress, chains * iter, "sampling")
  t0 <- proc.time()[["elapsed"]]
  interrupted <- FALSE
  tryCatch({
    for (c in seq_len(chains)) {
      s <- warmed$states[[c]]
      s$lq <- glmm_t_logdens(prop, s$theta)
      st$status[c] <- 3L                         # "interrupted" until it ends
      for (i in seq_len(iter)) {
        s <- glmm_imh_step(s, prop, post)
        w <- c(glmm_effects_draw(sys, s$cond), s$theta)
        st$theta[[c]][i, ] <- s$theta
        st$draws[[c]][i, ] <- if (is.null(keep)) w else to_user_scale(model, matrix(w, 1))[1, keep]
        st$sum[, c] <- st$sum[, c] + (w - centre)
        st$sumsq[, c] <- st$sumsq[, c] + (w - centre)^2
        st$kept[c] <- i
        st$accepted[c] <- st$accepted[c] + s$moved
        st$last[, c] <- w
        st$states[[c]] <- s
        bar$tick()
      }
      st$status[c] <- 0L                         # "done"
    }
  }, interrupt = function(e) interrupted <<- TRUE)
  bar$close()
  list(draws = st$draws, theta = st$theta, kept = st$kept, accepted = st$accepted,
       status = st$status, last = st$last, states = st$states, proposal = prop,
       centre = centre, sum = st$sum, sumsq = st$sumsq,
       time = proc.time()[["elapsed"]] - t0, interrupted = interrupted)
}

# The smallest effective sample size of theta's draws, all chains (coda's
# spectral estimate per chain, summed).
glmm_theta_ess <- function(run) {
  ok <- run$kept > 1
  if (!any(ok)) return(0)
  per <- lapply(which(ok), function(c)
    coda::effectiveSize(run$theta[[c]][seq_len(run$kept[c]), , drop = FALSE]))
  min(Reduce(`+`, per))
}

# A second run appended to the first, chain by chain (the draws of chain c
# continue its first run's).
glmm_append_runs <- function(a, b) {
  cut <- function(x, k) x[seq_len(k), , drop = FALSE]
  out <- b
  for (c in seq_along(a$kept)) {
    out$draws[[c]] <- rbind(cut(a$draws[[c]], a$kept[c]), cut(b$draws[[c]], b$kept[c]))
    out$theta[[c]] <- rbind(cut(a$theta[[c]], a$kept[c]), cut(b$theta[[c]], b$kept[c]))
  }
  out$kept <- a$kept + b$kept
  out$accepted <- a$accepted + b$accepted
  # a chain not run in the second run is as the first left it
  out$status <- ifelse(b$status == 4L, a$status, b$status)
  out$sum <- a$sum + b$sum
  out$sumsq <- a$sumsq + b$sumsq
  out$time <- a$time + b$time
  out$interrupted <- a$interrupted || b$interrupted
  out
}

# The engine's result as run_sampler() would receive it, turned into an
# sgld_fit by the same new_sgld_fit(); the chains' state is not kept (the
# collapsed sampler is no rule of the engine: `init = fit` cannot continue it).
glmm_collapsed_fit <- function(model, settings, run, call, start) {
  chains <- length(run$kept)
  cap <- max(run$kept)
  settings$capacity <- cap
  settings$iter <- cap
  n <- pmax(run$kept, 1)[col(run$sum)]
  run$mean <- run$centre + run$sum / n
  run$m2 <- run$sumsq - run$sum^2 / n
  run$draws <- lapply(seq_along(run$draws), function(c) {
    x <- run$draws[[c]]
    if (nrow(x) < cap) rbind(x, matrix(NA_real_, cap - nrow(x), ncol(x)))
    else x[seq_len(cap), , drop = FALSE]
  })
  res <- list(draws = run$draws, kept = run$kept, status = as.integer(run$status),
              stop_iter = run$kept, last = run$last,
              eta = matrix(1, cap, chains), iteration = matrix(as.double(seq_len(cap)), cap, chains),
              collect_from = rep(1, chains), clip_count = numeric(chains),
              accepted = run$accepted, moment_count = run$kept,
              moment_mean = run$mean, moment_wmean = run$mean, moment_m2 = run$m2,
              moment_weight = run$kept, expected_seconds = NA_real_,
              sampling_seconds = run$time, state = matrix(0, 0, chains), rng = NULL)
  fit <- new_sgld_fit(list2env(list(res = res)), model = model, settings = settings,
                      lr = NA_real_, method = "sgld", call = call,
                      time = proc.time()[["elapsed"]] - start, rule = plain_rule("collapsed"))
  fit$state <- NULL
  fit$rule <- "collapsed (exact Gaussian effects, independence Metropolis-Hastings variances)"
  fit
}
