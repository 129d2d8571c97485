# Continuing a run. A fit keeps each chain's whole state in `fit$state`:
# the parameters on the sampler's scale (bit for bit, not through the user's
# scale), the update rule's state (momenta, averages), the two random streams
# and the iteration reached. A run started from it carries on each chain as if
# it had never stopped, so T + T iterations give the draws of one run of 2T.

chain_state <- function(res, settings, rule, model, status) {
  iter_done <- ifelse(status == "done", settings$t_offset + settings$iter,
                      ifelse(status == "not run", settings$t_offset, res$stop_iter))
  w <- t(res$last)
  dimnames(w) <- list(paste("chain", seq_len(settings$chains)), model$sampler_names)
  list(w = w, update = res$state, rng = res$rng, iteration = iter_done, rule = rule)
}

# The starting point of a run given `init = fit`.
continuation <- function(fit, model, chains, rule, gradient = NULL) {
  st <- fit$state
  if (is.null(st)) abort("`init`: this fit does not record the state of its chains.")
  # a state emptied or cut by hand (or read back damaged) is named by its
  # missing parts, before anything reads them
  parts <- c("w", "update", "rng", "iteration", "rule")
  gone <- if (is.list(st)) parts[!parts %in% names(st) | vapply(parts, function(k)
            is.null(st[[k]]) || (k != "update" && length(st[[k]]) == 0), NA)] else parts
  if (length(gone))
    abort("`init`: the fit's state (`fit$state`) has no ", paste0("`", gone, "`", collapse = ", "),
          ": it was emptied or altered after the run, so its chains cannot be continued; ",
          "start afresh from their last draws with `init = fit$last`.")
  st$rule <- upgrade_rule(st$rule)
  if (st$rule$name != rule$name || !identical(st$rule$opts, rule$opts))
    abort("`init`: the fit to continue used the update rule ", st$rule$label,
          " with other settings; continue it with the same rule and settings.")
  if (!identical(class(fit$model), class(model)) || fit$model$n != model$n ||
      !identical(fit$model$sampler_names, model$sampler_names))
    abort("`init`: the fit to continue was made with a different model.")
  bad <- which(fit$status %in% c("diverged", "failed", "lost"))
  if (length(bad))
    abort("`init`: chain", if (length(bad) > 1) "s", " ", paste(bad, collapse = ", "),
          " of the fit ", paste(unique(c(diverged = "diverged", failed = "failed",
                                         lost = "was lost")[fit$status[bad]]), collapse = " or "),
          " and cannot be continued; start afresh, e.g. from ",
          "`init = fit$last`, with a smaller learning rate.")
  check_state(st, chains, model, rule, gradient)
  list(w = unname(st$w), t_offset = as.double(st$iteration), state_init = as.double(st$update),
       rng_init = st$rng)
}

# A fit's state is checked before the engine sees it: a fit read back from a
# damaged file, or altered by hand, must give an error that says what is
# wrong, not a hang (an all-zero random stream never moves on) or draws that
# silently start from nonsense. Each rule names the part and what it needs.
check_state <- function(st, chains, model, rule, gradient = NULL) {
  d <- model$d
  damaged <- function(...)
    abort("`init`: the state of the fit to continue is damaged: ", ..., "; the fit was ",
          "altered or read from a damaged file. Start afresh, e.g. from `init = fit$last`.")
  sizes <- .Call(C_sgld_state_sizes, model, rule$name,
                 if (is.null(gradient)) "minibatch" else gradient$name,
                 if (is.null(gradient)) list() else gradient$opts)
  w <- st$w
  if (!is.double(w) || !is.matrix(w) || ncol(w) != d)
    damaged("`state$w` must be a numeric matrix with ", d, " columns (one per parameter)")
  if (nrow(w) != chains)
    abort("`init`: the fit to continue has ", nrow(w), " chain", if (nrow(w) > 1) "s",
          "; set `chains = ", nrow(w), "`.")
  if (any(!is.finite(w)))
    damaged("`state$w` has the non-finite value ", format(w[!is.finite(w)][1]),
            " (chain ", row(w)[!is.finite(w)][1], ")")
  it <- st$iteration
  if (!is.numeric(it) || length(it) != chains || anyNA(it) || any(!is.finite(it)) ||
      any(it < 0) || any(it != floor(it)))
    damaged("`state$iteration` must hold ", chains, " whole number", if (chains > 1) "s",
            " of iterations, at least 0 (one per chain); it is ", describe(it))
  up <- st$update
  want <- sizes[1] * chains
  if (!is.numeric(up) || length(up) != want)
    damaged("`state$update` must hold ", want, " numbers (", sizes[1], " per chain for the ",
            "rule ", rule$label, "), not ", if (is.numeric(up)) length(up) else describe(up))
  if (any(!is.finite(up)))
    damaged("`state$update` (the state of the rule ", rule$label, ") has the non-finite value ",
            format(up[!is.finite(up)][1]))
  rng <- st$rng
  bytes <- sizes[2]
  if (!is.raw(rng) || length(rng) != 2 * chains * bytes)
    damaged("`state$rng` must be a raw vector of ", 2 * chains * bytes, " bytes (two random ",
            "streams of ", bytes, " bytes per chain), not ",
            if (is.raw(rng)) paste(length(rng), "bytes") else describe(rng))
  zero <- which(vapply(seq_len(2 * chains), function(k)
    all(rng[(k - 1) * bytes + seq_len(bytes)] == as.raw(0)), NA))
  if (length(zero)) {
    k <- zero[1]
    damaged("`state$rng` holds an all-zero random stream (the ",
            if (k <= chains) "main" else "diagnostics", " stream of chain ",
            (k - 1) %% chains + 1, "), which no run leaves and the generator cannot leave")
  }
  invisible()
}

