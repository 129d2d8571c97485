# Where SGLD is meant to be used (issue 20): dense logistic regression with
# many rows, many parameters or large batches, against PyTorch (float32 on 2
# threads, float64 on 1 thread; bench/torch_sgld.py, the same algorithm) and
# against the memory floor of an iteration on this machine
# (bench/floor_gather.c: the random reads of the batch's rows and nothing
# else), and against the same iteration written inline in C
# (bench/floor_dense.c), which shows what its arithmetic costs. Also the
# growth of the time per iteration from n = 10^4 to 10^7 (d = 20, batch
# 100), and one chain on 2 threads against 1, beside the floor on 2
# threads.
#
#   Rscript bench/speed.R            (from the package root; about 9 minutes)
#
# Targets: sgld >= 3x PyTorch float32 on 2 threads on every workload; sgld
# within 1.5x of the floor; time per iteration at d = 20, batch 100 growing
# at most 2x from n = 10^4 to 10^7; one chain on 2 threads at least 1.6x one
# thread for d >= 1000. Every miss is printed with what limits it, from
# measurements of the same run.
suppressPackageStartupMessages(library(sgld))
python <- Sys.getenv("SGLD_BENCH_PYTHON", "/usr/bin/python3")
reps <- as.integer(Sys.getenv("SGLD_BENCH_REPS", "3"))
started <- Sys.time()
load0 <- readLines("/proc/loadavg")

# The floor program, built with the package's optimisation level. It is run
# with the matrix in 2 MB pages (-H, as the package asks for large data,
# src/pages.c) at several prefetch distances (-a: rows ahead), and the
# fastest is the floor: the least time in which this machine's memory
# delivers the batch's rows.
# Built twice: with OpenMP for the runs on 1 and 2 threads (-t), and without
# for the rest (the one-thread loop of the OpenMP build measured 20% slower at
# d = 5, 320 ns an iteration against 265).
floor_bin <- file.path(tempdir(), "floor_gather")
floor_bin_omp <- file.path(tempdir(), "floor_gather_omp")
if (system2("gcc", c("-O2", "-Wno-unknown-pragmas", "-o", floor_bin, "bench/floor_gather.c")) != 0 ||
    system2("gcc", c("-O2", "-fopenmp", "-o", floor_bin_omp, "bench/floor_gather.c")) != 0)
  stop("could not build bench/floor_gather.c")
floor_ahead <- c(1, 4, 16, 64)
floor_ns <- function(n, d, m, iter, extra = character(), threads = 0) {
  args <- vapply(c(n, d, m, iter, 1), format, "", scientific = FALSE)   # atoi("1e+05") is 1
  bin <- if (threads > 0) floor_bin_omp else floor_bin
  if (threads > 0) extra <- c(extra, "-t", threads)
  as.numeric(system2(bin, c(args, "-H", "-a", paste(floor_ahead, collapse = ","), extra),
                     stdout = TRUE))
}

# The whole iteration written inline in C (bench/floor_dense.c: the
# package's generator and minibatch rule, the gradient, the update, every
# draw kept): what an iteration's arithmetic costs on this machine, beside the
# memory floor, which leaves it out. Built twice and both reported: at -O2,
# as the package is compiled, and with this processor's vectors and glibc's
# vector exp() (-O3 -march=native -ffast-math), which the package forgoes
# so that its draws are the same on every x86-64 machine.
loop_bins <- file.path(tempdir(), c("floor_dense", "floor_dense_native"))
loop_flags <- list("-O2", c("-O3", "-march=native", "-ffast-math"))
loop_built <- local({
  inc <- paste0("-I", R.home("include"))
  objs <- file.path(tempdir(), c("fd_rng.o", "fd_minibatch.o"))
  ok <- system2("gcc", c("-O2", inc, "-c", "src/rng.c", "-o", objs[1])) == 0 &&
    system2("gcc", c("-O2", inc, "-c", "src/minibatch.c", "-o", objs[2])) == 0
  for (b in 1:2) ok <- ok &&
    system2("gcc", c(loop_flags[[b]], "-Wno-psabi", inc, "-o", loop_bins[b], "bench/floor_dense.c",
                     objs, paste0("-L", R.home("lib")), "-lR", "-lm")) == 0
  if (!ok) message("could not build bench/floor_dense.c: its column is left empty")
  ok
})
# nanoseconds per iteration, c(O2 =, native =)
loop_ns <- function(n, d, m, iter, single = FALSE) {
  if (!loop_built) return(c(O2 = NA_real_, native = NA_real_))
  args <- c(vapply(c(n, d, m, iter, 1), format, "", scientific = FALSE), "-H",
            if (single) "-f", "-a", paste(c(0, floor_ahead), collapse = ","))
  setNames(vapply(loop_bins, function(bin) {
    out <- suppressWarnings(system2(bin, args, stdout = TRUE, stderr = TRUE,
                                    env = paste0("LD_LIBRARY_PATH=", R.home("lib"))))
    ns <- suppressWarnings(as.numeric(out[1]))
    # the program checks its gradient against a plain sum before timing
    if (!is.null(attr(out, "status")) || is.na(ns))
      stop(basename(bin), " failed: ", paste(out, collapse = " "))
    ns
  }, 0), c("O2", "native"))
}

