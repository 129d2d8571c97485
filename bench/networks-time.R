# CPU seconds of a default network fit, `sgld(model_mlp(y ~ ., d, hidden =
# H), threads = 1)`, against the rows and hidden units, on a simulated
# regression of 8 inputs (a smooth signal plus noise of sd 0.5):
#
#   Rscript bench/networks-time.R [rows,...] [hidden,...]
#
# One line per fit on stdout: rows, hidden units, parameters, CPU s (user +
# system), the SGLD iterations a chain, why the run stopped, the Monte
# Carlo error of the predictive mean over the predictive sd.
suppressPackageStartupMessages(library(sgld))
args <- commandArgs(TRUE)
rows <- if (length(args) >= 1) as.integer(strsplit(args[1], ",")[[1]]) else c(100, 300, 1000)
hidden <- if (length(args) >= 2) as.integer(strsplit(args[2], ",")[[1]]) else 50L
simulated <- function(n) {
  set.seed(n)
  x <- matrix(stats::rnorm(n * 8), n, 8, dimnames = list(NULL, paste0("x", 1:8)))
  data.frame(x, y = sin(2 * x[, 1]) + x[, 2] * x[, 3] + 0.5 * x[, 4] + stats::rnorm(n, sd = 0.5))
}
cat("rows\thidden\tparameters\tcpu_s\titer\tstopped\terror\n")
for (n in rows) for (h in hidden) {
  m <- model_mlp(y ~ ., simulated(n), hidden = h)
  set.seed(1)
  t0 <- proc.time()
  fit <- suppressWarnings(sgld(m, threads = 1))
  t1 <- proc.time() - t0
  a <- fit$auto
  cat(sprintf("%d\t%d\t%d\t%.1f\t%d\t%s\t%s\n", n, h, m$d, t1[["user.self"]] + t1[["sys.self"]],
              as.integer(a$iter), if (is.null(a$stopped)) "-" else a$stopped,
              if (is.null(a$precision)) "-" else format(a$precision$mean_error, digits = 2)))
  flush(stdout())
}
