#' Methods for multilevel fits: fixed and group effects, covariances
#'
#' The methods an lme4 or rstanarm user reaches for on a fit of
#' [model_glmer()] (or of `sgld(y ~ x + (1 | g), data, family)`), with
#' rstanarm's meanings:
#' \describe{
#'   \item{`fixef()`}{the posterior medians of the fixed effects.}
#'   \item{`ranef()`}{the posterior medians of the group effects: a list
#'     with one data frame per grouping factor (groups x coefficients), as
#'     lme4's `ranef()`.}
#'   \item{`coef()`}{per grouping factor, `fixef()` plus `ranef()`: each
#'     group's coefficients.}
#'   \item{`VarCorr()`}{each term's covariance matrix (the posterior means
#'     of `Sigma[...]`), with its sds and correlations, and the residual sd;
#'     printed by lme4's method.}
#'   \item{`ngrps()`}{the number of groups of each grouping factor.}
#'   \item{`sigma()`}{the posterior median of the residual sd (gaussian), 1
#'     otherwise.}
#' }
#' `as.matrix()`, `as.data.frame()` and `summary()` report every parameter
#' under rstanarm's names: the coefficients, `b[(Intercept) Subject:308]`,
#' `Sigma[Subject:Days,(Intercept)]` (each term's covariance, lower
#' triangle) and `sigma`.
#'
#' The prediction methods ([posterior_predict()][posterior_predict.sgld_fit],
#' `posterior_epred()`, `posterior_linpred()`, `predict()`,
#' `predictive_interval()`) take two more arguments, named as in rstanarm and
#' lme4: `re.form` (`NULL`, the default, for every group effect; `NA` or `~0`
#' for none, the population-level prediction; a formula of random-effect
#' terms such as `~ (1 | a)` for those terms' effects only, as
#' `lme4::predict.merMod()` reads it: `(lhs | g)` keeps the effects of the
#' grouping factor `g` on the coefficients of `lhs`, so `~ (1 | Subject)` on
#' a `(Days | Subject)` model keeps the group intercepts and drops the
#' slopes; a term or coefficient the model does not have is an error) and `allow.new.levels`
#' (`TRUE`, the default: a group of `newdata` not seen in training gets, at
#' each draw, an effect drawn from its term's normal distribution with that
#' draw's covariance, independently for each new group, as rstanarm does for
#' its new levels; `FALSE`: a new group is an error). `log_lik()` and `loo()`
#' are those of each row given the group effects, times the row's prior
#' weight when the model has `weights` (for `newdata`, the weights'
#' expression evaluated in it).
#'
#' The generics `fixef()`, `ranef()` and `ngrps()` are lme4's and
#' `VarCorr()` is nlme's, re-exported as rstanarm does.
#' @param object,x A fit of a multilevel model.
#' @param ... Not used.
#' @return `fixef()`: a named vector; `ranef()` and `coef()`: a list of data
#'   frames (class `ranef.mer` and `coef.mer`); `VarCorr()`: lme4's
#'   `VarCorr.merMod` list; `ngrps()`: a named integer vector.
#' @examples
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'   set.seed(1)
#'   fit <- mala(Reaction ~ Days + (Days | Subject), data = lme4::sleepstudy, chains = 1,
#'               iter = 2000, lr = 0.005)
#'   fixef(fit)
#'   head(coef(fit)$Subject)
#'   VarCorr(fit)
#'   posterior_epred(fit, newdata = data.frame(Days = 1, Subject = "new"), ndraws = 5)
#' }
#' @name fixef.sgld_fit
NULL

#' @importFrom lme4 fixef ranef ngrps
#' @importFrom nlme VarCorr
NULL

#' @export
lme4::fixef
#' @export
lme4::ranef
#' @export
lme4::ngrps
#' @export
nlme::VarCorr

need_multilevel <- function(object, what) {
  if (!inherits(object$model, "sgld_model_glmm"))
    abort(what, " is for multilevel models (model_glmer(), or a formula with terms such as ",
          "(1 | g)); this fit is of ", class(object$model)[1], ".")
  if (is_sampler(object) && ndraws(object) == 0) abort(what, ": the fit has no kept draws.")
  invisible(object)
}

# The user-scale draws (rstanarm's parameters) of a multilevel fit, or the
# final iterate of an optimiser.
multilevel_draws <- function(object, what) {
  need_multilevel(object, what)
  if (!is_sampler(object)) return(object$last)
  as.matrix.sgld_fit(object)
}

