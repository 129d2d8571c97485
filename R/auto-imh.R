# lr = "auto" where the posterior is close to its Laplace approximation and
# a full pass costs little: independence Metropolis-Hastings (IMH) with
# multivariate t proposals (a pilot's at the mode, scaled by the Laplace
# covariance S; the run's refitted to the pilot's weighted draws). Each
# chain's batch of proposals is drawn from the chain's stream and its log
# posteriors evaluated up front in one call of the engine (src/imh.c: no
# gradient), which then scans the log weights log p(w) - log q(w), a
# comparison a proposal. Exact for any proposal whose tails are at least
# as heavy as the posterior's, and fast where the weights are nearly
# constant: the gate is Pareto-smoothed importance sampling's k-hat of the
# pilot's weights and the pilot's acceptance rate; elsewhere the caller's
# route runs, untouched (R's random numbers are given back).
#
# Checks after the run: an exact sampler has no step bias, so the
# threshold and Stein checks of the unadjusted routes (both about the bias
# of SGLD's step) do not apply; the acceptance rate, R-hat across chains
# and the effective sample size do, as for mala() (check_run() with method
# "mala").

# The pilot's proposal: t with 7 degrees of freedom at the mode, scaled by
# S (heavy tails, so that its k-hat sees a posterior heavier than S
# says). The run's: t with 15 degrees of freedom at the pilot's weighted
# mean and covariance. Effective draws (of the means and squares) per
# proposal, mean of six seeds of 3,000 proposals (bench/imh.md):
# quine 0.31 (pilot's proposal) / 0.36 (15 df at the mode) / 0.48 (15 df
# refitted), epil 0.43 / 0.49 / 0.53, PhDPublications 0.52 / 0.59 / 0.58.
auto_imh_df_pilot <- 7
auto_imh_df <- 15
auto_imh_pilot <- 1000     # the gate's proposals (all chains together)
auto_imh_khat <- 0.5       # largest pilot k-hat taking this route
auto_imh_accept <- 0.5     # smallest pilot acceptance taking it
auto_imh_rounds <- 3       # batches at most (the first, then lengthenings)
auto_imh_burnin <- 25      # each chain's first pilot states, not kept

# Which models: the negative binomial, whose log likelihood at eight
# proposals takes one pass (src/model_negbin.c: negbin_loglik_points(),
# 20-26 ns a row and proposal in the route). Up to auto_full_n rows the
# alternative is full-data MALA, slower on every set tried; above, it is
# subsampling with control variates, whose plan (`plan`: batch rows times
# iterations) decides: this route is taken where its evaluations
# (auto_imh_evaluations a call, 4,200-7,500 measured) times the rows cost
# less than the plan's rows at auto_imh_row_cost times the price (the
# subsampled route's whole call per planned gradient row, 247-286 ns, over
# this route's per evaluated row, 20-26 ns, on NMES1988, DoctorVisits and
# the simulated 5,000 rows: a ratio of 9.5-14). Seed 1, CPU s of this
# route / the subsampled one, load 6-7 (bench/imh-gate.R, bench/imh.md):
# NMES1988 (4,406 rows) 0.61 / 0.93 and DoctorVisits (5,190) 0.57 / 1.00,
# taken; the simulated negative binomial of 5,000 rows 0.47 / 0.41 and of
# 10,000 rows 0.90 / 0.48, not taken; of 2,500 rows 0.25 / 0.29, on the
# line (the plan's rows vary with its random points: taken at some seeds).
# Other models' small regressions were slower this way than by their
# Langevin route (Poisson, logistic, linear: bench/imh.md)
auto_imh_evaluations <- 6000
auto_imh_row_cost <- 12
imh_pays <- function(model, plan) UseMethod("imh_pays")
imh_pays.default <- function(model, plan) FALSE
imh_pays.sgld_model_negbin <- function(model, plan)
  is.null(plan) ||
    auto_imh_evaluations * model$n <= auto_imh_row_cost * plan$batch * plan$iter

# `plan`: the subsampled route's (auto_sgld_plan()) above auto_full_n rows,
# NULL below
auto_imh_wanted <- function(model, given, step, plan = NULL)
  imh_pays(model, plan) && is.null(step$coords) && !isTRUE(step$skewed) &&
    auto_mala_allowed(model, given) && model$d <= auto_max_d &&
    !any(c("precondition", "lr", "iter", "burnin", "thin", "init", "monitor",
           "pars", "parallel") %in% given) &&
    !inherits(tryCatch(check_densities(model, "mala()"), error = identity), "error")

