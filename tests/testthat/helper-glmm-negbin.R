# The negative-binomial multilevel references (data-raw/glmm-negbin-reference.R,
# stan_glmer.nb at its defaults): each case's default call and its largest
# errors. Used by test-glmm-negbin.R and bench/glmm-negbin.R.
negbin_reference_cases <- list(
  grouseticks = list(formula = TICKS ~ YEAR + scale(HEIGHT) + (1 | BROOD) + (1 | LOCATION),
                     data = function(ref) lme4::grouseticks),
  location = list(formula = TICKS ~ YEAR + scale(HEIGHT) + (1 | LOCATION),
                  data = function(ref) lme4::grouseticks),
  simulated = list(formula = y ~ x + (1 + x | g) + offset(log(expo)),
                   data = function(ref) ref$data))

negbin_reference <- function(name) {
  readRDS(system.file("extdata", "glmm-negbin-reference.rds", package = "sgld"))[[name]]
}

# The fit's fixed effects, each term's sds and correlations and phi under the
# reference's names (sd[g:a], cor[g:b,a]); the largest error of a mean in
# posterior sds and of a sd relative, over them, and where.
negbin_reference_errors <- function(fit, ref) {
  U <- as.matrix(fit)
  sig <- grep("^Sigma\\[", colnames(U), value = TRUE)
  key <- regmatches(sig, regexec("^Sigma\\[([^:]*):([^,]*),(.*)\\]$", sig))
  Q <- U[, c(fit$model$coef_names, "reciprocal_dispersion"), drop = FALSE]
  sd_of <- function(g, a) sqrt(U[, paste0("Sigma[", g, ":", a, ",", a, "]")])
  for (k in key) {
    g <- k[2]
    name <- if (k[3] == k[4]) paste0("sd[", g, ":", k[3], "]")
            else paste0("cor[", g, ":", k[4], ",", k[3], "]")
    Q <- cbind(Q, if (k[3] == k[4]) sd_of(g, k[3])
                  else U[, k[1]] / (sd_of(g, k[3]) * sd_of(g, k[4])))
    colnames(Q)[ncol(Q)] <- name
  }
  e_mean <- abs(colMeans(Q) - ref$mean[colnames(Q)]) / ref$sd[colnames(Q)]
  e_sd <- abs(apply(Q, 2, stats::sd) / ref$sd[colnames(Q)] - 1)
  list(mean = max(e_mean), mean_at = names(which.max(e_mean)), sd = max(e_sd),
       sd_at = names(which.max(e_sd)), quantities = ncol(Q))
}

# sgld()'s default call on a case at a seed, its errors, CPU time, warnings.
negbin_default_call <- function(name, seed) {
  case <- negbin_reference_cases[[name]]
  ref <- negbin_reference(name)
  set.seed(seed)
  warned <- character()
  t <- system.time(fit <- withCallingHandlers(
    sgld(case$formula, data = case$data(ref), family = "negbin", progress = FALSE),
    warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    }))
  list(fit = fit, errors = negbin_reference_errors(fit, ref), warnings = warned,
       cpu = t[["user.self"]] + t[["sys.self"]] + t[["user.child"]] + t[["sys.child"]],
       elapsed = t[["elapsed"]])
}