torch_version <- tryCatch(system2(python, c("-c", shQuote("import torch; print(torch.__version__)")),
                                  stdout = TRUE, stderr = FALSE), error = function(e) NA)
has_torch <- length(torch_version) == 1 && !is.na(torch_version)
torch_times <- function(n, d, m, iter, dtype, threads) {
  if (!has_torch) return(rep(NA_real_, reps))
  out <- system2(python, c("bench/torch_sgld.py", "--model", "logistic",
                           "--synthetic", sprintf("%d,%d", as.integer(n), d), "--batch", m,
                           "--iter", iter, "--reps", reps, "--lr", 1e-2 / n,
                           "--dtype", dtype, "--threads", threads), stdout = TRUE)
  iter / as.numeric(out)
}

simulate <- function(n, d, storage = "double") {
  set.seed(1)
  X <- cbind(1, matrix(rnorm(n * (d - 1)), n))
  y <- rbinom(n, 1, 0.5)
  # random columns outnumbering the rows are collinear: no warning wanted
  suppressWarnings(model_logistic(X, y, prior = prior_laplace(0, 1), sparse = FALSE,
                                  storage = storage, prior_intercept = NULL))
}

sgld_rate <- function(mod, m, iter, threads = 1, lr = 1e-2 / mod$n) {
  fit <- suppressWarnings(sgld(mod, lr = lr, batch_size = m, iter = iter, burnin = 0,
                               thin = 1, threads = threads))
  if (any(fit$status != "done")) stop("the run stopped early: ", fit$status[1])
  iter / fit$sampling_time   # the iterations alone, as PyTorch, the floor and the C loop are timed
}

# PyTorch runs fewer iterations where it is slow (on 2 threads under load an
# iteration took milliseconds when this was written)
work <- list(
  list(d = 5, n = 1e3, m = 100, iter = 20000, torch_iter = 5000),
  list(d = 5, n = 1e6, m = 1000, iter = 20000, torch_iter = 2000),
  list(d = 2000, n = 1e3, m = 100, iter = 20000, torch_iter = 2000),
  list(d = 1000, n = 1e5, m = 100, iter = 20000, torch_iter = 2000)
)
rows <- list()
for (w in work) {
  cat(sprintf("[d = %d, n = %g, batch %d]\n", w$d, w$n, w$m), file = stderr())
  mod <- simulate(w$n, w$d, "float")
  # the same d and batch with the rows in the cache (n = 2 m): how long the
  # iteration's work takes when memory costs nothing
  cached <- simulate(2 * w$m, w$d, "float")
  cached_zf <- cached$zf
  s <- s32 <- s2 <- sc <- sc32 <- f <- ff <- numeric()
  cl <- cl32 <- NULL               # C loop: a row per round, columns O2 and native
  loop_iter <- if (w$d <= 20) w$iter else 2000     # every draw kept: d x iter doubles
  for (r in seq_len(reps)) {       # rounds: load from other processes falls on all alike
    s32 <- c(s32, sgld_rate(mod, w$m, w$iter))
    zf <- mod$zf
    mod$zf <- NULL                 # the same model read from its double rows
    s <- c(s, sgld_rate(mod, w$m, w$iter))
    # one chain on 2 threads (src/gradient.c; the driver keeps 1 thread when 2 lose)
    s2 <- c(s2, sgld_rate(mod, w$m, w$iter, threads = 2))
    mod$zf <- zf
    cached$zf <- cached_zf
    sc32 <- c(sc32, sgld_rate(cached, w$m, w$iter, lr = 1e-2 / w$n))
    cached$zf <- NULL
    sc <- c(sc, sgld_rate(cached, w$m, w$iter, lr = 1e-2 / w$n))
    f <- c(f, floor_ns(w$n, w$d, w$m, w$iter))
    ff <- c(ff, floor_ns(w$n, w$d, w$m, w$iter, "-f"))
    cl <- rbind(cl, loop_ns(w$n, w$d, w$m, loop_iter))
    cl32 <- rbind(cl32, loop_ns(w$n, w$d, w$m, loop_iter, single = TRUE))
  }
  rm(mod, cached); invisible(gc())
  t32 <- torch_times(w$n, w$d, w$m, w$torch_iter, "float32", 2)
  t32_1 <- torch_times(w$n, w$d, w$m, w$torch_iter, "float32", 1)
  t64 <- torch_times(w$n, w$d, w$m, w$torch_iter, "float64", 1)
  rows[[length(rows) + 1]] <- list(w = w, sgld = s, sgld32 = s32, sgld2 = s2, cached = sc,
                                   cached32 = sc32,
                                   floor = f, floor32 = ff, loop = cl, loop32 = cl32,
                                   t32 = t32, t32_1 = t32_1, t64 = t64)
}

