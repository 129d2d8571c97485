# Scaling: time per iteration against n (fixed batch) and against d.
#
# Acceptance criterion measured here (the issue's wording):
#   "Scaling: time per iteration for n = 10^4 ... 10^7 at fixed batch size
#    (flat is the goal) and for d = 10 ... 1000."
#   Target: flat in n within 1.5x from 10^4 to 10^7; issue 20's target is
#   growth of at most 2x over the same range (bench/speed.R measures it too).
#
# Run from the package root:   Rscript bench/scaling.R     (about 10 minutes;
# needs about 7 GB of memory at n = 10^7, where the design alone is 1.6 GB)
#   SCALING_QUICK=1 Rscript bench/scaling.R   n up to 10^6 and d up to 300 only
# The markdown section goes to stdout; progress goes to stderr when it is a
# terminal or BENCH_PROGRESS=1 is set.
#
# Method. Logistic regression with simulated data: an intercept and d - 1
# N(0, 1) covariates; sgld() with batch 100, 1 chain, 1 thread, a tiny
# constant learning rate (0.01 / n, from the true coefficients, so every run
# does the same arithmetic whatever n), thin = iter / 10 so that keeping
# draws costs nothing; the time is the iterations', fit$sampling_time, divided
# by iter.
# Each size runs in a fresh R process (so the memory of one size is returned
# before the next) and repeats the run 3 times; the table gives the fastest
# (least disturbed by other load on the machine) and the median.
#
# Why the time per iteration might grow with n, and how it is measured: a
# minibatch reads 100 random rows of the model's (d + 1) x n data matrix. Once
# the data outgrow the caches (here L2 1 MB per core, L3 32 MB), every row is a
# cache miss, and with 4 KB pages also a TLB miss (a page walk) once they
# outgrow the TLB's reach. The package asks for the data in 2 MB pages
# (src/pages.c; the table says how much of the process got them) and
# prefetches the batch's rows 32 ahead (src/dense.h). Two probes separate the
# memory's costs from the arithmetic, at each n:
#   * sequential: log_posterior() over the full data (two streaming passes,
#     the log likelihood and its gradient), time per row and pass;
#   * gather: plain R gathering 10^6 random rows of the same matrix
#     (z[, idx], a memory-bound copy with no arithmetic and no prefetching),
#     time per row.
# Also `replace = TRUE` (no check that the batch's items are distinct).

args <- commandArgs(trailingOnly = TRUE)

## ---- child: one size, printed as key=value lines ----------------------------