#' @rdname fixef.sgld_fit
#' @export
fixef.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  U <- multilevel_draws(object, "fixef()")
  apply(U[, object$model$coef_names, drop = FALSE], 2, stats::median)
}

# Per grouping factor, a groups x coefficients table of `f` (a summary of
# each column of draws): the terms of one factor (as (x || g) makes)
# side by side, as lme4's ranef() puts them.
group_tables <- function(model, values) {
  out <- list()
  for (k in seq_len(model$K)) {
    g <- model$group_names[k]
    tab <- matrix(values[model$b_block[[k]]], model$G[k], model$r[k], byrow = TRUE,
                  dimnames = list(model$levels[[k]], model$cnms[[k]]))
    out[[g]] <- if (is.null(out[[g]])) tab else cbind(out[[g]], tab)
  }
  lapply(out, function(t) as.data.frame(t, check.names = FALSE))
}

#' @rdname fixef.sgld_fit
#' @export
ranef.sgld_fit <- function(object, ...) {
  check_dots_empty(...)
  U <- multilevel_draws(object, "ranef()")
  model <- glmm_blocks(object$model)
  med <- apply(U[, model$b_names, drop = FALSE], 2, stats::median)
  structure(group_tables(model, med), class = "ranef.mer")
}

# rstanarm's coef(): each group's coefficients, fixef() + ranef() (0 for
# a coefficient the group has no effect on).
glmer_coef <- function(object) {
  fe <- fixef.sgld_fit(object)
  re <- ranef.sgld_fit(object)
  out <- lapply(re, function(t) {
    tab <- matrix(fe, nrow(t), length(fe), byrow = TRUE,
                  dimnames = list(rownames(t), names(fe)))
    tab[, colnames(t)] <- tab[, colnames(t)] + as.matrix(t)
    as.data.frame(tab, check.names = FALSE)
  })
  structure(out, class = "coef.mer")
}

#' @rdname fixef.sgld_fit
#' @param sigma Not used (lme4's argument).
#' @export
VarCorr.sgld_fit <- function(x, sigma = 1, ...) {
  U <- multilevel_draws(x, "VarCorr()")
  model <- x$model
  means <- colMeans(U[, model$sigma_names, drop = FALSE])
  ans <- lapply(seq_len(model$K), function(k) {
    S <- glmm_sigma_matrix(means[model$sigma_term == k], model$r[k])
    dimnames(S) <- list(model$cnms[[k]], model$cnms[[k]])
    structure(S, stddev = sqrt(diag(S)), correlation = stats::cov2cor(S))
  })
  names(ans) <- model$group_names
  gaussian <- model$family == "gaussian"
  structure(ans, sc = if (gaussian) mean(U[, "sigma"]) else 1, useSc = gaussian,
            class = "VarCorr.merMod")
}

#' @rdname fixef.sgld_fit
#' @export
ngrps.sgld_fit <- function(object, ...) {
  need_multilevel(object, "ngrps()")
  m <- object$model
  keep <- !duplicated(m$group_names)
  stats::setNames(as.integer(m$G[keep]), m$group_names[keep])
}

# sigma() of a multilevel fit: rstanarm's (the posterior median; 1 when the
# family has no residual sd).
glmer_sigma <- function(object) {
  if (object$model$family != "gaussian") return(1)
  stats::median(multilevel_draws(object, "sigma()")[, "sigma"])
}

# The indices of each term's group effects among the b's, and of the b's
# and Sigma's among the user's parameters.
glmm_blocks <- function(model) {
  if (!is.null(model$b_block)) return(model)
  ends <- cumsum(model$r * model$G)
  model$b_block <- lapply(seq_len(model$K), function(k)
    seq.int(ends[k] - model$r[k] * model$G[k] + 1L, length.out = model$r[k] * model$G[k]))
  model
}

# ---- predictions -----------------------------------------------------------

