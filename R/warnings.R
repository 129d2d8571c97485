# No silent failure (issue 16): after a run, the checks that tell a likely
# wrong run from a right one. Each gives a warning that names the cause and
# the remedy, and leaves its figures in fit$checks.

# Called by run_sampler() on every fit; `cv_mode` is the control variates'
# centre on the sampler's scale (NULL for none).
check_run <- function(fit, settings, rule) {
  checks <- list()
  if (fit$method %in% c("sgld") && settings$temperature > 0)
    checks <- c(checks, threshold_check(fit, settings, rule))
  if (fit$method == "mala") checks$acceptance <- acceptance_check(fit)
  if (settings$burnin_mode == 1L) checks$threshold_reached <- threshold_reached_check(fit, settings)
  if (is_sampler(fit) && settings$temperature > 0) checks$gradient_ratio <- stein_check(fit, settings)
  if (is_sampler(fit) && ndraws(fit) > 1 && ndraws(fit) * fit$model$d * length(fit$draws) <= 1e6)
    checks$convergence <- convergence_check(suppressWarnings(summary(fit))$statistics, warn = FALSE)
  fit$checks <- checks
  fit
}

# Are the kept draws in the posterior's typical set? For draws from a density
# exp(U / tau), integration by parts gives Stein's identity
# E[g g^T] = tau E[-H] (g the gradient of U, H its Hessian; the identity
# behind the KSD). With H taken at the draws' mean and u_k, lambda_k its
# eigenvectors and eigenvalues, r_k = mean over draws of (u_k^T g)^2 /
# (tau lambda_k) is about 1 in every direction for a right run (for a Gaussian
# posterior sampled too wide by a factor f in variance along u_k, r_k = f);
# far above 1 when the chain has not reached the posterior or spreads too wide
# (too small or too large a step, too small a batch), near 0 when it sits at
# the mode. Eigen-directions matter: a chain that has settled across a stiff
# direction but not along a flat ridge (unscaled predictors) has small
# gradients in each coordinate, yet large ones relative to the ridge's small
# curvature. Pima with lr = 1e-6: coordinate ratios at most 3.1, ridge
# direction far above. With 50 well-spread draws a right run's r_k has a
# Monte Carlo sd of about 0.2, but H at the mean is not the mean of H for a
# non-Gaussian posterior: right runs on Pima (sgld(m)) gave ratios up to 2.1.
# The bounds 1/4 and 4 leave room for both; the quoted failures of issue 16
# give 36 to 10^10, or a non-concave point (Inf). Only for models whose log densities are
# smooth (a Laplace prior's kink puts curvature where differences cannot see
# it), and when 50 + 2d full passes over the data are cheap.
stein_check <- function(fit, settings, draws = 50, bounds = c(0.25, 4)) {
  model <- fit$model
  smooth <- inherits(model, "sgld_model_linear") ||
    inherits(model, "sgld_model_logistic") && all(model$prior_type == 0L)
  K <- ndraws(fit)
  if (!smooth || K < 10 || model$n * (draws + 2 * model$d) > 5e7) return(NULL)
  x <- as.matrix(fit, scale = "sampler")
  pick <- unique(round(seq(1, nrow(x), length.out = min(draws, nrow(x)))))
  x <- x[pick, , drop = FALSE]
  grad <- function(w) {
    e <- .Call(C_sgld_model_eval, model, as.double(w))
    e$grad_loglik + e$grad_logprior
  }
  G <- t(apply(x, 1, grad))
  if (any(!is.finite(G))) return(NULL)
  centre <- colMeans(x)
  H <- vapply(seq_len(model$d), function(j) {
    step <- 1e-4 * max(1, abs(centre[j]))
    e <- replace(numeric(model$d), j, step)
    -(grad(centre + e) - grad(centre - e)) / (2 * step)
  }, numeric(model$d))
  if (any(!is.finite(H))) return(NULL)
  eig <- eigen((H + t(H)) / 2, symmetric = TRUE)
  # these models' log posteriors are concave around their posterior mass: a
  # direction of non-positive curvature at the draws' mean is far from it
  r <- colMeans((G %*% eig$vectors)^2) / (settings$temperature * pmax(eig$values, 0))
  r[eig$values <= 0] <- Inf
  worst <- which.max(abs(log(r)))
  r_worst <- r[worst]
  involved <- model$names[which.max(abs(eig$vectors[, worst]))]
  if (r_worst > bounds[2] || r_worst < bounds[1])
    warning(sprintf(paste0(
      "the draws do not look like posterior draws: along one direction (mostly '%s') the ",
      "squared gradient of the log posterior averages %s times the curvature, where ",
      "posterior draws give about 1 (%s). %s Leave `lr` out (lr = \"auto\") or see ",
      "\"Choosing settings by hand\" in ?sgld."),
      involved, format(r_worst, digits = 3),
      if (r_worst > 1) "they are far from the posterior's centre or spread too wide"
      else "they are bunched too close to the mode",
      if (r_worst > 1) paste0("The chain has not reached the posterior (`lr` too small or ",
                              "too few iterations) or samples too wide (`lr` too large or ",
                              "`batch_size` too small).")
      else "The chain has barely moved (`lr` too small for the number of iterations)."),
      call. = FALSE)
  list(ratio = r, worst = unname(r_worst), parameter = involved,
       ok = r_worst >= bounds[1] && r_worst <= bounds[2])
}

