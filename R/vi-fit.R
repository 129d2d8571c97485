# bbb()'s fit: q from the run (averaged over whole parts, or the last finite
# iterate of a run that stopped), draws from it, and their check: the
# full-data ELBO and Pareto k-hat from the same draws.

vi_fit <- function(run, plan, draws) {
  fit <- run$fit
  model <- fit$model
  d <- model$d
  chains <- fit$settings$chains
  K <- length(run$sums) - 1
  stopped <- any(fit$status != "done")
  # the parts averaged: the last three quarters of an automatic run, the last
  # `average` of a given one (whole parts), none after an early stop
  n_avg <- if (stopped || plan$exact) 0
           else if (plan$auto_iter) K - vi_burn(K) else round(K * plan$average)
  theta <- if (n_avg > 0) vi_average(run$sums, run$counts, K - n_avg, K)
           else vi_theta(fit, run$layout)$theta
  q <- vi_q_of(theta, plan, d)
  fit$trajectory <- fit$draws
  fit$trajectory_lr <- fit$lr
  fit$trajectory_iteration <- fit$iteration
  if (!is.null(fit$rule_trace) && length(fit$rule_trace) && any(!is.na(fit$rule_trace))) {
    fit$elbo_batch <- data.frame(iteration = as.vector(fit$iteration),
                                 chain = rep(fit$chain_ids, each = nrow(fit$iteration)),
                                 elbo = as.vector(fit$rule_trace))
  }
  fit$rule_trace <- NULL
  usable <- which(fit$status != "not run" & q$finite)
  if (!length(usable)) {
    sgld_warn("vi_failed", plan$label, ": no chain ended with a finite approximation (",
            paste0("chain ", seq_len(chains), " ", fit$status, collapse = ", "),
            "); the fit has no draws from q, only the trajectory of its means. ",
            "Try a smaller learning rate (`lr`).")
    draws <- 0
    usable <- seq_len(chains)
  }
  checked <- lapply(usable, function(c) vi_check_draws(model, q, c, draws))
  qdraws <- lapply(checked, function(x) {
    u <- to_user_scale(model, x$w)
    dimnames(u) <- list(NULL, model$names)
    coda::mcmc(u)
  })
  sd <- matrix(t(vapply(q$L, function(l) sqrt(rowSums(l^2)), numeric(d))), chains, d)
  mu <- q$mu
  dimnames(sd) <- dimnames(mu) <- list(paste("chain", seq_len(chains)), model$sampler_names)
  cov <- lapply(q$L, function(l) {
    S <- tcrossprod(l)
    dimnames(S) <- list(model$sampler_names, model$sampler_names)
    S
  })
  fit$draws <- coda::mcmc.list(qdraws)
  fit$chain_ids <- usable
  fit$lr <- matrix(1, draws, length(usable))
  fit$iteration <- matrix(fit$state$iteration[usable], draws, length(usable), byrow = TRUE)
  fit$partial <- list()
  fit$pars <- NULL
  fit$kept <- rep(draws, chains)
  fit$moments <- NULL
  draw_moments <- function(x) {
    m <- colMeans(x)
    c(m, if (nrow(x) > 1) sqrt(colSums(sweep(x, 2, m)^2) / (nrow(x) - 1)) else rep(NA_real_, d))
  }
  user <- matrix(vapply(qdraws, draw_moments, numeric(2 * d)), ncol = length(qdraws))
  fit$variational <- list(family = plan$family, mean = mu, sd = sd, L = q$L, cov = cov,
                          user_mean = t(user[seq_len(d), , drop = FALSE]),
                          user_sd = t(user[d + seq_len(d), , drop = FALSE]),
                          local = plan$local)
  field <- function(f, i = 1) vapply(checked, function(x) x[[f]][i], 0)
  fit$khat <- data.frame(chain = usable, khat = field("khat"), log_ratio_sd = field("spread"),
                         mean_shift = field("shift"), sd_ratio_min = field("ratio"),
                         sd_ratio_max = field("ratio", 2))
  elbo <- data.frame(chain = usable, elbo = vapply(checked, function(x) x$elbo, 0),
                     se = vapply(checked, function(x) x$se, 0))
  # with expected log likelihoods the ELBO itself, not an estimate
  if (plan$local == "expected") {
    elbo$elbo <- vapply(usable, function(c) vi_exact_elbo(model, q$mu[c, ], sd[c, ]), 0)
    elbo$se <- 0
  }
  fit$elbo <- if (draws > 1) elbo
  # the trace ends with the fit's own ELBO, in place of the part's estimate
  trace <- run$trace
  if (draws > 1 && !stopped) {
    if (!is.null(trace)) trace <- trace[!(trace$iteration %in% fit$state$iteration[usable]), ]
    trace <- rbind(trace, data.frame(iteration = fit$state$iteration[usable], chain = usable,
                                     elbo = elbo$elbo, se = elbo$se))
  }
  if (!is.null(trace)) {
    trace <- trace[order(trace$chain, trace$iteration), ]
    rownames(trace) <- NULL
    fit$elbo_trace <- trace
  }
  plan$laplace$covariance <- NULL       # the factor in the estimator's options holds it
  fit$vi <- list(plan = plan, laplace = plan$coords, reason = plan$reason,
                 iterations = run$iterations, parts = K, averaged = n_avg,
                 check = run$check,
                 converged = if (plan$auto_iter && !stopped) !is.null(run$check) &&
                   all(run$check$converged) else NA)
  fit$method <- "vi"
  class(fit) <- c("sgld_vi", setdiff(class(fit), "sgld_vi"))
  fit
}

