# lr = "auto" for networks: sgld(model_mlp(...)) with nothing else.
#
# A network's posterior has many modes (hidden units permute, and chains
# from different starts settle in different basins), so the Laplace recipe
# of R/auto.R does not apply. The recipe here, for each chain from its own
# random start:
#  (a) a pilot: Adam (learning rate 1e-3, cosine decay to 0) for at most
#      10,000 iterations and at most 80% of the chain's iterations, which
#      ends at a mode. Not fewer on small data: Adam's fixed step needs its
#      steps whatever the rows (on the 50-row network of test-model-mlp.R
#      2,000 or 5,000 iterations ended where the curvature was 6-9 times
#      lower than after 10,000, and the draws came out 1.3 times too wide
#      and their means 0.48-0.64 sd off the MALA reference with 2,000). Adam's step does not depend on the scale of the
#      gradient, so one learning rate serves every network;
#  (b) the step: the sampling threshold alpha = eta / 2 * lambda_max(Cov of
#      the minibatch gradient) (Welling and Teh 2011, section 4.1) measured
#      at each pilot's end, and eta set so that alpha = 20 there (the largest
#      over the chains). The minibatch noise then dominates the injected
#      noise along the stiffest few directions, as in every setting that
#      predicted well (bench/uci.R: Boston's hand-tuned lr 1e-5 has alpha
#      9-17 at the end of its runs; alpha 20 at the pilot's mode gave lr
#      0.9e-5 to 1.7e-5 on Boston's splits 1-4). A smaller alpha at the same
#      cost mixes proportionally slower: lr 5e-5 -> 2e-5 -> 1e-5 improved
#      Boston's test RMSE at equal cost, a larger batch at the same lr did
#      not (bench/uci.R's header). The step is also at most 3 over the
#      curvature there (the Fisher information's largest eigenvalue, which
#      the same measurement gives): Boston's setting is 3.1 of it, stable
#      because the chain leaves the mode for flatter regions (the curvature
#      along a run at lr 1e-5 was 1e5-1.5e5, against 3e5 at the mode), and
#      it bounds the step of a large batch, where the threshold is small.
#      Where neither binds (small networks, which the iteration cap lets run
#      at small steps) the step is the one that moves the weights the data
#      leave to the prior (curvature: the prior's precision) through 25
#      relaxation times in the sampled iterations, but at least 0.1 over the
#      pilot's curvature. On a 1-3-1 tanh network of 50 points (the test's
#      MALA reference) 100 relaxation times, or a floor of 0.25, gave steps
#      of 2e-4 to 4.8e-4 and predictive means 0.17-0.41 sd off; 25 and 0.1
#      gave 1.1e-4 to 1.2e-4, means within 0.16 sd, and still 340-480
#      effective draws (the curvature where those chains sampled was up to
#      8 times the pilot's, hence the floor below 0.25);
#  (c) the run: plain SGLD at that constant step from the pilot's end,
#      batch max(32, n / 600) (32 for the UCI sets, 100 for 60,000 images),
#      4,000 epochs for the chains to settle, then in pieces until the
#      Monte Carlo error of the predictive mean, from the spread of the
#      independent chains' means, says it is pinned down (mlp_precision();
#      below; the run's length, auto_mlp() below), at most the
#      length set by a budget of about 2e10 multiply-adds of
#      backpropagation (batch x parameters x iterations x chains: about 25 s
#      on one core; at most 500,000 iterations a chain, which only the
#      smallest networks reach), but at least 10 epochs per chain (Fashion-MNIST's
#      network: test accuracy 0.8913 at 5, 0.8977 at 10, against 0.8998 for
#      the tuned cyclical pSGLD; bench/uci-auto.md); a quarter of it is
#      burn-in, and the rest is thinned to at most 1,000 draws a chain,
#      fewer where the draws of every weight would exceed 256 MB;
#  (d) 4 chains unless `chains` is given: R-hat compares them on what is
#      identified (R/model-mlp.R, convergence_draws()), and averaging the
#      predictions of chains in different modes helps (a chain rarely
#      leaves its mode).
# Measurements behind each number are in ?model_mlp ("Automatic settings")
# and bench/uci-auto.md.