# The prediction methods' extra arguments (re.form, allow.new.levels), set on
# a copy of the model for its hooks; any other argument, or these for a model
# without group effects, is an error as check_dots_empty() gives it.
with_group_options <- function(object, ...) {
  dots <- list(...)
  known <- c("re.form", "allow.new.levels")
  if (!inherits(object$model, "sgld_model_glmm") || length(setdiff(names(dots), known)) ||
      (length(dots) && is.null(names(dots)))) {
    check_dots_empty(...)
    return(object)
  }
  keep <- glmm_re_form(object$model, dots$re.form)
  allow <- if (is.null(dots$allow.new.levels)) TRUE else dots$allow.new.levels
  check_flag(allow, "allow.new.levels")
  object$model$re_keep <- keep
  object$model$re_form_none <- !is.null(keep) && !any(unlist(keep))
  object$model$allow_new_levels <- allow
  object
}

# Which group effects `re.form` keeps, as lme4's predict.merMod() reads it:
# NULL (every one: NULL returned), NA or ~0 (none), or a formula of
# random-effect terms, each (lhs | g) keeping the effects of g's grouping
# factor on lhs's coefficients, whichever terms of the model hold them; (x ||
# g) and (1 | a/b) expand as in the model's formula. A list, per term of the
# model, of one logical per coefficient.
glmm_re_form <- function(model, re_form) {
  if (is.null(re_form)) return(NULL)
  none <- lapply(model$r, function(r) rep(FALSE, r))
  if (length(re_form) == 1L && !is.language(re_form) && is.na(re_form)) return(none)
  if (!inherits(re_form, "formula"))
    abort("`re.form` must be NULL (every group effect), NA or ~0 (none), or a formula of ",
          "the model's random-effect terms such as ~(1 | g); not ", describe(re_form), ".")
  bars <- lme4::findbars(lme4::expandDoubleVerts(re_form))
  rhs <- re_form[[length(re_form)]]
  if (is.null(bars)) {
    if (identical(deparse1(rhs), "0")) return(none)
    abort("`re.form` ", deparse1(re_form), " has no random-effect term; give ~(1 | g) ",
          "terms of the model, or NA for none.")
  }
  # the coefficients' names of each term of re.form, from rows of the
  # training data (their levels and contrasts are the model's)
  rows <- utils::head(model$lme4_data, 2L)
  xlev_of <- function(f) model$var_levels[intersect(names(model$var_levels), all.vars(f))]
  keep <- none
  for (b in bars) {
    g <- deparse1(b[[3]])
    term <- paste0("(", deparse1(b), ")")
    if (!g %in% model$group_names)
      abort("`re.form`: the term ", term, " groups by `", g, "`, which no term of the ",
            "model does (", paste0("`", unique(model$group_names), "`", collapse = ", "), ").")
    cn <- tryCatch(colnames(glmm_term_matrix(b, rows, xlev_of)), error = function(e)
      abort("`re.form`: the term ", term, " cannot be read on the model's data: ",
            conditionMessage(e)))
    found <- character()
    for (k in which(model$group_names == g)) {
      hit <- model$cnms[[k]] %in% cn
      keep[[k]] <- keep[[k]] | hit
      found <- c(found, model$cnms[[k]][hit])
    }
    missing_cn <- setdiff(cn, found)
    if (length(missing_cn))
      abort("`re.form`: the term ", term, " has group effects the model does not (",
            paste0("`", missing_cn, "`", collapse = ", "), " by `", g, "`).")
  }
  keep
}

# draws x rows linear predictors at the sampler-scale draws W, for the
# training rows (newdata NULL) or new ones.
glmm_linpred <- function(model, W, newdata) {
  model <- glmm_blocks(model)
  U <- glmm_draws(model, W)
  beta <- U[, seq_len(model$p), drop = FALSE]
  if (length(model$intercept) && any(model$x_means != 0))
    beta[, model$intercept] <- beta[, model$intercept] - drop(beta %*% model$x_means)
  design <- if (is.null(newdata)) glmm_training_design(model) else glmm_new_design(model, newdata)
  eta <- beta %*% t(design$X)
  if (!is.null(design$offset)) eta <- eta + rep(design$offset, each = nrow(eta))
  if (!isTRUE(model$re_form_none)) {
    for (k in seq_len(model$K)) {
      r <- model$r[k]
      kept <- if (is.null(model$re_keep)) rep(TRUE, r) else model$re_keep[[k]]
      if (!any(kept)) next
      bk <- U[, model$p + model$b_block[[k]], drop = FALSE]
      g <- design$group[[k]]
      uk <- design$u[[k]]
      new <- which(is.na(g))
      for (j in which(kept)) {
        cols <- (g - 1L) * r + j
        eff <- matrix(0, nrow(U), length(g))
        known <- which(!is.na(g))
        eff[, known] <- bk[, cols[known], drop = FALSE]
        eta <- eta + eff * rep(uk[j, ], each = nrow(eta))
      }
      if (length(new)) eta[, new] <- eta[, new] + glmm_new_effects(model, U, k, design, new)
    }
  }
  dimnames(eta) <- list(NULL, design$rownames)
  eta
}

