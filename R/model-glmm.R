# Multilevel (mixed) models: the model file. The C side is
# src/model_glmm.c, whose header gives the model, the parameters' order and
# the priors' densities. The user's face is model_glmer() and sgld(formula)
# (R/multilevel-formula.R, with rstanarm's default priors from
# R/multilevel-priors.R); the methods are in R/model-glmm-methods.R.
#
# Two scales: the sampler moves (beta, z, log sds and atanh CPCs, log
# sigma or log phi); the user's scale is rstanarm's (beta, b = L z, each
# term's covariance Sigma as its lower triangle, sigma or, for the negative
# binomial, phi as `reciprocal_dispersion`), the same number of
# parameters, one-to-one (to_user_scale(), to_sampler_scale() below). When
# the intercept's prior is stated on centred predictors (`centre`), C sees
# the centred fixed design, so its beta[intercept] is rstanarm's `alpha`;
# the user's (Intercept) is alpha - xbar' beta.
#
# model_glmm() reads lme4's syntax with lme4's own parser (lFormula() /
# glFormula(): the fixed design X, and per random-effect term its grouping
# factor, its coefficients' names and its transposed model matrix Zt) and
# hands C a compact copy of Z: per row, its group in each term and the
# term's r_k columns, never the dense n x q matrix.
#
# Priors: beta_j ~ N(prior_loc_j, prior_scale_j^2) (vectors, or one number
# for every coefficient), sigma (gaussian) or phi (negbin) ~
# Exponential(aux_rate), and
# rstanarm's decov(regularization, concentration, shape, scale) on each
# term's covariance. model_glmer() gives stan_glmer()'s default priors
# (autoscaled, the intercept's stated on centred predictors: `centre`)
# through `priors`, a function of the fixed design and the response.
model_glmm <- function(formula, data, family = c("gaussian", "binomial", "poisson", "negbin"),
                       prior_loc = 0, prior_scale = 10, aux_rate = 1,
                       decov = list(regularization = 1, concentration = 1, shape = 1,
                                    scale = 1), centre = FALSE, priors = NULL,
                       offset = NULL, weights = NULL) {
  family <- glmm_family(family)
  parsed <- glmm_parse(formula, data, family)
  fr <- parsed$fr
  X <- parsed$X
  n <- nrow(X)
  weights <- glmm_check_weights(weights, nrow(X))
  resp <- glmm_response(stats::model.response(fr), family, weights)
  # binomial proportions take the weights as their trials (resp$weights NULL)
  weights <- resp$weights
  # the formula's offset() terms plus an `offset` argument (evaluated by the caller)
  offset <- glmm_offset(stats::model.offset(fr), offset, nrow(X))
  re <- glmm_terms(parsed$reTrms)
  p <- ncol(X)
  # the priors resolved for this design and response (model_glmer():
  # stan_glmer()'s defaults, R/multilevel-priors.R)
  if (!is.null(priors)) {
    pr <- priors(X, if (family == "gaussian") resp$y)
    prior_loc <- pr$loc
    prior_scale <- pr$scale
    aux_rate <- pr$aux_rate
    decov <- pr$decov
    centre <- pr$centre
  }
  prior_loc <- glmm_prior_vector(prior_loc, p, "prior_loc")
  prior_scale <- glmm_prior_vector(prior_scale, p, "prior_scale", positive = TRUE)
  check_number(aux_rate, "aux_rate", lower = 0, lower_open = TRUE)
  K <- length(re$r)
  dc <- glmm_decov(decov, K)
  # the slopes' means, which centring subtracts (0 for the intercept)
  icpt <- which(colnames(X) == "(Intercept)")
  x_means <- numeric(ncol(X))
  if (isTRUE(centre) && length(icpt)) {
    x_means <- colMeans(X)
    x_means[icpt] <- 0
  }
  n_theta <- re$r + re$r * (re$r - 1L) / 2L
  gaussian <- family == "gaussian"
  # the family's auxiliary parameter: sigma (gaussian) or phi (negbin),
  # sampled as its log, last
  aux_name <- switch(family, gaussian = "sigma", negbin = "reciprocal_dispersion", NULL)
  d <- p + length(re$b_names) + sum(n_theta) + length(aux_name)
  beta_init <- prior_loc
  if (gaussian && length(icpt)) beta_init[icpt] <- mean(resp$y)
  coef_sampler <- colnames(X)
  if (any(x_means != 0)) coef_sampler[icpt] <- "alpha"
  model <- structure(list(
    type = "glmm", family = family,
    family_code = match(family, glmm_families) - 1L, aux_name = aux_name,
    formula = formula, n = as.double(n), p = p, K = K, d = d,
    r = re$r, G = re$G, x = t(unname(X)) - x_means, x_means = x_means, intercept = icpt,
    u = re$u, group = re$group, centred = isTRUE(centre) && length(icpt) > 0,
    # what predictions for new data need to rebuild both designs
    fixed_terms = stats::delete.response(stats::terms(lme4::nobars(formula))),
    contrasts = attr(X, "contrasts"),
    var_levels = Filter(Negate(is.null), lapply(fr, function(v)
      if (is.factor(v) || is.character(v)) levels(factor(v)))),
    y = resp$y, trials = resp$trials, obs_offset = if (!is.null(offset)) as.double(offset),
    obs_weight = weights, trials_from_weights = isTRUE(resp$trials_from_weights),
    prior_loc = prior_loc, prior_scale = prior_scale, aux_rate = as.double(aux_rate),
    decov_regularization = dc$regularization, decov_concentration = dc$concentration,
    decov_shape = dc$shape, decov_scale = dc$scale,
    coef_names = colnames(X), term_names = re$term_names, group_names = names(re$cnms),
    cnms = re$cnms, levels = re$levels,
    # rstanarm's order: sigma (or reciprocal_dispersion) before the
    # covariances (glmm_user_order())
    names = c(colnames(X), re$b_names, aux_name, re$sigma_names),
    sampler_names = c(coef_sampler, paste0("z", substring(re$b_names, 2L)), re$theta_names,
                      if (length(aux_name)) paste0("log_", aux_name)),
    b_names = re$b_names, sigma_names = re$sigma_names, sigma_term = re$sigma_term,
    default_pars = NULL,
    local_parameters = TRUE,
    # the data as given (not a copy): lme4's fit of the same formula starts
    # the automatic settings (R/auto-glmm.R)
    lme4_data = data
  ), class = c("sgld_model_glmm", "sgld_model"))
  # start: the prior's centre for beta (the mean response for a gaussian
  # intercept), z = 0, every sd 1 and correlation 0, sigma = sd(y), phi = 1
  # (as model_negbin()); on the user's scale, as every model gives its start
  start <- c(beta_init, numeric(length(re$b_names)), numeric(sum(n_theta)),
             if (gaussian) log(stats::sd(resp$y)), if (family == "negbin") 0)
  model$default_init <- stats::setNames(to_user_scale(model, matrix(start, 1))[1, ], model$names)
  model
}

