#' Bayesian independent component analysis
#'
#' The ICA model of Welling and Teh (2011, section 5.3): the observations
#' \eqn{x}{x} (columns of `X`, one row per observation) are mixtures of
#' independent sources \eqn{y = W x}{y = W x} with the heavy-tailed density
#' \eqn{p(y) = 1 / (4\cosh^2(y/2))}{p(y) = 1 / (4 cosh^2(y/2))}, and the unmixing matrix has independent
#' normal entries \eqn{W_{ij} \sim N(0, v)}{W_ij ~ N(0, v)} with variance `prior_variance`
#' (the paper's \eqn{\lambda}{lambda}; its formula for the natural gradient prints
#' \eqn{\lambda}{lambda} where \eqn{1/\lambda}{1/lambda} belongs). The log likelihood of one
#' observation is \eqn{\log|\det W| + \sum_i \log p((Wx)_i)}{log|det W| + sum_i log p((Wx)_i)}.
#'
#' The parameter is the D x D matrix \eqn{W}{W}, vectorised by columns, with
#' names `W[i,j]`. By default [sgld()], [sgd()] and [mala()] move it with the
#' natural gradient (`precondition = "natural"`): the gradient is
#' post-multiplied by \eqn{W^T W}{W^T W} and the injected noise is
#' \eqn{\Xi (W^T W)^{1/2}}{Xi (W^T W)^(1/2)}, see [update_rules]. Sources are identified only
#' up to order, sign and scale, and Gaussian sources not at all, so chains
#' started apart may settle in different modes.
#'
#' @param X A numeric matrix (or data frame of numeric columns) with one row
#'   per observation and at least two columns.
#' @param prior_variance Prior variance \eqn{v}{v} of each entry of \eqn{W}{W}.
#' @param center Subtract the column means of `X` first? The model assumes
#'   sources of mean zero.
#' @return An object of class `sgld_model_ica` (and `sgld_model`). Its
#'   default start is \eqn{W = \mathrm{diag}(1/\mathrm{sd}(x_j))}{W = diag(1/sd(x_j))}.
#' @seealso [ica_data()] to simulate the paper's artificial data,
#'   [amari_distance()], [ica_instability()], [ica_unmixing()].
#' @references Welling, M. and Teh, Y. W. (2011). Bayesian learning via
#'   stochastic gradient Langevin dynamics. *ICML*.
#'
#'   Amari, S., Cichocki, A. and Yang, H. H. (1996). A new learning algorithm
#'   for blind signal separation. *NIPS 8*.
#' @examples
#' set.seed(1)
#' sim <- ica_data(500)
#' m <- model_ica(sim$X)
#' fit <- sgld(m, lr = lr_poly(4 / 500 / 2, 1, 0.55), batch_size = 100, iter = 5000)
#' amari_distance(ica_unmixing(fit), sim$A)
#' @export
model_ica <- function(X, prior_variance = 1, center = TRUE) {
  X <- ica_matrix(X, "X")
  check_number(prior_variance, "prior_variance", lower = 0, lower_open = TRUE)
  check_flag(center, "center")
  D <- ncol(X)
  # the D^2 entries of W are counted in a C int
  if (D > 46340) abort("`X` must have at most 46340 columns for ICA, not ", D, ".")
  if (nrow(X) < 2) abort("`X` must have at least two rows.")
  s <- apply(X, 2, stats::sd)
  if (any(s == 0)) abort("`X` has a constant column (", which(s == 0)[1], ").")
  means <- if (center) colMeans(X) else rep(0, D)
  names <- sprintf("W[%d,%d]", rep(seq_len(D), D), rep(seq_len(D), each = D))
  structure(list(
    type = "ica", D = D, n = as.double(nrow(X)),
    xt = as.double(t(X) - means), means = means, sds = s,
    prior_variance = prior_variance,
    d = D * D, names = names, sampler_names = names,
    default_init = as.double(diag(1 / s, D)),
    default_precondition = "natural"
  ), class = c("sgld_model_ica", "sgld_model"))
}

# A numeric matrix with at least two columns, finite.
ica_matrix <- function(X, arg) {
  if (is.data.frame(X)) {
    ok <- vapply(X, is.numeric, logical(1))
    if (!all(ok)) abort("`", arg, "`: column '", names(X)[!ok][1], "' is not numeric.")
    X <- as.matrix(X)
  }
  if (!is.numeric(X) || !is.matrix(X))
    abort("`", arg, "` must be a numeric matrix or data frame, not ", describe(X), ".")
  if (ncol(X) < 2) abort("`", arg, "` must have at least two columns.")
  if (any(!is.finite(X))) abort("`", arg, "` must be finite (it has NA, NaN or Inf values).")
  storage.mode(X) <- "double"
  X
}

#' @export
print.sgld_model_ica <- function(x, ...) {
  cat("Bayesian ICA: ", x$n, " observations of ", x$D, " channels; W[i,j] ~ N(0, ",
      x$prior_variance, "), sources p(y) = 1 / (4 cosh^2(y/2))\n", sep = "")
  invisible(x)
}