# For the rows `new` of term k whose group was not seen in training: at
# each draw, one effect per new group from N(0, Sigma_k) of that draw, times
# the rows' covariates.
glmm_new_effects <- function(model, U, k, design, new) {
  r <- model$r[k]
  labels <- design$new_labels[[k]][new]
  groups <- unique(labels)
  S <- U[, model$sigma_names[model$sigma_term == k], drop = FALSE]
  out <- matrix(0, nrow(U), length(new))
  for (s in seq_len(nrow(U))) {
    L <- t(chol(glmm_sigma_matrix(S[s, ], r)))
    b <- L %*% matrix(stats::rnorm(r * length(groups)), r)
    # re.form's subset: the kept coefficients' effects (their joint
    # distribution is the full draw's margin)
    if (!is.null(model$re_keep)) b[!model$re_keep[[k]], ] <- 0
    out[s, ] <- colSums(b[, match(labels, groups), drop = FALSE] *
                          design$u[[k]][, new, drop = FALSE])
  }
  out
}

glmm_training_design <- function(model) {
  n <- model$n
  X <- t(model$x + model$x_means)
  rpos <- c(0L, cumsum(model$r))
  u <- lapply(seq_len(model$K), function(k)
    matrix(model$u, sum(model$r))[rpos[k] + seq_len(model$r[k]), , drop = FALSE])
  group <- lapply(seq_len(model$K), function(k)
    model$group[seq.int(k, by = model$K, length.out = n)] + 1L)
  list(X = X, offset = model$obs_offset, u = u, group = group,
       rownames = as.character(seq_len(n)))
}

# Both designs for new rows, from the formula's fixed terms and each
# random-effect term, with the training factors' levels; a group not seen in
# training is NA in `group` (and named in `new_labels`).
glmm_new_design <- function(model, newdata) {
  if (!is.data.frame(newdata)) abort("`newdata` must be a data frame, not ", describe(newdata), ".")
  env <- environment(model$formula)
  vars <- all.vars(model$formula[[3L]])
  missing_vars <- setdiff(vars, c(names(newdata), ls(env)))
  # the variables of the terms re.form leaves out need not be in newdata,
  # as in lme4: only the fixed part's and those of the kept terms' groups
  if (!is.null(model$re_keep)) {
    kept_groups <- model$group_names[vapply(model$re_keep, any, TRUE)]
    needed <- c(all.vars(model$fixed_terms), unlist(lapply(
      lme4::findbars(lme4::expandDoubleVerts(model$formula)),
      function(b) if (deparse1(b[[3]]) %in% kept_groups) all.vars(b))))
    missing_vars <- intersect(missing_vars, needed)
  }
  if (length(missing_vars))
    abort("`newdata` has no column named ", paste0("'", missing_vars, "'", collapse = ", "), ".")
  # the training levels of the factors a formula uses
  xlev_of <- function(f) model$var_levels[intersect(names(model$var_levels), all.vars(f))]
  mf <- stats::model.frame(model$fixed_terms, newdata, xlev = xlev_of(model$fixed_terms),
                           na.action = stats::na.fail)
  X <- stats::model.matrix(model$fixed_terms, mf, contrasts.arg = model$contrasts)
  off <- stats::model.offset(mf)
  if (!is.null(model$offset_expr)) {
    extra <- eval(model$offset_expr, newdata, environment(model$formula))
    if (!is.numeric(extra) || length(extra) != nrow(newdata))
      abort("`newdata`: the offset `", deparse1(model$offset_expr), "` gives ", length(extra),
            " values for its ", nrow(newdata), " rows; give the offset as a column of ",
            "`newdata` (offset = log(exposure)).")
    off <- if (is.null(off)) extra else off + extra
  }
  n <- nrow(X)
  u <- group <- new_labels <- vector("list", model$K)
  if (!isTRUE(model$re_form_none)) {
    bars <- lme4::findbars(lme4::expandDoubleVerts(model$formula))
    keys <- vapply(bars, function(b) paste(deparse1(b[[3]]), paste(
      colnames(glmm_term_matrix(b, newdata, xlev_of)), collapse = ",")), "")
    for (k in seq_len(model$K)) {
      if (!is.null(model$re_keep) && !any(model$re_keep[[k]])) next
      key <- paste(model$group_names[k], paste(model$cnms[[k]], collapse = ","))
      b <- bars[[match(key, keys)]]
      uk <- glmm_term_matrix(b, newdata, xlev_of)
      u[[k]] <- t(uk[, model$cnms[[k]], drop = FALSE])
      # grouping variables as factors, as lme4 makes them (factorize()), so
      # that a:b is their interaction whatever their type
      gvars <- intersect(all.vars(b[[3]]), names(newdata))
      fac <- newdata
      fac[gvars] <- lapply(newdata[gvars], function(v) if (is.factor(v)) v else factor(v))
      labels <- as.character(eval(b[[3]], fac, env))
      if (anyNA(labels))
        abort("`newdata`: the grouping variable of (", model$term_names[k], ") has missing values.")
      g <- match(labels, model$levels[[k]])
      if (anyNA(g) && !!isFALSE(model$allow_new_levels))
        abort("`newdata`: the group '", labels[is.na(g)][1], "' of (", model$term_names[k], ")",
              " was not in the training data; give allow.new.levels = TRUE to draw its ",
              "effect from the group-level distribution, or re.form = NA for none.")
      group[[k]] <- g
      new_labels[[k]] <- labels
    }
  }
  list(X = X, offset = off, u = u, group = group, new_labels = new_labels,
       rownames = if (is.null(rownames(newdata))) as.character(seq_len(n)) else rownames(newdata))
}