# One chain on 2 threads at d >= 1000, batches of 100 and 1000 (double rows).
# The batch-1000 runs also split an iteration's time into the part that grows
# with the batch (the gradient, which the threads share) and the part that
# does not (the noise of d normal draws from the chain's one stream, the
# update, the running moments: one thread's work), which bounds what 2
# threads can give at batch 100 (Amdahl). The floor program on 1 and 2
# threads (-t) gives what the memory allows when both cores read the rows.
thread_work <- list(list(d = 2000, n = 1e3), list(d = 1000, n = 1e5))
threads <- list()
for (w in thread_work) {
  cat(sprintf("[d = %d, n = %g, 1 and 2 threads, batches 100 and 1000]\n", w$d, w$n),
      file = stderr())
  mod <- simulate(w$n, w$d)
  t <- list(b100_1 = numeric(), b100_2 = numeric(), b1000_1 = numeric(), b1000_2 = numeric(),
            f100_1 = numeric(), f100_2 = numeric(), f1000_1 = numeric(), f1000_2 = numeric())
  for (r in seq_len(reps)) {
    t$b100_1 <- c(t$b100_1, sgld_rate(mod, 100, 20000))
    t$b100_2 <- c(t$b100_2, sgld_rate(mod, 100, 20000, threads = 2))
    t$b1000_1 <- c(t$b1000_1, sgld_rate(mod, 1000, 3000))
    t$b1000_2 <- c(t$b1000_2, sgld_rate(mod, 1000, 3000, threads = 2))
    t$f100_1 <- c(t$f100_1, floor_ns(w$n, w$d, 100, 20000, threads = 1))
    t$f100_2 <- c(t$f100_2, floor_ns(w$n, w$d, 100, 20000, threads = 2))
    t$f1000_1 <- c(t$f1000_1, floor_ns(w$n, w$d, 1000, 3000, threads = 1))
    t$f1000_2 <- c(t$f1000_2, floor_ns(w$n, w$d, 1000, 3000, threads = 2))
  }
  rm(mod); invisible(gc())
  threads[[length(threads) + 1]] <- c(w, lapply(t, median))
}

# growth in n at d = 20, batch 100
growth <- lapply(c(1e4, 1e7), function(n) {
  cat(sprintf("[d = 20, n = %g, batch 100]\n", n), file = stderr())
  mod <- simulate(n, 20)
  r <- vapply(seq_len(reps), function(i) sgld_rate(mod, 100, 100000), 0)
  fl <- vapply(seq_len(reps), function(i) floor_ns(n, 20, 100, 100000), 0)
  rm(mod); invisible(gc())
  list(n = n, us = 1e6 / r, floor_us = fl / 1e3)
})

fmt_rate <- function(x) {
  f <- function(v) if (is.na(v)) "-" else if (v >= 1e6) sprintf("%.2fM", v / 1e6)
                   else if (v >= 1e3) sprintf("%.1fk", v / 1e3) else sprintf("%.0f", v)
  sprintf("%s [%s, %s]", f(median(x)), f(min(x)), f(max(x)))
}
verdict <- function(ok) if (is.na(ok)) "n/a" else if (ok) "PASS" else "**MISS**"
us <- function(rate) 1e6 / rate

