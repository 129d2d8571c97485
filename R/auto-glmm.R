# lr = "auto" for multilevel models (model_glmm(); sgld(model) and
# mala(model) with no settings).
#
# Why not the flat models' recipe: in the non-centred coordinates
# (b = L z) the joint posterior mode is no summary of the posterior. With
# the data fixing b = s z, the prior's z^2 / 2 falls as the sd s grows, so
# the mode sits at sds several times their posterior means (sleepstudy: 82.8
# and 61.5 against 23.4 and 6.7; bench/glmm-mala.md) and the Laplace
# covariance there preconditions nothing (MALA accepted 0.7% of proposals).
#
# The recipe:
#  (a) the start from lme4's fit (lmer() for gaussian, glmer() otherwise):
#      the fixed effects, the covariances (a mode of the marginal with the
#      group effects integrated out, exactly for gaussian, by Laplace
#      otherwise) and the group effects' conditional modes, whitened; sds
#      that lme4 puts at zero (a singular fit) are raised to a floor, since
#      the log sd has no start at zero;
#  (b) a first metric from the curvature there: the negative Hessian of the
#      log posterior by central differences of full gradients, its
#      eigenvalues taken in absolute value and floored (the point is no mode,
#      and along a funnel between a sd and its group effects the Hessian can
#      be indefinite);
#  (c) adaptive pilots of MALA from that start: each tunes the step to an
#      acceptance rate of 0.4-0.8, runs long enough to estimate a d x d
#      covariance, and hands its draws' covariance (shrunk towards the
#      previous metric's) to the next. Two rounds: the first moves from
#      lme4's point into the posterior, the second measures it there;
#  (d) then Metropolis-adjusted steps with that covariance as the
#      preconditioner, the step, warm-up and run length chosen as for the
#      flat models' MALA route (auto_sgld_mala(): a target of 2,000
#      effective draws of the slowest parameter, chains spread from a
#      one-chain warm-up). Unadjusted SGLD steps are not used: the sds'
#      posteriors are skewed and the funnel's curvature varies with the sd,
#      where a fixed-step Euler chain is biased (the variance parameters
#      diverge in the papers cited in issue 50); the checks of R-hat and ESS
#      run on the result as for every fit;
#  (e) for binomial, poisson and the negative binomial with two or more
#      terms, after each of those steps (pilots included)
#      exact moves of the model's own (src/model_glmm.c): each term's
#      covariance parameters drawn from their conditional in the centred
#      form (group effects b held, Yu and Meng's interweaving), then each
#      group's effects by Metropolis-Hastings with Newton's proposal. One
#      fixed metric cannot follow the funnel between a sd and its group
#      effects (grouseticks: LOCATION's sd 25% off, ESS 99 after 250,000
#      iterations); with these moves at most 0.11 sd and 6.8% over seeds
#      1-3 (bench/glmm-defaults.md). Gaussian models and one-term models
#      keep (a)-(d) (the choice is below, with its measurements).
auto_glmm_pilot_rounds <- 2
auto_glmm_max_iter <- 250000  # longest run per chain, after its warm-up
auto_glmm_floor_sd <- 0.05   # sd floor for a start, relative to the data's scale

auto_recipe.sgld_model_glmm <- function(model)
  function(model, args, given, call) auto_glmm(model, args, given, call, "sgld()")
auto_mala_recipe.sgld_model_glmm <- function(model)
  function(model, args, given, call) auto_glmm(model, args, given, call, "mala()")

auto_glmm <- function(model, args, given, call, what) {
  if (model$family == "gaussian" && what == "sgld()")   # exact: R/auto-glmm-gaussian.R
    return(auto_glmm_gaussian(model, args, given, call, what))
  auto_phases(function(made) auto_glmm_phases(model, args, given, call, made, what))
}