# The formula read by lme4's parser (lFormula() / glFormula()), after the
# checks that name the user's argument
glmm_parse <- function(formula, data, family) {
  if (!requireNamespace("lme4", quietly = TRUE))
    abort("Multilevel models need the package lme4 to read their formula; ",
          "install it with install.packages(\"lme4\").")
  if (!inherits(formula, "formula")) abort("`formula` must be a formula, not ", describe(formula), ".")
  if (is.null(lme4::findbars(formula)))
    abort("`formula` has no random-effect term such as (1 | g).")
  if (!is.data.frame(data)) abort("`data` must be a data frame, not ", describe(data), ".")
  glmm_check_variables(formula, data)
  # lme4's own checks (a grouping factor with one level, more effects than
  # rows, ...) say what is wrong; the prefix says which argument
  tryCatch(
    if (family == "gaussian") lme4::lFormula(formula, data = data)
    # glFormula() reads the family only to refuse gaussian: poisson stands
    # for the negative binomial
    else lme4::glFormula(formula, data = data,
                         family = if (family == "negbin") "poisson" else family),
    error = function(e) abort("`formula`: ", conditionMessage(e)))
}

glmm_families <- c("gaussian", "binomial", "poisson", "negbin")

# The family's name from a name or a family object with its canonical link
# (the log link for the negative binomial: rstanarm's neg_binomial_2() or
# MASS::negative.binomial(), whose fixed theta is not used).
glmm_family <- function(family) {
  if (inherits(family, "family")) {
    canonical <- c(gaussian = "identity", binomial = "logit", poisson = "log", negbin = "log")
    fam <- family$family
    if (fam == "neg_binomial_2" || startsWith(fam, "Negative Binomial")) fam <- "negbin"
    if (!fam %in% names(canonical) || family$link != canonical[[fam]])
      abort("`family` must be gaussian(\"identity\"), binomial(\"logit\"), ",
            "poisson(\"log\") or the negative binomial with the log link, not ",
            family$family, "(\"", family$link, "\").")
    family <- fam
  }
  check_choice(family, glmm_families, "family")
}