mlp_auto_chains <- 4L
mlp_auto_adam_lr <- 1e-3     # Adam's step: scale-free
mlp_auto_pilot_max <- 10000  # pilot iterations at most
mlp_auto_pilot_share <- 0.8  # and at most this share of a chain's iterations
mlp_auto_exact_step <- 0.25  # a step this / the curvature is exact enough
mlp_auto_floor_step <- 0.1   # the mixing step at least this / the pilot's curvature
mlp_auto_relaxations <- 25   # relaxation times of the prior's scale to sample
mlp_auto_alpha <- 20         # sampling threshold at the pilot's end, at most
mlp_auto_max_step <- 3       # at most this / the curvature at the pilot's end
mlp_auto_warn_step <- 0.5    # warn above this step x curvature at the end
mlp_auto_budget <- 2e10      # batch x parameters x iterations x chains
mlp_auto_min_epochs <- 10    # per chain, whatever the budget
mlp_auto_max_iter <- 5e5     # per chain, for the smallest networks
mlp_auto_burnin_share <- 0.25
mlp_auto_memory <- 256e6     # bytes of stored draws at most (all chains)
mlp_auto_settle_epochs <- 4000  # epochs a chain before its error is first checked
mlp_auto_precision <- 0.1    # Monte Carlo error of the predictive mean / predictive sd
mlp_auto_grow <- 1.2         # a further piece: the length its error asks for, times this
mlp_auto_batches <- 10       # batches of a lone chain, for batch means
mlp_auto_check_rows <- 200   # training rows the predictive mean is checked on
mlp_auto_check_draws <- 200  # draws a chain the checks use

# The model's own recipe for lr = "auto" in sgld(), or NULL for the Laplace
# recipe of R/auto.R.
auto_recipe <- function(model) UseMethod("auto_recipe")
auto_recipe.default <- function(model) NULL
auto_recipe.sgld_model_mlp <- function(model) auto_mlp

# The minibatch size: 32 (the UCI protocol's) up to 19,200 observations,
# then n / 600 (600 iterations an epoch: 100 for 60,000 images).
auto_mlp_batch <- function(n) as.integer(min(n, max(32, round(n / 600))))

# sgld() with lr = "auto" on a network; `args` holds sgld()'s arguments,
# `given` the names the user gave.
auto_mlp <- function(model, args, given, call) {
  start <- proc.time()[["elapsed"]]
  plan <- auto_mlp_plan(model, args, given)
  step <- auto_mlp_step(model, args, given, plan, call)
  setup <- proc.time()[["elapsed"]] - start
  run_piece <- auto_mlp_runner(model, args, plan, step$lr, call)
  adaptive <- !plan$continued && !any(c("iter", "burnin", "thin") %in% given) &&
    isTRUE(plan$pars)
  run <- if (adaptive) auto_mlp_adaptive_run(model, plan, step, run_piece)
         else list(fit = run_piece(plan$iter, plan$burnin, plan$thin, step$from, checks = TRUE),
                   iter = plan$iter, burnin = plan$burnin, thin = plan$thin, precision = NULL,
                   stopped = "fixed", longest = NULL, pieces = NULL)
  fit <- run$fit
  ends <- auto_mlp_check_end(model, fit, step$lr, run, plan, model$n)
  fit$auto <- list(
    lr = step$lr, batch_size = plan$batch, chains = plan$chains, pilot_iter = plan$pilot_iter,
    iter = run$iter, burnin = run$burnin, thin = run$thin, curvature = step$curvature,
    alpha = step$lr * step$alpha_unit, prior_precision = step$slowest,
    end_curvature = ends$curvature, end_alpha = ends$alpha, setup_time = setup,
    pilot = if (!is.null(step$pilot)) step$pilot$last,
    precision = run$precision, stopped = run$stopped, max_iter = run$longest,
    pieces = run$pieces,
    reason = paste(auto_mlp_reason(model, plan$chains, plan$batch, plan$pilot_iter, step$lr,
                                   step$lr * step$alpha_unit, step$lr * step$curvature,
                                   run$iter, run$burnin, run$thin, plan$continued),
                   auto_mlp_stop_reason(run$stopped, run$precision, run$longest)))
  fit$time <- fit$time + setup
  fit
}

