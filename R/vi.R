#' Variational inference: Bayes by Backprop
#'
#' Fits a Gaussian approximation \eqn{q(w) = N(\mu, L L^\top)}{q(w) = N(mu, L L')}
#' to the posterior of any model by stochastic gradients (Blundell et al.
#' 2015): each iteration draws \eqn{\epsilon \sim N(0, I)}{eps ~ N(0, I)},
#' takes the model's minibatch gradient \eqn{g = \hat g(w)}{g = g_hat(w)} of
#' the log joint at \eqn{w = \mu + L\epsilon}{w = mu + L eps} (the same
#' estimate [sgld()] uses) and moves \eqn{(\mu, L)}{(mu, L)} uphill on the
#' evidence lower bound
#' \deqn{\mathrm{ELBO} = E_q[\log p(D, w)] + \sum_j \log L_{jj} + \mathrm{const}}{ELBO = E_q[log p(D, w)] + sum_j log L_jj + const}
#' with the unbiased estimates \eqn{\nabla_\mu \approx g}{grad_mu ~ g},
#' \eqn{\nabla_{L_{ij}} \approx g_i \epsilon_j}{grad_L_ij ~ g_i eps_j} below the diagonal and
#' \eqn{\nabla_{\rho_j} \approx (g_j \epsilon_j + 1/\sigma_j)\,\mathrm{sigmoid}(\rho_j)}{grad_rho_j ~ (g_j eps_j + 1/sigma_j) sigmoid(rho_j)}
#' for the diagonal \eqn{\sigma_j = L_{jj} = \log(1 + e^{\rho_j})}{sigma_j = L_jj = log(1 + exp(rho_j))},
#' averaged over `samples` draws of \eqn{\epsilon}{eps} on one minibatch.
#' `family = "meanfield"` keeps \eqn{L}{L} diagonal (Bayes by Backprop
#' proper); `"fullrank"` fits the whole lower-triangular factor, for up to a
#' few hundred parameters.
#'
#' The fit runs in the samplers' engine as an update rule, so schedules,
#' several chains (independent restarts, each with its own random stream),
#' threads, progress, interrupts, divergence handling and continuation
#' (`init = fit`) work as for [sgld()], and so do control variates
#' (`control_variates = TRUE`), which matter more here than for the samplers:
#' the minibatch noise of the gradient sets how close the optimiser can get
#' to the optimum, and on large data sets plain minibatches need thousands of
#' passes for the means to settle within a few hundredths of a posterior sd
#' (bench/vi.R: logistic regression, n = 10^5, batch 100, 0.064 sd after
#' 2.9 million iterations; with control variates 0.041 sd after 8000). A
#' mean-field fit underestimates
#' posterior variances by design: for a Gaussian posterior with precision
#' \eqn{\Lambda}{Lambda} its optimum has the exact means and variances
#' \eqn{1/\Lambda_{jj}}{1/Lambda_jj}, not the marginal variances.
#'
#' @inheritParams sgld
#' @param lr Learning rate of the optimiser: a number or a schedule. The
#'   default, `lr_exp(0.01, 1e-4)`, lets Adam travel early and settle late
#'   (its iterates jitter by about `lr` times the posterior's scale).
#' @param iter Number of iterations per chain.
#' @param family `"meanfield"` or `"fullrank"`.
#' @param samples Monte Carlo draws of \eqn{\epsilon}{eps} per iteration (a
#'   whole number >= 1), all on the iteration's minibatch.
#' @param optimizer The optimiser of \eqn{(\mu, \rho, L)}{(mu, rho, L)}:
#'   `"adam"` (default), `"sgd"`, `"momentum"`, `"adagrad"`, `"rmsprop"`, or
#'   one made by [opt_adam()] and friends.
#' @param init_scale The starting scale of \eqn{q} on the sampler's scale: a
#'   positive number or a positive vector of length `model$d` (the starting
#'   sds), or for `"fullrank"` also a positive definite d x d covariance
#'   matrix. The default is 0.01 for every parameter.
#' @param average The fraction of the iterations at the end over which
#'   \eqn{(\mu, \rho, L)}{(mu, rho, L)} are averaged (Polyak-Ruppert
#'   averaging); the fit's \eqn{q} is that average (0: the final iterate). The
#'   last iterate of a stochastic optimiser scatters around the optimum; the
#'   average does not (logistic regression, n = 10^5, batch 100: the final
#'   iterate's means were still 0.2 to 0.4 posterior sd off after 10^6
#'   iterations). A continued fit averages from where the first run started to.
#' @param init Starting means on the user's scale (as in [sgld()]), or a fit
#'   of `bbb()` to continue.
#' @param draws Draws from \eqn{q} per chain in the fit's `draws`.
#' @param thin Keep every `thin`-th iterate of \eqn{\mu}{mu} in
#'   `fit$trajectory` (default: about 1000 per chain).
#' @param elbo_every Estimate the full-data ELBO of every chain each
#'   `elbo_every` iterations (default: at the end only), for
#'   `fit$elbo_trace`. The run is then executed in parts that continue one
#'   another exactly (the iterates are those of one run; the progress display
#'   restarts with each part); each estimate costs `elbo_draws` full-data
#'   evaluations of the log joint.
#' @param elbo_draws Draws from \eqn{q} per ELBO estimate (0 for none).
#' @param local Local reparameterisation (Kingma, Salimans and Welling 2015):
#'   `TRUE`, `FALSE` or `"auto"`. For a mean-field \eqn{q}{q} and a model
#'   whose likelihood depends on its weights through per-observation linear
#'   combinations ([model_logistic()], [model_linear()], and each layer of
#'   [model_mlp()]), each observation's combinations
#'   \eqn{x_i^\top w}{x_i' w} are drawn from their exact distribution under
#'   \eqn{q}{q}, \eqn{N(x_i^\top\mu, \sum_j x_{ij}^2\sigma_j^2)}{N(x_i' mu, sum_j x_ij^2 sigma_j^2)},
#'   independently per observation, instead of one \eqn{w}{w} for the whole
#'   minibatch; parameters that are not weights (the noise variance, a
#'   network's precisions) are drawn once per iteration as before. The
#'   estimate stays unbiased and its variance falls; each iteration costs
#'   more (two passes over each row and a normal draw per observation and
#'   unit). Measured (bench/vi-local.R, bench/RESULTS.md): at batch 100 the
#'   variance of the gradient in the means hardly changes (ratios 0.96 to 1.27:
#'   it is the minibatch's), that in the scales falls 1.4-fold (linear, d = 3),
#'   7-fold (logistic, d = 20), 2.4-fold (Adult, d = 123, median) and 3-fold
#'   (a network with 8 hidden units), while an iteration takes 1.8 to 3.5
#'   times as long. The weights' share of the noise grows with the batch: at
#'   batch 1000 the network's means' gradient variance fell 6-fold (the
#'   regressions' still 1.1-fold). So `"auto"` turns it on for [model_mlp()]
#'   networks with batches of 500 or more and leaves it off otherwise. It
#'   does not combine with `control_variates` or `clip`.
#' @param elbo_batch Keep the per-iteration minibatch estimate of the ELBO
#'   (`fit$elbo_batch`)? `"auto"` keeps it when `local` is on, where the
#'   model returns the minibatch log likelihood with the gradient for free;
#'   otherwise it costs an extra pass over every minibatch (measured: an
#'   iteration 2.3 times as long for logistic regression, d = 20, batch 100;
#'   1.6 times for a small network), so it is off unless asked for.
#' @return An object of class `sgld_vi` (and `sgld_fit`): its `draws` are
#'   draws from the approximation \eqn{q} (not from the posterior), so
#'   `summary()`, `coef()`, `predict()` and the posterior/bayesplot methods
#'   work unchanged; `variational` holds per chain the means, sds, and the
#'   factor `L` and covariance of \eqn{q} on the sampler's scale, and the
#'   means and sds of the draws on the user's scale; `elbo` the final
#'   full-data ELBO estimate per chain and its Monte Carlo standard error, and
#'   `elbo_trace` all estimates made (iteration, chain, elbo, se); if the
#'   run diverges, the trace up to there is kept with a warning;
#'   `elbo_batch` (when kept, see `elbo_batch`) the minibatch ELBO at every
#'   kept iterate of the trajectory (iteration, chain, elbo), each the mean of
#'   the per-iteration estimates \eqn{\log p(w) + (n/m)\sum_{i \in B}\log
#'   f(z_i | w) + H(q)}{log p(w) + (n/m) sum_(i in B) log f(z_i | w) + H(q)} over the
#'   iterations since the previous kept iterate (unbiased for the ELBO of
#'   the \eqn{q}{q} of each iteration, and noisy: a monitor of progress, not a
#'   measurement);
#'   `trajectory` the kept iterates of \eqn{\mu}{mu} as a [coda::mcmc.list].
#' @references Blundell, C., Cornebise, J., Kavukcuoglu, K. and Wierstra, D.
#'   (2015). Weight uncertainty in neural networks. *Proceedings of the 32nd ICML*.
#'
#'   Kingma, D. P., Salimans, T. and Welling, M. (2015). Variational dropout
#'   and the local reparameterization trick. *Advances in NeurIPS 28*.
#' @seealso [psis_khat()] to check the approximation.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- bbb(m, iter = 3000)
#' fit
#' @export
bbb <- function(model, lr = lr_exp(0.01, 1e-4), batch_size = NULL, iter = 10000, ...,
                family = c("meanfield", "fullrank"), samples = 1, optimizer = "adam",
                init_scale = NULL, average = 0.5, chains = 1, init = NULL, draws = 1000,
                thin = NULL,
                elbo_every = NULL, elbo_draws = 100, local = "auto", elbo_batch = "auto",
                replace = FALSE,
                control_variates = FALSE, clip = NULL, monitor = NULL,
                threads = getOption("sgld.threads", 1L),
                progress = getOption("sgld.progress", interactive())) {
  check_dots_empty(...)
  check_model(model)
  family <- check_choice(family, c("meanfield", "fullrank"), "family")
  label <- vi_label(family)
  check_count(samples, "samples", lower = 1, upper = 1e6)
  check_count(draws, "draws", lower = 1, upper = 1e7)
  check_count(elbo_draws, "elbo_draws", lower = 0, upper = 1e6)
  check_count(iter, "iter", lower = 1)
  check_number(average, "average", lower = 0, upper = 1)
  if (is.null(elbo_every)) elbo_every <- iter
  check_count(elbo_every, "elbo_every", lower = 1)
  if (is.null(thin)) {
    # about 1000 iterates per chain, and a divisor of elbo_every so that the
    # parts of the run keep iterates at the spacing of one run
    thin <- max(1, floor(iter / 1000))
    while (elbo_every %% thin != 0) thin <- thin - 1
  }
  check_count(thin, "thin", lower = 1)
  if (elbo_every < iter && elbo_every %% thin != 0)
    abort("`elbo_every` (", elbo_every, ") must be a multiple of `thin` (", thin, ").")
  if (family == "fullrank" && model$d > 1000)
    abort(label, ": ", model$d, " parameters are too many for a full-rank family ",
          "(a ", model$d, " x ", model$d, " factor); use family = \"meanfield\".")
  inner <- resolve_vi_optimizer(optimizer, label)
  cv_on <- !isFALSE(control_variates) && !is.null(control_variates)
  local <- resolve_local(local, model, family, cv_on, clip, batch_size, label)
  elbo_batch <- resolve_elbo_batch(elbo_batch, local)
  continuing <- inherits(init, "sgld_fit")
  if (continuing && !inherits(init, "sgld_vi"))
    abort("`init`: ", label, " continues a fit of bbb(), not of ", init$method, "().")
  # the starting scale does not matter when carrying on: the fit's state holds it
  scale_init <- if (continuing) init$state$rule$opts$scale_init
                else vi_scale_init(init_scale, model$d, family, label)
  # the step after which theta is averaged: kept when carrying on, so that a
  # continued run averages as one run would
  average_from <- if (continuing) init$state$rule$opts$average_from
                  else floor(iter * (1 - average))
  rule <- update_rule(paste0("vi_", family), label,
                      list(samples = as.integer(samples), optimizer = inner$name,
                           optimizer_opts = inner$opts, scale_init = scale_init,
                           average_from = as.double(average_from),
                           local = as.integer(local), elbo_batch = as.integer(elbo_batch)))
  # The run in segments of elbo_every iterations, each continuing the last
  # (continuation is exact, so the iterates are those of one run), with a
  # full-data ELBO estimate of every chain between them: the ELBO trace.
  # control variates: the mode found once, for every part of the run
  if (!isFALSE(control_variates) && !is.null(control_variates))
    control_variates <- to_user_scale(model, matrix(resolve_control_variates(control_variates,
                                                                             model), 1))[1, ]
  lr <- as_lr(lr)
  schedule <- new_lr("resolved", schedule = resolve_lr(lr, iter))
  ends <- unique(c(seq(elbo_every, iter, by = elbo_every), iter))
  segs <- list()
  trace <- NULL
  from <- init
  t0 <- if (continuing) init$state$iteration else rep(0, chains)
  for (k in seq_along(ends)) {
    len <- ends[k] - if (k > 1) ends[k - 1] else 0
    # a schedule over the whole run: continued segments evaluate it at their
    # absolute iteration, so give each the whole run's length
    fit <- run_sampler(model, lr = schedule, batch_size = batch_size, iter = len, burnin = 0,
                       thin = thin, temperature = 0, chains = chains, init = from,
                       replace = replace, clip = clip, monitor = monitor, threads = threads,
                       rule = rule, control_variates = control_variates,
                       method = "vi", call = match.call(), pars = NULL, progress = progress)
    class(fit) <- c("sgld_vi", class(fit))
    segs[[k]] <- fit
    ok <- all(fit$status == "done")
    if (elbo_draws > 0 && (k < length(ends) || !ok)) {
      q <- vi_q(fit, family)
      e <- vi_elbo(model, q, elbo_draws, seq_len(chains))
      trace <- rbind(trace, data.frame(iteration = fit$state$iteration, chain = seq_len(chains),
                                       elbo = e$elbo, se = e$se))
    }
    if (!ok) {
      if (ends[k] < iter)
        warning(label, ": the run stopped after ", max(fit$state$iteration - t0), " of ", iter,
                " iterations, as chain", if (sum(fit$status != "done") > 1) "s", " ",
                paste(which(fit$status != "done"), collapse = ", "), " ",
                paste(unique(fit$status[fit$status != "done"]), collapse = "/"),
                "; `fit$elbo_trace` holds the ELBO trace so far.", call. = FALSE)
      break
    }
    from <- fit
  }
  fit <- join_segments(segs, t0)
  fit$call <- match.call()
  fit$settings$lr <- lr
  fit <- vi_fit(fit, family, draws = draws, elbo_draws = elbo_draws, trace = trace)
  fit$variational$local <- local
  fit
}

