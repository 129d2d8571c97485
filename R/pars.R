# Which parameters' draws a run stores (`pars`), and the running moments the
# engine keeps of every parameter whatever is stored.

# What a run stores by default is sized like rstanarm's (1,000 draws a chain,
# 4,000 over its four chains): when the user gave no `thin`, a sampler keeps
# about this many draws a chain, thinning evenly over the kept span. The
# running moments still take every iteration after burn-in (src/moments.c),
# so means and sds lose nothing; quantiles, ESS, loo() and predictions read
# the stored draws, and 1,000 a chain put loo() of a logistic regression of
# 750 rows at well under 2 s (bench/log-lik.md).
default_draws <- 1000L

# Stored draws needing less than this (256 MB) are not worth reading the
# system's memory figures for, unless the user set a limit
# (options(sgld.memory_limit)).
memory_check_floor <- 2^28

# The stored draws of a default `pars` may take at most this share of the
# memory available (memory_available()); draws_memory() counts the copies
# made while the fit is built, so the rest of the session keeps the other half.
draws_budget_share <- 0.5

# Fewer stored draws than this a chain are of no use for quantiles or ESS:
# over the budget with fewer, a default `pars` stores none.
min_budget_draws <- 100L

# A default `pars` stores every parameter's draws unless they would number
# more than this (chains x draws x parameters: 80 MB, held about three times
# while the fit is built, draws_memory()). At a factor of 10,000 levels x
# 10^5 rows (bench/sparse.md) all draws were 2 x 10^7 numbers, 200 MB of
# fit beside a 4 MB design, most of the run's peak memory; a glmnet user
# asks for the coefficients, not 4,000 draws of each level. The option
# sgld.draws_budget moves it (Inf: every draw by default; the tests lower it).
wide_draws_budget <- 1e7
draws_budget <- function() getOption("sgld.draws_budget", wide_draws_budget)

# Over that budget, a default `pars` stores the draws of the parameters that
# are no coefficient (sigma2, a dispersion) and of the coefficients whose
# column is non-zero on at least this share of the rows: the intercept,
# continuous covariates, the levels of factors of few levels; not the levels
# of a factor of thousands, nor rare words, whose means and sds come from
# the running moments (src/moments.c).
common_column_share <- 0.01

# `pars` as sorted 1-based indices, or NULL for all (the engine's fast path).
# NULL (the default) is every parameter, unless the model makes its own
# choice (`model$default_pars`: model_sv()'s globals, model_mlp()'s
# precisions) or asks for summaries only; the memory budget may still drop
# them (budget_storage()).
resolve_pars <- function(pars, model) {
  d <- model$d
  if (is.null(pars)) {
    keep <- model$default_pars
    if (is.null(keep) && !isTRUE(model$summaries_only)) return(NULL)
    if (is.null(keep)) keep <- integer()
    return(as.integer(keep))
  }
  if (isTRUE(pars)) return(NULL)
  if (isFALSE(pars)) return(integer())
  names_all <- model$names
  if (is.character(pars) && !is.object(pars)) {
    keep <- unlist(lapply(pars, function(p) {
      exact <- which(names_all == p)
      if (length(exact)) return(exact)
      hit <- tryCatch(suppressWarnings(grep(p, names_all)), error = function(e)
        abort("`pars`: \"", p, "\" is neither a parameter name nor a regular expression."))
      if (!length(hit))
        abort("`pars`: \"", p, "\" matches no parameter (names: ",
              paste(utils::head(names_all, 6), collapse = ", "), if (d > 6) ", ...", ").")
      hit
    }))
  } else if (is.numeric(pars) && !is.object(pars)) {
    if (any(!is.finite(pars)) || any(pars != round(pars)) || any(pars < 1 | pars > d))
      abort("`pars` must hold parameter indices from 1 to ", d, ".")
    keep <- as.integer(pars)
  } else {
    abort("`pars` must be NULL, TRUE (all), FALSE (none), parameter names or regular ",
          "expressions, or indices; not ",
          describe(pars), ".")
  }
  keep <- sort(unique(keep))
  if (length(keep) == d) return(NULL)
  if (model_capabilities(model)$mixing_transform)
    abort("`pars`: ", model_mixing_reason(model), "; leave `pars` at NULL.")
  keep
}