# The model matrix of a bar's left-hand side (1 + x of (1 + x | g)) for new rows.
glmm_term_matrix <- function(bar, newdata, xlev_of) {
  f <- stats::as.formula(call("~", bar[[2]]))
  stats::model.matrix(f, stats::model.frame(f, newdata, xlev = xlev_of(f)))
}

glmm_inverse_link <- function(model, eta) {
  switch(model$family, gaussian = eta, binomial = stats::plogis(eta), exp(eta))
}

# the trials of each row (binomial), of the training data or of newdata
glmm_trials <- function(model, newdata) {
  if (model$family != "binomial") return(NULL)
  if (is.null(newdata)) return(model$trials)
  lhs <- model$formula[[2L]]
  if (!all(all.vars(lhs) %in% names(newdata))) {
    if (all(model$trials == 1)) return(rep(1, nrow(newdata)))
    abort("`newdata` needs the columns of the response ", deparse1(lhs), ": its trials ",
          "(events + nonevents) are the number of draws of each new row.")
  }
  y <- eval(lhs, newdata, environment(model$formula))
  if (isTRUE(model$trials_from_weights)) return(glmm_new_weights(model, newdata))
  if (is.matrix(y)) y[, 1] + y[, 2] else rep(1, NROW(y))
}

# The prior weights of new rows: the model's `weights` expression
# evaluated in newdata (NULL for a model without weights).
glmm_new_weights <- function(model, newdata) {
  if (is.null(model$weights_expr)) return(NULL)
  w <- tryCatch(eval(model$weights_expr, newdata, environment(model$formula)),
                error = function(e) abort("`newdata`: the weights `", deparse1(model$weights_expr),
                                          "` cannot be evaluated in it: ", conditionMessage(e)))
  if (!is.numeric(w) || length(w) != nrow(newdata) || anyNA(w) || any(w < 0))
    abort("`newdata`: the weights `", deparse1(model$weights_expr), "` must give one ",
          "non-negative number per row (", nrow(newdata), ").")
  as.double(w)
}

glmm_replicate <- function(model, eta, W, newdata) {
  mu <- glmm_inverse_link(model, eta)
  n <- length(mu)
  out <- switch(model$family,
    gaussian = mu + stats::rnorm(n) * exp(W[, model$d]),
    binomial = stats::rbinom(n, rep(glmm_trials(model, newdata), each = nrow(mu)), mu),
    poisson = stats::rpois(n, mu),
    # phi one per draw, recycled down the columns
    negbin = stats::rnbinom(n, size = exp(W[, model$d]), mu = mu))
  matrix(out, nrow(eta), dimnames = dimnames(eta))
}

