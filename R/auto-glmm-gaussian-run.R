# The collapsed sampler's chains (R/auto-glmm-gaussian.R has the maths) and
# the sgld_fit they make, so that every method reads them as any run's.
#
# All chains first run their warm-up from starts drawn from the proposal
# fitted at the mode; the proposal is then refitted to the pooled warm-up
# draws (an independence sampler started from a draw of a proposal close to
# the target needs no burn-in; mean and covariance: the marginal of theta can be
# skewed where the data say little, and the mode's curvature misses that),
# and once more to a second round's, drawn with that refitted proposal (a
# proposal too narrow along a coordinate draws too narrow a sample to fit
# the next: InstEval's dept:service log sd, posterior sd 0.19, had 0.13
# after one round; bench/glmm-gaussian.md); each chain then runs its kept
# iterations from where its warm-up ended.
#
# The chains are independent, so they run on forked processes (unix) as
# many at a time as resolve_threads() allows the run's threads (chains x
# workers <= the idle processors), else one after another; each chain has
# its own random-number stream (glmm_chain_streams()), so the draws are the
# same whatever the number of workers. The parent shows one progress bar,
# reading how far each worker is. An interrupt (Ctrl-C) in the run keeps what
# was drawn: finished chains, the current chains' draws so far
# ("interrupted"), later chains "not run"; in the warm-up, which keeps
# nothing, it ends the call. No worker outlives the call.

# Draws from the proposal until one lies inside the model's domain (a
# finite log posterior): a proposal fitted at the mode puts almost all its
# mass there, so many failures mean a model the sampler cannot start.
auto_glmm_gaussian_start_tries <- 100L

glmm_collapsed_start <- function(prop, post) {
  for (i in seq_len(auto_glmm_gaussian_start_tries)) {
    th <- glmm_t_draw(prop)
    s <- list(theta = th, cond = post(th), lq = glmm_t_logdens(prop, th))
    if (is.finite(s$cond$value)) return(s)
  }
  stop(errorCondition(sprintf(paste0(
    "the collapsed sampler found no start: %d draws of the variance parameters from the ",
    "proposal fitted at the mode all had a log posterior that is not finite (a singular ",
    "or ill-conditioned system). Check the group terms for levels without data, or ",
    "fit with mala(), which does not integrate the effects out."), auto_glmm_gaussian_start_tries),
    class = "sgld_collapsed_start_error", call = NULL))
}