# The ELBO of a mean-field q from the model's expected log joint
# (sgld.h: expected_loglik) and the entropy sum log sd + d/2 log(2 pi e).
vi_exact_elbo <- function(model, mu, sd) {
  e <- .Call(C_sgld_model_expected, model, as.double(mu), as.double(sd))
  e$loglik + e$logprior + sum(log(sd)) + 0.5 * length(sd) * (1 + log(2 * pi))
}

# S draws from chain c's q (sampler's scale), with the importance ratios'
# check: ELBO = mean of log p(D, w) - log q(w), its standard error, Pareto
# k-hat when there are enough draws to fit a tail (S >= 100), and the sd of
# the log ratios.
vi_check_draws <- function(model, q, c, S) {
  none <- list(w = matrix(0, 0, model$d), elbo = NA_real_, se = NA_real_, khat = NA_real_,
               spread = NA_real_, shift = NA_real_, ratio = c(NA_real_, NA_real_))
  if (S == 0) return(none)
  W <- sample_q(q, c, S)
  lr <- log_joint_draws(model, W) - log_q_draws(W, q$mu[c, ], q$L[[c]])
  none$w <- W
  if (!all(is.finite(lr))) return(none)
  out <- utils::modifyList(none, list(elbo = mean(lr)))
  if (S > 1) out[c("se", "spread")] <- list(stats::sd(lr) / sqrt(S), stats::sd(lr))
  if (S < 100) return(out)
  pm <- psis_moments(W, lr, q$mu[c, ], sqrt(rowSums(q$L[[c]]^2)))
  utils::modifyList(out, list(khat = khat_of(lr), shift = pm$shift, ratio = pm$ratio))
}

# The principle the checks hold q to: within 0.15 posterior sd and 10% of
# the posterior's means and sds, here as importance sampling corrects them.
vi_tol_shift <- 0.15
vi_tol_ratio <- 0.1

# Importance ratios whose logarithms vary by less than this sd are nearly
# constant: q and the posterior agree within the draws' precision (relative
# effective sample size exp(-0.1^2) = 0.99), and k-hat, the shape of the
# ratios' tail, says nothing. At the handout model's exact mean-field
# optimum the log ratios' sd is 0.016, and k-hat from 1,000 draws ranged
# from 0.23 to 0.77 over 40 sets of draws (median 0.50; 0.12 from 100,000).
vi_flat_ratios <- 0.1

# n draws from chain c's q, one per row (sampler's scale)
sample_q <- function(q, c, n) {
  d <- ncol(q$mu)
  Z <- matrix(stats::rnorm(n * d), n, d)
  sweep(Z %*% t(q$L[[c]]), 2, q$mu[c, ], `+`)
}

# full-data ELBO estimates of every chain from n draws each, and their
# Monte Carlo standard errors
vi_elbo <- function(model, q, n) {
  e <- vapply(seq_len(nrow(q$mu)), function(c) {
    if (!q$finite[c] || n == 0) return(c(NA_real_, NA_real_))
    W <- sample_q(q, c, n)
    v <- log_joint_draws(model, W) - log_q_draws(W, q$mu[c, ], q$L[[c]])
    c(mean(v), if (n > 1) stats::sd(v) / sqrt(n) else NA_real_)
  }, numeric(2))
  list(elbo = e[1, ], se = e[2, ])
}