# the models whose C side has grad_loglik_local (sgld.h)
local_types <- c("logistic", "linear", "mlp_regression", "mlp_classification")

# local = "auto", TRUE or FALSE -> TRUE/FALSE. Local reparameterisation needs a
# mean-field q and a model linear in its weights; it bypasses the gradient
# estimator, so it does not combine with control variates or clipping.
resolve_local <- function(local, model, family, cv_on, clip, batch_size, label) {
  if (!(identical(local, "auto") || isTRUE(local) || isFALSE(local)))
    abort("`local` must be \"auto\", TRUE or FALSE; not ", describe(local), ".")
  can <- family == "meanfield" && isTRUE(model$type %in% local_types)
  if (isTRUE(local)) {
    why <- if (family != "meanfield") "a mean-field family (family = \"meanfield\")"
           else if (!can) paste0("a model linear in its weights (",
                                 "model_logistic(), model_linear() or model_mlp())")
           else if (cv_on) "plain minibatches (control_variates = FALSE)"
           else if (!is.null(clip)) "an unclipped gradient (clip = NULL)"
    if (!is.null(why)) abort("`local = TRUE` (local reparameterisation) needs ", why, ".")
    return(TRUE)
  }
  if (isFALSE(local) || !can || cv_on || !is.null(clip)) return(FALSE)
  local_auto(model, batch_size)
}