# The run's shape from the budget and the user's settings: chains, batch,
# pilot and run lengths, burn-in, draws kept.
auto_mlp_plan <- function(model, args, given) {
  refused <- intersect(given, c("precondition", "control_variates"))
  if (length(refused))
    abort("`lr = \"auto\"` for a network runs plain SGLD after an Adam pilot, so `",
          refused[1], "` cannot be combined with it; give `lr` yourself (see \"Choosing ",
          "settings by hand\" in ?sgld).")
  n <- model$n
  d <- model$d
  chains <- if ("chains" %in% given) args$chains else mlp_auto_chains
  check_count(chains, "chains", lower = 1, upper = 1000)
  batch <- if ("batch_size" %in% given && !is.null(args$batch_size)) args$batch_size
           else auto_mlp_batch(n)
  check_count(batch, "batch_size", lower = 1, upper = n)
  continued <- inherits(args$init, "sgld_fit")
  if (continued && is.null(args$init$auto$lr))
    abort("`init`: with `lr = \"auto\"` a network continues only a fit made by ",
          "`lr = \"auto\"`; give `lr` yourself to continue this one.")
  per_chain <- ceiling(max(min(mlp_auto_budget / (batch * d * chains), mlp_auto_max_iter),
                           mlp_auto_min_epochs * n / batch))
  pilot_iter <- if (continued) 0
                else ceiling(min(mlp_auto_pilot_share * per_chain, mlp_auto_pilot_max))
  iter <- if ("iter" %in% given && !is.null(args$iter)) args$iter else per_chain - pilot_iter
  check_count(iter, "iter", lower = 1)
  burnin <- if ("burnin" %in% given) args$burnin
            else if (continued) 0 else ceiling(mlp_auto_burnin_share * iter)
  # at most the draws a chain of every sampler's default (R/pars.R)
  kept <- min(default_draws, max(10, floor(mlp_auto_memory / (8 * d * chains))))
  thin <- if ("thin" %in% given) args$thin
          else max(1, floor((iter - if (is.numeric(burnin)) burnin else 0) / kept))
  list(chains = chains, batch = batch, continued = continued, pilot_iter = pilot_iter,
       iter = iter, burnin = burnin, thin = thin, kept = kept,
       pars = if ("pars" %in% given) args$pars else TRUE,
       # a step that relaxes the prior's scale sets the length (see auto_mlp_step())
       capped = mlp_auto_budget / (batch * d * chains) >= mlp_auto_max_iter)
}

