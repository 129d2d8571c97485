# The cost of writing a model in R: the handout's linear model as
# model_custom() R functions (those of the tests, as in
# vignette("custom-models"); the data as a matrix) against the built-in model_linear(), both run by sgld()
# on the handout data (n = 10^4, d = 3) at batch sizes 10 and 100. The two give
# the same draws for the same seed (checked here once more), so the difference
# in time per iteration is the overhead of the R road: two R calls per
# iteration, building the minibatch in R, and checking what the calls return.
#
# Prints a self-contained markdown section (## Models written in R functions)
# on stdout; progress goes to stderr. Run from the package root after
# installing the package:
#   Rscript bench/custom-model.R [reps]
suppressPackageStartupMessages(library(sgld))

args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 5L
# Progress goes to stderr only on a terminal or with BENCH_PROGRESS=1: bench/run-all.R
# captures stderr together with stdout, and the markdown must come first.
progress <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress) message(sprintf(...))
load_start <- tryCatch(readLines("/proc/loadavg", n = 1L), error = function(e) NA)
t_start <- proc.time()[["elapsed"]]

# ---- the two models ----------------------------------------------------------
# the R functions the tests use (tests/testthat/helper-custom.R)
file_arg <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- if (length(file_arg)) dirname(dirname(normalizePath(file_arg[1]))) else "."
source(file.path(root, "tests", "testthat", "helper-custom.R"))
m_r <- handout_custom()
Z <- handout_matrix()
m_c <- model_linear(y ~ x, data = handout, prior = prior_nig())

# the same chain from both, up to rounding
set.seed(1)
a <- sgld(m_r, lr = 1e-6, batch_size = 10, iter = 2000, burnin = 0)
set.seed(1)
b <- sgld(m_c, lr = 1e-6, batch_size = 10, iter = 2000, burnin = 0)
same <- max(abs(as.matrix(a) - as.matrix(b)) / abs(as.matrix(b)))
stopifnot(same < 1e-10)

# ---- timing -------------------------------------------------------------------
# seconds per iteration of the engine (fit$time, around the .Call); thin = 100
# so that building the fit (the transform runs per kept draw) stays out of it
per_iter <- function(model, batch, iter) {
  set.seed(2)
  fit <- sgld(model, lr = 1e-7, batch_size = batch, iter = iter, burnin = 0, thin = 100)
  fit$time / iter
}
iters <- list(r = c(`10` = 3e4, `100` = 2e4), c = c(`10` = 3e6, `100` = 1e6))
rows <- list()
for (batch in c(10, 100)) {
  key <- as.character(batch)
  tr <- tc <- numeric(reps)
  for (k in seq_len(reps)) {          # in rounds, so load from elsewhere falls on both alike
    say("batch %d, round %d of %d", batch, k, reps)
    tr[k] <- per_iter(m_r, batch, iters$r[[key]])
    tc[k] <- per_iter(m_c, batch, iters$c[[key]])
  }
  rows[[key]] <- list(batch = batch, r = tr, c = tc)
}

# the parts of the R road's cost, per call, measured in R itself
time_per_call <- function(f, n = 2e4) {
  t <- system.time(for (i in seq_len(n)) f())[["elapsed"]]
  t / n
}
idx10 <- sample.int(nrow(Z), 10)
w0 <- c(0, 0.9, log(0.19))
part_batch <- time_per_call(function() Z[idx10, , drop = FALSE])
part_grad <- time_per_call(function() m_r$grad_loglik(w0, Z[idx10, , drop = FALSE])) - part_batch
part_prior <- time_per_call(function() m_r$grad_logprior(w0))

load_end <- tryCatch(readLines("/proc/loadavg", n = 1L), error = function(e) NA)
elapsed_total <- proc.time()[["elapsed"]] - t_start

# ---- report -------------------------------------------------------------------
us <- function(x) sprintf("%.2f", 1e6 * x)
cell <- function(x) sprintf("%s [%s, %s]", us(median(x)), us(min(x)), us(max(x)))
cpu <- tryCatch({
  l <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)
  sprintf("%s x %d", trimws(sub(".*:", "", l[1])), length(l))
}, error = function(e) "unknown CPU")

cat("## Models written in R functions\n\n")
cat(sprintf("Run %s on %s (%s), R %s, sgld %s. %d repetitions per cell; ",
            format(Sys.time(), "%Y-%m-%d %H:%M"), Sys.info()[["nodename"]], cpu,
            getRversion(), utils::packageVersion("sgld"), reps))
cat(sprintf("load average before / after: %s / %s; whole benchmark %.0f s.\n\n",
            paste(strsplit(load_start, " ")[[1]][1:3], collapse = " "),
            paste(strsplit(load_end, " ")[[1]][1:3], collapse = " "), elapsed_total))
cat("The handout's linear model (d = 3, n = 10,000) as `model_custom()` R functions ",
    "(data as a matrix, batch rows by `data[idx, , drop = FALSE]`, the transform ",
    "`sigma2 = exp(w3)`) against the built-in `model_linear()`, both by ",
    "`sgld(lr = 1e-7, burnin = 0, thin = 100)`; time from `fit$time` (the engine, around ",
    "the `.Call`). Both give the same chain for the same seed: largest relative ",
    sprintf("difference of 2,000 draws at batch 10: %.1e.\n\n", same), sep = "")
cat("Microseconds per iteration, median [min, max]:\n\n")
cat("| batch | R functions | model_linear() | overhead of R (median difference) | ratio |\n")
cat("|---:|---:|---:|---:|---:|\n")
for (r in rows) {
  cat(sprintf("| %d | %s | %s | %s | %.0fx |\n", r$batch, cell(r$r), cell(r$c),
              us(median(r$r) - median(r$c)), median(r$r) / median(r$c)))
}
cat(sprintf(paste0(
  "\nWhere the time goes at batch 10, per call timed in R: the batch `Z[idx, , drop = FALSE]` ",
  "%s us, the gradient's arithmetic %s us, the prior gradient %s us; the rest (%s us) is the ",
  "engine's calls into R (a top-level context and a calling-handler frame per call, a fresh ",
  "`w`, checking the returned values).\n"),
  us(part_batch), us(part_grad), us(part_prior),
  us(median(rows[["10"]]$r) - part_batch - part_grad - part_prior)))