# Where local reparameterisation is on by default (bench/vi-local.R, figures
# in bench/EARLIER.md, the run of 2026-11-23). It cuts the variance of the
# gradient in the scales 1.4- to 8-fold, but that in the means only by the
# share of the weights' noise in it, which grows with the batch: the means'
# total variance ratio (ordinary / local) was 0.96-1.08 for the regressions at
# batch 100 and 1.06-1.08 at batch 1000; for a network with 8 hidden units
# 1.35 at batch 100, 1.81 at 300 and 6.0 at 1000. An iteration costs 2x as
# much on the network and 2.7-3.5x on the regressions (whose ordinary gradient
# has the blocked kernels of dense.h). So: on for networks at batches of 500
# or more (break-even near 330, interpolating between 300 and 1000), off for
# the regressions at any batch.
local_auto <- function(model, batch_size) {
  m <- if (is.null(batch_size)) min(100, model$n) else batch_size
  grepl("^mlp_", model$type) && m >= 500
}

# elbo_batch = "auto", TRUE or FALSE: keep the per-iteration minibatch ELBO
# (fit$elbo_batch). Free with local reparameterisation (the model returns the
# minibatch log likelihood); otherwise an extra pass over each minibatch.
resolve_elbo_batch <- function(elbo_batch, local) {
  if (!(identical(elbo_batch, "auto") || isTRUE(elbo_batch) || isFALSE(elbo_batch)))
    abort("`elbo_batch` must be \"auto\", TRUE or FALSE; not ", describe(elbo_batch), ".")
  if (identical(elbo_batch, "auto")) return(elbo_batch_auto(local))
  elbo_batch
}