# The (preconditioned) sampling threshold at the final state of each chain,
# alpha = eta / 2 * lambda_max(T^T Cov(g_hat) T) with T a factor of the
# preconditioner and g_hat the estimator the run used (with its control
# variates), estimated from 200 independent minibatches. The gradient noise
# adds about alpha times the injected variance in its noisiest direction, so
# the posterior sds come out too wide by about sqrt(1 + alpha) there.
threshold_check <- function(fit, settings, rule, times = 200) {
  if (!rule$name %in% c("sgld", "precond", "psgld")) return(list())
  model <- fit$model
  # a model in R functions would be called `times` more times, which its
  # functions may count or log: left out
  if (inherits(model, "sgld_model_custom") && !inherits(model, "sgld_model_compiled"))
    return(list())
  n <- model$n
  if (settings$batch_size >= n) return(list(alpha = 0, sd_inflation = 1))
  run <- utils::head(which(fit$status == "done"), 4)   # bounded cost for many chains
  if (!length(run)) return(list())
  alpha <- vapply(run, function(c) {
    w <- fit$state$w[c, ]
    eta <- fit$lr[nrow(fit$lr), min(c, ncol(fit$lr))]
    if (!length(eta) || !is.finite(eta)) return(NA_real_)
    G <- tryCatch(with_seed_kept(.Call(C_sgld_gradient_draws, model, list(
      w = as.double(w), batch_size = settings$batch_size, times = times,
      replace = settings$replace, cv_mode = settings$cv_mode))),
      error = function(e) NULL)
    if (is.null(G) || any(!is.finite(G))) return(NA_real_)
    C <- stats::cov(G)
    T <- switch(rule$name,
                sgld = diag(model$d),
                precond = matrix(rule$chol, model$d, model$d),  # the lower factor
                psgld = diag(1 / sqrt(rule$opts$eps + sqrt(fit$state$update[seq_len(model$d), c])),
                             model$d))
    eta / 2 * max(eigen(crossprod(T, C %*% T), symmetric = TRUE, only.values = TRUE)$values)
  }, numeric(1))
  out <- list(alpha = alpha, sd_inflation = sqrt(1 + alpha))
  worst <- suppressWarnings(max(alpha, na.rm = TRUE))
  if (is.finite(worst) && worst > 1)
    warning(sprintf(paste0(
      "the sampling threshold at the end of the run is %s (above 1): the minibatch ",
      "gradient noise is larger than the injected noise, so the draws are not from the ",
      "posterior; its sds come out too wide by a factor of about %s in the noisiest ",
      "direction. Use a smaller `lr`, a larger `batch_size` or `control_variates = TRUE`, ",
      "or leave `lr` out (lr = \"auto\")."),
      format(worst, digits = 3), format(sqrt(1 + worst), digits = 3)), call. = FALSE)
  out
}

# MALA's acceptance rate far from its useful range.
acceptance_check <- function(fit) {
  a <- fit$acceptance
  say <- function(bad, what) {
    if (!length(bad)) return()
    warning(sprintf("mala(): the acceptance rate of chain%s %s is %s, %s",
                    if (length(bad) > 1) "s" else "", paste(bad, collapse = ", "),
                    paste(format(a[bad], digits = 2), collapse = ", "), what), call. = FALSE)
  }
  say(which(a < 0.15), paste0(
    "below 0.15: the step `lr` is too large, the chain hardly moves and its draws do not ",
    "represent the posterior. Use a smaller `lr` (a tenth, say) or leave it out (lr = \"auto\")."))
  say(which(a > 0.95), paste0(
    "above 0.95: the step `lr` is so small that the chain moves slowly and its draws are ",
    "strongly correlated. Use a larger `lr` or leave it out (lr = \"auto\")."))
  list(rate = a, ok = a >= 0.15 & a <= 0.95)
}