# log p(D, w) at each row of W (sampler's scale), over the full data
log_joint_draws <- function(model, W) {
  out <- .Call(C_sgld_log_joint_draws, model, t(W))
  stop_on_failure(model)
  out
}

# log N(w; mu, L L^T) at each row of W
log_q_draws <- function(W, mu, L) {
  Z <- forwardsolve(L, t(W) - mu)
  -0.5 * colSums(Z^2) - sum(log(diag(L))) - 0.5 * length(mu) * log(2 * pi)
}

# The warnings of a variational fit, each naming what to do.
vi_warnings <- function(fit) {
  label <- fit$rule
  m <- deparse(fit$call$model)
  if (length(m) != 1 || !nzchar(m)) m <- "model"
  kh <- fit$khat
  k <- kh$khat
  flat <- !is.na(kh$log_ratio_sd) & kh$log_ratio_sd < vi_flat_ratios
  k[flat] <- 0   # nearly constant ratios: q fits
  bad <- which(k > 0.7)
  off <- which(k <= 0.7 & !flat & (kh$mean_shift > vi_tol_shift |
                                   kh$sd_ratio_min < 1 - vi_tol_ratio |
                                   kh$sd_ratio_max > 1 + vi_tol_ratio))
  remedy <- paste0("Run sgld(", m, ") for draws from the posterior itself",
                   if (fit$variational$family == "meanfield")
                     paste0(" (or bbb(", m, ", family = \"fullrank\") if the posterior's ",
                            "correlations are the cause)"), ".")
  if (length(off)) {
    sgld_warn("vi_importance", label, ": importance sampling of q's draws (Pareto k-hat ",
            paste(format(kh$khat[off], digits = 2), collapse = ", "), ", below 0.7) ",
            "moves its means by up to ", format(max(kh$mean_shift[off]), digits = 2),
            " of the corrected sds and puts its sds at ",
            format(min(kh$sd_ratio_min[off]), digits = 2), " to ",
            format(max(kh$sd_ratio_max[off]), digits = 2), " of the corrected ones: q is ",
            "further from this posterior than 0.15 sd and 10%, by at least that much (the ",
            "corrected moments come from q's own draws). ", remedy)
  }
  if (length(bad)) {
    sgld_warn("vi_khat", label, ": Pareto k-hat of the importance ratios is ",
            paste(format(k[bad], digits = 2), collapse = ", "),
            if (length(k) > 1) paste0(" (chain", if (length(bad) > 1) "s", " ",
                                      paste(fit$khat$chain[bad], collapse = ", "), ")"),
            ", above 0.7: the Gaussian approximation is unreliable for this posterior, and ",
            "its means and sds may be far from the posterior's. ", remedy)
  } else if (!length(off) && any(k > 0.5, na.rm = TRUE)) {
    message(label, ": Pareto k-hat ", paste(format(k[which(k > 0.5)], digits = 2), collapse = ", "),
            " (between 0.5 and 0.7): q is usable with care; sgld(", m, ") samples the ",
            "posterior itself.")
  }
  if (any(is.na(fit$khat$khat)) && nrow(fit$draws[[1]]) >= 100)
    sgld_warn("vi_nonfinite", label, ": the log joint is not finite at some draws from q, so its ELBO and ",
            "k-hat cannot be computed: q reaches where the model has no density. Run sgld(",
            m, ") instead, or start bbb() elsewhere (`init`).")
  if (isFALSE(fit$vi$converged)) {
    ch <- fit$vi$check
    what <- if (!is.null(ch$change_mean))
      sprintf("its last part still moved q's means by %s of its sds and its log sds by %s",
              format(max(ch$change_mean), digits = 2), format(max(ch$change_scale), digits = 2))
    else sprintf(paste0("the average of q over its last three quarters has a Monte Carlo error ",
                        "of %s of q's sds in the means and %s in the log sds, and drifted by %s ",
                        "and %s"), format(max(ch$se_mean), digits = 2),
                 format(max(ch$se_scale), digits = 2), format(max(ch$drift_mean), digits = 2),
                 format(max(ch$drift_scale), digits = 2))
    sgld_warn("vi_convergence", label, ": the run did not converge in ",
            format(fit$vi$iterations, big.mark = ",", scientific = FALSE),
            " iterations: ", what, ". Continue it (bbb(", m, ", init = fit)) or give `iter`; ",
            "sgld(", m, ") samples the posterior itself.")
  }
  invisible(fit)
}