# The default storage within the memory budget: when the user left `pars`
# and `thin` at their defaults and every parameter would be stored, a
# regression whose draws would be more than draws_budget() numbers stores
# those of its common parameters only (common_parameters()); otherwise draws
# whose fit would take more than draws_budget_share of the memory available
# are thinned further (to no fewer than min_budget_draws a chain), or else
# not stored. Returns the collection and `keep`, and `storage`: why
# fewer draws or parameters were stored than asked, or NULL.
budget_storage <- function(collect, keep, pars, model, chains, thin_auto) {
  same <- list(collect = collect, keep = keep, storage = NULL)
  # the user's `pars` or `thin`: stored as asked, or refused (check_draws_memory())
  if (!is.null(pars) || !thin_auto) return(same)
  if (!is.null(keep)) {
    if (!length(keep)) same$storage <- paste0(
      "its model (", class(model)[1], ") stores summaries only by default")
    return(same)
  }
  d <- model$d
  wide <- common_parameters(model, collect$capacity, chains)
  if (!is.null(wide)) {
    same$keep <- wide$keep
    same$storage <- wide$storage
    if (!isTRUE(session$told_wide_storage)) {   # once a session: a loop of fits would repeat it
      session$told_wide_storage <- TRUE
      message("sgld: ", wide$storage, ". Give `pars = TRUE` to store every draw (this ",
              "message is shown once a session).")
    }
    return(same)
  }
  need <- draws_memory(collect$capacity, d, chains)
  if (need < memory_check_floor && is.null(getOption("sgld.memory_limit"))) return(same)
  avail <- memory_available()
  budget <- draws_budget_share * as.numeric(avail[["bytes"]])
  if (need <= budget) return(same)
  fits <- floor(budget / draws_memory(1, d, chains))
  gib <- format(need / 2^30, digits = 3)
  if (collect$regular && fits >= min_budget_draws) {
    stored <- collect$capacity
    collect$thin <- ceiling(collect$span / fits)
    collect$capacity <- floor(collect$span / collect$thin)
    same$collect <- collect
    same$storage <- paste0("storing ", format(stored, big.mark = ","), " draws a chain of ",
                           "every parameter would take ", gib, " GiB, over half the memory ",
                           "available, so it stored every ", collect$thin, "-th iteration")
    return(same)
  }
  same$keep <- integer()
  same$storage <- paste0("storing every parameter's draws would take ", gib,
                         " GiB, over half the memory available (", avail[["from"]], ")")
  same
}

# The default storage of a regression whose draws of every parameter would
# be more than draws_budget() numbers: `keep` (the parameters that are no
# coefficient and the coefficients on at least common_column_share of the
# rows, the most common first up to the budget) and `storage`, why; NULL
# within the budget, or for a model without columns.
common_parameters <- function(model, capacity, chains) {
  d <- model$d
  per_parameter <- as.double(capacity) * chains
  budget <- draws_budget()
  if (!is.numeric(budget) || length(budget) != 1L || is.na(budget) || budget < 0)
    abort("`options(sgld.draws_budget)` must be a number of stored draws (Inf for no ",
          "limit), not ", describe(budget), ".")
  if (per_parameter * d <= budget) return(NULL)
  if (!isTRUE(model_capabilities(model)$regression) || is.null(model$p)) return(NULL)
  counts <- column_row_counts(model)
  if (is.null(counts)) return(NULL)
  p <- model$p
  extra <- if (p < d) (p + 1):d else integer(0)
  common <- which(counts >= common_column_share * model$n)
  room <- max(0, floor(budget / per_parameter) - length(extra))
  common <- utils::head(common[order(counts[common], decreasing = TRUE)], room)
  keep <- sort(c(common, extra))
  list(keep = keep, storage = sprintf(paste0(
    "%s draws of each of %s parameters would be %s million numbers, so draws were stored ",
    "for the %d that are no coefficient or whose column is non-zero on at least %s%% of ",
    "the rows; the means and sds of all are from running moments"),
    format(per_parameter, big.mark = ",", scientific = FALSE),
    format(d, big.mark = ","), format(per_parameter * d / 1e6, digits = 3), length(keep),
    format(100 * common_column_share)))
}

# The number of rows on which each coefficient's column is non-zero, from the
# model's row storage (sparse or dense); NULL when it keeps neither.
column_row_counts <- function(model) {
  p <- if (is.null(model$p)) model$d else model$p
  if (!is.null(model$sp_col)) tabulate(model$sp_col + 1L, nbins = p)
  else if (!is.null(model$z)) rowSums(model$z[seq_len(p), , drop = FALSE] != 0)
}

# indices of the stored parameters
kept_indices <- function(fit) {
  if (is.null(fit$pars)) seq_len(fit$model$d) else fit$pars
}

all_kept <- function(fit) is.null(fit$pars) || length(fit$pars) == fit$model$d

# coda's chains need at least one stored parameter: a fit that stored none
# says why and how to store them, rather than handing coda 0-column chains.
require_stored_draws <- function(fit, what) {
  if (length(kept_indices(fit))) return(invisible())
  why <- if (!is.null(fit$storage)) fit$storage
         else "`pars = FALSE` was given"
  abort(what, ": this fit stored no draws (", why, "); its means and sds are in ",
        "summary() and coef(), from the running moments. To store draws, rerun with ",
        "`pars = TRUE` (every parameter) or the names of the parameters you need, and a ",
        "larger `thin` if memory is short.")
}