auto_glmm_phases <- function(model, args, given, call, made, what) {
  start <- proc.time()[["elapsed"]]
  chains <- args$chains
  check_count(chains, "chains", lower = 1, upper = 1000)
  if (model$d > auto_max_d)
    abort(what, ": `lr = \"auto\"` for a multilevel model builds a ", model$d, " x ", model$d,
          " covariance of its parameters, too large above ", auto_max_d, " (fixed effects, ",
          "group effects and variance parameters). Give `lr` and `precondition` yourself; see ",
          "\"Choosing settings by hand\" in ?sgld.")
  # the d x d preconditioner runs on full data, where the group effects'
  # gradients are exact (run_sampler() refuses it for models flagged as
  # having local parameters, written for model_sv()'s per-day latents)
  model$local_parameters <- FALSE
  # binomial and poisson with two or more terms: after each
  # Metropolis-adjusted step, each term's covariance parameters drawn again
  # in the centred form and each group's effects by a Metropolis-Hastings
  # step with Newton's proposal (src/model_glmm.c, "the exact moves"),
  # pilots included, so that their metric is measured on a chain that mixes
  # along the funnels. An iteration then reads the data 3 + 2K times, not
  # once: with one term the fixed metric already mixed and the moves cost
  # more than they gained (effective draws per CPU second 0.5x on cbpp and
  # on 10^4 binary rows in 200 groups, 1.25x on binary200, even on the
  # held-out bacteria); with grouseticks' two terms they turned 0.20 sd and
  # 25% off (ESS 99) into at most 0.11 sd and 6.8% (bench/glmm-defaults.md)
  if (model$family != "gaussian" && model$K >= 2) model$exact_moves <- 1L
  init0 <- if ("init" %in% given && is.numeric(args$init) && is.null(dim(args$init)))
             to_sampler_scale(model, matrix(args$init, 1))[1, ] else glmm_start(model)
  P <- if ("precondition" %in% given && is.matrix(args$precondition)) args$precondition
       else glmm_start_metric(model, init0)
  pilot <- glmm_pilots(model, init0, P, made, args, call)
  P <- pilot$covariance
  pm <- list(mode = to_user_scale(model, matrix(pilot$last, 1))[1, ], sampler = pilot$last,
             covariance = P)
  # the run's length from the last pilot's effective draws per iteration
  # (the MALA route measures them in a warm-up of 2,000 iterations, too short
  # for sleepstudy's correlation: it promised 2,000 effective draws and gave
  # 184), at most auto_glmm_max_iter per chain; about 2,000 draws kept per
  # chain
  if (!"iter" %in% given || is.null(args$iter)) {
    per_chain <- if (is.finite(pilot$rate) && pilot$rate > 0)
      ceiling(auto_target_ess / (pilot$rate * chains)) else auto_glmm_max_iter
    args$iter <- 2000L + min(auto_glmm_max_iter, max(2000, per_chain))
    given <- c(given, "iter")
    if (!"thin" %in% given) {
      args$thin <- max(1, floor((args$iter - 2000) / 2000))
      given <- c(given, "thin")
    }
  }
  fit <- auto_sgld_mala(model, args, given, call, made, pm, P, curv = 1, departure = NA_real_,
                        start = start - pilot$time, why = "multilevel")
  fit$auto$strategy <- "glmm"
  fit$auto$start <- "lme4"
  fit$auto$pilot_rounds <- pilot$rounds
  fit$auto$laplace_precondition <- FALSE
  fit$auto$exact_moves <- isTRUE(model$exact_moves > 0)
  fit$auto$reason <- sprintf(paste0(
    "lr = \"auto\" for a multilevel model: chains start from lme4's fit, the preconditioner ",
    "is the covariance of %d adaptive pilot runs (%s draws; the joint mode of the ",
    "non-centred parameters is no summary of this posterior), and the steps are ",
    "Metropolis-adjusted (MALA) on the full data: step %s (pilot acceptance %s)%s; %s ",
    "iterations planned for about %d effective draws (%s per iteration in the last pilot)."),
    pilot$rounds, format(pilot$draws, big.mark = ","), format(fit$auto$lr, digits = 3),
    format(fit$auto$pilot_acceptance, digits = 2),
    if (fit$auto$exact_moves) paste0(", each followed by exact moves: every sd drawn in the ",
                                     "centred form, every group's effects by Newton-proposal ",
                                     "Metropolis-Hastings") else "",
    format(fit$auto$iter, big.mark = ","),
    auto_target_ess, format(pilot$rate, digits = 2))
  fit$auto$ess_per_iteration <- pilot$rate
  fit$time <- fit$time + pilot$time
  fit
}