# One or two lines for print(): what was chosen and whether it converged.
vi_settings_line <- function(x) {
  v <- x$vi
  p <- v$plan
  lr <- if (is.numeric(p$lr) || identical(p$lr$type, "constant"))
    format(if (is.numeric(p$lr)) p$lr else p$lr$eta, digits = 3) else "a schedule"
  start <- if (isTRUE(p$bfgs))
             "started at the Laplace approximation, moved to the exact ELBO's optimum by BFGS, then steps in its coordinates"
           else if (v$laplace) "started at the Laplace approximation, steps in its coordinates"
           else paste0("no Laplace approximation (", v$reason, ")")
  batch <- if (p$local == "expected" && x$settings$batch_size >= x$model$n)
    "each observation's expected log likelihood under q on the full data"
  else if (x$settings$batch_size >= x$model$n) "the full data in every step"
           else paste0("batch ", x$settings$batch_size,
                       if (!isFALSE(p$control_variates)) " with control variates at the mode")
  conv <- if (isTRUE(v$converged) && p$exact)
    sprintf("converged (exact gradients; its last part moved q by %s of its sds)",
            format(max(v$check$change_mean, v$check$change_scale), digits = 2))
  else if (isTRUE(v$converged))
    sprintf("converged (Monte Carlo error %s of q's sds)", format(max(v$check$se_mean), digits = 2))
  else if (isFALSE(v$converged)) "did not converge"
  else if (v$averaged > 0) sprintf("q averaged over the last %d of %d parts", v$averaged, v$parts)
  else "q is the last iterate"
  paste0(start, "; ", p$rule$label, " at ", lr, if (p$auto_lr) " (auto)", "; ", batch,
         "; ", format(v$iterations, big.mark = ",", scientific = FALSE), " iterations, ", conv, ".")
}

# The check of q for print(): k-hat and what importance sampling corrects.
vi_check_line <- function(kh) {
  k <- kh$khat
  if (all(is.na(k)))
    return("Pareto k-hat: not computed (fewer than 100 draws, or a log joint that is not finite)")
  flat <- kh$log_ratio_sd < vi_flat_ratios
  worst <- max(k[!flat], -Inf, na.rm = TRUE)
  moves <- sprintf(paste0("; importance sampling moves q's means by up to %s sd and puts its ",
                          "sds at %s-%s of the corrected ones"),
                   format(max(kh$mean_shift), digits = 2), format(min(kh$sd_ratio_min), digits = 2),
                   format(max(kh$sd_ratio_max), digits = 2))
  off <- any(!flat & (kh$mean_shift > vi_tol_shift | kh$sd_ratio_min < 1 - vi_tol_ratio |
                        kh$sd_ratio_max > 1 + vi_tol_ratio), na.rm = TRUE)
  verdict <- if (worst > 0.7) ": above 0.7, q is unreliable for this posterior (see sgld())"
    else if (all(flat)) paste0("; the importance ratios are nearly constant (sd of their ",
                               "logarithm ", format(max(kh$log_ratio_sd), digits = 2),
                               "): q is close to the posterior")
    else paste0(if (worst > 0.5) ": between 0.5 and 0.7" else ": below 0.5", moves,
                if (off) " (more than 0.15 sd or 10%: q is off this posterior)")
  paste0("Pareto k-hat (per chain): ", paste(format(k, digits = 2), collapse = ", "), verdict)
}

