# loo() of a fit: the pointwise log likelihood in C (the model's table,
# model_loglik_rows()), then Pareto-smoothed importance sampling and the
# relative efficiencies in C (src/loo.c), column by column on threads. The
# result is the object loo::loo() returns for the same matrix (class
# "psis_loo", the same estimates, pointwise columns and diagnostics, equal to
# rounding), so print(), loo::loo_compare() and pareto_k_table() take it.
# At 5,000 rows x 4,000 draws loo::loo() took 5-7 s in R, most of it in
# relative_eff() and the per-column PSIS (bench/loo-speed.md).

# Threads for loo(): the option, else the idle processors (R/run.R). Columns
# are shared dynamically, so no thread waits on another until the end.
loo_threads <- function() {
  threads <- getOption("sgld.threads")
  if (!is.null(threads)) return(threads)
  cores <- available_cores()
  min(cores, idle_cores(cores))
}

# normal quantiles of loo's Monte Carlo error of elpd_loo (its mcse_elpd())
loo_mcse_quantiles <- function(n = 1000) {
  stats::qnorm((seq_len(n) - 3 / 8) / (n - 2 * 3 / 8 + 1))
}

# PSIS-LOO of a draws x observations log likelihood matrix whose rows are
# `chains` chains of equal length, one after the other. `r_eff` NULL to
# compute each column's relative efficiency; `weights` to return the
# normalised log weights too (loo_R2()).
fast_psis_loo <- function(ll, chains, r_eff = NULL, weights = FALSE, threads = loo_threads()) {
  if (length(chains) > 1) chains <- length(unique(chains))
  storage.mode(ll) <- "double"
  if (!all(is.finite(ll)))
    abort("loo(): the log likelihood is not finite for some draw and observation (a draw ",
          "where an observation has probability 0); PSIS-LOO cannot weigh it.")
  if (!is.null(r_eff)) {
    r_eff <- as.double(r_eff)
    if (length(r_eff) == 1L) r_eff <- rep(r_eff, ncol(ll))
  }
  out <- .Call(C_sgld_psis_loo, ll, as.integer(chains), r_eff, loo_mcse_quantiles(),
               weights, as.integer(threads))
  colnames(out$pointwise) <- c("elpd_loo", "mcse_elpd_loo", "p_loo", "influence_pareto_k",
                               "n_eff", "r_eff")
  out
}

# The "psis_loo" object of loo::loo(ll, r_eff = ...): estimates (sums and
# their standard errors over the observations), pointwise values and the
# Pareto k diagnostics, with loo's warnings.
psis_loo_object <- function(psis, dims) {
  pw <- psis$pointwise
  if (any(bitwAnd(psis$flags, 1L) > 0))
    sgld_warn("pareto_k", "Not enough tail samples to fit the generalized Pareto distribution in ",
            "some or all columns of the log likelihood; those columns are not smoothed.")
  if (any(bitwAnd(psis$flags, 2L) > 0))
    sgld_warn("pareto_k", "Can't fit generalized Pareto distribution because all tail values are the same.")
  k <- pw[, "influence_pareto_k"]
  if (any(k > 0.7))
    sgld_warn("pareto_k", "Some Pareto k diagnostic values are too high. See help('pareto-k-diagnostic') ",
            "for details.")
  else if (any(k > 0.5))
    sgld_warn("pareto_k", "Some Pareto k diagnostic values are slightly high. See ",
            "help('pareto-k-diagnostic') for details.")
  pointwise <- cbind(elpd_loo = pw[, "elpd_loo"], mcse_elpd_loo = pw[, "mcse_elpd_loo"],
                     p_loo = pw[, "p_loo"], looic = -2 * pw[, "elpd_loo"],
                     influence_pareto_k = k)
  summed <- pointwise[, c("elpd_loo", "p_loo", "looic"), drop = FALSE]
  n <- nrow(summed)
  estimates <- cbind(Estimate = colSums(summed),
                     SE = sqrt(n * apply(summed, 2, stats::var)))
  out <- list(estimates = estimates, pointwise = pointwise,
              diagnostics = list(pareto_k = k, n_eff = pw[, "n_eff"]),
              psis_object = NULL)
  out <- c(out, stats::setNames(as.list(estimates),
                                c("elpd_loo", "p_loo", "looic", "se_elpd_loo", "se_p_loo",
                                  "se_looic")))
  structure(out, dims = dims, class = c("psis_loo", "importance_sampling_loo", "loo"))
}
