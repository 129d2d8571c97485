# The engine's chunked loop (issue 15): what the progress display costs, and
# what `pars` saves in memory.
#
# Run from the package root:   Rscript bench/engine.R     (about 2 minutes)
#
# 1. Progress on against off: the handout model at batch 10 (the engine's
#    cheapest iteration, so any per-chunk cost shows most), 2 x 10^7
#    iterations per call, thinned so that storing draws costs nothing, the two
#    settings interleaved, 9 repetitions each; the display's output goes to
#    /dev/null. Target: under 1%.
# 2. Peak resident memory (/usr/bin/time -v) of a d = 2000 logistic regression
#    (n = 2000) keeping 2000 or 8000 draws, with every parameter stored and
#    with `pars = 1:5`: with all stored the peak grows by 8 x d x K bytes; with
#    pars it should not grow with K at all.
library(sgld)
progress_msgs <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress_msgs) message(sprintf(...))

m <- model_linear(y ~ x, data = handout, prior = prior_nig())
null <- file("/dev/null", open = "w")
time_one <- function(progress) {
  set.seed(1)
  if (progress) sink(null, type = "message")
  t <- system.time(sgld(m, lr = 1e-7, batch_size = 10, iter = 2e7, burnin = 0, thin = 1e4,
                        progress = progress))[["elapsed"]]
  if (progress) sink(type = "message")
  t
}
invisible(time_one(FALSE))   # warm up
times <- matrix(NA_real_, 9, 2, dimnames = list(NULL, c("off", "on")))
for (r in 1:9) {
  for (p in sample(c(FALSE, TRUE))) times[r, if (p) "on" else "off"] <- time_one(p)
  say("repetition %d: off %.3f s, on %.3f s", r, times[r, "off"], times[r, "on"])
}
med <- apply(times, 2, median)
cost <- med[["on"]] / med[["off"]] - 1
# paired differences, for a sense of the noise
paired <- times[, "on"] / times[, "off"] - 1

cat("## Engine: progress display and stored parameters\n\n")
cat("### Cost of the progress display\n\n")
cat(sprintf(paste0("Handout model, SGLD, batch 10, 2e7 iterations per call, 9 interleaved ",
                   "repetitions: median %.3f s with progress off, %.3f s on (%.0f M it/s): ",
                   "**%+.2f%%** (target under 1%%; paired ratios range %+.2f%% to %+.2f%%).\n\n"),
            med[["off"]], med[["on"]], 2e7 / med[["off"]] / 1e6, 100 * cost,
            100 * min(paired), 100 * max(paired)))

# ------------------------------------------------------------------ memory
peak_mb <- function(code) {
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  out <- suppressWarnings(system2("/usr/bin/time", c("-v", file.path(R.home("bin"), "Rscript"), f),
                                  stdout = TRUE, stderr = TRUE))
  line <- grep("Maximum resident set size", out, value = TRUE)
  as.numeric(sub(".*: *", "", line)) / 1024
}
# the model is built once and saved; every measured process only reads it,
# so the peaks compare runs, not the simulation of the data
model_file <- tempfile(fileext = ".rds")
set.seed(5)
X <- matrix(rnorm(2000 * 2000), 2000, 2000)
saveRDS(model_logistic(X, rbinom(2000, 1, 0.5), prior = prior_normal(0, 10), prior_intercept = NULL), model_file, compress = FALSE)
rm(X)
setup <- c("library(sgld)", sprintf("m <- readRDS('%s')", model_file))
run <- function(kept, pars) c(setup, "set.seed(1)", sprintf(
  "fit <- sgld(m, lr = 1e-5, batch_size = 100, iter = %d, burnin = 0, pars = %s)", kept, pars))
if (file.exists("/usr/bin/time")) {
  rows <- expand.grid(kept = c(2000L, 8000L), pars = c("TRUE", "1:5"), stringsAsFactors = FALSE)
  rows$peak <- vapply(seq_len(nrow(rows)), function(i) {
    say("memory: %d kept draws, pars = %s", rows$kept[i], rows$pars[i])
    peak_mb(run(rows$kept[i], rows$pars[i]))
  }, numeric(1))
  base <- peak_mb(setup)
  cat("### Peak memory and `pars`\n\n")
  cat(sprintf("Logistic regression, n = 2000, d = 2000 (the model's data: %.0f MB), one chain. ",
              8 * 2001 * 2000 / 2^20))
  cat(sprintf("The process holding R, sgld and the model peaks at %.0f MB.\n\n", base))
  cat("| kept draws | pars | peak RSS (MB) | above the model alone (MB) | 8 x d x K (MB) |\n")
  cat("|---:|---|---:|---:|---:|\n")
  for (i in seq_len(nrow(rows)))
    cat(sprintf("| %d | `%s` | %.0f | %.0f | %.0f |\n", rows$kept[i], rows$pars[i], rows$peak[i],
                rows$peak[i] - base, 8 * 2000 * rows$kept[i] / 2^20))
  grow <- function(p) diff(rows$peak[rows$pars == p])
  cat(sprintf(paste0("\nFrom 2000 to 8000 kept draws the peak grows by %.0f MB with every ",
                     "parameter stored (the draws alone: %.0f MB) and by %.1f MB with `pars = 1:5`.\n"),
              grow("TRUE"), 8 * 2000 * 6000 / 2^20, grow("1:5")))
} else {
  cat("### Peak memory and `pars`\n\n/usr/bin/time is not installed (Debian package 'time').\n")
}