#' @export
print.sgld_vi <- function(x, digits = 4, ...) {
  s <- x$settings
  cat(x$rule, " on ", class(x$model)[1], ": ", s$chains, " chain", if (s$chains > 1) "s",
      " x ", format(s$iter, big.mark = ",", scientific = FALSE), " iterations, batch size ",
      s$batch_size, "; ", format(x$time, digits = 3), " s\n", sep = "")
  if (!is.null(x$vi)) cat(strwrap(vi_settings_line(x), exdent = 2), sep = "\n")
  cat("Draws from the variational approximation q, not from the posterior: ",
      format(ndraws(x), big.mark = ","), " per chain", "\n", sep = "")
  if (!is.null(x$elbo))
    cat("ELBO (full data, per chain): ",
        paste0(format(x$elbo$elbo, digits = 6), " (se ", format(x$elbo$se, digits = 2), ")",
               collapse = ", "), "\n", sep = "")
  if (!is.null(x$khat)) cat(strwrap(vi_check_line(x$khat), exdent = 2), sep = "\n")
  if (!is.null(x$elbo_batch) && !isTRUE(x$vi$plan$exact)) {
    # the last tenth of the trajectory's minibatch ELBO, per chain
    eb <- x$elbo_batch
    last <- eb$iteration > stats::quantile(eb$iteration, 0.9)
    cat("ELBO (minibatch, mean of the last tenth, per chain): ",
        paste(format(tapply(eb$elbo[last], eb$chain[last], mean), digits = 6), collapse = ", "),
        "\n", sep = "")
  }
  if (any(x$status != "done"))
    cat("Stopped early: ", paste0("chain ", seq_along(x$status), " ", x$status,
                                  collapse = ", "), "; q is its last finite iterate\n", sep = "")
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
#' [bbb()] computes it on every fit from its own draws; this function draws
#' afresh, as many as asked.
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
#' psis_khat(bbb(m), draws = 500)
#' @export
psis_khat <- function(fit, draws = 1000, method = c("auto", "loo", "own")) {
  if (!inherits(fit, "sgld_vi")) abort("`fit` must be a fit of bbb(), not ", describe(fit), ".")
  check_count(draws, "draws", lower = 20, upper = 1e6)
  method <- check_choice(method, c("auto", "loo", "own"), "method")
  if (method == "loo" && !requireNamespace("loo", quietly = TRUE))
    abort("`method = \"loo\"` needs the loo package.")
  model <- fit$model
  q <- list(mu = fit$variational$mean, L = fit$variational$L)
  chains <- fit$chain_ids
  out <- t(vapply(chains, function(c) {
    W <- sample_q(q, c, draws)
    lr <- log_joint_draws(model, W) - log_q_draws(W, q$mu[c, ], q$L[[c]])
    c(if (all(is.finite(lr))) khat_of(lr, method) else NA_real_, tail_length(draws))
  }, numeric(2)))
  data.frame(chain = chains, khat = out[, 1], tail = as.integer(out[, 2]))
}

# k-hat of the log importance ratios lr: loo's psis() where installed
# ("auto"), else the package's own estimate of the same
khat_of <- function(lr, method = "auto") {
  if (method == "auto") method <- if (requireNamespace("loo", quietly = TRUE)) "loo" else "own"
  if (method == "loo")
    return(suppressWarnings(loo::psis(lr, r_eff = 1)$diagnostics$pareto_k))
  psis_smooth(lr)$khat
}

tail_length <- function(S) as.integer(ceiling(min(S / 5, 3 * sqrt(S))))

# Pareto-smoothed importance sampling (Vehtari, Simpson, Gelman, Yao and
# Gabry 2024), as loo's psis() does it: the largest M = tail_length(S) log
# ratios are replaced by the expected order statistics of the generalised
# Pareto distribution fitted to their exceedances over the (M+1)-th largest
# (Zhang and Stephens 2009, with the weakly informative prior on the shape
# that shrinks k-hat towards 0.5 by 10 pseudo-observations; the scale is
# estimated before the shrinkage), none above the largest raw ratio.
# Returns k-hat and the smoothed log weights (unnormalised).
psis_smooth <- function(lr) {
  S <- length(lr)
  M <- tail_length(S)
  top <- max(lr)
  lw <- lr - top
  ord <- order(lw)
  tail <- ord[(S - M + 1):S]
  cutoff <- lw[ord[S - M]]
  x <- exp(lw[tail]) - exp(cutoff)
  fit <- gpd_fit(x)
  if (is.finite(fit$k) && fit$sigma > 0) {
    p <- (seq_len(M) - 0.5) / M
    q <- fit$sigma * expm1(-fit$k * log1p(-p)) / fit$k
    lw[tail] <- log(q + exp(cutoff))
  }
  lw[lw > 0] <- 0
  list(khat = fit$k, log_weights = lw + top)
}

# The generalised Pareto fit of exceedances x > 0 (Zhang and Stephens 2009):
# the shape k (with the prior) and the scale.
gpd_fit <- function(x) {
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
  list(k = (n * k_hat + 10 * 0.5) / (n + 10), sigma = -k_hat / theta_hat)
}

gpd_shape <- function(x) gpd_fit(x)$k

# What importance sampling says of q from its draws W (rows) and their log
# ratios lr: the means and sds corrected by the Pareto-smoothed weights, and
# how far q's are from them, in the corrected sds and as ratios.
psis_moments <- function(W, lr, mu, sd) {
  lw <- psis_smooth(lr)$log_weights
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  mean <- colSums(W * w)
  cs <- sqrt(colSums(sweep(W, 2, mean)^2 * w))
  list(mean = mean, sd = cs, shift = max(abs(mu - mean) / cs), ratio = range(sd / cs))
}
