# bbb()'s run: parts of a fixed number of iterations, each continuing the
# last exactly (init = fit: the iterates are those of one run), so that
# between them R can read the estimator's running sums of theta (its state,
# src/gradient_vi.c), average theta over any whole parts, judge convergence
# by batch means and estimate the full-data ELBO for a trace.

# The layout of a chain's state in fit$state$update: the optimiser's state,
# then the estimator's: its scale parameters (n_scale), the sum of theta
# after every step (p), the count of steps, the trace's two sums.
vi_layout <- function(d, family) {
  n_scale <- if (family == "meanfield") d else d * (d + 1) / 2
  p <- d + n_scale
  list(n_scale = n_scale, p = p, grad_state = n_scale + p + 3)
}

# theta (mu, then the scale parameters) and the running sums of each chain
# of an engine fit: p x chains matrices, and the counts
vi_theta <- function(fit, layout) {
  st <- as.matrix(fit$state$update)
  at <- nrow(st) - layout$grad_state
  scale <- st[at + seq_len(layout$n_scale), , drop = FALSE]
  list(theta = rbind(t(unname(fit$state$w)), scale),
       sum = st[at + layout$n_scale + seq_len(layout$p), , drop = FALSE],
       count = st[at + layout$n_scale + layout$p + 1, ])
}

# The run in parts; returns the engine fit of the whole run (its trajectory
# from every part), the running sums at the parts' ends, the ELBO trace and,
# for an automatic run, the convergence check. The engine is called directly
# with the settings checked once (a part costs 0.14 ms beyond its
# iterations, run_sampler() 3 ms): each part continues the last exactly.
vi_run <- function(model, plan, init, chains, replace, clip, monitor, threads, progress,
                   elbo_draws, call) {
  d <- model$d
  layout <- vi_layout(d, plan$family)
  total <- if (plan$auto_iter) vi_max_iter else plan$iter
  schedule <- new_lr("resolved", schedule = resolve_lr(plan$lr, total))
  rule <- plan$rule
  rule$label <- plan$label
  continuing <- inherits(init, "sgld_fit")
  settings <- run_settings(model, lr = schedule, batch_size = plan$batch_size,
                           iter = plan$part, burnin = 0, thin = plan$thin, temperature = 0,
                           chains = chains, init = if (continuing) init else plan$init,
                           replace = replace, clip = clip, rule = rule, threads = threads,
                           monitor = monitor, control_variates = plan$control_variates,
                           progress = progress, gradient = plan$gradient, pars = TRUE)
  first <- if (continuing) vi_theta(init, layout) else
    list(sum = matrix(0, layout$p, chains), count = rep(0, chains))
  sums <- list(first$sum)
  counts <- list(first$count)
  parts <- list()
  trace <- NULL
  check <- NULL
  part <- plan$part
  done <- 0
  start <- proc.time()[["elapsed"]]
  repeat {
    len <- min(part, total - done)
    settings$iter <- len
    settings$capacity <- len %/% settings$thin
    res <- .Call(C_sgld_run, model, settings)
    failure <- report_callbacks(model)
    rows_lost <- .Call(C_sgld_rows_lost_since)
    done <- done + len
    status <- chain_status(res$status)
    parts[[length(parts) + 1]] <- list(res = res, settings = settings)
    st <- res$state
    at <- nrow(st) - layout$grad_state
    sums[[length(sums) + 1]] <- st[at + layout$n_scale + seq_len(layout$p), , drop = FALSE]
    counts[[length(counts) + 1]] <- st[at + layout$n_scale + layout$p + 1, ]
    ok <- all(status == "done") && !rows_lost
    theta <- rbind(res$last, st[at + seq_len(layout$n_scale), , drop = FALSE])
    if (!is.null(plan$elbo_every) && elbo_draws > 0) {
      q <- vi_q_of(theta, plan, d)
      e <- vi_elbo(model, q, elbo_draws)
      trace <- rbind(trace, data.frame(iteration = settings$t_offset + len, chain = seq_len(chains),
                                       elbo = e$elbo, se = e$se))
    }
    if (!ok || done >= total) break
    K <- length(sums) - 1
    if (plan$auto_iter && plan$exact) {
      # a deterministic ascent: converged when a part moves q by less than
      # vi_tol_exact of its sds (means) and in its log sds
      if (K > 1) {
        check <- vi_settled(previous, theta, plan, d, K)
        if (all(check$converged)) break
      }
      previous <- theta
    } else if (plan$auto_iter && K >= vi_min_parts && K %% 8 == 0) {
      check <- vi_converged(sums, counts, plan, d)
      if (all(check$converged)) break
      # at 64 parts, pairs of parts become one (the sums at every other
      # boundary), and the parts to come are twice as long
      if (K == 4 * vi_min_parts) {
        keep <- seq(1, K + 1, by = 2)
        sums <- sums[keep]
        counts <- counts[keep]
        part <- 2 * part
      }
    }
    # the next part continues this one
    settings$init <- as.double(res$last)
    settings$t_offset <- settings$t_offset + len
    settings$state_init <- as.double(res$state)
    settings$rng_init <- res$rng
  }
  # the check of an automatic run that reached its length unconverged
  if (plan$auto_iter && !plan$exact && ok && !isTRUE(all(check$converged)) && length(sums) > 8)
    check <- vi_converged(sums, counts, plan, d)
  fit <- vi_engine_fit(parts, model, rule, call, proc.time()[["elapsed"]] - start)
  if (any(fit$status == "failed") && !is.null(failure)) stop(model_error(fit, failure))
  if (rows_lost) stop(rows_lost_error(fit, model))
  list(fit = fit, sums = sums, counts = counts, trace = trace, check = check,
       layout = layout, iterations = done)
}