glmm_collapsed_warmup <- function(sys, post, prop, chains, warm, progress, workers = 1L,
                                  streams = glmm_chain_streams(chains),
                                  rounds = auto_glmm_gaussian_warmup_rounds) {
  ti <- glmm_theta_index(sys$model)
  bar <- glmm_progress(progress, chains * warm * rounds, "warm-up")
  states <- NULL
  for (round in seq_len(rounds)) {
    one <- function(c, tick) {
      count <- 0
      counted <- function(th) {
        count <<- count + 1
        post(th)
      }
      if (is.null(states)) s <- glmm_collapsed_start(prop, counted)
      else {
        s <- states[[c]]
        s$lq <- glmm_t_logdens(prop, s$theta)
      }
      W <- matrix(NA_real_, warm, length(ti))
      moved <- 0
      for (i in seq_len(warm)) {
        s <- glmm_mcmc_step(s, prop, counted, sys)
        moved <- moved + s$moved
        W[i, ] <- s$theta
        tick()
      }
      list(state = s, draws = W, moved = moved, evaluations = count)
    }
    res <- glmm_chain_map(one, streams, workers, bar, catch_interrupt = FALSE)
    streams <- lapply(res, `[[`, "seed")
    states <- lapply(res, `[[`, "state")
    pooled <- do.call(rbind, lapply(res, `[[`, "draws"))
    if (nrow(pooled) > 4 * length(ti)) {
      # shrunk towards the covariance of the proposal that drew them by
      # k / (draws + k)
      a <- nrow(pooled) / (nrow(pooled) + length(ti))
      S <- a * stats::cov(pooled) + (1 - a) * prop$covariance
      prop <- glmm_t_proposal(colMeans(pooled), S)
    }
    evaluations <- (if (round == 1L) 0 else evaluations) + sum(vapply(res, `[[`, 0, "evaluations"))
  }
  bar$close()
  list(states = lapply(seq_len(chains), function(c) c(states[[c]], list(seed = streams[[c]]))),
       proposal = prop, evaluations = evaluations,
       acceptance = sum(vapply(res, `[[`, 0, "moved")) / (chains * warm))
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

# One iteration of the sampler of theta: a joint independence move, or,
# with small terms, a joint move of the others and cheap moves of their sds
# (R/auto-glmm-gaussian-schur.R).
glmm_mcmc_step <- function(s, prop, post, sys) {
  if (is.null(sys$schur)) glmm_imh_step(s, prop, post) else glmm_schur_step(s, prop, post, sys)
}

# One draw of the effects given the state's theta.
glmm_state_effects_draw <- function(sys, s) {
  if (is.null(sys$schur)) glmm_effects_draw(sys, s$cond) else glmm_schur_effects_draw(sys, s)
}

# A progress bar on stderr (or nothing): tick() one step, set(n) steps done,
# close().
glmm_progress <- function(show, total, what) {
  if (!show || total < 1)
    return(list(tick = function() NULL, set = function(n) NULL, count = function() 0,
                close = function() NULL))
  message("collapsed sampler: ", what)
  bar <- utils::txtProgressBar(0, total, style = 3, file = stderr())
  n <- 0
  list(tick = function() {
         n <<- n + 1
         if (n %% 10 == 0 || n == total) utils::setTxtProgressBar(bar, n)
       },
       count = function() n,
       set = function(k) {
         if (k > n) utils::setTxtProgressBar(bar, min(k, total))
         n <<- max(n, k)
       },
       close = function() close(bar))
}

# One random-number stream per chain: parallel's L'Ecuyer-CMRG streams from
# one seed drawn from the session's generator (which advances by that one
# draw and keeps its kind).
glmm_chain_streams <- function(chains) {
  seed <- sample.int(.Machine$integer.max, 1L)
  old <- get(".Random.seed", envir = globalenv())
  on.exit(assign(".Random.seed", old, envir = globalenv()))
  RNGkind("L'Ecuyer-CMRG")
  set.seed(seed)
  out <- vector("list", chains)
  out[[1]] <- get(".Random.seed", envir = globalenv())
  for (c in seq_len(chains - 1L)) out[[c + 1L]] <- parallel::nextRNGStream(out[[c]])
  out
}

# f() run on the stream `seed`, the session's generator left as it was; the
# stream's state after it comes back as $seed.
glmm_with_stream <- function(seed, f) {
  old <- get0(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
          else assign(".Random.seed", old, envir = globalenv()))
  assign(".Random.seed", seed, envir = globalenv())
  out <- f()
  out$seed <- get(".Random.seed", envir = globalenv())
  out
}

# The number of worker processes for the chains: resolve_threads()'s rule
# (issue 51: chains x threads <= the idle processors; `threads` given is
# used), one on Windows, where there is no fork.
glmm_collapsed_workers <- function(threads, chains) {
  if (.Platform$OS.type != "unix") return(1L)
  min(as.integer(chains), resolve_threads(threads, chains))
}

# A worker's count of steps, written whole (renamed into place) so that the
# parent never reads a file half written.
glmm_write_count <- function(n, file) {
  part <- paste0(file, ".part")
  writeLines(as.character(n), part)
  file.rename(part, file)
}

# one(c, tick) for every chain c on its stream streams[[c]], on `workers`
# forked processes (chains dealt round-robin, each worker running its in
# turn) or in this process; a list of the chains' results (NULL for a chain
# not run after an interrupt). The bar follows every chain: a worker writes
# its count of steps to a file the parent reads twice a second. With
# catch_interrupt, an interrupt asks the workers to stop as a Ctrl-C would
# (one(), which must then catch it, returns what it drew) and collects them;
# otherwise it ends the call. Either way no worker is left running.
glmm_chain_map <- function(one, streams, workers, bar, catch_interrupt = TRUE) {
  chains <- length(streams)
  run <- function(c, tick) glmm_with_stream(streams[[c]], function() one(c, tick))
  out <- vector("list", chains)
  if (workers <= 1L) {
    for (c in seq_len(chains)) {
      out[[c]] <- run(c, bar$tick)
      if (isTRUE(out[[c]]$interrupted)) break
    }
    return(out)
  }
  groups <- split(seq_len(chains), (seq_len(chains) - 1L) %% workers)
  files <- tempfile(rep("sgld-chain", chains))
  on.exit(unlink(c(files, paste0(files, ".part"))), add = TRUE)
  jobs <- lapply(groups, function(cs) parallel::mcparallel({
    res <- vector("list", length(cs))
    for (j in seq_along(cs)) {
      n <- 0L
      tick <- function() {
        n <<- n + 1L
        if (n %% 5L == 0L) glmm_write_count(n, files[cs[j]])
      }
      res[[j]] <- run(cs[j], tick)
      glmm_write_count(n, files[cs[j]])
      if (isTRUE(res[[j]]$interrupted)) break
    }
    res
  }, mc.set.seed = FALSE, silent = TRUE))
  pids <- vapply(jobs, function(j) j$pid, 0L)
  got <- vector("list", length(jobs))
  done <- logical(length(jobs))
  on.exit({
    if (!all(done)) {
      tools::pskill(pids[!done], tools::SIGKILL)
      # reaped, so that none is left a zombie; they deliver nothing
      suppressWarnings(parallel::mccollect(jobs[!done], wait = TRUE))
    }
  }, add = TRUE, after = FALSE)
  steps <- function() sum(vapply(files, function(f) {
    x <- suppressWarnings(tryCatch(as.numeric(readLines(f, n = 1L, warn = FALSE)),
                                   error = function(e) 0))
    if (length(x) == 1L && is.finite(x)) x else 0
  }, 0))
  collect <- function(seconds) {
    res <- parallel::mccollect(jobs[!done], wait = FALSE, timeout = seconds)
    for (pid in names(res)) {
      k <- match(as.integer(pid), pids)
      got[[k]] <<- res[[pid]]
      done[k] <<- TRUE
    }
  }
  interrupted <- FALSE
  before <- bar$count()
  poll <- function() while (!all(done)) {
    collect(0.5)
    bar$set(before + steps())
  }
  if (catch_interrupt) tryCatch(poll(), interrupt = function(e) interrupted <<- TRUE)
  else poll()
  if (interrupted) {
    tools::pskill(pids[!done], tools::SIGINT)
    waited <- 0
    while (!all(done) && waited < 10) {
      collect(0.5)
      waited <- waited + 0.5
    }
  }
  for (k in seq_along(jobs)) {
    if (inherits(got[[k]], "try-error"))
      abort("a chain of the collapsed sampler failed on its worker: ",
            conditionMessage(attr(got[[k]], "condition")))
    if (is.list(got[[k]])) out[groups[[k]]][seq_along(got[[k]])] <- got[[k]]
  }
  out
}

glmm_collapsed_chains <- function(sys, post, warmed, iter, keep, progress, centre = NULL,
                                  workers = 1L) {
  model <- sys$model
  d <- model$d
  ti <- glmm_theta_index(model)
  prop <- warmed$proposal
  chains <- length(warmed$states)
  n_keep <- if (is.null(keep)) d else length(keep)
  # running sums about the first chain's start (its effects' conditional
  # mean), against cancellation
  if (is.null(centre)) centre <- c(glmm_effects_mean(sys, warmed$states[[1]]$cond),
                                   warmed$states[[1]]$theta)
  one <- function(c, tick) {
    count <- 0
    counted <- function(th) {
      count <<- count + 1
      post(th)
    }
    s <- warmed$states[[c]]
    s$lq <- glmm_t_logdens(prop, s$theta)
    draws <- matrix(NA_real_, iter, n_keep)
    theta <- matrix(NA_real_, iter, length(ti))
    sum <- sumsq <- numeric(d)
    kept <- accepted <- 0
    last <- c(glmm_state_effects_draw(sys, s), s$theta)
    status <- 3L                                   # "interrupted" until it ends
    interrupted <- FALSE
    tryCatch({
      for (i in seq_len(iter)) {
        s <- glmm_mcmc_step(s, prop, counted, sys)
        w <- c(glmm_state_effects_draw(sys, s), s$theta)
        theta[i, ] <- s$theta
        draws[i, ] <- if (is.null(keep)) w else to_user_scale(model, matrix(w, 1))[1, keep]
        sum <- sum + (w - centre)
        sumsq <- sumsq + (w - centre)^2
        kept <- i
        accepted <- accepted + s$moved
        last <- w
        tick()
      }
      status <- 0L                                 # "done"
    }, interrupt = function(e) interrupted <<- TRUE)
    list(draws = draws, theta = theta, kept = kept, accepted = accepted, status = status,
         last = last, state = s, sum = sum, sumsq = sumsq, evaluations = count,
         interrupted = interrupted)
  }
  bar <- glmm_progress(progress, chains * iter, "sampling")
  t0 <- proc.time()[["elapsed"]]
  streams <- lapply(warmed$states, `[[`, "seed")
  res <- glmm_chain_map(one, streams, workers, bar, catch_interrupt = TRUE)
  bar$close()
  ran <- !vapply(res, is.null, NA)
  pick <- function(name, empty) lapply(seq_len(chains), function(c)
    if (ran[c]) res[[c]][[name]] else empty)
  states <- lapply(seq_len(chains), function(c)
    if (ran[c]) c(res[[c]]$state, list(seed = res[[c]]$seed)) else warmed$states[[c]])
  start_w <- lapply(warmed$states, function(s) c(glmm_effects_mean(sys, s$cond), s$theta))
  list(draws = pick("draws", matrix(NA_real_, iter, n_keep)),
       theta = pick("theta", matrix(NA_real_, iter, length(ti))),
       kept = unlist(pick("kept", 0)), accepted = unlist(pick("accepted", 0)),
       status = unlist(pick("status", 4L)),        # the engine's code for "not run"
       last = vapply(seq_len(chains), function(c) if (ran[c]) res[[c]]$last else start_w[[c]],
                     numeric(d)),
       states = states, proposal = prop, centre = centre,
       sum = do.call(cbind, pick("sum", numeric(d))),
       sumsq = do.call(cbind, pick("sumsq", numeric(d))),
       evaluations = sum(unlist(pick("evaluations", 0))),
       time = proc.time()[["elapsed"]] - t0,
       interrupted = any(unlist(pick("interrupted", FALSE))) || !all(ran))
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
  out$evaluations <- a$evaluations + b$evaluations
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