# The step: an Adam pilot from each chain's start, then the largest step
# that keeps the sampling threshold, the curvature and the prior's
# relaxation within bounds; a continued fit keeps its step.
auto_mlp_step <- function(model, args, given, plan, call) {
  if (plan$continued)
    return(list(lr = args$init$auto$lr, from = args$init, pilot = NULL, alpha_unit = NA_real_,
                curvature = NA_real_, slowest = NA_real_, relaxed_length = 0))
  n <- model$n
  chains <- plan$chains
  batch <- plan$batch
  pilot <- suppressWarnings(run_sampler(
    model, lr = lr_cyclical(mlp_auto_adam_lr, 1, beta = 0), batch_size = batch,
    iter = plan$pilot_iter, burnin = 0, thin = plan$pilot_iter, temperature = 0,
    chains = chains, init = if ("init" %in% given) args$init else NULL,
    replace = args$replace, clip = args$clip, monitor = NULL, threads = args$threads,
    rule = opt_adam(), method = "sgd", call = call, progress = args$progress,
    parallel = args$parallel))
  if (any(pilot$status != "done") || any(!is.finite(pilot$last)))
    abort("sgld(): `lr = \"auto\"` starts each chain with an Adam pilot, and the pilot of ",
          "chain ", which(pilot$status != "done" | !is.finite(rowSums(pilot$last)))[1],
          " did not end at finite weights (", pilot$status[1], "). Give `lr` yourself ",
          "(see \"Choosing settings by hand\" in ?sgld).")
  W <- to_sampler_scale(model, pilot$last)
  curvature <- max(vapply(seq_len(chains), function(k) gradient_curvature(model, W[k, ]),
                          numeric(1)))
  if (!is.finite(curvature) || curvature <= 0)
    abort("sgld(): `lr = \"auto\"` could not measure the minibatch gradient's noise at ",
          "the pilot's end. Give `lr` yourself (see \"Choosing settings by hand\" in ?sgld).")
  alpha_unit <- (n - batch) / batch * curvature / 2
  # the slowest directions: weights the data leave to the prior, whose
  # curvature is the prior's precision
  slowest <- min(apply(W, 1, mlp_prior_precisions, model = model))
  sampled <- plan$iter - if (is.numeric(plan$burnin)) plan$burnin else 0
  relaxing <- mlp_auto_relaxations / (max(1, sampled) * slowest)
  lr <- min(if (batch < n) mlp_auto_alpha / alpha_unit else Inf,
            mlp_auto_max_step / curvature,
            max(mlp_auto_floor_step / curvature, relaxing))
  # a small network (its length capped by iterations, not multiply-adds,
  # so the whole of it is cheap) whose step was set to relax the weights
  # left to the prior within the budget keeps that aim: the run is as
  # long as before (the 1-3-1 tanh network of 50 rows of
  # test-model-mlp.R, stopped after 4,000 epochs, gave predictive means
  # 0.67-0.71 sd from the MALA reference's with the chains' means
  # agreeing, against 0.12-0.15 for the whole length). A larger network
  # does not: 50 hidden units on 134-240 rows stopped after 4,000 epochs
  # predicted as well as the whole length (bench/networks-budget.md)
  list(lr = lr, from = pilot$last, pilot = pilot, alpha_unit = alpha_unit,
       curvature = curvature, slowest = slowest,
       relaxed_length = if (lr == relaxing && plan$capped) plan$iter else 0)
}

# Each piece runs without the fit's checks (on 450 rows they were a third
# of a fit's time); the returned piece is checked once, as one run of its
# whole length. The run's generic sampling-threshold warning would advise
# lr = "auto", which this is: the recipe's own warning (auto_mlp_check_end())
# reports it with settings that remedy it.
auto_mlp_muffle_threshold <- function(w)
  if (inherits(w, "sgld_warning_threshold"))
    invokeRestart("muffleWarning")

auto_mlp_runner <- function(model, args, plan, lr, call)
  function(iter, burnin, thin, init, as_run = NULL, checks = FALSE)
    withCallingHandlers(
      run_sampler(model, lr = lr, batch_size = plan$batch, iter = iter, burnin = burnin,
                  thin = thin, temperature = args$temperature, chains = plan$chains,
                  init = init, replace = args$replace, clip = args$clip,
                  monitor = args$monitor, threads = args$threads,
                  diagnostics = args$diagnostics, rule = plain_rule("SGLD"),
                  method = "sgld", call = call, pars = plan$pars, progress = args$progress,
                  parallel = args$parallel, as_run = as_run, checks = checks),
      warning = auto_mlp_muffle_threshold)