model_prediction_draws.sgld_model_glmm <- function(model, W, newdata, type) {
  eta <- glmm_linpred(model, W, newdata)
  list(mean = if (type == "link") eta else glmm_inverse_link(model, eta),
       replicate = function() glmm_replicate(model, eta, W, newdata))
}

model_posterior_predict.sgld_model_glmm <- function(model, object, newdata, ndraws) {
  W <- prediction_draws(object, ndraws, "posterior_predict()")
  glmm_replicate(model, glmm_linpred(model, W, newdata), W, newdata)
}

model_predict.sgld_model_glmm <- function(model, object, newdata, type, draws, ndraws, threads) {
  if (type == "class") abort("`type` = \"class\" is for binary classifiers; use \"response\".")
  W <- if (is_sampler(object)) prediction_draws(object, ndraws, "predict()")
       else to_sampler_scale(model, object$last)
  mu <- model_prediction_draws(model, W, newdata, type)$mean
  if (draws) t(mu) else colMeans(mu)
}

# log_lik() of new rows: each row's log density given its group effects.
model_log_lik.sgld_model_glmm <- function(model, object, newdata, ndraws) {
  W <- prediction_draws(object, ndraws, "log_lik()")
  if (is.null(newdata)) {
    out <- model_loglik_rows(model, W)
    colnames(out) <- as.character(seq_len(ncol(out)))
    return(out)
  }
  need <- setdiff(all.vars(model$formula[[2L]]), names(newdata))
  if (length(need))
    abort("`newdata` has no column named ", paste0("'", need, "'", collapse = ", "),
          ": the response, which the log likelihood needs.")
  eta <- glmm_linpred(model, W, newdata)
  y <- eval(model$formula[[2L]], newdata, environment(model$formula))
  wt <- glmm_new_weights(model, newdata)
  rep_rows <- function(v) rep(v, each = nrow(eta))
  ll <- switch(model$family,
    gaussian = stats::dnorm(rep_rows(y), eta, exp(W[, model$d]), log = TRUE),
    binomial = if (is.matrix(y)) stats::dbinom(rep_rows(y[, 1]), rep_rows(y[, 1] + y[, 2]),
                                               stats::plogis(eta), log = TRUE)
               else if (isTRUE(model$trials_from_weights)) {
                 trials <- wt
                 wt <- NULL   # the trials, not a multiplier
                 stats::dbinom(rep_rows(round(as.double(y) * trials)), rep_rows(trials),
                               stats::plogis(eta), log = TRUE)
               } else stats::dbinom(rep_rows(glmm_response(y, "binomial")$y), 1,
                                    stats::plogis(eta), log = TRUE),
    poisson = stats::dpois(rep_rows(y), exp(eta), log = TRUE),
    negbin = stats::dnbinom(rep_rows(y), size = exp(W[, model$d]), mu = exp(eta), log = TRUE))
  if (!is.null(wt)) ll <- ll * rep_rows(wt)
  matrix(ll, nrow(eta), dimnames = dimnames(eta))
}

model_methods.sgld_model_glmm <- function(model) {
  stats::setNames(as.list(rep(TRUE, length(fit_methods))), names(fit_methods))
}
model_family.sgld_model_glmm <- function(model) {
  switch(model$family, gaussian = stats::gaussian(), binomial = stats::binomial(),
         poisson = stats::poisson(), negbin = negbin_family())
}
model_link.sgld_model_glmm <- function(model) {
  switch(model$family, gaussian = "identity", binomial = "logit", "log")
}
model_observed.sgld_model_glmm <- function(model) {
  if (model$family == "binomial") model$y / model$trials else model$y
}

# ---- the model contract's answers (R/model.R) ------------------------------

model_fit_coef.sgld_model_glmm <- function(model, object) glmer_coef(object)
model_fit_sigma.sgld_model_glmm <- function(model, object) glmer_sigma(object)
model_mixing_reason.sgld_model_glmm <- function(model)
  paste("a multilevel model keeps the draws of every parameter (its group effects and",
        "covariances mix the sampler's coordinates)")
# prior_summary()'s sections say what was specified (R/prior-summary.R)
specified_rows.sgld_model_glmm <- function(model) model_prior_rows(model)