to_user_scale.sgld_model_ica <- function(model, w) w
to_sampler_scale.sgld_model_ica <- function(model, w) w

# What R-hat and the ESS judge after a run (R/warnings.R): the rows of W are
# identified only up to their order and signs, and the rows that recover
# Gaussian sources not at all (Welling and Teh 2011, section 5.2), so two
# chains may agree on the posterior with different W. The log likelihood of
# up to 1000 rows spread over the data at each draw (of at most 1000 draws a
# chain) is unchanged by a permutation or a sign flip of the rows.
convergence_draws.sgld_model_ica <- function(model, fit) {
  if (!all_kept(fit)) return(NULL)
  draws <- fit$draws
  k <- ceiling(ndraws(fit) / 1000)
  if (k > 1) draws <- thin_draws(draws, k)
  items <- unique(round(seq(1, model$n, length.out = min(model$n, 1000))))
  label <- sprintf("log likelihood of %d rows", length(items))
  coda::mcmc.list(lapply(draws, function(ch) {
    x <- unclass(ch)
    ll <- .Call(C_sgld_loglik_draws, model, t(to_sampler_scale(model, x)), as.double(items))
    coda::mcmc(matrix(ll, ncol = 1, dimnames = list(NULL, label)), start = stats::start(ch),
               thin = coda::thin(ch))
  }))
}
check_user_values.sgld_model_ica <- function(model, w, arg) {
  D <- model$D
  for (r in seq_len(nrow(w)))
    if (abs(det(matrix(w[r, ], D, D))) < 1e-300)
      abort("`", arg, "`: the unmixing matrix must be invertible.")
}
set_model_data.sgld_model_ica <- function(model, X, y) {
  model$xt <- as.double(t(X) - model$means)
  model$n <- as.double(nrow(X))
  model
}
held_out_model.sgld_model_ica <- function(model, newdata) {
  X <- ica_matrix(newdata, "newdata")
  if (ncol(X) != model$D) abort("`newdata` must have ", model$D, " columns.")
  set_model_data(model, X, NULL)
}

#' Simulate the artificial data of Welling and Teh's ICA experiment
#'
#' Draws `n` observations of `heavy + gaussian` channels: `heavy` sources with
#' high kurtosis (Student t with `df` degrees of freedom, scaled to unit
#' variance) and `gaussian` standard normal sources, mixed by a random matrix
#' \eqn{A}{A} with standard normal entries: \eqn{x = A s}{x = A s}. The paper used 1000
#' observations of 3 + 3 channels and does not say which heavy-tailed
#' distribution. Uses R's random number generator.
#'
#' @param n Number of observations.
#' @param heavy,gaussian Numbers of heavy-tailed and of Gaussian sources.
#' @param df Degrees of freedom of the heavy-tailed (Student t) sources, scaled
#'   to unit variance (so `df > 2`); smaller is heavier.
#' @return A list with `X` (n x D observations), `A` (the mixing matrix),
#'   `S` (n x D sources, heavy-tailed first) and `heavy` (the indices of the
#'   heavy-tailed sources).
#' @examples
#' set.seed(1)
#' sim <- ica_data()
#' dim(sim$X)
#' @export
ica_data <- function(n = 1000, heavy = 3, gaussian = 3, df = 3) {
  check_count(n, "n", lower = 2)
  check_count(heavy, "heavy", lower = 0, upper = 32)
  check_count(gaussian, "gaussian", lower = 0, upper = 32)
  if (heavy + gaussian < 2) abort("`heavy` + `gaussian` must be at least 2.")
  check_number(df, "df", lower = 2, lower_open = TRUE)
  D <- heavy + gaussian
  S <- cbind(matrix(stats::rt(n * heavy, df) / sqrt(df / (df - 2)), n, heavy),
             matrix(stats::rnorm(n * gaussian), n, gaussian))
  A <- matrix(stats::rnorm(D * D), D, D)
  list(X = S %*% t(A), A = A, S = S, heavy = seq_len(heavy))
}

#' Unmixing matrices of an ICA fit
#'
#' @param fit A fit of [model_ica()].
#' @param draws `FALSE` for the posterior mean (the plain average of the kept
#'   draws of all chains, or the final iterate of [sgd()]), `TRUE` for every
#'   kept draw.
#' @return A D x D matrix, or with `draws = TRUE` a D x D x K array.
#' @export
ica_unmixing <- function(fit, draws = FALSE) {
  if (!inherits(fit, "sgld_fit") || !inherits(fit$model, "sgld_model_ica"))
    abort("`fit` must be a fit of model_ica(), not ", describe(fit), ".")
  check_flag(draws, "draws")
  D <- fit$model$D
  if (!draws) return(matrix(parameter_means(fit), D, D))
  require_all_draws(fit, "ica_unmixing(draws = TRUE)")
  x <- pooled(fit)
  array(t(x), c(D, D, nrow(x)))
}

