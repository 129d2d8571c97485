# The model's R face (documented in man/poisson_model.Rd): check the data,
# hand them to the C code once, and wrap the pointer it returns for sgld.
poisson_model <- function(X, y, prior_sd = 10) {
  if (!is.numeric(X) || !is.matrix(X) || nrow(X) < 1 || ncol(X) < 1 || any(!is.finite(X)))
    stop("`X` must be a finite numeric matrix with at least one row and column.", call. = FALSE)
  if (!is.numeric(y) || length(y) != nrow(X) || any(!is.finite(y)) || any(y < 0) ||
      any(y != round(y)))
    stop("`y` must hold ", nrow(X), " whole numbers >= 0, one per row of `X`.", call. = FALSE)
  if (!is.numeric(prior_sd) || length(prior_sd) != 1 || !is.finite(prior_sd) || prior_sd <= 0)
    stop("`prior_sd` must be a single positive number.", call. = FALSE)
  xt <- t(X)
  storage.mode(xt) <- "double"
  dimnames(xt) <- NULL
  y <- as.double(y)
  pointer <- .Call(C_poisson_pointer, xt, y, lfactorial(y), as.double(prior_sd))
  names <- colnames(X)
  if (is.null(names)) names <- paste0("beta", seq_len(ncol(X)))
  sgld::model_compiled(pointer, n = nrow(X), d = ncol(X), names = names)
}