# A sampling_threshold() burn-in that some chain never reached.
threshold_reached_check <- function(fit, settings) {
  reached <- fit$collect_from > 0
  never <- which(!reached & fit$status == "done")
  if (length(never))
    warning(sprintf(paste0(
      "chain%s %s never reached the sampling threshold alpha <= %s in %s iterations, so ",
      "%s no draws. Use a smaller or decaying `lr`, a larger `batch_size` or ",
      "`control_variates = TRUE`, more iterations, or leave `lr` out (lr = \"auto\")."),
      if (length(never) > 1) "s" else "", paste(never, collapse = ", "),
      format(settings$alpha0), format(settings$iter, big.mark = ","),
      if (length(never) > 1) "they kept" else "it kept"), call. = FALSE)
  reached
}

# R-hat above 1.05 or ESS below 100 for some parameter, from summary()'s table.
convergence_check <- function(stats, warn = TRUE) {
  rhat <- if ("rhat" %in% colnames(stats)) stats[, "rhat"] else NULL
  ess <- stats[, "ess"]
  high <- names(which(rhat > 1.05))
  low <- names(which(ess < 100))
  msg <- character()
  if (length(high))
    msg <- c(msg, sprintf(paste0(
      "R-hat is above 1.05 for %s (largest %s): the chains disagree, so they have not ",
      "converged to one distribution; run longer or check the settings (lr, batch_size)."),
      name_list(high), format(max(rhat, na.rm = TRUE), digits = 3)))
  if (length(low))
    msg <- c(msg, sprintf(paste0(
      "the effective sample size is below 100 for %s (smallest %s): the means and ",
      "quantiles are too uncertain to use; run more iterations or a larger `lr`."),
      name_list(low), format(min(ess, na.rm = TRUE), digits = 3)))
  if (warn) for (m in msg) warning(m, call. = FALSE)
  invisible(list(rhat_max = if (length(rhat)) max(rhat, na.rm = TRUE) else NA_real_,
                 ess_min = min(ess, na.rm = TRUE), messages = msg))
}

name_list <- function(x, most = 5) {
  s <- paste0("'", utils::head(x, most), "'", collapse = ", ")
  if (length(x) > most) paste0(s, " and ", length(x) - most, " more") else s
}

# Evaluate expr without moving R's random number stream: the checks run
# after a run must not change the draws of what the user runs next.
with_seed_kept <- function(expr) {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env)
          else if (exists(".Random.seed", envir = env, inherits = FALSE))
            rm(".Random.seed", envir = env))
  expr
}

# A design whose columns are linearly dependent (perfectly collinear
# predictors): the likelihood is flat along some direction, only the prior
# tells those coefficients apart, and samplers crawl along it.
check_rank <- function(X) {
  p <- ncol(X)
  if (p < 2L) return(invisible(NULL))
  norms <- sqrt(colSums(X^2))
  if (any(norms == 0)) {
    j <- which(norms == 0)
    warning(sprintf(paste0("the design matrix has the all-zero column%s %s: the data say ",
                           "nothing about %s coefficient%s, only the prior does. Drop ",
                           "%s."), if (length(j) > 1) "s" else "", name_list(colnames(X)[j]),
                    if (length(j) > 1) "their" else "its", if (length(j) > 1) "s" else "",
                    if (length(j) > 1) "them" else "it"), call. = FALSE)
    return(invisible(colnames(X)[j]))
  }
  # the Gram matrix of the scaled columns: rank is read off a pivoted QR
  XtX <- crossprod(X) / tcrossprod(norms)
  q <- qr(XtX, tol = 1e-9)
  if (q$rank == p) return(invisible(NULL))
  dependent <- colnames(X)[q$pivot[(q$rank + 1):p]]
  warning(sprintf(paste0(
    "the design matrix is rank deficient (rank %d with %d columns): %s %s a linear ",
    "combination of other columns (perfectly collinear predictors). Only the prior tells ",
    "those coefficients apart, and samplers move slowly along that direction. Drop %s, or ",
    "for a factor, keep the intercept and its default contrasts."),
    q$rank, p, name_list(dependent), if (length(dependent) > 1) "are each" else "is",
    if (length(dependent) > 1) "those columns" else "that column"), call. = FALSE)
  invisible(dependent)
}