# One chain's batch in the engine (src/imh.c): `K` proposals from
# `proposal` (location, upper triangular factor R, df), their log
# posteriors and weights, and the scan from the state `from_w` of log
# weight `from_lw`, on the chain's stream
imh_batch <- function(model, proposal, K, from_w, from_lw, stream) {
  out <- .Call(C_sgld_imh_batch, model, as.double(proposal$location),
               as.double(proposal$factor), as.double(proposal$df), as.double(K),
               as.double(from_w), as.double(from_lw), stream)
  stop_on_failure(model)
  out
}

# The log importance weights of the points W (rows, the sampler's scale)
# of log posterior lp under a proposal (up to one constant: a scan
# compares weights under the same proposal only)
imh_weight <- function(proposal, W, lp) {
  X <- backsolve(proposal$factor, t(W) - proposal$location, transpose = TRUE)
  lp + (proposal$df + ncol(W)) / 2 * log1p(colSums(X^2) / proposal$df)
}

# Effective draws of each parameter's mean and of its squared deviation
# (an sd's precision rests on the latter), all chains together, on the
# user's scale (the draws the fit stores): the first d are the fit's own
# convergence check's (check_run(measured_ess =)), so one spectral fit serves both.
# Plain matrices side by side in one ess_ar() call, without coda's objects
# (their construction was a fifth of the call on datasets::warpbreaks)
imh_ess <- function(model, draws) {
  user <- lapply(draws, function(x) to_user_scale(model, x))
  mu <- colMeans(do.call(rbind, user))
  cols <- lapply(user, function(x) cbind(x, (x - rep(mu, each = nrow(x)))^2))
  e <- rowSums(matrix(ess_ar(do.call(cbind, cols)), 2 * model$d))
  if (anyNA(e)) e <- ess(coda::mcmc.list(lapply(cols, coda::mcmc)))
  e
}