# The start on the sampler's scale from lme4's fit of the same formula and
# data (lme4's default priors are flat: a start, not the posterior). Its
# derivatives at the optimum (lme4's convergence checks, whose warnings a
# start ignores) are not computed: 4.5 of lmer's 21 s on InstEval.
glmm_start <- function(model) {
  data <- model$lme4_data
  # the weights as given, as a column of the data lme4 evaluates them in
  # (lmer() reads gaussian ones as precision weights: near enough for a start)
  wts <- NULL
  if (!is.null(model$lme4_weights)) {
    data$.sgld_weights <- model$lme4_weights
    wts <- quote(.sgld_weights)
  }
  fit <- tryCatch(suppressMessages(suppressWarnings(
    if (model$family == "gaussian")
      eval(bquote(lme4::lmer(model$formula, data = data, weights = .(wts),
                             control = lme4::lmerControl(calc.derivs = FALSE))))
    # the negative binomial: glmer.nb(), its phi (lme4's theta) estimated too
    else if (model$family == "negbin")
      eval(bquote(lme4::glmer.nb(model$formula, data = data, weights = .(wts))))
    else eval(bquote(lme4::glmer(model$formula, data = data, family = model$family,
                                 weights = .(wts),
                                 control = lme4::glmerControl(calc.derivs = FALSE)))))),
    error = function(e) NULL)
  if (is.null(fit)) return(glmm_start_default(model))
  gaussian <- model$family == "gaussian"
  sigma <- if (gaussian) stats::sigma(fit) else 1
  theta <- lme4::getME(fit, "theta")
  b <- as.double(lme4::getME(fit, "b"))   # group effects, in Zt's row order
  # the floor of a start's sd: a small fraction of the residual sd
  # (gaussian) or of the linear predictor's unit scale
  floor_sd <- auto_glmm_floor_sd * sigma
  th <- z <- numeric()
  tpos <- upos <- 0L
  for (k in seq_len(model$K)) {
    r <- model$r[k]
    nt <- r * (r + 1L) / 2L
    Tk <- matrix(0, r, r)
    Tk[lower.tri(Tk, diag = TRUE)] <- theta[tpos + seq_len(nt)]
    tpos <- tpos + nt
    Sigma <- sigma^2 * tcrossprod(Tk)
    s <- pmax(sqrt(diag(Sigma)), floor_sd)
    R <- Sigma / outer(s, s)
    diag(R) <- 1
    # the correlations' Cholesky factor, made positive definite (a singular
    # fit gives correlations of +-1), then its partial correlations' atanh
    # in model_glmm()'s order (row by row)
    e <- eigen(R, symmetric = TRUE)
    R <- e$vectors %*% (pmax(e$values, 0.05) * t(e$vectors))
    R <- R / sqrt(outer(diag(R), diag(R)))
    C <- t(chol(R))
    y <- numeric()
    for (i in seq_len(r)) {
      rem <- 1
      for (j in seq_len(i - 1L)) {
        y <- c(y, atanh(max(-0.95, min(0.95, C[i, j] / sqrt(rem)))))
        rem <- rem - C[i, j]^2
      }
    }
    th <- c(th, log(s), y)
    # whitened: z = L^{-1} b, a term's coefficients together group by group
    L <- glmm_factor(c(log(s), y), r)
    bk <- matrix(b[upos + seq_len(r * model$G[k])], r)
    upos <- upos + r * model$G[k]
    z <- c(z, backsolve(L, bk, upper.tri = FALSE))
  }
  beta <- lme4::fixef(fit)
  # the sampler's intercept is the one at centred predictors (R/model-glmm.R)
  if (length(model$intercept))
    beta[model$intercept] <- beta[model$intercept] + sum(beta * model$x_means)
  w <- c(beta, z, th, if (gaussian) log(sigma),
         if (model$family == "negbin") log(lme4::getME(fit, "glmer.nb.theta")))
  if (length(w) != model$d || any(!is.finite(w))) return(glmm_start_default(model))
  unname(w)
}