# Methods that need every parameter of every draw (prediction, vcov) say so.
require_all_draws <- function(fit, what) {
  if (!all_kept(fit))
    abort(what, " needs the draws of every parameter, but this fit stored ",
          length(fit$pars), " of ", fit$model$d,
          if (is.null(fit$storage)) " (`pars`)" else paste0(" (", fit$storage, ")"),
          "; rerun with `pars = TRUE` (every parameter) or pass the parameters it needs.")
}

# Stored draws (columns kept) from the user's to the sampler's scale and back
# for a subset: only coordinate-wise transforms can be applied to a subset.
kept_to_user_scale <- function(model, u, keep) {
  if (is.null(keep)) return(to_user_scale(model, u))
  if (!is.null(model$moment_scale)) return(apply_scales(u, model$moment_scale[keep], TRUE))
  for (j in match(model$log_scale, keep, nomatch = 0L)) u[, j] <- exp(u[, j])
  u
}

kept_to_sampler_scale <- function(model, u, keep) {
  if (is.null(keep)) return(to_sampler_scale(model, u))
  if (!is.null(model$moment_scale)) return(apply_scales(u, model$moment_scale[keep], FALSE))
  for (j in match(model$log_scale, keep, nomatch = 0L)) u[, j] <- log(u[, j])
  u
}

# The coordinate-wise transforms named by the engine's moment scales (a
# model's `moment_scale`, one per parameter), applied to the columns of u:
# to the user's scale (forward) or back to the sampler's.
apply_scales <- function(u, scales, forward) {
  fns <- if (forward) list(exp = exp, tanh = tanh, exp_plus2 = function(x) 2 + exp(x))
         else list(exp = log, tanh = atanh, exp_plus2 = function(x) log(x - 2))
  for (j in which(scales != "identity")) u[, j] <- fns[[scales[j]]](u[, j])
  u
}

# The engine's running moments as matrices with one row per chain: mean,
# step-weighted mean and variance over every iteration of each chain after
# burn-in (thinned or not), on the user's scale for coordinate-wise
# transforms (`scale` says which).
moments_of <- function(res, model) {
  kept <- res$moment_count
  nm <- list(paste("chain", seq_along(kept)), model$names)
  mat <- function(x) matrix(t(x), length(kept), model$d, dimnames = nm)
  custom <- model_capabilities(model)$mixing_transform
  if (custom) nm[[2]] <- model$sampler_names
  list(mean = mat(res$moment_mean),
       weighted_mean = mat(res$moment_wmean),
       var = mat(res$moment_m2) / pmax(kept - 1, 1) * ifelse(kept > 1, 1, NA),
       n = kept, weight = res$moment_weight,
       scale = if (custom) "sampler" else "user")
}

# Pooled over the chains in `chains`: mean, step-weighted mean and sd of every
# parameter (the combination of per-chain moments is exact: total sum of
# squares = within-chain sums + between-chain spread).
pooled_moments <- function(mom, chains) {
  n <- mom$n[chains]
  N <- sum(n)
  if (N == 0) return(NULL)
  mean <- colSums(mom$mean[chains, , drop = FALSE] * n) / N
  w <- mom$weight[chains]
  wmean <- colSums(mom$weighted_mean[chains, , drop = FALSE] * w) / sum(w)
  within <- colSums(mom$var[chains, , drop = FALSE] * pmax(n - 1, 0), na.rm = TRUE)
  between <- colSums(sweep(mom$mean[chains, , drop = FALSE], 2, mean)^2 * n)
  list(mean = mean, weighted_mean = wmean, sd = sqrt((within + between) / (N - 1)))
}

# A run expected (from its first chunks) to take longer than
# getOption("sgld.long_run_seconds", 3600) with no progress display: the
# engine said so on stderr when it started; the warning keeps it in the
# record, with the remedy.
warn_long_run <- function(fit, settings) {
  if (settings$progress || !(fit$expected_time > settings$long_run_seconds)) return(invisible())
  sgld_warn("long_run", sprintf(paste0(
    "this run was expected to take %s (estimated from its first iterations) with no ",
    "progress display; set `progress = TRUE` to follow long runs, or reduce `iter`. ",
    "An interrupt (Ctrl-C) stops a run and keeps its draws."),
    format_seconds(fit$expected_time)))
}

format_seconds <- function(s) {
  if (s >= 3600) sprintf("%.1f hours", s / 3600)
  else if (s >= 60) sprintf("%.1f minutes", s / 60)
  else sprintf("%.2g seconds", s)
}

# ---- memory for the stored draws --------------------------------------------