# decov()'s four parameters, each one number or one per term, as K numbers.
glmm_decov <- function(decov, K) {
  lapply(c(regularization = "regularization", concentration = "concentration",
           shape = "shape", scale = "scale"), function(nm) {
    v <- decov[[nm]]
    if (is.null(v)) v <- 1
    if (!is.numeric(v) || !length(v) %in% c(1L, K) || any(!is.finite(v)) || any(v <= 0))
      abort("`decov$", nm, "` must be positive: one number or one per term (", K, ").")
    rep_len(as.double(v), K)
  })
}

# Every variable of the formula is a column of data (or, as lm() allows, an
# object where the formula was made), without missing values: lme4 would
# drop such rows silently, and the groups' rows with them.
glmm_check_variables <- function(formula, data) {
  env <- environment(formula)
  for (v in all.vars(formula)) {
    if (!v %in% names(data)) {
      if (is.null(env) || !exists(v, envir = env))
        abort("`formula` uses `", v, "`, which is not a column of `data`.")
      next
    }
    na <- which(is.na(data[[v]]))
    if (length(na))
      abort("`data`: the column `", v, "` of `formula` has ", length(na), " missing value",
            if (length(na) > 1) "s", " (first in row ", na[1], "); remove or impute ",
            "those rows first.")
  }
  invisible()
}

# The formula's offset() terms (NULL: none) plus the values of an `offset`
# argument (NULL: none), one per row.
glmm_offset <- function(in_formula, given, n) {
  if (is.null(given)) return(in_formula)
  if (!is.numeric(given) || length(given) != n || any(!is.finite(given)))
    abort("`offset` must be finite numbers, one per row of `data` (", n, "), not ",
          describe(given), ".")
  if (is.null(in_formula)) as.double(given) else in_formula + given
}

# Prior weights (NULL: none), one non-negative finite number per row.
glmm_check_weights <- function(weights, n) {
  if (is.null(weights)) return(NULL)
  if (!is.numeric(weights) || is.matrix(weights))
    abort("`weights` must be numbers, one per row of `data`, not ", describe(weights), ".")
  if (length(weights) != n)
    abort("`weights` must have one value per row of `data` (", n, "), not ",
          length(weights), ".")
  if (anyNA(weights))
    abort("`weights` has ", sum(is.na(weights)), " missing value",
          if (sum(is.na(weights)) > 1) "s", " (first in row ", which(is.na(weights))[1], ").")
  bad <- which(!is.finite(weights) | weights < 0)
  if (length(bad))
    abort("`weights` must be finite and non-negative; row ", bad[1], " has ",
          format(weights[bad[1]]), ".")
  if (!any(weights > 0)) abort("`weights` are all zero: no row would count.")
  as.double(weights)
}

