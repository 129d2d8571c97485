#' Gradient clipping
#'
#' Bounds the stochastic gradient estimate before each update: `clip_norm()`
#' rescales it to Euclidean norm at most `threshold`, `clip_value()` clamps
#' each element to `[-threshold, threshold]`. Clipping keeps early iterations
#' from a poor start stable, but whenever it fires the chain no longer follows
#' the Langevin dynamics of the posterior: the fit reports how often it fired
#' (`fit$clipped`), and a sampler whose clipping keeps firing after burn-in
#' should not be trusted.
#'
#' @param threshold A positive number.
#' @return An object of class `sgld_clip`, for the `clip` argument of [sgld()]
#'   and [sgd()].
#' @examples
#' clip_norm(100)
#' clip_value(10)
#' @export
clip_norm <- function(threshold) {
  check_number(threshold, "threshold", lower = 0, lower_open = TRUE)
  structure(list(type = "norm", threshold = threshold), class = "sgld_clip")
}

#' @rdname clip_norm
#' @export
clip_value <- function(threshold) {
  check_number(threshold, "threshold", lower = 0, lower_open = TRUE)
  structure(list(type = "value", threshold = threshold), class = "sgld_clip")
}

#' @export
print.sgld_clip <- function(x, ...) {
  cat("Gradient clipping by ", if (x$type == "norm") "norm" else "value",
      " at ", format(x$threshold), "\n", sep = "")
  invisible(x)
}