elbo_batch_auto <- function(local) {
  local
}

# One fit from the segments of a run: the trajectory and its step sizes
# joined, the time summed, everything else from the last segment.
join_segments <- function(segs, t0) {
  last <- segs[[length(segs)]]
  if (length(segs) == 1) return(last)
  chains <- length(last$status)
  ids <- last$chain_ids
  traj <- lapply(seq_len(chains), function(c) {
    do.call(rbind, lapply(segs, function(s) {
      x <- if (c %in% s$chain_ids) s$draws[[match(c, s$chain_ids)]]
           else s$partial[[sprintf("chain %d", c)]]
      if (is.null(x)) NULL else unclass(x)[, , drop = FALSE]
      # (a chain that stopped early is absent from later parts: it is not in ids)
    }))
  })
  K <- min(vapply(traj[ids], nrow, 1L))
  thin <- last$settings$thin
  first <- segs[[1]]$draws[[1]]
  start <- if (length(first)) coda::mcpar(first)[1] else thin
  last$draws <- coda::mcmc.list(lapply(traj[ids], function(x)
    coda::mcmc(x[seq_len(K), , drop = FALSE], start = start, thin = thin)))
  glue <- function(field) vapply(ids, function(c) unlist(lapply(segs, function(s)
    s[[field]][, match(c, s$chain_ids)]))[seq_len(K)], numeric(K))
  last$lr <- glue("lr")
  last$iteration <- glue("iteration")
  last$rule_trace <- glue("rule_trace")
  last$time <- sum(vapply(segs, function(s) s$time, 0))
  last$sampling_time <- sum(vapply(segs, function(s) s$sampling_time, 0))
  last$monitor <- do.call(rbind, lapply(segs, function(s) s$monitor))
  last$settings$iter <- sum(vapply(segs, function(s) s$settings$iter, 0))
  last$settings$init <- segs[[1]]$settings$init
  last
}