# The sgld_fit of the last part, with the trajectory, step sizes, trace and
# monitor of every part.
vi_engine_fit <- function(parts, model, rule, call, time) {
  last <- parts[[length(parts)]]
  fit <- new_sgld_fit(list2env(list(res = last$res)), model = model, settings = last$settings,
                      lr = last$settings$lr, method = "vi", call = call, time = time, rule = rule)
  first <- parts[[1]]$settings
  chains <- first$chains
  # every chain's kept iterates, part after part (a chain that stopped
  # early in a part kept fewer in it)
  traj <- lapply(seq_len(chains), function(c) do.call(rbind, lapply(parts, function(p)
    p$res$draws[[c]][seq_len(p$res$kept[c]), , drop = FALSE])))
  glue <- function(field) lapply(seq_len(chains), function(c) unlist(lapply(parts, function(p)
    p$res[[field]][seq_len(p$res$kept[c]), c])))
  K <- min(vapply(traj, nrow, 1L))
  ids <- fit$chain_ids
  names_kept <- model$names
  fit$draws <- coda::mcmc.list(lapply(ids, function(c) {
    u <- to_user_scale(model, traj[[c]][seq_len(K), , drop = FALSE])
    dimnames(u) <- list(NULL, names_kept)
    coda::mcmc(u, start = first$t_offset[1] + first$thin, thin = first$thin)
  }))
  pick <- function(field) vapply(glue(field)[ids], function(x) x[seq_len(K)], numeric(K))
  fit$lr <- matrix(pick("eta"), K)
  fit$iteration <- matrix(pick("iteration"), K)
  fit$rule_trace <- matrix(pick("trace"), K)
  fit$partial <- list()
  fit$monitor <- do.call(rbind, lapply(parts, function(p)
    monitor_frame(p$res, model, p$settings, has_test = !is.null(p$settings$test))))
  fit$settings$iter <- sum(vapply(parts, function(p) p$settings$iter, 0))
  fit$settings$init <- to_user_scale(model, matrix(first$init, chains, model$d, byrow = TRUE))
  fit
}

# the parts an automatic run leaves out of its average: the first quarter
vi_burn <- function(K) K %/% 4