# The response as C reads it: y, for binomial the trials, and the prior
# weights left to multiply each row's log likelihood. A binomial response of
# proportions takes the weights as its trials, as glm() and rstanarm do
# (successes y * weights of weights trials); 0/1 and cbind() responses keep
# the weights as prior weights.
glmm_response <- function(y, family, weights = NULL) {
  if (family == "binomial") {
    from_weights <- FALSE
    if (is.matrix(y) && ncol(y) == 2L) {
      trials <- y[, 1] + y[, 2]
      y <- y[, 1]
    } else {
      if (is.factor(y)) y <- as.integer(y != levels(y)[1L])
      y <- as.double(y)
      if (is.null(weights) && any(!y %in% c(0, 1)))
        abort("`formula`: a binomial response must be 0/1, a factor, cbind(successes, ",
              "failures), or proportions with the trials as `weights`.")
      if (any(!y %in% c(0, 1))) {
        if (any(y < 0 | y > 1))
          abort("`formula`: a binomial response of proportions must lie in [0, 1].")
        successes <- y * weights
        if (any(abs(successes - round(successes)) > 1e-8 * pmax(1, weights)) ||
            any(weights != round(weights)))
          abort("`weights`: with a binomial response of proportions the weights are the ",
                "numbers of trials, so they and proportion * weights must be whole numbers.")
        y <- round(successes)
        trials <- weights
        weights <- NULL
        from_weights <- TRUE
      } else {
        trials <- rep(1, length(y))
      }
    }
    if (any(y < 0 | y != round(y) | trials < y))
      abort("`formula`: binomial successes and failures must be non-negative whole numbers.")
    return(list(y = as.double(y), trials = as.double(trials), weights = weights,
                trials_from_weights = from_weights))
  }
  if (!is.numeric(y) || is.matrix(y)) abort("`formula`: the response must be a numeric vector.")
  if (family %in% c("poisson", "negbin")) y <- count_response(y, "the response of `formula`")
  list(y = as.double(y), trials = NULL, weights = weights)
}

# The random-effect terms from lme4's reTrms, compact: per term its
# coefficients per group r, its groups G, the K x n groups (0-based) and
# R x n columns (the entries of Zt: lme4 orders a term's rows of Zt group by
# group, the term's coefficients together), and rstanarm's names.
glmm_terms <- function(reTrms) {
  cnms <- reTrms$cnms
  K <- length(cnms)
  assign <- attr(reTrms$flist, "assign")
  n <- ncol(reTrms$Zt)
  r <- lengths(cnms)
  if (any(r > 32L))
    abort("`formula`: the term (", paste(cnms[[which(r > 32L)[1]]][1:3], collapse = ", "),
          ", ... | ", names(cnms)[which(r > 32L)[1]], ") has ", max(r), " coefficients per ",
          "group; at most 32 are supported.")
  group <- matrix(0L, K, n)
  u <- vector("list", K)
  levels <- vector("list", K)
  b_names <- sigma_names <- theta_names <- character()
  sigma_term <- integer()
  for (k in seq_len(K)) {
    f <- reTrms$flist[[assign[k]]]
    g <- as.integer(f) - 1L
    group[k, ] <- g
    Zt <- reTrms$Ztlist[[k]]
    rows <- rep(g * r[k], each = r[k]) + rep(seq_len(r[k]), n)
    u[[k]] <- matrix(as.numeric(Zt[cbind(rows, rep(seq_len(n), each = r[k]))]), r[k], n)
    lv <- levels(f)
    levels[[k]] <- lv
    gname <- names(cnms)[k]
    b_names <- c(b_names, paste0("b[", rep(cnms[[k]], length(lv)), " ", gname, ":",
                                 rep(lv, each = r[k]), "]"))
    ij <- which(lower.tri(diag(r[k]), diag = TRUE), arr.ind = TRUE)
    sigma_names <- c(sigma_names, paste0("Sigma[", gname, ":", cnms[[k]][ij[, 1]], ",",
                                         cnms[[k]][ij[, 2]], "]"))
    sigma_term <- c(sigma_term, rep(k, nrow(ij)))
    cpc <- which(lower.tri(diag(r[k])), arr.ind = TRUE)
    cpc <- cpc[order(cpc[, 1], cpc[, 2]), , drop = FALSE]
    theta_names <- c(theta_names, paste0("log_sd[", gname, ":", cnms[[k]], "]"),
                     if (nrow(cpc)) paste0("atanh_cpc[", gname, ":", cnms[[k]][cpc[, 1]], ",",
                                           cnms[[k]][cpc[, 2]], "]"))
  }
  list(r = as.integer(r), G = vapply(levels, length, 1L), group = as.vector(group),
       u = do.call(rbind, u) + 0, term_names = names(reTrms$Ztlist), cnms = cnms,
       levels = levels, b_names = b_names, sigma_names = sigma_names, sigma_term = sigma_term,
       theta_names = theta_names)
}

