#' Repeated random train/test splits of a logistic regression
#'
#' Runs SGLD on `runs` random splits of the data (a fraction `train` to learn
#' from, the rest held out) and records, during each run, the average log joint
#' probability per training datum and the held-out accuracy and log likelihood
#' (see [monitor_every()]). This is the experiment of Welling and Teh's
#' Figure 3 (Adult, batch size 10, Laplace prior of scale 1, 50 random 80/20
#' splits); `summary()` averages over runs and `plot()` draws the mean and
#' \eqn{\pm 1}{+/- 1} sd bands against sweeps through the data.
#'
#' @param x A numeric design matrix (include an intercept column for an
#'   intercept), e.g. `cbind(1, adult_design(adult))`.
#' @param y The response, as for [model_logistic()].
#' @param runs Number of random splits.
#' @param sweeps Length of each run, in passes through the training part.
#' @param train Fraction of the rows to train on.
#' @param batch_size Minibatch size.
#' @param lr Learning rate or schedule, as for [sgld()] (a schedule is
#'   resolved over each run's iterations).
#' @param prior Prior of the coefficients, as for [model_logistic()].
#' @param per_sweep Monitor evaluations per sweep.
#' @return A data frame of class `sgld_split_runs` with columns `run`,
#'   `iteration`, `sweep`, `log_joint`, `test_loglik` and `test_accuracy`.
#' @examples
#' \donttest{
#' tr <- adult[adult$set == "train", ]
#' runs <- logistic_split_runs(cbind("(Intercept)" = 1, adult_design(tr)),
#'                             adult_response(tr), runs = 3, sweeps = 2)
#' summary(runs)
#' plot(runs)
#' }
#' @export
logistic_split_runs <- function(x, y, runs = 50, sweeps = 10, train = 0.8, batch_size = 10,
                                lr = lr_range(1e-4, 1e-6), prior = prior_laplace(0, 1),
                                per_sweep = 10) {
  x <- check_design_matrix(x)
  check_response_length(y, x)
  check_count(runs, "runs", lower = 1)
  check_number(sweeps, "sweeps", lower = 0, lower_open = TRUE)
  check_number(train, "train", lower = 0, lower_open = TRUE, upper = 1)
  check_count(per_sweep, "per_sweep", lower = 1)
  n <- nrow(x)
  n_train <- floor(train * n)
  if (n_train < batch_size || n_train >= n)
    abort("`train` must leave at least `batch_size` training rows and one test row.")
  iter_per_sweep <- ceiling(n_train / batch_size)
  iter <- ceiling(sweeps * iter_per_sweep)
  every <- max(1, floor(iter_per_sweep / per_sweep))
  out <- lapply(seq_len(runs), function(r) {
    rows <- sample.int(n, n_train)
    m <- model_logistic(x[rows, , drop = FALSE], y[rows], prior = prior)
    fit <- sgld(m, lr = lr, batch_size = batch_size, iter = iter, burnin = iter - 1, chains = 1,
                monitor = monitor_every(every, newdata = list(x = x[-rows, , drop = FALSE],
                                                              y = y[-rows])))
    cbind(run = r, fit$monitor[, -1])
  })
  structure(do.call(rbind, out), class = c("sgld_split_runs", "data.frame"))
}

#' @rdname logistic_split_runs
#' @param object,... For `summary()` and `plot()`: the runs, and (for `plot()`)
#'   arguments passed to [graphics::plot()].
#' @export
summary.sgld_split_runs <- function(object, ...) {
  d <- as.data.frame(unclass(object))
  cols <- c("log_joint", "test_loglik", "test_accuracy")
  by_iter <- split(d[cols], d$iteration)
  out <- data.frame(iteration = as.numeric(names(by_iter)),
                    sweep = tapply(d$sweep, d$iteration, mean)[names(by_iter)])
  for (cl in cols) {
    out[[paste0(cl, "_mean")]] <- vapply(by_iter, function(b) mean(b[[cl]]), 0)
    out[[paste0(cl, "_sd")]] <- vapply(by_iter, function(b) stats::sd(b[[cl]]), 0)
  }
  rownames(out) <- NULL
  out
}

#' @rdname logistic_split_runs
#' @export
plot.sgld_split_runs <- function(x, ...) {
  s <- summary(x)
  op <- graphics::par(mfrow = c(1, 2))
  on.exit(graphics::par(op))
  band <- function(mean, sd, ylab) {
    graphics::plot(s$sweep, mean, type = "l", ylim = range(mean - sd, mean + sd, na.rm = TRUE),
                   xlab = "sweeps through the data", ylab = ylab, ...)
    graphics::lines(s$sweep, mean - sd, lty = 3, col = "blue")
    graphics::lines(s$sweep, mean + sd, lty = 3, col = "blue")
  }
  band(s$log_joint_mean, s$log_joint_sd, "average log joint probability per datum")
  band(s$test_accuracy_mean, s$test_accuracy_sd, "test accuracy")
  invisible(x)
}
