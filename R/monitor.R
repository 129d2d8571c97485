#' Watch a run: log joint probability and held-out metrics
#'
#' Every `every` iterations of every chain, the engine evaluates (in C, over
#' the full data) the average log joint probability per datum,
#' \eqn{(\log f(w) + \sum_i \log f(z_i \mid w)) / n}{(log f(w) + sum_i log f(z_i | w)) / n}, and, when `newdata` is
#' given, metrics on those held-out data: the average log likelihood per datum
#' (`test_loglik`) and, for [model_logistic()], the accuracy of the sign of
#' \eqn{x^\top\beta}{x'beta} (`test_accuracy`), for [model_linear()] the root mean
#' squared error (`test_rmse`). Each evaluation reads all the data, so choose
#' `every` so that it costs little next to `every` minibatch steps.
#'
#' The fit's `monitor` is a data frame with one row per evaluation: `chain`,
#' `iteration`, `sweep` (iterations times batch size over n, the number of
#' passes through the data), `log_joint` and the metrics.
#'
#' @param every Evaluate every this many iterations.
#' @param newdata Held-out data: a data frame with the variables of the model's
#'   formula, response included, or for a model built from a matrix a list
#'   with `x` and `y`; `NULL` for the log joint probability only.
#' @return An object of class `sgld_monitor`, for the `monitor` argument of
#'   [sgld()] and [sgd()].
#' @examples
#' d <- MASS::Pima.tr
#' m <- model_logistic(type ~ glu + bmi, data = d)
#' fit <- sgld(m, lr = 1e-5, batch_size = 10, iter = 2000,
#'             monitor = monitor_every(100, newdata = MASS::Pima.te))
#' head(fit$monitor)
#' @export
monitor_every <- function(every, newdata = NULL) {
  check_count(every, "every", lower = 1)
  structure(list(every = every, newdata = newdata), class = "sgld_monitor")
}

# the names of the metrics the engine computes for this kind of model
metric_names <- function(model) engine_codes()$metrics[[model$type]]

# The engine's monitor rows as a tidy data frame.
monitor_frame <- function(res, model, settings, has_test) {
  if (settings$monitor_every == 0) return(NULL)
  cols <- c("iteration", "log_joint", if (has_test) metric_names(model))
  out <- engine_rows(res$monitor, res$monitored, cols,
                     floor(settings$iter / settings$monitor_every))
  cbind(out[c("chain", "iteration")],
        sweep = out$iteration * settings$batch_size / model$n,
        out[setdiff(cols, "iteration")])
}

# Rows the engine wrote per chain (row-major blocks of `capacity` rows each,
# `counts[c]` of them filled) as one data frame with a chain column.
engine_rows <- function(values, counts, cols, capacity) {
  k <- length(cols)
  per_chain <- lapply(seq_along(counts), function(c) {
    block <- values[(c - 1) * capacity * k + seq_len(counts[c] * k)]
    m <- matrix(block, ncol = k, byrow = TRUE, dimnames = list(NULL, cols))
    data.frame(chain = rep(c, counts[c]), m)
  })
  out <- do.call(rbind, per_chain)
  rownames(out) <- NULL
  out
}