glmm_prior_vector <- function(v, p, arg, positive = FALSE) {
  if (!is.numeric(v) || !length(v) %in% c(1L, p) || any(!is.finite(v)) ||
      positive && any(v <= 0))
    abort("`", arg, "` must be ", if (positive) "positive" else "finite",
          " numbers: one, or one per coefficient (", p, ").")
  rep_len(as.double(v), p)
}

# Term k's factor L = diag(s) C from its parameters (log s, atanh of the
# CPCs), as src/model_glmm.c builds it.
glmm_factor <- function(theta, r) {
  s <- exp(theta[seq_len(r)])
  y <- theta[-seq_len(r)]
  C <- matrix(0, r, r)
  c0 <- 0L
  for (i in seq_len(r)) {
    rem <- 1
    for (j in seq_len(i - 1L)) {
      c0 <- c0 + 1L
      C[i, j] <- tanh(y[c0]) * sqrt(rem)
      rem <- rem - C[i, j]^2
    }
    C[i, i] <- sqrt(max(rem, 0))
  }
  s * C
}

# Draws on the sampler scale (one per row) to rstanarm's parameters: the
# fixed effects, b = L z under rstanarm's names, the covariances
# Sigma[g:a,b] (the lower triangle column by column) and sigma.
glmm_draws <- function(model, W) {
  W <- matrix(W, ncol = model$d)
  p <- model$p
  out <- W[, seq_len(p), drop = FALSE]
  colnames(out) <- model$coef_names
  zpos <- p
  tpos <- p + length(model$b_names)
  b <- sig <- vector("list", model$K)
  for (k in seq_len(model$K)) {
    r <- model$r[k]
    G <- model$G[k]
    nt <- r + r * (r - 1L) / 2L
    low <- lower.tri(diag(r), diag = TRUE)
    bk <- matrix(0, nrow(W), r * G)
    sk <- matrix(0, nrow(W), sum(low))
    for (s in seq_len(nrow(W))) {
      L <- glmm_factor(W[s, tpos + seq_len(nt)], r)
      bk[s, ] <- L %*% matrix(W[s, zpos + seq_len(r * G)], r)
      sk[s, ] <- tcrossprod(L)[low]
    }
    b[[k]] <- bk
    sig[[k]] <- sk
    zpos <- zpos + r * G
    tpos <- tpos + nt
  }
  b <- do.call(cbind, b)
  colnames(b) <- model$b_names
  sig <- do.call(cbind, sig)
  colnames(sig) <- model$sigma_names
  out <- cbind(out, b, sig)
  if (length(model$aux_name)) {
    out <- cbind(out, exp(W[, model$d]))
    colnames(out)[ncol(out)] <- model$aux_name
  }
  out
}

# ---- the two scales ----------------------------------------------------------

# The user's columns from glmm_draws()'s (beta, b, Sigma's, sigma or phi):
# sigma (reciprocal_dispersion) moves before the Sigma's, as in rstanarm's
# as.matrix().
glmm_user_order <- function(model) {
  d <- model$d
  nb <- model$p + length(model$b_names)
  if (length(model$aux_name)) c(seq_len(nb), d, seq.int(nb + 1L, length.out = d - nb - 1L))
  else seq_len(d)
}