# NULL where the gate refuses (R's random numbers as they were before);
# otherwise the fit
auto_imh <- function(model, args, given, call, made, pm, step, start) {
  chains <- args$chains
  seed <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  begun <- proc.time()
  # chain c's stream (sgld_run()'s layout: main streams, then as many others)
  streams <- .Call(C_sgld_streams, as.integer(chains))
  size <- length(streams) / (2 * chains)
  # the pilot: each chain scans its share of the proposals from the mode,
  # the first auto_imh_burnin of its states burnt in. The mode's weight
  # under this proposal is below a typical one's (for a Gaussian posterior
  # log w - log w(mode) = (df + d) / 2 log(1 + |x|^2 / df) - |x|^2 / 2,
  # +1.3 at |x|^2 = d = 7), so the first proposals are accepted at once.
  laplace <- list(location = pm$sampler, factor = chol(pm$covariance), df = auto_imh_df_pilot)
  share <- ceiling(auto_imh_pilot / chains)
  lp_mode <- log_joint_draws(model, matrix(pm$sampler, 1))
  pilots <- lapply(seq_len(chains), function(c)
    imh_batch(model, laplace, share, pm$sampler, lp_mode, streams[(c - 1) * size + seq_len(size)]))
  pilot <- list(log_weight = unlist(lapply(pilots, `[[`, "log_weight")),
                proposals = do.call(rbind, lapply(pilots, `[[`, "proposals")))
  khat <- if (all(is.finite(pilot$log_weight))) khat_of(pilot$log_weight) else Inf
  accept <- sum(vapply(pilots, `[[`, 1, "accepted")) / (share * chains)
  if (!is.finite(khat) || khat >= auto_imh_khat || accept < auto_imh_accept) {
    if (is.null(seed)) rm(".Random.seed", envir = globalenv())
    else assign(".Random.seed", seed, envir = globalenv())
    return(NULL)
  }
  proposal <- imh_refit(pilot, pm)
  # each chain goes on from its pilot's last state, under the new proposal
  burn <- min(auto_imh_burnin, share - 1)
  kept <- lapply(pilots, function(b) b$draws[-seq_len(burn), , drop = FALSE])
  states <- t(vapply(pilots, function(b) b$draws[share, ], numeric(model$d)))
  chains_now <- list(draws = kept,
                     last = imh_weight(proposal, states, log_joint_draws(model, states)),
                     state = lapply(seq_len(chains), function(c) states[c, ]),
                     accepted = vapply(kept, function(x) sum(rowSums(diff(x) != 0) > 0), 1),
                     stream = lapply(pilots, `[[`, "stream"))
  # the first batch: 1.1 times the target at 0.7 effective draws per proposal
  # and pilot acceptance (the run's proposal gave 0.7-0.77 on quine, epil
  # and PhDPublications), less the pilot's; a batch that falls short is
  # lengthened
  per_chain <- max(1, ceiling(1.1 * auto_target_ess / (0.7 * accept * chains)) - (share - burn))
  evaluations <- share * chains
  reached <- 0
  for (round in seq_len(auto_imh_rounds)) {
    chains_now <- imh_extend(model, proposal, chains_now, per_chain)
    evaluations <- evaluations + per_chain * chains
    each_ess <- imh_ess(model, chains_now$draws)
    reached <- min(each_ess)
    if (!is.finite(reached) || reached >= auto_target_ess) break
    # short: lengthen in proportion to the rate measured so far
    K <- nrow(chains_now$draws[[1]])
    per_chain <- min(10 * K, ceiling(K * (1.1 * auto_target_ess / max(reached, 1) - 1)))
  }
  draws <- chains_now$draws
  accepted <- chains_now$accepted
  used <- proc.time() - begun
  rule <- mala_rule(pm$covariance, model)
  rule$label <- "independence Metropolis-Hastings (t proposal)"
  fit <- imh_fit(model, draws, accepted, rule, call, args$threads, chains_now$stream,
                 used[["elapsed"]])
  K <- nrow(draws[[1]])
  made$settings <- list(lr = 1, rule = rule, batch_size = model$n, control_variates = FALSE,
                        temperature = 1, iter = K + burn, burnin = burn, thin = 1, method = "imh",
                        proposal = proposal,
                        expected_ess = floor(min(auto_target_ess, reached)))
  fit$auto <- list(
    lr = NULL, batch_size = model$n, control_variates = FALSE, temperature = 1, iter = K + burn,
    burnin = burn, thin = 1, mode = pm$mode, settings = made$settings,
    covariance = pm$covariance, laplace_precondition = TRUE,
    laplace_departure = step$departure, proposal_df = auto_imh_df, pilot_khat = khat,
    pilot_acceptance = accept, evaluations = evaluations, target_ess = auto_target_ess,
    overdispersed = FALSE, start = "mode",
    setup_time = begun[["elapsed"]] - start,
    strategy = "imh",
    reason = sprintf(paste0(
      "lr = \"auto\": close to its Laplace approximation (pilot of %s proposals: PSIS k-hat ",
      "%s, acceptance %s), so independence Metropolis-Hastings (exact) with a t proposal of ",
      "%d degrees of freedom at the pilot's importance-weighted mean and covariance; %s proposals a ",
      "chain for about %s effective draws of the means and squares; chains start at the ",
      "mode, each scanning its share of the pilot first (%d states burnt in)."),
      format(share * chains, big.mark = ","), format(khat, digits = 2),
      format(accept, digits = 2), auto_imh_df, format(K + burn, big.mark = ","),
      format(made$settings$expected_ess, big.mark = ","), burn))
  fit$auto$sampling_time <- fit$sampling_time
  fit$time <- proc.time()[["elapsed"]] - start
  fit <- check_run(fit, attr(fit, "run_settings"), rule, auto = TRUE,
                   measured_ess = each_ess[seq_len(model$d)])
  attr(fit, "run_settings") <- NULL
  made$fit <- fit
  made$phase <- "run"
  fit
}

# The run's proposal: t with auto_imh_df degrees of freedom at the pilot's
# importance-weighted mean and covariance (k-hat below 0.5: weights of
# finite variance), or at the mode and S where that covariance is singular
imh_refit <- function(pilot, pm) {
  w <- exp(pilot$log_weight - max(pilot$log_weight))
  w <- w / sum(w)
  W <- pilot$proposals
  mu <- colSums(W * w)
  R <- tryCatch(chol(crossprod((W - rep(mu, each = nrow(W))) * sqrt(w))),
                error = function(e) NULL)
  if (is.null(R)) list(location = pm$sampler, factor = chol(pm$covariance), df = auto_imh_df)
  else list(location = mu, factor = R, df = auto_imh_df)
}

# Each chain's scan carried on over `per_chain` new proposals
imh_extend <- function(model, proposal, chains_now, per_chain) {
  for (c in seq_along(chains_now$draws)) {
    b <- imh_batch(model, proposal, per_chain, chains_now$state[[c]], chains_now$last[c],
                   chains_now$stream[[c]])
    chains_now$accepted[c] <- chains_now$accepted[c] + b$accepted
    chains_now$last[c] <- b$last_lw
    chains_now$state[[c]] <- b$draws[per_chain, ]
    chains_now$stream[[c]] <- b$stream
    chains_now$draws[[c]] <- rbind(chains_now$draws[[c]], b$draws)
  }
  chains_now
}