if (length(args) && args[1] == "--child") {
  suppressPackageStartupMessages(library(sgld))
  n <- as.numeric(args[2])
  d <- as.integer(args[3])
  iter <- as.numeric(args[4])
  reps <- as.integer(args[5])
  probes <- args[6] == "probes"
  out <- function(key, value) cat(key, "=", paste(format(value, digits = 6), collapse = ","), "\n", sep = "")
  set.seed(1)
  t0 <- proc.time()[["elapsed"]]
  # built in place: no cbind() copy of a 1.6 GB matrix
  X <- matrix(rnorm(n * d), n, d)
  X[, 1] <- 1
  colnames(X) <- c("(Intercept)", paste0("x", seq_len(d - 1)))
  beta <- c(-0.5, rep(c(0.3, -0.2), length.out = d - 1)) / sqrt(d / 20)
  y <- as.numeric(runif(n) < plogis(drop(X %*% beta)))
  m <- model_logistic(X, y, prior = prior_normal(0, 10), sparse = FALSE, prior_intercept = NULL)
  rm(X, y)
  invisible(gc())
  out("build_s", proc.time()[["elapsed"]] - t0)
  out("data_mb", 8 * (d + 1) * n / 2^20)
  run <- function(replace) {
    f <- sgld(m, lr = 0.01 / n, batch_size = 100, iter = iter, burnin = 0, thin = iter / 10,
              chains = 1, threads = 1, init = beta, replace = replace)
    if (f$status != "done") stop("run stopped: ", f$status)
    f$sampling_time / iter
  }
  run(FALSE)                                  # warm-up: page the data in
  t_wor <- t_wr <- numeric(0)
  for (r in seq_len(reps)) {                  # interleaved, so load hits both alike
    t_wor <- c(t_wor, run(FALSE))
    if (probes) t_wr <- c(t_wr, run(TRUE))
  }
  out("iter_s", t_wor)
  if (probes) {
    out("iter_replace_s", t_wr)
    seq_t <- min(vapply(1:3, function(i) system.time(log_posterior(m, beta))[["elapsed"]], 1))
    out("seq_row_s", seq_t / (2 * n))
    z <- m$z                                  # the model's (d + 1) x n storage, read only
    # 100 gathers of 10^4 random rows each (a 1.7 MB result, so writing it stays cheap)
    idx <- lapply(1:100, function(k) sample.int(n, 1e4, replace = TRUE))
    gather <- function(ix) system.time(for (k in seq_along(ix)) zz <- z[, ix[[k]]])[["elapsed"]]
    g <- min(vapply(1:3, function(i) gather(idx), 1))
    # the same copy from a cache-resident block: random rows among the first 2000 (336 KB)
    idx0 <- lapply(1:100, function(k) sample.int(min(n, 2000), 1e4, replace = TRUE))
    g0 <- min(vapply(1:3, function(i) gather(idx0), 1))
    out("gather_row_s", g / 1e6)
    out("gather_cached_row_s", g0 / 1e6)
  }
  s <- readLines("/proc/self/smaps_rollup")
  out("anon_huge_mb", as.numeric(gsub("[^0-9]", "", grep("^AnonHugePages", s, value = TRUE))) / 1024)
  quit(save = "no")
}

## ---- parent ---------------------------------------------------------------------

t_script <- proc.time()[["elapsed"]]
# Progress goes to stderr only on a terminal or with BENCH_PROGRESS=1: bench/run-all.R
# captures stderr together with stdout, and the markdown must come first.
progress <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress) message(sprintf(...))
quick <- nzchar(Sys.getenv("SCALING_QUICK", ""))
self <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
if (length(self) != 1 || !file.exists(self)) stop("run me with Rscript bench/scaling.R")
rscript <- file.path(R.home("bin"), "Rscript")
load_start <- readLines("/proc/loadavg")

child <- function(n, d, iter, probes = TRUE, reps = 3) {
  t0 <- proc.time()[["elapsed"]]
  errfile <- tempfile()
  on.exit(unlink(errfile))
  res <- system2(rscript, c(shQuote(self), "--child", format(n, scientific = FALSE), d,
                            format(iter, scientific = FALSE), reps,
                            if (probes) "probes" else "none"),
                 stdout = TRUE, stderr = errfile)
  st <- attr(res, "status")
  if (!is.null(st) && st != 0)
    stop("child n = ", n, ", d = ", d, " failed: ", paste(utils::tail(readLines(errfile), 5), collapse = " "))
  kv <- strsplit(grep("=", res, value = TRUE, fixed = TRUE), "=", fixed = TRUE)
  v <- stats::setNames(lapply(kv, function(x) as.numeric(strsplit(x[2], ",")[[1]])),
                       vapply(kv, `[`, "", 1))
  v$wall <- proc.time()[["elapsed"]] - t0
  say("  n = %-9g d = %-5d  %.2f us/iter (min of %s)  [%.0f s]", n, d, 1e6 * min(v$iter_s),
      paste(sprintf("%.2f", 1e6 * v$iter_s), collapse = ", "), v$wall)
  v
}

ns <- if (quick) c(1e4, 1e5, 1e6) else c(1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7)
ds <- if (quick) c(10, 30, 100, 300) else c(10, 30, 100, 300, 1000)
n_for_d <- 1e5
iter_n <- as.numeric(Sys.getenv("SCALING_ITER", "1e5"))   # smaller only for a test run

