# Multilevel (mixed) models: the foundation of issue 50, internal for now
# (no export, no face in sgld(formula), no methods beyond the contract's
# defaults). The C side is src/model_glmm.c, whose header gives the model,
# the parameters' order and the priors' densities.
#
# model_glmm() reads lme4's syntax with lme4's own parser (lFormula() /
# glFormula(): the fixed design X, and per random-effect term its grouping
# factor, its coefficients' names and its transposed model matrix Zt) and
# hands C a compact copy of Z: per row, its group in each term and the
# term's r_k columns, never the dense n x q matrix.
#
# Priors: beta_j ~ N(prior_loc_j, prior_scale_j^2) (vectors, or one number
# for every coefficient), sigma ~ Exponential(aux_rate) (gaussian), and
# rstanarm's decov(regularization, concentration, shape, scale) on each
# term's covariance; the default priors of stan_glmer() (autoscaled, the
# intercept's stated on centred predictors) are the priors' work to wire in.
model_glmm <- function(formula, data, family = c("gaussian", "binomial", "poisson"),
                       prior_loc = 0, prior_scale = 10, aux_rate = 1,
                       decov = list(regularization = 1, concentration = 1, shape = 1,
                                    scale = 1)) {
  if (!requireNamespace("lme4", quietly = TRUE))
    abort("Multilevel models need the package lme4 to read their formula; ",
          "install it with install.packages(\"lme4\").")
  if (inherits(family, "family")) {
    canonical <- c(gaussian = "identity", binomial = "logit", poisson = "log")
    if (!family$family %in% names(canonical) || family$link != canonical[[family$family]])
      abort("`family` must be gaussian(\"identity\"), binomial(\"logit\") or ",
            "poisson(\"log\"), not ", family$family, "(\"", family$link, "\").")
    family <- family$family
  }
  family <- check_choice(family, c("gaussian", "binomial", "poisson"), "family")
  if (!inherits(formula, "formula")) abort("`formula` must be a formula, not ", describe(formula), ".")
  if (is.null(lme4::findbars(formula)))
    abort("`formula` has no random-effect term such as (1 | g).")
  if (!is.data.frame(data)) abort("`data` must be a data frame, not ", describe(data), ".")
  glmm_check_variables(formula, data)
  # lme4's own checks (a grouping factor with one level, more effects than
  # rows, ...) say what is wrong; the prefix says which argument
  parsed <- tryCatch(
    if (family == "gaussian") lme4::lFormula(formula, data = data)
    else lme4::glFormula(formula, data = data, family = family),
    error = function(e) abort("`formula`: ", conditionMessage(e)))
  fr <- parsed$fr
  X <- parsed$X
  n <- nrow(X)
  resp <- glmm_response(stats::model.response(fr), family)
  offset <- stats::model.offset(fr)
  re <- glmm_terms(parsed$reTrms)
  p <- ncol(X)
  prior_loc <- glmm_prior_vector(prior_loc, p, "prior_loc")
  prior_scale <- glmm_prior_vector(prior_scale, p, "prior_scale", positive = TRUE)
  check_number(aux_rate, "aux_rate", lower = 0, lower_open = TRUE)
  K <- length(re$r)
  dc <- lapply(c(regularization = "regularization", concentration = "concentration",
                 shape = "shape", scale = "scale"), function(nm) {
    v <- decov[[nm]]
    if (is.null(v)) v <- 1
    if (!is.numeric(v) || !length(v) %in% c(1L, K) || any(!is.finite(v)) || any(v <= 0))
      abort("`decov$", nm, "` must be positive: one number or one per term (", K, ").")
    rep_len(as.double(v), K)
  })
  n_theta <- re$r + re$r * (re$r - 1L) / 2L
  gaussian <- family == "gaussian"
  d <- p + length(re$b_names) + sum(n_theta) + gaussian
  beta_init <- prior_loc
  if (gaussian && "(Intercept)" %in% colnames(X)) beta_init[colnames(X) == "(Intercept)"] <- mean(resp$y)
  structure(list(
    type = "glmm", family = family,
    family_code = match(family, c("gaussian", "binomial", "poisson")) - 1L,
    formula = formula, n = as.double(n), p = p, K = K, d = d,
    r = re$r, G = re$G, x = t(unname(X)) + 0, u = re$u, group = re$group,
    y = resp$y, trials = resp$trials, obs_offset = if (!is.null(offset)) as.double(offset),
    prior_loc = prior_loc, prior_scale = prior_scale, aux_rate = as.double(aux_rate),
    decov_regularization = dc$regularization, decov_concentration = dc$concentration,
    decov_shape = dc$shape, decov_scale = dc$scale,
    coef_names = colnames(X), term_names = re$term_names, cnms = re$cnms, levels = re$levels,
    names = c(colnames(X), paste0("z", substring(re$b_names, 2L)), re$theta_names,
              if (gaussian) "log_sigma"),
    sampler_names = c(colnames(X), paste0("z", substring(re$b_names, 2L)), re$theta_names,
                      if (gaussian) "log_sigma"),
    b_names = re$b_names, sigma_names = re$sigma_names,
    # start: the prior's centre for beta (the mean response for a gaussian
    # intercept), z = 0, every sd 1 and correlation 0, sigma = sd(y)
    default_init = c(beta_init, numeric(length(re$b_names)), numeric(sum(n_theta)),
                     if (gaussian) log(stats::sd(resp$y))),
    default_pars = seq_len(p),
    local_parameters = TRUE,
    # the data as given (not a copy): lme4's fit of the same formula starts
    # the automatic settings (R/auto-glmm.R)
    lme4_data = data
  ), class = c("sgld_model_glmm", "sgld_model"))
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

# The response as C reads it: y, and for binomial the trials.
glmm_response <- function(y, family) {
  if (family == "binomial") {
    if (is.matrix(y) && ncol(y) == 2L) {
      trials <- y[, 1] + y[, 2]
      y <- y[, 1]
    } else {
      if (is.factor(y)) y <- as.integer(y != levels(y)[1L])
      y <- as.double(y)
      if (any(!y %in% c(0, 1)))
        abort("`formula`: a binomial response must be 0/1, a factor, or cbind(successes, ",
              "failures).")
      trials <- rep(1, length(y))
    }
    if (any(y < 0 | y != round(y) | trials < y))
      abort("`formula`: binomial successes and failures must be non-negative whole numbers.")
    return(list(y = as.double(y), trials = as.double(trials)))
  }
  if (!is.numeric(y) || is.matrix(y)) abort("`formula`: the response must be a numeric vector.")
  if (family == "poisson") y <- count_response(y, "the response of `formula`")
  list(y = as.double(y), trials = NULL)
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
    cpc <- which(lower.tri(diag(r[k])), arr.ind = TRUE)
    cpc <- cpc[order(cpc[, 1], cpc[, 2]), , drop = FALSE]
    theta_names <- c(theta_names, paste0("log_sd[", gname, ":", cnms[[k]], "]"),
                     if (nrow(cpc)) paste0("atanh_cpc[", gname, ":", cnms[[k]][cpc[, 1]], ",",
                                           cnms[[k]][cpc[, 2]], "]"))
  }
  list(r = as.integer(r), G = vapply(levels, length, 1L), group = as.vector(group),
       u = do.call(rbind, u) + 0, term_names = names(reTrms$Ztlist), cnms = cnms,
       levels = levels, b_names = b_names, sigma_names = sigma_names, theta_names = theta_names)
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
  if (model$family == "gaussian") out <- cbind(out, sigma = exp(W[, model$d]))
  out
}