cat("## Speed on large workloads (issue 20)\n\n")
cat(sprintf("Run %s on %s, R %s, sgld %s, PyTorch %s (Debian's python3-torch, CPU). %d repetitions per cell; load average before / after: %s / %s; whole benchmark %.0f s.\n\n",
            format(started, "%Y-%m-%d %H:%M"), Sys.info()[["nodename"]],
            paste(R.version$major, R.version$minor, sep = "."), packageVersion("sgld"),
            if (has_torch) torch_version else "not installed", reps,
            paste(strsplit(load0, " ")[[1]][1:3], collapse = " "),
            paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " "),
            as.numeric(difftime(Sys.time(), started, units = "secs"))))
cat("Logistic regression on simulated dense data (an intercept and d - 1 standard normal covariates, y = 0/1 at random), Laplace(0, 1) prior, constant learning rate 0.01/n, every draw kept. ",
    "**sgld**: `sgld(model, batch_size = m, iter = 20000, thin = 1, threads = 1)`, rate from `fit$sampling_time` (the iterations alone, timed in the engine, as the others are timed around their loops: the whole call also allocates the draws, when R may collect its garbage), dense storage of doubles, and of floats (`storage = \"float\"`, the same model with its single-precision copy) in the same rounds; *rows in cache*: the same d and batch on n = 2m rows, in each storage. ",
    "**PyTorch** (`bench/torch_sgld.py --synthetic`): the same algorithm with hand-written tensor gradients, float32 with `torch.set_num_threads(2)` and float64 with 1 thread; batches of distinct items; seconds timed inside Python after a warm-up; fewer iterations at d >= 1000. ",
    sprintf("**Floor** (`bench/floor_gather.c`, `gcc -O2`): the same matrix in memory (2 MB pages), m random rows per iteration each read whole (eight independent partial sums; every line of the row A rows ahead prefetched while a row is summed, the fastest of A = %s), indices drawn beforehand: the memory traffic of an iteration and nothing else, as time per iteration; the float column is the same with the rows stored in single precision.\n\n",
            paste(floor_ahead, collapse = ", ")),
    "**C loop** (`bench/floor_dense.c`): the whole iteration written inline in one C loop, in the same storage: the package's generator and minibatch rule, per row a dot product, an exp() and the gradient's multiply-adds (rows in blocks of 8), d normal draws, the update, every draw kept; the next batch drawn one iteration ahead so its rows are asked for early; its gradient checked against a plain row-by-row sum before it is timed; built at `-O2`, as the package is, and at `-O3 -march=native -ffast-math` (this processor's AVX-512 and glibc's vector exp(), which the package forgoes so that its draws are the same on every x86-64 machine), each at the fastest of the prefetch distances 0, ",
    paste(floor_ahead, collapse = ", "), " rows; 2,000 iterations at d >= 1000. It shows what the arithmetic of an iteration costs here, which the floor leaves out.\n\n", sep = "")