glmm_start_default <- function(model)
  to_sampler_scale(model, matrix(model$default_init, 1))[1, ]

# The first metric: the inverse of the negative Hessian at w, by central
# differences of full-data gradients, eigenvalues in absolute value and
# floored at a millionth of the largest.
glmm_start_metric <- function(model, w) {
  d <- model$d
  hvp <- hessian_product(model, w)
  H <- vapply(seq_len(d), function(j) hvp(replace(numeric(d), j, 1)), numeric(d))
  H <- (H + t(H)) / 2
  e <- eigen(H, symmetric = TRUE)
  lam <- pmax(abs(e$values), 1e-6 * max(abs(e$values)))
  e$vectors %*% (t(e$vectors) / lam)
}

# Adaptive pilots: each round tunes the step of one MALA chain to an
# acceptance rate of 0.4-0.8 (300 iterations a try), runs it for at least
# 20 d iterations, the last for 50 d and at least 10,000 (sleepstudy's
# slowest coordinate, the correlation's atanh, has a few effective draws
# per thousand iterations: 2,000 estimated its variance from about 6),
# kept thinned to about 10 d draws, and takes its draws' covariance, shrunk by d / (draws + d) towards the previous metric, as the
# next metric.
glmm_pilots <- function(model, init, P, made, args, call) {
  d <- model$d
  time <- 0
  w <- init
  draws_total <- 0
  for (round in seq_len(auto_glmm_pilot_rounds)) {
    rule <- mala_rule(P, model)
    run <- function(iter, thin, init, eta)
      suppressWarnings(run_sampler(
        model, lr = eta, batch_size = model$n, iter = iter, burnin = 0, thin = thin,
        temperature = 1, chains = 1, init = to_user_scale(model, matrix(init, 1))[1, ],
        replace = FALSE, clip = NULL,
        monitor = NULL, threads = args$threads, mala = TRUE, rule = rule, method = "mala",
        call = call, pars = TRUE, progress = FALSE, parallel = args$parallel, checks = FALSE))
    eta <- 1.65^2 / (2 * d^(1 / 3))
    for (k in 1:10) {
      tried <- auto_phase(made, "choice of the step", run(300, 1, w, eta))
      time <- time + tried$time
      w <- glmm_last(model, tried)
      acc <- tried$acceptance
      if (acc < auto_mala_accept[1]) eta <- eta / 2
      else if (acc > auto_mala_accept[2]) eta <- eta * 1.5
      else break
    }
    iter <- if (round == 1) max(2000, 20 * d) else max(10000, 50 * d)
    thin <- max(1, floor(iter / (10 * d)))
    one <- auto_phase(made, "pilot", run(iter, thin, w, eta))
    time <- time + one$time
    x <- as.matrix(one, scale = "sampler")
    x <- x[seq(floor(nrow(x) / 4) + 1, nrow(x)), , drop = FALSE]   # after its drift
    a <- nrow(x) / (nrow(x) + d)
    P <- a * stats::cov(x) + (1 - a) * P
    w <- glmm_last(model, one)
    draws_total <- draws_total + iter
  }
  # the last pilot's effective draws per iteration, of its slowest parameter
  rate <- min(coda::effectiveSize(x)) / (nrow(x) * thin)
  list(covariance = P, last = w, time = time, rounds = auto_glmm_pilot_rounds,
       draws = draws_total, rate = rate)
}

# The last state of a one-chain fit (fit$last is on the user's scale), on
# the sampler's scale.
glmm_last <- function(model, fit) {
  x <- fit$last
  if (is.list(x)) x <- x[[1]]
  x <- as.double(if (is.matrix(x)) x[1, ] else x)
  as.double(to_sampler_scale(model, matrix(x, 1))[1, ])
}