vi_label <- function(family) {
  if (family == "meanfield") "Bayes by Backprop (mean-field Gaussian)"
  else "Bayes by Backprop (full-rank Gaussian)"
}

resolve_vi_optimizer <- function(optimizer, label) {
  if (identical(optimizer, "sgd")) return(update_rule("sgld", "SGD"))
  ok <- c("sgd", "momentum", "adagrad", "rmsprop", "adam")
  if (is.character(optimizer) && length(optimizer) == 1 && optimizer %in% ok)
    return(resolve_optimizer(optimizer, NULL))
  if (inherits(optimizer, "sgld_rule") && optimizer$name %in% c("sgld", ok) && !optimizer$sampler)
    return(optimizer)
  abort("`optimizer` for ", label, " must be one of \"", paste(ok, collapse = "\", \""),
        "\" or made by opt_momentum(), opt_adagrad(), opt_rmsprop() or opt_adam(); not ",
        describe(optimizer), ".")
}

# softplus and its inverse, for sigma = softplus(rho)
softplus <- function(x) ifelse(x > 0, x + log1p(exp(-x)), log1p(exp(x)))
softplus_inv <- function(s) ifelse(s > 30, s, log(expm1(s)))

# The starting parameters of the scale (rho, and for full rank the entries
# below the diagonal, column by column: rho_j, L[j+1, j], ..., L[d, j]).
vi_scale_init <- function(init_scale, d, family, label) {
  if (is.null(init_scale)) init_scale <- 0.01
  what <- paste0("`init_scale` for ", label)
  if (is.matrix(init_scale) && family == "fullrank") {
    S <- init_scale
    if (!is.numeric(S) || any(dim(S) != d) || any(!is.finite(S)))
      abort(what, " must be a finite ", d, " x ", d, " covariance matrix.")
    if (!isSymmetric(unname(S))) abort(what, " must be symmetric.")
    ev <- eigen(S, symmetric = TRUE, only.values = TRUE)$values
    if (min(ev) <= 1e-12 * max(abs(ev), .Machine$double.xmin))
      abort(what, " must be positive definite; the matrix given is rank-deficient or ",
            "indefinite (smallest eigenvalue ", format(min(ev), digits = 3), ").")
    L <- t(chol(S))
  } else {
    if (!is.numeric(init_scale) || is.object(init_scale) || is.matrix(init_scale) ||
        !length(init_scale) %in% c(1, d))
      abort(what, " must be a positive number or a vector of ", d, " positive numbers",
            if (family == "fullrank") paste0(", or a ", d, " x ", d, " covariance matrix"),
            "; not ", describe(init_scale), ".")
    if (any(!is.finite(init_scale)) || any(init_scale <= 0))
      abort(what, " must be positive and finite (the starting sds of q); got ",
            paste(format(utils::head(init_scale[!is.finite(init_scale) | init_scale <= 0], 3)),
                  collapse = ", "), ".")
    L <- diag(rep_len(as.double(init_scale), d), d)
  }
  if (any(diag(L) > 1e300)) abort(what, " is too large.")
  if (family == "meanfield") return(softplus_inv(diag(L)))
  unlist(lapply(seq_len(d), function(j) c(softplus_inv(L[j, j]), L[seq_len(d - j) + j, j])))
}