# The average of theta over parts k0 + 1, ..., K (k0 < K): the difference of
# the running sums, exact whatever the parts' lengths
vi_average <- function(sums, counts, k0, K) {
  n <- counts[[K + 1]] - counts[[k0 + 1]]
  sweep(sums[[K + 1]] - sums[[k0 + 1]], 2, n, "/")
}

# The convergence check of an automatic run after K parts: theta averaged
# over the last three quarters of the parts (the first is the approach from
# the start); its Monte Carlo standard error from the parts' means (batch
# means) and the drift between the means of the two halves of those parts,
# each in q's units: the means in q's sds, the scale parameters (log sds,
# whitened factor entries) as they are.
vi_converged <- function(sums, counts, plan, d) {
  K <- length(sums) - 1
  k0 <- vi_burn(K)
  n <- K - k0
  half <- n %/% 2
  p <- nrow(sums[[1]])
  tol <- c(rep(vi_tol_mean, d), rep(vi_tol_scale, p - d))
  per_chain <- lapply(seq_len(ncol(sums[[1]])), function(c) {
    S <- vapply(sums[(k0 + 1):(K + 1)], function(s) s[, c], numeric(p))
    N <- vapply(counts[(k0 + 1):(K + 1)], function(x) x[c], 0)
    avg <- function(a, b) (S[, b + 1] - S[, a + 1]) / (N[b + 1] - N[a + 1])
    est <- avg(0, n)
    bm <- (S[, -1, drop = FALSE] - S[, -(n + 1), drop = FALSE]) /
      rep(diff(N), each = nrow(S))
    se <- sqrt(rowSums((bm - est)^2) / (n - 1) / n)
    drift <- avg(half, n) - avg(0, half)
    q <- vi_q_of(matrix(est), plan, d)
    unit <- c(sqrt(rowSums(q$L[[1]]^2)), rep(1, p - d))
    z_se <- se / unit / tol
    z_drift <- abs(drift) / unit / (4 * tol)
    m <- seq_len(d)
    list(se_mean = max(se[m] / unit[m]), se_scale = max(se[-m]),
         drift_mean = max(abs(drift[m]) / unit[m]), drift_scale = max(abs(drift[-m])),
         converged = all(is.finite(z_se)) && max(z_se) <= 1 && max(z_drift) <= 1)
  })
  field <- function(f) vapply(per_chain, function(x) x[[f]], if (f == "converged") TRUE else 0)
  list(converged = field("converged"), se_mean = field("se_mean"), se_scale = field("se_scale"),
       drift_mean = field("drift_mean"), drift_scale = field("drift_scale"), parts = K,
       averaged_from = k0)
}

# The check of a deterministic ascent between two parts' ends: the largest
# change of q's means in its sds and of its scale parameters.
vi_settled <- function(before, after, plan, d, K) {
  change <- abs(after - before)
  per_chain <- vapply(seq_len(ncol(after)), function(c) {
    q <- vi_q_of(after[, c, drop = FALSE], plan, d)
    m <- seq_len(d)
    c(max(change[m, c] / sqrt(rowSums(q$L[[1]]^2))), max(change[-m, c]))
  }, numeric(2))
  list(converged = is.finite(colSums(per_chain)) & apply(per_chain, 2, max) <= vi_tol_exact,
       change_mean = per_chain[1, ], change_scale = per_chain[2, ], parts = K)
}

# q of each column of theta (p x chains): means (rows) and factors L
vi_q_of <- function(theta, plan, d) {
  C <- plan$gradient$opts$factor
  chains <- ncol(theta)
  mu <- t(theta[seq_len(d), , drop = FALSE])
  L <- lapply(seq_len(chains), function(c)
    vi_factor(theta[-seq_len(d), c], d, plan$family, C))
  finite <- vapply(seq_len(chains), function(c) all(is.finite(L[[c]])) && all(is.finite(mu[c, ])),
                   TRUE)
  list(mu = mu, L = L, finite = finite)
}