# Fits saved before each update rule owned its options hold one shared set
# (rho, beta, eps, friction, v_init, where rho was pSGLD's alpha and Adam's
# beta2) and a fixed preconditioner's factor beside it in `chol`. The same
# settings under the rule's own names, so such fits can still be continued.
upgrade_rule <- function(rule) {
  o <- rule$opts
  if (!setequal(names(o), c("rho", "beta", "eps", "friction", "v_init"))) return(rule)
  rule$opts <- switch(rule$name,
    psgld = list(alpha = o$rho, lambda = o$eps, v_init = o$v_init),
    momentum = list(momentum = o$beta),
    adagrad = list(eps = o$eps),
    rmsprop = list(rho = o$rho, eps = o$eps),
    adam = list(beta1 = o$beta, beta2 = o$rho, eps = o$eps),
    sghmc = list(friction = o$friction),
    precond = list(chol = rule$chol),
    list())
  rule$chol <- NULL
  rule
}

# Does `init` hold a fit of sgld()'s automatic settings, whose settings it
# recorded (R/auto.R)?
is_auto_fit <- function(init) {
  inherits(init, "sgld_fit") && is.list(init$auto$settings) &&
    init$auto$settings$method %in% c("sgld", "mala", "imh")
}

# sgld(model, init = fit) for a fit of lr = "auto": continues its chains with
# the rule, step, batch, control variates, temperature, thinning and
# coordinates drawn alone that the automatic run chose, each unless given
# here. Without `iter`, an interrupted run goes on to the end of its plan
# (what is left of its burn-in, then its sample); a finished one runs as
# long again as its sample, with no burn-in.
continue_auto <- function(model, fit, args, given, call) {
  a <- fit$auto$settings
  if (identical(a$method, "imh")) return(continue_imh(model, fit, args, given, call))   # R/auto-imh.R
  has <- function(name) name %in% given && !is.null(args[[name]])
  lr <- if (has("lr") && !identical(args$lr, "auto")) args$lr else a$lr
  rule <- if (has("precondition")) resolve_precondition(args$precondition, model) else a$rule
  reached <- if (length(fit$state$iteration)) max(fit$state$iteration) else 0
  iter <- if (has("iter")) args$iter
          else if (reached < a$iter) a$iter - reached else a$iter - a$burnin
  burnin <- if (has("burnin")) args$burnin else min(max(0, a$burnin - reached), iter - 1)
  pick <- function(name, value) if (has(name)) args[[name]] else value
  # Metropolis-adjusted or Hamiltonian steps (R/auto.R): full data, exact;
  # a batch or control variates given ask for unadjusted steps instead
  adjusted <- identical(a$method, "mala") && !has("batch_size") && !has("control_variates")
  if (adjusted && has("precondition")) rule <- mala_rule(args$precondition, model)
  fit <- if (adjusted) run_sampler(
    model, lr = lr, batch_size = model$n, iter = iter, burnin = burnin,
    thin = pick("thin", a$thin), temperature = pick("temperature", a$temperature),
    chains = pick("chains", fit$settings$chains), init = fit, replace = FALSE, clip = NULL,
    monitor = args$monitor, threads = args$threads, rule = rule, mala = TRUE,
    leapfrog = if (is.null(a$leapfrog)) 1L else a$leapfrog, method = "mala", call = call,
    pars = args$pars, progress = args$progress, parallel = args$parallel,
    checks = if (has("lr") && !identical(args$lr, "auto")) TRUE else "auto")
  else run_sampler(model, lr = lr, batch_size = pick("batch_size", a$batch_size),
                     iter = iter, burnin = burnin, thin = pick("thin", a$thin),
                     temperature = pick("temperature", a$temperature),
                     chains = pick("chains", fit$settings$chains), init = fit,
                     replace = args$replace, clip = args$clip, monitor = args$monitor,
                     threads = args$threads, diagnostics = args$diagnostics, rule = rule,
                     control_variates = pick("control_variates", a$control_variates),
                     method = "sgld", call = call, pars = args$pars, progress = args$progress,
                     parallel = args$parallel, coordinates = if (!has("precondition")) a$coordinates,
                     checks = if (has("lr") && !identical(args$lr, "auto")) TRUE else "auto")
  fit$auto <- list(lr = lr, settings = a, continued = TRUE, reason = sprintf(paste0(
    "lr = \"auto\": the chains of an automatic run continued with its settings%s ",
    "(%s iterations%s)."),
    if (any(c("lr", "precondition", "batch_size", "control_variates", "temperature") %in%
            given[vapply(given, has, NA)])) " but those given" else "",
    format(iter, big.mark = ","),
    if (burnin > 0) sprintf(", the first %s the rest of its burn-in", format(burnin, big.mark = ","))
    else ""))
  fit
}