# sgld(model, init = fit) for a fit of this route: each chain's scan goes on
# from its last draw with the same proposal, as long again as its sample
# (or `iter` proposals a chain)
continue_imh <- function(model, fit, args, given, call) {
  a <- fit$auto$settings
  begun <- proc.time()[["elapsed"]]
  chains <- length(fit$chain_ids)
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else a$iter - a$burnin
  check_count(iter, "iter", lower = 1)
  start <- t(fit$state$w[fit$chain_ids, , drop = FALSE])
  last <- imh_weight(a$proposal, t(start), log_joint_draws(model, t(start)))
  size <- length(fit$state$rng) / (2 * length(fit$status))
  chains_now <- list(draws = vector("list", chains), last = last,
                     state = lapply(seq_len(chains), function(c) start[, c]),
                     accepted = numeric(chains),
                     stream = lapply(fit$chain_ids, function(c)
                       fit$state$rng[(c - 1) * size + seq_len(size)]))
  chains_now <- imh_extend(model, a$proposal, chains_now, iter)
  fit <- imh_fit(model, chains_now$draws, chains_now$accepted, a$rule, call, args$threads,
                 chains_now$stream,
                 proc.time()[["elapsed"]] - begun)
  settings <- attr(fit, "run_settings")
  attr(fit, "run_settings") <- NULL
  fit$auto <- list(lr = NULL, settings = a, continued = TRUE, strategy = "imh",
                   reason = sprintf(paste0(
                     "lr = \"auto\": the chains of an automatic run continued with its ",
                     "independence Metropolis-Hastings proposal (%s proposals a chain)."),
                     format(iter, big.mark = ",")))
  check_run(fit, settings, a$rule, auto = TRUE)
}

# The chains' streams in a fit's state (fit$state$rng: sgld_run()'s layout,
# main streams then as many others; these are the scans' streams twice)
imh_state_streams <- function(streams) c(unlist(streams), unlist(streams))

# An sgld_fit of draws made in R (sampler's scale, one K x d matrix a
# chain), as the engine would return them from `iter = K` kept iterations:
# the same constructor, so every method reads it as any other run's
imh_fit <- function(model, draws, accepted, rule, call, threads, streams, seconds) {
  chains <- length(draws)
  K <- nrow(draws[[1]])
  d <- model$d
  starts <- to_user_scale(model, do.call(rbind, lapply(draws, function(x) x[1, ])))
  settings <- run_settings(model, lr = 1, batch_size = model$n, iter = K, burnin = 0, thin = 1,
                           temperature = 1, chains = chains, init = starts, replace = FALSE,
                           clip = NULL, rule = rule, threads = threads, mala = TRUE)
  moments <- lapply(draws, function(x) {
    u <- to_user_scale(model, x)
    mu <- colMeans(u)
    c(mu, colSums((u - rep(mu, each = K))^2))
  })
  moments <- matrix(unlist(moments), 2 * d, chains)
  engine <- new.env(parent = emptyenv())
  engine$res <- list(
    draws = draws, eta = matrix(1, K, chains), iteration = matrix(as.double(seq_len(K)), K, chains),
    trace = matrix(NA_real_, K, chains), kept = rep(K, chains), status = integer(chains),
    stop_iter = numeric(chains), clip_count = numeric(chains),
    last = vapply(draws, function(x) x[K, ], numeric(d)),
    state = matrix(0, 0, chains), rng = imh_state_streams(streams),
    monitor = numeric(0), monitored = numeric(chains), diagnostics = numeric(0),
    diagnosed = numeric(chains), accepted = accepted, collect_from = rep(1, chains),
    moment_mean = moments[seq_len(d), , drop = FALSE],
    moment_m2 = moments[d + seq_len(d), , drop = FALSE],
    moment_wmean = moments[seq_len(d), , drop = FALSE], moment_weight = rep(K, chains),
    moment_count = rep(K, chains), expected_seconds = 0, sampling_seconds = seconds)
  fit <- new_sgld_fit(engine, model = model, settings = settings, lr = 1, method = "mala",
                      call = call, time = seconds, rule = rule)
  attr(fit, "run_settings") <- settings
  fit
}