say("scaling in n (d = 20, batch 100, %g iterations per run)", iter_n)
by_n <- lapply(ns, function(n) child(n, 20, iter_n))
say("scaling in d (n = %g)", n_for_d)
by_d <- lapply(ds, function(d) child(n_for_d, d, min(4e5, max(2e4, round(4e6 / d, -3))),
                                     probes = FALSE))

## ---- markdown -----------------------------------------------------------------

us <- function(x) sprintf("%.2f", 1e6 * x)
ns_ <- function(x) sprintf("%.0f", 1e9 * x)
fmt_n <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)
mn <- function(v, key) min(v[[key]])
md <- function(v, key) stats::median(v[[key]])

cat("## Scaling\n\n")
cat(sprintf("*`Rscript bench/scaling.R`, %s; R %s, sgld %s; %s; load average at start %s.*\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(),
            as.character(utils::packageVersion("sgld")),
            "2 vCPUs (AMD EPYC, L2 1 MB per core, L3 32 MB), transparent huge pages on `madvise`",
            paste(strsplit(load_start, " ")[[1]][1:3], collapse = " ")))
cat("**Set-up.** Logistic regression, simulated (intercept + d - 1 N(0, 1) covariates), dense",
    "storage; `sgld()` with batch 100, 1 chain, 1 thread, a tiny constant learning rate",
    sprintf("(0.01/n, started at the true coefficients), thin = iter/10, %s iterations per run", fmt_n(iter_n)),
    "in n; time per iteration = `fit$sampling_time / iter` (the iterations, timed in the engine). Each size runs in a fresh",
    "R process, 3 runs after one warm-up run; *min* is the fastest of the 3 (least disturbed",
    "by other load on the shared 2-core machine), *median* the middle one.\n\n")

cat(sprintf("### Time per iteration against n (d = 20, batch 100)\n\n"))
cat("| n | data MB | us/iter (min) | us/iter (median) | vs n = 10^4 | `replace = TRUE` us/iter | sequential ns/row | random gather ns/row | cache-resident gather ns/row | MB in 2 MB pages |\n")
cat("|---|---|---|---|---|---|---|---|---|---|\n")
base <- mn(by_n[[1]], "iter_s")
for (i in seq_along(ns)) {
  v <- by_n[[i]]
  cat(sprintf("| %s | %.0f | %s | %s | %.2fx | %s | %s | %s | %s | %.0f |\n", fmt_n(ns[i]), v$data_mb,
              us(mn(v, "iter_s")), us(md(v, "iter_s")), mn(v, "iter_s") / base,
              us(mn(v, "iter_replace_s")), ns_(v$seq_row_s), ns_(v$gather_row_s),
              ns_(v$gather_cached_row_s), v$anon_huge_mb))
}
cat("\n*sequential*: `log_posterior()` over all n rows (two streaming passes), per row and pass.",
    "*random gather*: R's `z[, idx]` for 10^6 random rows (100 gathers of 10^4) of the model's",
    "(d + 1) x n matrix (168 bytes a row; memory traffic and R's copy only, no arithmetic);",
    "*cache-resident*: the same, with rows drawn among the first 2000 (336 KB, within L2). *MB in 2 MB pages*:",
    "the child process's anonymous memory in transparent huge pages (`AnonHugePages`), which the package asks",
    "for data of 64 MB or more (src/pages.c).\n\n")

cat(sprintf("### Time per iteration against d (n = %s, batch 100)\n\n", fmt_n(n_for_d)))
cat("| d | data MB | iterations | us/iter (min) | us/iter (median) | ns per (row x coefficient) |\n")
cat("|---|---|---|---|---|---|\n")
for (i in seq_along(ds)) {
  v <- by_d[[i]]
  t <- mn(v, "iter_s")
  cat(sprintf("| %d | %.0f | %s | %s | %s | %.2f |\n", ds[i], v$data_mb,
              fmt_n(min(4e5, max(2e4, round(4e6 / ds[i], -3)))), us(t), us(md(v, "iter_s")),
              1e9 * t / (100 * ds[i])))
}
cat("\n")

