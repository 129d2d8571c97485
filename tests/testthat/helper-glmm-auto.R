# Multilevel models against stored stan_glmer references
# (data-raw/glmm-reference.R): the model with stan_glmer's default priors as
# its prior_summary() reports them, and the largest errors of the default
# call's draws. Used by test-auto-glmm.R and bench/glmm-defaults.R.

# rstanarm states the intercept's prior on centred predictors, so the fixed
# design here is centred (columns c1, c2, ...: its slopes are rstanarm's, its
# intercept rstanarm's `alpha`); the group effects keep their own design.
glmm_reference_model <- function(formula, data, family, ref) {
  fixed <- lme4::nobars(formula)
  X <- stats::model.matrix(fixed, data)
  slopes <- setdiff(colnames(X), "(Intercept)")
  centred <- sweep(X[, slopes, drop = FALSE], 2, ref$x_means[slopes])
  cn <- if (length(slopes)) paste0("c", seq_along(slopes)) else character()
  data[cn] <- as.data.frame(centred)
  bars <- vapply(lme4::findbars(formula), function(b) paste0("(", deparse(b), ")"), "")
  f <- stats::as.formula(paste(deparse(formula[[2]]), "~", paste(c(cn, bars), collapse = " + ")))
  environment(f) <- environment()
  m <- sgld:::model_glmm(f, data, family,
                         prior_loc = c(ref$prior$intercept_loc, ref$prior$coef_loc),
                         prior_scale = c(ref$prior$intercept_scale, ref$prior$coef_scale),
                         aux_rate = if (family == "gaussian") ref$prior$aux_rate else 1)
  m$reference_names <- c("alpha", slopes)
  m
}

# Draws under the reference's names: alpha and the slopes, sigma, each
# term's sds and correlations, the group effects.
glmm_reference_draws <- function(m, fit) {
  U <- sgld:::glmm_draws(m, as.matrix(fit, scale = "sampler"))
  colnames(U)[seq_len(m$p)] <- m$reference_names
  sig <- grep("^Sigma\\[", colnames(U), value = TRUE)
  pattern <- "^Sigma\\[([^:]*):([^,]*),(.*)\\]$"
  g <- sub(pattern, "\\1", sig)
  a <- sub(pattern, "\\2", sig)
  b <- sub(pattern, "\\3", sig)
  sds <- sqrt(U[, sig[a == b], drop = FALSE])
  colnames(sds) <- paste0("sd[", g[a == b], ":", a[a == b], "]")
  cors <- NULL
  for (j in which(a != b)) {
    cors <- cbind(cors, U[, sig[j]] / (sds[, paste0("sd[", g[j], ":", a[j], "]")] *
                                         sds[, paste0("sd[", g[j], ":", b[j], "]")]))
    colnames(cors)[ncol(cors)] <- paste0("cor[", g[j], ":", b[j], ",", a[j], "]")
  }
  cbind(U[, c(m$reference_names, if (m$family == "gaussian") "sigma",
              grep("^b\\[", colnames(U), value = TRUE)), drop = FALSE], sds, cors)
}

# The largest error in means (in posterior sds) and in sds (relative), and
# where.
glmm_reference_errors <- function(U, ref) {
  stopifnot(all(colnames(U) %in% names(ref$mean)))
  cols <- colnames(U)
  e_mean <- abs(colMeans(U) - ref$mean[cols]) / ref$sd[cols]
  e_sd <- abs(apply(U, 2, stats::sd) / ref$sd[cols] - 1)
  list(mean = max(e_mean), mean_at = names(which.max(e_mean)), sd = max(e_sd),
       sd_at = names(which.max(e_sd)), quantities = length(cols))
}

glmm_reference_cases <- list(
  sleepstudy = list(formula = Reaction ~ Days + (Days | Subject), family = "gaussian",
                    data = function(ref) lme4::sleepstudy),
  cbpp = list(formula = cbind(incidence, size - incidence) ~ period + (1 | herd),
              family = "binomial", data = function(ref) lme4::cbpp),
  grouseticks = list(formula = TICKS ~ YEAR + HEIGHT + (1 | BROOD) + (1 | LOCATION),
                     family = "poisson", data = function(ref) lme4::grouseticks),
  binary200 = list(formula = y ~ x + (1 | g), family = "binomial",
                   data = function(ref) ref$data))

# One default call for the benches (bench/glmm-defaults.R, bench/glmm-heldout.R):
# sgld(m) at seed `seed`, its warnings collected, and one line of its errors
# against the reference, effective draws, acceptance, CPU and elapsed time.
glmm_default_line <- function(name, m, ref, seed) {
  set.seed(seed)
  warned <- character()
  t <- system.time(fit <- withCallingHandlers(sgld(m, pars = TRUE), warning = function(w) {
    warned <<- c(warned, conditionMessage(w))
    invokeRestart("muffleWarning")
  }))
  e <- glmm_reference_errors(glmm_reference_draws(m, fit), ref)
  cpu <- t[["user.self"]] + t[["sys.self"]]
  ess <- min(fit$checks$convergence$ess_min)
  sprintf(paste0("%-12s seed %d d %4d: mean %.3f sd (%s), sd %.1f%% (%s), %d quantities; ",
                 "ESS %.0f (%.1f per CPU s); acc %.2f; %s iterations/chain; %.1f s CPU, ",
                 "%.1f s elapsed; %s\n"),
          name, seed, m$d, e$mean, e$mean_at, 100 * e$sd, e$sd_at, e$quantities, ess, ess / cpu,
          mean(fit$acceptance), format(fit$auto$iter, big.mark = ","), cpu, t[["elapsed"]],
          if (length(warned)) paste("WARNING:", substr(warned, 1, 80), collapse = " | ")
          else "no warning")
}