# The run's length follows the data: unless the user fixed it, the chains
# run mlp_auto_settle_epochs epochs (a quarter burn-in), then on in
# pieces, each continuing the last, until the Monte Carlo error of the
# predictive mean on the training rows, from the spread of the chains'
# means (mlp_precision()), is small against the predictive sd. Each
# further piece is as long as the last one's error says is needed; the
# returned fit is the last piece, the earlier ones its burn-in (one run,
# as_run). The minimum epochs and the budget bound the length.
# Why epochs first: the chains leave the pilot's mode (the training log
# likelihood falls by 150 on Concrete within 1,000 iterations) and settle
# over thousands of epochs, which no error computed from the draws so far
# sees: on Concrete's splits 1-2 the error from the chains' means was
# below 0.1 predictive sd after 2,000 iterations, yet test RMSE went
# 4.82 -> 4.09 -> 3.98 (split 1) over 70, 2,200 and 10,400 epochs;
# a drift test on the training log likelihood did not tell either, as it
# still rose on Boston at 4,500 epochs, where the test figures had
# settled (bench/networks-budget.md).
auto_mlp_adaptive_run <- function(model, plan, step, run_piece) {
  n <- model$n
  batch <- plan$batch
  longest <- plan$iter
  shortest <- min(longest, max(step$relaxed_length, ceiling(mlp_auto_min_epochs * n / batch)))
  piece <- min(longest, max(shortest, ceiling(mlp_auto_settle_epochs * n / batch)))
  piece_burnin <- ceiling(mlp_auto_burnin_share * piece)
  done_iter <- 0
  from_piece <- step$from
  pieces <- 0L
  precision <- NULL
  repeat {
    pieces <- pieces + 1L
    fit <- run_piece(piece, piece_burnin, max(1, floor((piece - piece_burnin) / plan$kept)),
                     from_piece, as_run = if (done_iter > 0)
                       list(iter = done_iter + piece, burnin = done_iter + piece_burnin))
    done_iter <- done_iter + piece
    if (any(fit$status != "done")) { stopped <- "stopped"; break }
    precision <- mlp_precision(model, fit)
    ratio <- precision$mean_error / mlp_auto_precision
    if (is.finite(ratio) && ratio <= 1) { stopped <- "precise"; break }
    left <- longest - done_iter
    if (left < 1) { stopped <- "budget"; break }
    sampled <- piece - piece_burnin
    need <- if (is.finite(ratio)) ceiling(mlp_auto_grow * sampled * ratio^2) else 2 * piece
    piece <- min(left, max(piece, need))
    piece_burnin <- 0
    from_piece <- fit
  }
  # what check_run() reads of the run's settings (R/warnings.R)
  fit <- withCallingHandlers(
    check_run(fit, c(fit$settings[c("iter", "burnin", "thin", "chains", "batch_size",
                                    "temperature", "replace")],
                     list(burnin_mode = "count", alpha0 = 0, cv_mode = NULL)),
              plain_rule("SGLD")),
    warning = auto_mlp_muffle_threshold)
  list(fit = fit, iter = done_iter, burnin = done_iter - (piece - piece_burnin),
       thin = fit$settings$thin, precision = precision, stopped = stopped,
       longest = longest, pieces = pieces)
}

# The recipe's own check: the step against the curvature where the chains
# ended, which is where they sampled (a run leaves the pilot's mode for
# flatter regions: Boston's curvature fell from 3e5 to 1.2e5); warns with
# settings that remedy a step too large there.
auto_mlp_check_end <- function(model, fit, lr, run, plan, n) {
  alpha_end <- suppressWarnings(max(fit$checks$alpha, na.rm = TRUE))
  done <- which(fit$status == "done")
  end_curvature <- if (length(done))
    max(vapply(done, function(k) gradient_curvature(model, fit$state$w[k, ]), numeric(1)))
    else NA_real_
  step_end <- lr * end_curvature
  if ((is.finite(step_end) && step_end > mlp_auto_warn_step) ||
      (is.finite(alpha_end) && alpha_end > 1))
    sgld_warn("mlp_step", auto_mlp_step_warning(lr, end_curvature, alpha_end, run$iter, run$burnin,
                                  plan$batch, n))
  list(curvature = end_curvature, alpha = alpha_end)
}