# q's factor L of chain c, from the rule's state
vi_factor <- function(state, d, family) {
  if (family == "meanfield") return(diag(softplus(state[seq_len(d)]), d))
  L <- matrix(0, d, d)
  at <- 0
  for (j in seq_len(d)) {
    col <- state[at + seq_len(d - j + 1)]
    L[j:d, j] <- c(softplus(col[1]), col[-1])
    at <- at + d - j + 1
  }
  L
}

# q of every chain from an engine fit: means (rows), factors L, and which
# chains have a finite one
vi_q <- function(fit, family) {
  d <- fit$model$d
  chains <- length(fit$status)
  mu <- unname(fit$state$w)
  state <- matrix(fit$state$update, ncol = chains)
  # the rule's state (src/update_vi.c): scale parameters, the optimiser's
  # 2p + 2, the average of theta = (mu, scale parameters) over the steps after
  # average_from, its count, the steps taken
  n_scale <- if (family == "meanfield") d else d * (d + 1) / 2
  p <- d + n_scale
  at <- n_scale + 2 * p + 2
  averaged <- state[at + p + 1, ] > 0
  scale <- lapply(seq_len(chains), function(c) {
    if (!averaged[c]) return(state[seq_len(n_scale), c])
    mu[c, ] <<- state[at + seq_len(d), c]
    state[at + d + seq_len(n_scale), c]
  })
  L <- lapply(seq_len(chains), function(c) vi_factor(scale[[c]], d, family))
  finite <- vapply(seq_len(chains), function(c) all(is.finite(L[[c]])) && all(is.finite(mu[c, ])), TRUE)
  list(mu = mu, L = L, finite = finite)
}

# n draws from chain c's q, one per row (sampler's scale)
sample_q <- function(q, c, n) {
  d <- ncol(q$mu)
  Z <- matrix(stats::rnorm(n * d), n, d)
  sweep(Z %*% t(q$L[[c]]), 2, q$mu[c, ], `+`)
}

# full-data ELBO estimates of the given chains from n draws each, and their
# Monte Carlo standard errors
vi_elbo <- function(model, q, n, chains) {
  e <- vapply(chains, function(c) {
    if (!q$finite[c]) return(c(NA_real_, NA_real_))
    W <- sample_q(q, c, n)
    v <- log_joint_draws(model, W) - log_q_draws(W, q$mu[c, ], q$L[[c]])
    c(mean(v), if (n > 1) stats::sd(v) / sqrt(n) else NA_real_)
  }, numeric(2))
  list(elbo = e[1, ], se = e[2, ])
}