cat("Iterations per second, median [min, max]:\n\n")
cat("| workload | data MB | sgld | sgld, storage = \"float\" | sgld, one chain on 2 threads | sgld, rows in cache | sgld, rows in cache, float | PyTorch float32, 2 threads | PyTorch float32, 1 thread | PyTorch float64, 1 thread | floor (double rows) | floor (float rows) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (r in rows) {
  w <- r$w
  cat(sprintf("| d = %d, n = %s, batch %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w$d,
              format(w$n, big.mark = ",", scientific = FALSE), w$m, w$n * (w$d + 1) * 8 / 2^20,
              fmt_rate(r$sgld), fmt_rate(r$sgld32), fmt_rate(r$sgld2), fmt_rate(r$cached),
              fmt_rate(r$cached32),
              fmt_rate(r$t32), fmt_rate(r$t32_1), fmt_rate(r$t64), fmt_rate(1e9 / r$floor),
              fmt_rate(1e9 / r$floor32)))
}
cat("\nRatios of the medians; sgld is the faster of its two storages, and its floor the floor of that storage. Targets: sgld / PyTorch float32 (2 threads) >= 3, judged here against the faster of PyTorch float32 on 2 threads and on 1 thread (on this shared 2-core machine a second PyTorch thread often waits milliseconds at each barrier for a core, which would make the target meaningless); time per iteration of sgld / the floor's <= 1.5.\n\n")
cat("| workload | storage | sgld / PyTorch float32 2 threads | sgld / PyTorch float32, faster of 1 and 2 threads | sgld / PyTorch float64 1 thread | sgld time / floor time | C loop -O2 time / floor time | C loop native time / floor time | sgld time / C loop -O2 time | sgld time / C loop native time |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
misses <- character()
for (r in rows) {
  w <- r$w
  lab <- sprintf("d = %d, n = %s, batch %d", w$d, format(w$n, big.mark = ",", scientific = FALSE), w$m)
  single <- median(r$sgld32) > median(r$sgld)
  best <- if (single) median(r$sgld32) else median(r$sgld)
  a2 <- best / median(r$t32)
  a <- best / max(median(r$t32), median(r$t32_1))
  b <- best / median(r$t64)
  floor_t <- median(if (single) r$floor32 else r$floor) / 1e3         # us
  fl <- us(best) / floor_t
  cache_t <- us(median(if (single) r$cached32 else r$cached))   # the same storage
  loop_m <- if (single) r$loop32 else r$loop
  loop_o2 <- median(loop_m[, "O2"]) / 1e3                           # us
  loop_t <- median(loop_m[, "native"]) / 1e3
  if (!is.na(a) && a < 3)
    misses <- c(misses, sprintf(paste("%s: %.2fx PyTorch float32. Limit: sgld takes %.1f us per iteration, %.2fx its floor;",
                                      "PyTorch's float32 does its arithmetic in single precision,",
                                      "sgld in double (no FMA, for the same bits on every machine)."),
                                lab, a, us(best), fl))
  if (fl > 1.5) {
    cache_mb <- 2 * w$m * (w$d + 1) * (if (single) 4 else 8) / 2^20
    why <- if (cache_t > 0.8 * us(best) && cache_mb <= 1)
      sprintf(paste("the work of an iteration, not memory: with its rows in L2 (%d rows, %.1f MB) sgld",
                    "takes %.1f us (%.2fx the floor%s)"), 2L * w$m, cache_mb, cache_t, cache_t / floor_t,
              if (w$d <= 20) "; per row an exp() and a drawn index, which the floor does not do" else
                "; the gradient's multiply-adds and the noise, update and moments of d parameters")
    else if (cache_t > 0.8 * us(best))
      sprintf(paste("the reads from the cache and the work of an iteration: with %d rows (%.1f MB, in L3)",
                    "sgld takes %.1f us (%.2fx the floor); it reads each row twice (the dot products,",
                    "then the gradient's update, from L2), and draws the noise for, updates and",
                    "summarises d parameters every iteration"), 2L * w$m, cache_mb, cache_t,
              cache_t / floor_t)
    else
      sprintf(paste("memory and arithmetic only partly overlapped: with its rows in the cache sgld",
                    "takes %.1f us and the floor reads the rows in %.1f us, so %.1f us of the sum",
                    "%.1f us overlap; %s"), cache_t, floor_t, cache_t + floor_t - us(best),
              cache_t + floor_t,
              if (single) paste("float rows ask for the next block's rows a line at a time as the",
                                "current block is summed (src/dense.h: dense_spread())")
              else paste("rows of doubles over 1 kB are left to the processor's prefetcher",
                         "(asking for them ahead measured slower, src/dense.h)"))
    # the loop bounds what the arithmetic costs only where it is at least as
    # fast as sgld; where the engine's tuned kernels beat it, it bounds nothing
    loop_why <- if (is.na(loop_t)) "" else if (loop_t <= us(best))
      sprintf(paste(" The whole iteration inline in C takes %.1f us compiled as the package is",
                    "(-O2; sgld %.2fx that) and %.1f us with this processor's AVX-512 and vector",
                    "exp(), which the package forgoes (sgld %.2fx that), %.2fx the floor itself%s"),
              loop_o2, us(best) / loop_o2, loop_t, us(best) / loop_t, loop_t / floor_t,
              if (loop_t / floor_t > 1.5)
                ": even that loop misses the 1.5x target, by the arithmetic the floor leaves out."
              else ", within the target.")
    else sprintf(paste(" The whole iteration inline in C takes %.1f us (-O2) and %.1f us (native),",
                       "slower than sgld: the engine's kernels are tuned further than that loop",
                       "(src/dense.h)."), loop_o2, loop_t)
    misses <- c(misses, sprintf("%s: %.2fx the floor (%.1f us against %.1f us). Limit: %s.%s", lab, fl,
                                us(best), floor_t, why, loop_why))
  }
  cat(sprintf("| %s | %s | %.2fx | %.2fx %s | %.2fx | %.2fx %s | %.2fx | %.2fx | %.2fx | %.2fx |\n", lab,
              if (single) "float" else "double", a2, a, verdict(a >= 3), b, fl, verdict(fl <= 1.5),
              loop_o2 / floor_t, loop_t / floor_t, us(best) / loop_o2, us(best) / loop_t))
}

cat("\n**One chain on 2 threads** (double rows, iterations per second, medians; the draws are the same on 1 and 2 threads, and the driver keeps one thread when two lose). *Serial part*: the time per iteration that does not grow with the batch, from the batch-100 and batch-1000 runs on one thread (t(m) = serial + m x per-row); of it two threads share only the step's normal draws, which the last thread makes while the other finishes its pieces (src/gradient.c); *bound*: what 2 threads could give at batch 100 were all of it serial; *floor on 2 threads*: the floor program's time on 1 thread over its time with each iteration's rows shared by 2 threads (`floor_gather -t 2`, a parallel region per iteration), what the memory gives when both cores read.\n\n")
cat("| workload | batch 100: 1 thread | 2 threads | speed-up | batch 1000: 1 thread | 2 threads | speed-up | serial part (us of an iteration at batch 100) | bound at batch 100 | floor on 2 threads, batch 100 | batch 1000 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (t in threads) {
  lab <- sprintf("d = %d, n = %s", t$d, format(t$n, big.mark = ",", scientific = FALSE))
  per_row <- (us(t$b1000_1) - us(t$b100_1)) / 900
  serial <- max(0, us(t$b100_1) - 100 * per_row)
  bound <- us(t$b100_1) / (serial + 100 * per_row / 2)
  sp100 <- t$b100_2 / t$b100_1
  sp1000 <- t$b1000_2 / t$b1000_1
  fl100 <- t$f100_1 / t$f100_2
  fl1000 <- t$f1000_1 / t$f1000_2
  cat(sprintf("| %s | %.0f | %.0f | %.2fx %s | %.0f | %.0f | %.2fx %s | %.1f of %.1f | %.2fx | %.2fx | %.2fx |\n", lab,
              t$b100_1, t$b100_2, sp100, verdict(sp100 >= 1.6), t$b1000_1, t$b1000_2, sp1000,
              verdict(sp1000 >= 1.6), serial, us(t$b100_1), bound, fl100, fl1000))
  for (b in c(100, 1000)) {
    sp <- if (b == 100) sp100 else sp1000
    fl <- if (b == 100) fl100 else fl1000
    if (sp < 1.6)
      misses <- c(misses, sprintf(paste("%s, batch %d: one chain on 2 threads %.2fx one thread. Limit: %s."),
                                  lab, b, sp,
                                  if (fl < 1.6)
                                    sprintf("the memory: the floor program's reads of the same rows gain %.2fx from a second thread", fl)
                                  else if (b == 100 && bound < 1.6)
                                    sprintf("the part of an iteration that does not grow with the batch (%.1f of %.1f us; the threads share only its normal draws) bounds 2 threads to about %.2fx", serial, us(t$b100_1), bound)
                                  else paste0("the threads' meeting at every iteration, and on a loaded machine the wait for a free core")))
  }
}

g1 <- median(growth[[1]]$us); g2 <- median(growth[[2]]$us)
f1 <- median(growth[[1]]$floor_us); f2 <- median(growth[[2]]$floor_us)
cat(sprintf("\nTime per iteration, d = 20, batch 100 (100,000 iterations, median of %d): n = 10,000: %.2f us (floor %.2f us); n = 10,000,000: %.2f us (floor %.2f us); growth **%.2fx** %s (target <= 2x); the floor grew %.2fx.\n",
            reps, g1, f1, g2, f2, g2 / g1, verdict(g2 / g1 <= 2), f2 / f1))
if (g2 / g1 > 2)
  misses <- c(misses, sprintf(paste("growth from n = 10^4 to 10^7: %.2fx. Limit: the rows' reads from memory:",
                                    "%.2f us more per iteration, the floor %.2f us more."),
                              g2 / g1, g2 - g1, f2 - f1))
cat(sprintf("\n**Missed:** %s\n", if (length(misses)) "" else "none"))
if (length(misses)) cat(paste0("- ", misses, collapse = "\n"), "\n", sep = "")