# The Monte Carlo error of the run's predictive mean on up to
# mlp_auto_check_rows training rows (the network's output, or each class
# probability), relative to the predictive sd there, root mean square over
# the rows. Each chain starts from its own random start through its own
# pilot, so the chains' means are independent: their variance over the
# chains, divided by the number of chains, is the error a repeat of the
# whole run would show, the spread between the modes the chains settled in
# and the autocorrelation within each included. (Batch means within chains
# miss both: on faithful, a run stopped by them moved 2.6-4.4 stated
# errors when continued.) The ratio is pooled over the rows, so each row's
# error is the pooled ratio times its predictive sd. A lone chain has only
# its batch means, which ignore other modes (said in print()).
mlp_precision <- function(model, fit) {
  draws <- fit$draws
  K <- coda::niter(draws)
  C <- coda::nchain(draws)
  B <- if (C > 1) C else min(mlp_auto_batches, floor(K / 2))
  if (B < 2) return(list(mean_error = NA_real_, chains = C))
  use <- unique(round(seq(1, K, length.out = min(K, mlp_auto_check_draws))))
  items <- unique(round(seq(1, model$n, length.out = min(model$n, mlp_auto_check_rows))))
  X <- design_matrix(model)[items, , drop = FALSE]
  per_chain <- lapply(draws, function(ch) {
    W <- to_sampler_scale(model, unclass(ch)[use, , drop = FALSE])
    out <- mlp_outputs(model, X, W)
    if (model$family == "gaussian")
      return(list(mu = out[[1]], noise = exp(W[, match("sigma2", model$names)])))
    if (model$family == "binomial") return(list(mu = stats::plogis(out[[1]])))
    top <- Reduce(pmax, out)
    e <- lapply(out, function(o) exp(o - top))
    total <- Reduce(`+`, e)
    list(mu = do.call(rbind, lapply(e, function(o) o / total)))
  })
  mu_all <- do.call(cbind, lapply(per_chain, `[[`, "mu"))
  # the means of the groups whose spread gives the error: chains, or the
  # B batches of a lone chain's draws
  group_means <- if (C > 1) vapply(per_chain, function(p) rowMeans(p$mu), numeric(nrow(mu_all)))
    else {
      k <- length(use)
      size <- floor(k / B)
      vapply(seq_len(B), function(b)
        rowMeans(mu_all[, k - size * B + (b - 1) * size + seq_len(size), drop = FALSE]),
        numeric(nrow(mu_all)))
    }
  mean_var <- apply(matrix(group_means, nrow(mu_all)), 1, stats::var) / B
  pred_var <- apply(mu_all, 1, stats::var)
  pred_var <- if (model$family == "gaussian")
    pred_var + mean(unlist(lapply(per_chain, `[[`, "noise")))
  else { p <- rowMeans(mu_all); p * (1 - p) }
  ratio <- mean(mean_var / pred_var)
  list(mean_error = sqrt(ratio), chains = C, rows = items, mean = rowMeans(mu_all),
       mean_se = sqrt(ratio * pred_var), predictive_sd = sqrt(pred_var))
}

auto_mlp_stop_reason <- function(stopped, precision, longest) {
  big <- function(x) format(x, big.mark = ",", scientific = FALSE)
  errors <- if (!is.null(precision))
    sprintf(paste0("the Monte Carlo error of the predictive mean on the training rows, ",
                   "from %s, is %s of the predictive sd (at most %s asked)"),
            if (isTRUE(precision$chains > 1)) "the spread of the chains' means"
            else "batch means of the one chain (blind to other modes)",
            format(precision$mean_error, digits = 2), mlp_auto_precision)
  switch(stopped,
    precise = sprintf("Stopped as precise enough: %s.", errors),
    budget = sprintf("Stopped at the budget's %s iterations a chain, before precise enough: %s.",
                     big(longest), errors),
    stopped = "Stopped early: a chain did not finish.",
    fixed = "")
}