ratio <- mn(by_n[[length(ns)]], "iter_s") / base
big <- by_n[[length(ns)]]
small <- by_n[[1]]
t_big <- mn(big, "iter_s")
cat(sprintf(paste("**Verdict.** From n = %s to n = %s the time per iteration grows %.2fx (%s to %s us),",
                  "so the target flat within 1.5x is **%s**, and issue 20's, at most 2x, **%s**.\n\n"),
            fmt_n(ns[1]), fmt_n(ns[length(ns)]), ratio, us(base), us(t_big),
            if (ratio <= 1.5) "met" else "not met", if (ratio <= 2) "met" else "not met"))
# What the memory probes say
stall <- 100 * (big$gather_row_s - big$gather_cached_row_s)
cat(sprintf(paste("*Why.* The arithmetic of an iteration does not depend on n. What does is where the",
                  "100 rows of a minibatch come from: gathering one random row (168 bytes) of the",
                  "%s MB matrix costs %s ns against %s ns for rows that sit in the cache, and a",
                  "streaming pass costs %s ns per row at n = %s and %s ns at n = %s. 100 random rows",
                  "read one after another would therefore add about %s us of memory stalls per iteration",
                  "at n = %s, against an observed growth of %s us: the prefetches overlap the rows'",
                  "misses (and the probe includes R's copying)."),
            sprintf("%.0f", big$data_mb), ns_(big$gather_row_s), ns_(big$gather_cached_row_s),
            ns_(small$seq_row_s), fmt_n(ns[1]), ns_(big$seq_row_s), fmt_n(ns[length(ns)]),
            us(stall), fmt_n(ns[length(ns)]), us(t_big - base)))
wr <- mn(big, "iter_replace_s") / t_big
cat(sprintf(paste(" Sampling with replacement (no check that the batch's items are distinct; for",
                  "n >= 2^20 the package keeps the batch in a small hash set, below in an n-byte array",
                  "of marks) changes the time at n = %s by a factor %.2f, so the duplicate check is %s.\n\n"),
            fmt_n(ns[length(ns)]), wr, if (abs(wr - 1) < 0.1) "not the issue" else "part of it"))
cat(paste("*What the package does about it*: the model's rows are written into memory advised",
          "into 2 MB pages (src/pages.c), so a row is no longer a page walk; the dense kernels",
          "prefetch every line of the rows",
          "32 ahead (src/dense.h), so the misses of a batch's rows overlap; a batch of n >= 2^20",
          "items is checked for repeats in a hash set of a few kB instead of n bytes",
          "(src/minibatch.c). What is left is the reads themselves. Not done: storing the",
          "covariates as float for this benchmark (`storage = \"float\"` halves the bytes per row),",
          "or minibatches as contiguous blocks of a once-shuffled copy (a fixed cost whatever n,",
          "at the price of a correlated batch order).\n\n"))
td <- vapply(by_d, function(v) mn(v, "iter_s"), 1)
cat(sprintf(paste("*In d* the time per iteration goes from %s us at d = %d to %s us at d = %d (%.0fx for",
                  "%.0fx the coefficients), consistent with per-row fixed costs (a random row address,",
                  "exp(), drawing the index) dominating at small d and the arithmetic at large d",
                  "(%.2f ns per row and coefficient at d = %d).\n\n"),
            us(td[1]), ds[1], us(td[length(ds)]), ds[length(ds)], td[length(ds)] / td[1],
            ds[length(ds)] / ds[1], 1e9 * td[length(ds)] / (100 * ds[length(ds)]), ds[length(ds)]))
cat(sprintf("*Total time of the benchmark: %.0f s.*\n", proc.time()[["elapsed"]] - t_script))