# The memory a run's stored draws need at its peak, in bytes: while a run
# ends and its fit is built, the engine's outputs, the per-chain matrices of
# the fit and the copies R makes between them coexist. Measured as the rise
# of the process's peak resident memory over the run (logistic; kept draws
# of d = 8 x 3e6, 40 x 1e6, 200 x 2e5): 598, 934 and 921 MB, against
# 8 (3 d + 3) bytes a kept row (the draws three times, the learning rate,
# iteration and trace once) of 618, 938 and 921 MB. Under an address-space
# limit of 2.9 GB (ulimit -v, 2.75 GiB left), 1.4e7 kept draws of d = 8 ran
# and 1.6e7 failed in the allocator after the run; this refuses 1.4e7
# (2.82 GiB) and passes 1.3e7.
draws_memory <- function(capacity, n_keep, chains) {
  8 * capacity * chains * (3 * n_keep + 3)
}

# The memory a run can count on, in bytes: the least of what the system has
# available (Linux: MemAvailable), what the process's control group still
# allows (cgroup v2 or v1) and what its address-space limit (ulimit -v)
# leaves; getOption("sgld.memory_limit") instead when set. Inf where nothing
# is known (other systems): the fixed cap of 2^31 stored numbers remains.
memory_available <- function() {
  opt <- getOption("sgld.memory_limit")
  if (!is.null(opt)) {
    if (!is.numeric(opt) || length(opt) != 1L || is.na(opt) || !(opt > 0))
      abort("`options(sgld.memory_limit)` must be a positive number of bytes, not ",
            describe(opt), ".")
    return(c(bytes = opt, from = "options(sgld.memory_limit)"))
  }
  read <- function(path) tryCatch(suppressWarnings(readLines(path, warn = FALSE)),
                                  error = function(e) character())
  field <- function(lines, name) {
    hit <- grep(paste0("^", name, ":"), lines, value = TRUE)
    if (!length(hit)) return(NA_real_)
    as.numeric(sub("^[^:]+:[[:space:]]*([0-9]+).*", "\\1", hit[1])) * 1024
  }
  number <- function(path) {
    v <- suppressWarnings(as.numeric(read(path)[1]))
    if (length(v) && is.finite(v)) v else NA_real_
  }
  found <- c(
    "the system's available memory" = field(read("/proc/meminfo"), "MemAvailable"),
    "the control group's limit" = {
      group <- sub("^0::", "", grep("^0::", read("/proc/self/cgroup"), value = TRUE)[1])
      v2 <- file.path("/sys/fs/cgroup", if (is.na(group)) "" else group)
      v1 <- "/sys/fs/cgroup/memory"
      left <- c(number(file.path(v2, "memory.max")) - number(file.path(v2, "memory.current")),
                number(file.path(v1, "memory.limit_in_bytes")) -
                  number(file.path(v1, "memory.usage_in_bytes")))
      if (all(is.na(left))) NA_real_ else min(left, na.rm = TRUE)
    },
    "the address-space limit (ulimit -v)" = {
      lim <- grep("^Max address space", read("/proc/self/limits"), value = TRUE)
      soft <- suppressWarnings(as.numeric(strsplit(sub("^Max address space +", "", lim), " +")[[1]][1]))
      if (length(soft) && is.finite(soft))
        soft - field(read("/proc/self/status"), "VmSize") else NA_real_
    })
  found <- found[is.finite(found)]
  if (!length(found)) return(c(bytes = Inf, from = "unknown"))
  c(bytes = min(found), from = names(found)[which.min(found)])
}

# A run whose stored draws could not be held with the copies made as its
# fit is built is refused before it starts, rather than failing in the
# allocator, or after the run when the fit is built.
check_draws_memory <- function(capacity, n_keep, chains) {
  gib <- function(b) format(b / 2^30, digits = 3)
  keeps <- paste0("the run would keep up to ", format(capacity * chains, big.mark = ","),
                  " draws of ", n_keep, " parameters (", gib(8 * capacity * n_keep * chains),
                  " GiB)")
  remedy <- "; increase `thin`, reduce `iter`, or store fewer parameters with `pars`."
  if (capacity * n_keep * chains > 2^31)
    abort(keeps, ", over the limit of 2^31 stored numbers (16 GiB)", remedy)
  need <- draws_memory(capacity, n_keep, chains)
  if (need < memory_check_floor && is.null(getOption("sgld.memory_limit"))) return(invisible())
  avail <- memory_available()
  have <- as.numeric(avail[["bytes"]])
  if (need > have)
    abort(keeps, ", and building its fit holds about three copies of them at once (",
          gib(need), " GiB), more than the ", gib(have), " GiB of memory available (",
          avail[["from"]], ")", remedy)
  invisible()
}