# Turn the engine's fit (mu's trajectory in `draws`) into the variational fit.
vi_fit <- function(fit, family, draws, elbo_draws, trace) {
  model <- fit$model
  d <- model$d
  chains <- fit$settings$chains
  q <- vi_q(fit, family)
  mu <- q$mu
  L <- q$L
  usable <- which(fit$status %in% c("done", "interrupted") & q$finite)
  sd <- matrix(t(vapply(L, function(l) sqrt(rowSums(l^2)), numeric(d))), chains, d)
  dimnames(sd) <- dimnames(mu) <- list(paste("chain", seq_len(chains)), model$sampler_names)
  cov <- lapply(L, function(l) {
    S <- tcrossprod(l)
    dimnames(S) <- list(model$sampler_names, model$sampler_names)
    S
  })
  fit$trajectory <- fit$draws
  fit$trajectory_lr <- fit$lr
  fit$trajectory_iteration <- fit$iteration
  # the minibatch ELBO, each the mean over the iterations since the last kept iterate
  if (!is.null(fit$rule_trace) && length(fit$rule_trace) && any(!is.na(fit$rule_trace))) {
    ids <- fit$chain_ids
    fit$elbo_batch <- data.frame(iteration = as.vector(fit$iteration),
                                 chain = rep(ids, each = nrow(fit$iteration)),
                                 elbo = as.vector(fit$rule_trace))
  }
  fit$rule_trace <- NULL
  if (!length(usable)) {
    warning(fit$rule, ": no chain ended with a usable approximation (",
            paste0("chain ", seq_len(chains), " ", fit$status, collapse = ", "),
            "); the fit has no draws from q, only the trajectory of its means and the ",
            "ELBO trace so far. Try a smaller learning rate (`lr`).", call. = FALSE)
    draws <- 0
    usable <- seq_len(chains)
  }
  qdraws <- lapply(usable, function(c) {
    u <- if (draws > 0) to_user_scale(model, sample_q(q, c, draws)) else matrix(0, 0, d)
    dimnames(u) <- list(NULL, model$names)
    coda::mcmc(u)
  })
  fit$draws <- coda::mcmc.list(qdraws)
  fit$chain_ids <- usable
  fit$lr <- matrix(1, draws, length(usable))
  fit$iteration <- matrix(fit$state$iteration[usable], draws, length(usable), byrow = TRUE)
  fit$partial <- list()
  fit$pars <- NULL
  fit$kept <- rep(draws, chains)
  fit$moments <- NULL
  user <- lapply(qdraws, function(x) rbind(mean = colMeans(x), sd = apply(x, 2, stats::sd)))
  fit$variational <- list(family = family, mean = mu, sd = sd, L = L, cov = cov,
                          user_mean = t(vapply(user, function(u) u["mean", ], numeric(d))),
                          user_sd = t(vapply(user, function(u) u["sd", ], numeric(d))))
  if (elbo_draws > 0 && all(fit$status == "done")) {
    e <- vi_elbo(model, q, elbo_draws, seq_len(chains))
    trace <- rbind(trace, data.frame(iteration = fit$state$iteration, chain = seq_len(chains),
                                     elbo = e$elbo, se = e$se))
  }
  if (!is.null(trace)) {
    trace <- trace[order(trace$chain, trace$iteration), ]
    rownames(trace) <- NULL
    last <- !duplicated(trace$chain, fromLast = TRUE)
    fit$elbo <- trace[last, c("chain", "elbo", "se")]
    rownames(fit$elbo) <- NULL
    fit$elbo_trace <- trace
    if (!is.null(fit$elbo_trace) && any(!is.finite(trace$elbo)))
      warning(fit$rule, ": the ELBO estimate became non-finite; `fit$elbo_trace` holds ",
              "the trace up to there.", call. = FALSE)
  }
  fit$method <- "vi"
  class(fit) <- c("sgld_vi", setdiff(class(fit), "sgld_vi"))
  fit
}

# log p(D, w) at each row of W (sampler's scale), over the full data
log_joint_draws <- function(model, W) {
  apply(W, 1, function(w) {
    r <- .Call(C_sgld_model_eval, model, as.double(w))
    stop_on_failure(model)
    r$loglik + r$logprior
  })
}

# log N(w; mu, L L^T) at each row of W
log_q_draws <- function(W, mu, L) {
  Z <- forwardsolve(L, t(W) - mu)
  -0.5 * colSums(Z^2) - sum(log(diag(L))) - 0.5 * length(mu) * log(2 * pi)
}

#' @export
print.sgld_vi <- function(x, digits = 4, ...) {
  s <- x$settings
  cat(x$rule, " on ", class(x$model)[1], ": ", s$chains, " chain", if (s$chains > 1) "s",
      " x ", format(s$iter, big.mark = ",", scientific = FALSE), " iterations, batch size ",
      s$batch_size, "; ", format(x$time, digits = 3), " s\n", sep = "")
  cat("Draws from the variational approximation q, not from the posterior: ",
      format(ndraws(x), big.mark = ","), " per chain", "\n", sep = "")
  if (!is.null(x$elbo))
    cat("ELBO (full data, per chain): ",
        paste(format(x$elbo$elbo, digits = 6), collapse = ", "), "\n", sep = "")
  if (!is.null(x$elbo_batch)) {
    # the last tenth of the trajectory's minibatch ELBO, per chain
    eb <- x$elbo_batch
    last <- eb$iteration > stats::quantile(eb$iteration, 0.9)
    cat("ELBO (minibatch, mean of the last tenth, per chain): ",
        paste(format(tapply(eb$elbo[last], eb$chain[last], mean), digits = 6), collapse = ", "),
        "\n", sep = "")
  }
  if (any(x$status != "done"))
    cat("Stopped early: ", paste0("chain ", seq_along(x$status), " ", x$status,
                                  collapse = ", "), "\n", sep = "")
  if (ndraws(x) == 0) return(invisible(x))
  cat("\n")
  sm <- summary(x)$statistics
  print(sm[, c("mean", "sd", "2.5%", "97.5%"), drop = FALSE], digits = digits)
  invisible(x)
}