#' Amari distance between an unmixing and a mixing matrix
#'
#' How far \eqn{P = W A}{P = W A} is from a scaled permutation matrix (Amari et al.
#' 1996), normalised to \[0, 1\]:
#' \deqn{\frac{1}{2D(D-1)} \Big[\sum_i \Big(\frac{\sum_j |p_{ij}|}{\max_k |p_{ik}|} - 1\Big)
#'   + \sum_j \Big(\frac{\sum_i |p_{ij}|}{\max_k |p_{kj}|} - 1\Big)\Big].}{1/(2D(D-1)) [sum_i ((sum_j |p_ij|)/(max_k |p_ik|) - 1)
#'   + sum_j ((sum_i |p_ij|)/(max_k |p_kj|) - 1)].}
#' It is 0 exactly when every source is recovered, up to order and scale.
#' With `sources`, only those sources count: the rows of \eqn{P}{P} that best
#' recover them (for each source, the row with the largest \eqn{|p_{ij}|}{|p_ij|}
#' relative to the row's maximum) and their columns, normalised by
#' \eqn{2|S|(D-1)}{2|S|(D-1)}; a natural measure when some sources (e.g. Gaussian
#' ones) cannot be identified.
#'
#' @param W Unmixing matrix (D x D).
#' @param A Mixing matrix (D x D).
#' @param sources `NULL` for all sources, or the indices (columns of `A`) of
#'   the sources to assess.
#' @return A number in \[0, 1\].
#' @examples
#' A <- matrix(c(2, 1, 0, 1), 2)
#' amari_distance(solve(A), A)                 # 0
#' amari_distance(diag(2), A)
#' @export
amari_distance <- function(W, A, sources = NULL) {
  for (nm in c("W", "A")) {
    M <- get(nm)
    if (!is.numeric(M) || !is.matrix(M) || nrow(M) != ncol(M) || any(!is.finite(M)))
      abort("`", nm, "` must be a finite square numeric matrix.")
  }
  if (nrow(W) != nrow(A)) abort("`W` and `A` must have the same dimensions.")
  P <- abs(W %*% A)
  D <- nrow(P)
  if (is.null(sources)) sources <- seq_len(D)
  if (!is.numeric(sources) || any(sources != round(sources)) || any(sources < 1) ||
      any(sources > D) || anyDuplicated(sources) || !length(sources))
    abort("`sources` must be distinct column numbers of `A` between 1 and ", D, ".")
  row_max <- apply(P, 1, max)
  col_max <- apply(P, 2, max)
  rel <- P / row_max
  rows <- unique(vapply(sources, function(j) which.max(rel[, j]), integer(1)))
  row_part <- sum(rowSums(P[rows, , drop = FALSE]) / row_max[rows] - 1)
  col_part <- sum(colSums(P[, sources, drop = FALSE]) / col_max[sources] - 1)
  (row_part + col_part) / (2 * length(sources) * (D - 1))
}

#' Instability index of independent components
#'
#' Welling and Teh's measure of how well the posterior pins down each
#' component (row of \eqn{W}{W}):
#' \eqn{I_i = \sum_j \mathrm{var}(W_{ij}) \mathrm{var}(x_j)}{I_i = sum_j var(W_ij) var(x_j)}, with the variances of
#' \eqn{W_{ij}}{W_ij} over the kept draws and of \eqn{x_j}{x_j} over the data. Components
#' that recover heavy-tailed sources have small indices; Gaussian ones, which
#' the model cannot identify, large ones.
#'
#' @param fit A fit of [model_ica()] by a sampler.
#' @return A numeric vector, one index per component (row of \eqn{W}{W}).
#' @export
ica_instability <- function(fit) {
  W <- ica_unmixing(fit, draws = TRUE)
  if (dim(W)[3] < 2) abort("`fit` must have at least two kept draws.")
  v <- apply(W, c(1, 2), stats::var)
  drop(v %*% fit$model$sds^2)
}

# the sources' order and signs: several modes by construction; W is a square
# matrix parameter, for the natural gradient
model_capabilities.sgld_model_ica <- function(model) {
  utils::modifyList(NextMethod(), list(laplace = FALSE, natural_gradient = TRUE))
}

# The methods it answers (R/capabilities.R): log_lik() (each observation's
# density, unchanged by the sources' order and signs), nothing predicted.
model_methods.sgld_model_ica <- function(model) {
  unidentified <- paste0("its sources are identified only up to order and sign, which can ",
                         "change from draw to draw, so an average over draws has no ",
                         "meaning (see ica_unmixing())")
  utils::modifyList(NextMethod(), list(predict = unidentified,
                                       predict_interval = unidentified))
}

# the data as given, one row per observation (log_lik() names its columns by
# these rows)
design_matrix.sgld_model_ica <- function(model) {
  t(matrix(model$xt, model$D) + model$means)
}