# SGLD's constant step widens a Gaussian posterior's variance along a
# direction of curvature lambda by 1 / (1 - eta lambda / 2), and a sampling
# threshold alpha widens it by 1 + alpha. The remedy: the exact step (a
# quarter over the curvature), run longer by the same factor, with a batch
# large enough that the sampling threshold at that step,
# eta (n - b) / b * lambda / 2, is at most 1.
auto_mlp_step_warning <- function(lr, curvature, alpha, iter, burnin, batch, n) {
  step <- lr * curvature
  if (!is.finite(step)) step <- 0
  if (!is.finite(alpha)) alpha <- 0
  factor <- max(1, step / mlp_auto_exact_step)
  lr_exact <- lr / factor
  batch_exact <- if (curvature > 0 && is.finite(curvature))
    max(batch, min(n, ceiling(n / (1 + 2 / (lr_exact * curvature))))) else batch
  burn <- if (is.numeric(burnin)) burnin else 0
  sprintf(paste0(
    "sgld(): the step of lr = \"auto\" is %s over the curvature where the chains ended ",
    "(the largest eigenvalue of the Fisher information there), with a sampling threshold ",
    "of %s (the minibatch noise against the injected noise): along the stiffest ",
    "directions the draws spread wider than the posterior, up to %s times in variance ",
    "for a Gaussian one. It was chosen that large for the chains to mix within about ",
    "25 s. For more exact draws give lr = %s, batch_size = %d and iter = %s (about %s ",
    "times as long)."),
    format(step, digits = 2), format(alpha, digits = 2),
    if (step < 2) format((1 + alpha) / (1 - step / 2), digits = 2) else "unboundedly many",
    format(lr_exact, digits = 2), batch_exact,
    format(ceiling(burn + (iter - burn) * factor), big.mark = ",", scientific = FALSE),
    format(factor * batch_exact / batch, digits = 2))
}

auto_mlp_reason <- function(model, chains, batch, pilot_iter, lr, alpha, step, iter, burnin,
                            thin, continued) {
  big <- function(x) format(x, big.mark = ",", scientific = FALSE)
  epochs <- function(it) format(it * batch / model$n, digits = 2)
  sprintf(paste0(
    "lr = \"auto\" for a network: %d chain%s%s, SGLD at lr %s (%s), batch %d, %s ",
    "iterations (%s epochs; %s burn-in), every %s kept."),
    chains, if (chains > 1) "s" else "",
    if (continued) ", continuing the fit given as `init`"
    else sprintf(", each from its own random start through an Adam pilot of %s iterations (%s epochs)",
                 big(pilot_iter), epochs(pilot_iter)),
    format(lr, digits = 3),
    if (continued) "the fit's"
    else sprintf("sampling threshold %s and %s over the curvature at the pilot's end",
                 format(alpha, digits = 2), format(step, digits = 2)),
    batch, big(iter), epochs(iter),
    if (is.numeric(burnin)) big(burnin) else "threshold", big(thin))
}

# The largest eigenvalue of the data's gradient covariance at w (sampler's
# scale), n times the covariance of one item's gradient: the Fisher
# information's, which is the curvature of the log likelihood at a mode. A
# minibatch estimate of b items drawn without replacement has covariance
# n (n - b) / b times one item's over the data, so its sampling threshold at
# step eta is eta (n - b) / b * curvature / 2 for every b: measured once, at
# batch min(32, n / 2), from repeated estimates G (times x d); where d is
# larger than times, through the times x times Gram matrix of the centred
# rows, which has the same nonzero eigenvalues as the d x d covariance:
# O(times^2 d) instead of O(d^2), for networks of any size. Its memory, times x d doubles, is kept near 2e7
# (160 MB): 20 to 100 estimates.
gradient_curvature <- function(model, w, times = NULL) {
  n <- model$n
  b <- max(1, min(32, floor(n / 2)))
  if (is.null(times)) times <- as.integer(max(20, min(100, floor(2e7 / model$d))))
  G <- with_seed_kept(.Call(C_sgld_gradient_draws, model, list(
    w = as.double(w), batch_size = b, times = times, replace = FALSE, cv_mode = NULL)))
  if (any(!is.finite(G))) return(NA_real_)
  G <- sweep(G, 2, colMeans(G))
  C <- if (ncol(G) < nrow(G)) crossprod(G) else tcrossprod(G)
  top <- max(eigen(C / (times - 1), symmetric = TRUE, only.values = TRUE)$values)
  top * b / (n - b)
}