to_user_scale.sgld_model_glmm <- function(model, w) {
  u <- glmm_draws(model, w)
  if (length(model$intercept) && any(model$x_means != 0))
    u[, model$intercept] <- u[, model$intercept] -
      drop(u[, seq_len(model$p), drop = FALSE] %*% model$x_means)
  u <- u[, glmm_user_order(model), drop = FALSE]
  dimnames(u) <- list(rownames(w), model$names)
  u
}

to_sampler_scale.sgld_model_glmm <- function(model, w) {
  w <- matrix(w, ncol = model$d)
  w[, glmm_user_order(model)] <- w   # back to glmm_draws()'s order
  out <- w
  p <- model$p
  if (length(model$intercept) && any(model$x_means != 0))
    out[, model$intercept] <- w[, model$intercept] +
      drop(w[, seq_len(p), drop = FALSE] %*% model$x_means)
  bpos <- p
  spos <- p + length(model$b_names)
  for (k in seq_len(model$K)) {
    r <- model$r[k]
    G <- model$G[k]
    nt <- r + r * (r - 1L) / 2L
    for (s in seq_len(nrow(w))) {
      L <- t(chol(glmm_sigma_matrix(w[s, spos + seq_len(nt)], r)))
      out[s, bpos + seq_len(r * G)] <- forwardsolve(L, matrix(w[s, bpos + seq_len(r * G)], r))
      out[s, spos + seq_len(nt)] <- glmm_theta(L)
    }
    bpos <- bpos + r * G
    spos <- spos + nt
  }
  if (length(model$aux_name)) out[, model$d] <- log(w[, model$d])
  colnames(out) <- model$sampler_names
  out
}

# A term's r x r covariance from its lower triangle, column by column (the
# order of the Sigma[...] parameters).
glmm_sigma_matrix <- function(lower, r) {
  S <- matrix(0, r, r)
  S[lower.tri(S, diag = TRUE)] <- lower
  S + t(S) - diag(diag(S), r)
}

# (log sds, atanh CPCs) of a term from its lower Cholesky factor L: the
# inverse of glmm_factor().
glmm_theta <- function(L) {
  r <- nrow(L)
  s <- sqrt(rowSums(L^2))
  C <- L / s
  y <- numeric()
  for (i in seq_len(r)) {
    rem <- 1
    for (j in seq_len(i - 1L)) {
      z <- C[i, j] / sqrt(rem)
      y <- c(y, atanh(max(-1, min(1, z))))
      rem <- rem - C[i, j]^2
    }
  }
  c(log(s), y)
}

# A start (init) on the user's scale: each term's covariance positive
# definite, sigma positive.
check_user_values.sgld_model_glmm <- function(model, w, arg) {
  w <- matrix(w, ncol = model$d)
  w[, glmm_user_order(model)] <- w   # glmm_draws()'s order
  spos <- model$p + length(model$b_names)
  for (k in seq_len(model$K)) {
    r <- model$r[k]
    nt <- r + r * (r - 1L) / 2L
    for (s in seq_len(nrow(w))) {
      Sigma <- glmm_sigma_matrix(w[s, spos + seq_len(nt)], r)
      if (any(!is.finite(Sigma)) || inherits(try(chol(Sigma), silent = TRUE), "try-error"))
        abort("`", arg, "`: the covariance of the term (", model$term_names[k], ") (",
              paste(model$sigma_names[model$sigma_term == k], collapse = ", "),
              ") must be positive definite", if (nrow(w) > 1) paste0(" (row ", s, ")"), ".")
    }
    spos <- spos + nt
  }
  if (length(model$aux_name) && any(!(w[, model$d] > 0)))
    abort("`", arg, "`: ", model$aux_name, " must be positive.")
  invisible()
}

# The user's parameters mix the sampler's (b = L z): the engine's running
# moments stay on the sampler's scale and every parameter's draws are kept.
model_capabilities.sgld_model_glmm <- function(model) {
  utils::modifyList(NextMethod(), list(mixing_transform = TRUE))
}