#' Pareto-smoothed importance sampling check of a variational fit
#'
#' How good is the approximation \eqn{q}? Draw \eqn{w_s \sim q}{w_s ~ q} and fit a
#' generalised Pareto distribution to the largest importance ratios
#' \eqn{r_s = p(D, w_s) / q(w_s)} (Yao et al. 2018): its shape \eqn{\hat k}{k-hat}
#' says how heavy their tail is. Below 0.5 the approximation is good enough
#' for importance sampling to correct it; between 0.5 and 0.7 usable; above
#' 0.7 too far from the posterior for the draws to be trusted (typically
#' because \eqn{q} is narrower than the posterior, as a mean-field \eqn{q} of
#' a correlated posterior is). The log joint is evaluated on the full data.
#'
#' The tail is the largest \eqn{M = \min(S/5, 3\sqrt S)}{M = min(S/5, 3 sqrt(S))}
#' ratios of \eqn{S} draws. With the loo package installed its `psis()` does
#' the fit; otherwise the package's own implementation of the same
#' estimator (Zhang and Stephens 2009, with the weakly informative prior
#' Vehtari et al. use, which shrinks \eqn{\hat k}{k-hat} towards 0.5 by 10 pseudo-observations).
#'
#' @param fit A fit of [bbb()].
#' @param draws Draws from \eqn{q} per chain, \eqn{S}.
#' @param method `"auto"` (loo if installed), `"loo"` or `"own"`.
#' @return A data frame with one row per chain: `khat` and the number of
#'   draws in the tail.
#' @references Yao, Y., Vehtari, A., Simpson, D. and Gelman, A. (2018). Yes,
#'   but did it work?: Evaluating variational inference. *Proceedings of the
#'   35th ICML*.
#'
#'   Zhang, J. and Stephens, M. A. (2009). A new and efficient estimation
#'   method for the generalized Pareto distribution. *Technometrics* 51, 316-325.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' psis_khat(bbb(m, iter = 3000), draws = 500)
#' @export
psis_khat <- function(fit, draws = 1000, method = c("auto", "loo", "own")) {
  if (!inherits(fit, "sgld_vi")) abort("`fit` must be a fit of bbb(), not ", describe(fit), ".")
  check_count(draws, "draws", lower = 20, upper = 1e6)
  method <- check_choice(method, c("auto", "loo", "own"), "method")
  if (method == "auto") method <- if (requireNamespace("loo", quietly = TRUE)) "loo" else "own"
  if (method == "loo" && !requireNamespace("loo", quietly = TRUE))
    abort("`method = \"loo\"` needs the loo package.")
  model <- fit$model
  q <- list(mu = fit$variational$mean, L = fit$variational$L,
            finite = vapply(fit$variational$L, function(l) all(is.finite(l)), TRUE))
  chains <- fit$chain_ids
  out <- t(vapply(chains, function(c) {
    W <- sample_q(q, c, draws)
    lr <- log_joint_draws(model, W) - log_q_draws(W, q$mu[c, ], q$L[[c]])
    tail_n <- tail_length(draws)
    k <- if (method == "loo") {
      suppressWarnings(loo::psis(lr, r_eff = 1)$diagnostics$pareto_k)
    } else pareto_tail_khat(lr, tail_n)
    c(k, tail_n)
  }, numeric(2)))
  data.frame(chain = chains, khat = out[, 1], tail = as.integer(out[, 2]))
}

tail_length <- function(S) as.integer(ceiling(min(S / 5, 3 * sqrt(S))))

# k-hat of the largest `M` of the log ratios lr: exceedances of the ratios
# over the (M+1)-th largest, scaled by the largest (any scale gives the same
# shape), and the Zhang-Stephens estimate of the GPD shape with its prior.
pareto_tail_khat <- function(lr, M) {
  lr <- sort(lr - max(lr))
  S <- length(lr)
  u <- lr[S - M]
  x <- exp(lr[(S - M + 1):S]) - exp(u)
  gpd_shape(x)
}

gpd_shape <- function(x) {
  x <- sort(x)
  n <- length(x)
  m <- 30 + floor(sqrt(n))
  # candidate values of theta = -k / sigma around a quartile-based guess
  theta <- 1 / x[n] + (1 - sqrt(m / (seq_len(m) - 0.5))) / (3 * x[floor(n / 4 + 0.5)])
  k <- vapply(theta, function(t) mean(log1p(-t * x)), 0)
  loglik <- n * (log(-theta / k) - k - 1)
  # posterior weights of the candidates, without overflow
  w <- vapply(seq_len(m), function(j) 1 / sum(exp(loglik - loglik[j])), 0)
  theta_hat <- sum(w * theta)
  k_hat <- mean(log1p(-theta_hat * x))
  # the weakly informative prior: 10 pseudo-observations at 0.5
  (n * k_hat + 10 * 0.5) / (n + 10)
}
