# Data larger than memory: a logistic regression on a file-backed big.matrix
# of n = 2.5e7 rows and d = 20 coefficients (an intercept, 19 covariates, and
# the response as a 21st column: 4.2 GB of doubles), sampled by SGLD with
# control variates.
#
# Acceptance criteria measured here (issue 21):
#   * the run's anonymous resident memory (RssAnon in /proc/<pid>/status,
#     polled every 20 ms from outside the process) stays under 300 MB;
#   * time per iteration from the file within 1.5x of the same data in memory
#     once the pages are cached, and the time per iteration from a cold cache.
#
# Run from the package root:   Rscript bench/large-data.R      (about 10 minutes)
#   LARGE_N=2e6 Rscript bench/large-data.R    a smaller file, for a quick check
#   LARGE_DIR=/some/disk                      where the files go (default tempdir())
# Needs bigmemory and callr, Linux (/proc), and disk for two copies of the data
# (the backing file and the model's rows file, 2 x 4.2 GB at the full size);
# it stops if the disk has less than 2.5 times that free. Both files are
# deleted at the end.
#
# The processes (each a fresh R, so one's memory does not count in another's):
#   * write:   the big.matrix, 1e6 rows at a time;
#   * file:    model_logistic() on its descriptor (one pass writes the rows
#              file), posterior_mode() (passes over the file), plain SGLD
#              runs (cached: the passes read the whole file) and the run with
#              control variates; RssAnon polled throughout;
#   * cold:    the saved model in a fresh process, the rows file's pages
#              dropped from the page cache (`dd iflag=nocache`) before it is
#              mapped, a short plain SGLD run;
#   * memory:  the same model (saved by the previous process) with its rows
#              read into R memory (readBin of the rows file, so the data are
#              identical), the same warm runs.

if (!requireNamespace("bigmemory", quietly = TRUE) || !requireNamespace("callr", quietly = TRUE))
  stop("bench/large-data.R needs the packages bigmemory and callr")
if (!file.exists("/proc/self/status")) stop("bench/large-data.R needs Linux (/proc)")
progress <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress) message(sprintf(...))
t_script <- proc.time()[["elapsed"]]

n <- as.numeric(Sys.getenv("LARGE_N", "2.5e7"))
d <- 20
bytes <- 8 * n * (d + 1)
dir <- tempfile("sgld-large-", tmpdir = Sys.getenv("LARGE_DIR", tempdir()))
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
free <- as.numeric(strsplit(system2("df", c("-Pk", dir), stdout = TRUE)[2], " +")[[1]][4]) * 1024
if (free < 2.5 * bytes)
  stop(sprintf("bench/large-data.R needs %.1f GB free in %s; it has %.1f GB",
               2.5 * bytes / 1e9, dir, free / 1e9))

# ---- write the big.matrix ----------------------------------------------------
say("writing the %.1f GB big.matrix", bytes / 1e9)
t_write <- system.time(callr::r(function(n, d, dir) {
  set.seed(2026)
  beta <- c(-1, stats::rnorm(d - 1, sd = 0.3))
  x <- bigmemory::filebacked.big.matrix(n, d + 1, type = "double", backingfile = "x.bin",
                                        descriptorfile = "x.desc", backingpath = dir,
                                        dimnames = list(NULL, c("(Intercept)", paste0("x", seq_len(d - 1)), "y")))
  block <- 1e6
  for (b in seq(1, n, by = block)) {
    rows <- b:min(n, b + block - 1)
    X <- cbind(1, matrix(stats::rnorm(length(rows) * (d - 1)), length(rows)))
    y <- stats::rbinom(length(rows), 1, stats::plogis(X %*% beta))
    x[rows, ] <- cbind(X, y)
  }
  bigmemory::flush(x)
  invisible()
}, args = list(n = n, d = d, dir = dir)))[["elapsed"]]

# ---- a child process, with its anonymous memory polled -----------------------
status_kb <- function(pid, field) {
  s <- tryCatch(readLines(sprintf("/proc/%d/status", pid)), error = function(e) character())
  v <- grep(paste0("^", field, ":"), s, value = TRUE)
  if (length(v)) as.numeric(gsub("[^0-9]", "", v)) else NA
}
polled <- function(f, args) {
  p <- callr::r_bg(f, args = args, supervise = TRUE)
  peak <- 0
  while (p$is_alive()) {
    peak <- max(peak, status_kb(p$get_pid(), "RssAnon"), na.rm = TRUE)
    Sys.sleep(0.02)
  }
  list(result = p$get_result(), peak_anon_mb = peak / 1024)
}

# The runs both processes make: plain SGLD (batch 100, 1 chain) and SGLD with
# control variates at the mode; per-iteration times from the engine's
# elapsed time.
runs <- function(m, mode, iter) {
  plain <- function() {
    set.seed(1)
    sgld::sgld(m, lr = 1e-8, batch_size = 100, iter = iter, burnin = 0)
  }
  out <- list()
  invisible(plain())                      # warms the pages a plain run touches
  out$warm <- stats::median(vapply(1:3, function(i) plain()$time / iter, 0))
  set.seed(2)
  fit <- sgld::sgld(m, lr = 1e-8, batch_size = 100, iter = iter, burnin = iter / 2,
                    control_variates = mode)
  out$cv <- fit$time / iter
  out$cv_draws <- as.array(fit)
  out$cv_mean <- colMeans(as.matrix(fit))
  out
}

iter <- as.numeric(Sys.getenv("LARGE_ITER", "5000"))
say("the model on the file")
file_run <- polled(function(dir, iter, runs) {
  options(sgld.cache_dir = file.path(dir, "cache"))   # the copy goes with the data
  desc <- bigmemory::attach.big.matrix(file.path(dir, "x.desc"))
  t_build <- system.time(m <- sgld::model_logistic(bigmemory::describe(desc), y = "y",
                                                   prior = sgld::prior_normal(0, 10), prior_intercept = NULL))[["elapsed"]]
  rm(desc)
  saveRDS(m, file.path(dir, "model.rds"))
  rows <- m$file$path
  offset <- m$file$offset
  t_mode <- system.time(mode <- sgld::posterior_mode(m))[["elapsed"]]
  out <- runs(m, mode$mode, iter)
  status <- readLines("/proc/self/status")
  c(out, list(t_build = t_build, t_mode = t_mode, mode_iter = mode$iterations, rows = rows,
              offset = offset,
              model_bytes = as.numeric(utils::object.size(m)),
              vm_hwm = grep("^VmHWM", status, value = TRUE), mode = mode$mode))
}, args = list(dir = dir, iter = iter, runs = runs))

# From a cold cache: a fresh process drops the rows file's pages (which it can
# only do while no process maps them) before its model maps the file.
say("from a cold cache")
cold_iter <- as.numeric(Sys.getenv("LARGE_COLD_ITER", "200"))
drop_cache <- function(path) system2("dd", c(paste0("if=", path), "iflag=nocache", "count=0"),
                                     stdout = FALSE, stderr = FALSE)
cold_run <- polled(function(dir, iter, drop_cache) {
  m <- readRDS(file.path(dir, "model.rds"))
  drop_cache(m$file$path)
  set.seed(1)
  fit <- sgld::sgld(m, lr = 1e-8, batch_size = 100, iter = iter, burnin = 0)
  fit$time / iter
}, args = list(dir = dir, iter = cold_iter, drop_cache = drop_cache))

say("the same data in memory")
mem_run <- callr::r(function(dir, iter, runs, rows, offset, mode) {
  m <- readRDS(file.path(dir, "model.rds"))
  con <- file(rows, "rb")
  seek(con, offset)
  z <- readBin(con, "double", n = (m$p + 1) * m$n)
  close(con)
  dim(z) <- c(m$p + 1, m$n)
  m$file <- NULL
  m$z <- z
  rm(z)
  runs(m, mode, iter)
}, args = list(dir = dir, iter = iter, runs = runs, rows = file_run$result$rows,
               offset = file_run$result$offset, mode = file_run$result$mode))

# The two layouts of the data on the file, read directly (bench/layout.c):
# random rows of the big.matrix's column-major backing file against rows of
# the model's rows file, cached and from a cold cache.
layout <- NULL
if (nzchar(Sys.which("gcc")) && file.exists("bench/layout.c")) {
  say("the two layouts")
  exe <- file.path(dir, "layout")
  system2("gcc", c("-O2", "-o", exe, "bench/layout.c"))
  read_layout <- function(iter, cold) {
    out <- system2(exe, c(file.path(dir, "x.bin"), file_run$result$rows, format(n, scientific = FALSE),
                          d + 1, 100, iter, cold, file_run$result$offset),
                    stdout = TRUE, stderr = FALSE)
    setNames(as.numeric(sub(".* ", "", out)), sub(" [^ ]*$", "", out))
  }
  cold <- read_layout(200, 1)
  for (path in c(file.path(dir, "x.bin"), file_run$result$rows))   # into the page cache
    system2("cat", path, stdout = FALSE)
  layout <- list(cold = cold, warm = read_layout(20000, 0))
}

f <- file_run$result
us <- function(s) sprintf("%.1f", s * 1e6)
cat("## Data larger than memory (file-backed big.matrix)\n\n")
cat(sprintf(paste0(
  "Logistic regression, n = %s, d = %d: a file-backed big.matrix of %.2f GB (the response as ",
  "its last column), written in %.0f s. `model_logistic()` on its descriptor wrote the rows ",
  "file (%.2f GB) in %.0f s; the model object is %.1f kB. `posterior_mode()` took %.0f s ",
  "(%d gradient evaluations, each a pass over the file). SGLD, 1 chain, batch 100, %s iterations ",
  "per timing.\n\n"),
  format(n, big.mark = ",", scientific = FALSE), d, bytes / 1e9, t_write, bytes / 1e9,
  f$t_build, f$model_bytes / 1024, f$t_mode, f$mode_iter, format(iter, big.mark = ",")))
cat("| | from the file | in memory | ratio |\n|---|---|---|---|\n")
cat(sprintf("| plain SGLD, cold cache (us/iteration, %s iterations) | %s | | |\n",
            format(cold_iter), us(cold_run$result)))
cat(sprintf("| plain SGLD, cached (us/iteration, median of 3) | %s | %s | %.2f |\n",
            us(f$warm), us(mem_run$warm), f$warm / mem_run$warm))
cat(sprintf("| SGLD with control variates, cached (us/iteration, with the full pass at the mode) | %s | %s | %.2f |\n",
            us(f$cv), us(mem_run$cv), f$cv / mem_run$cv))
cat(sprintf(paste0("\nPeak anonymous resident memory (RssAnon) of the process on the file ",
                   "(building the model, posterior_mode(), the runs): %.0f MB "),
            max(file_run$peak_anon_mb, cold_run$peak_anon_mb)))
cat(sprintf("(target: under 300 MB); its peak RSS including the page cache it mapped: %s.\n",
            trimws(sub("VmHWM:", "", f$vm_hwm))))
cat(sprintf("Draws with control variates identical from the file and in memory: %s.\n",
            identical(f$cv_draws, mem_run$cv_draws)))
if (!is.null(layout)) {
  cat(sprintf(paste0(
    "\nThe layout (bench/layout.c: 100 random rows per iteration, x_i' w for each): from the ",
    "big.matrix's column-major backing file, where one row's values lie on %d pages, %s us per ",
    "iteration cached and %s us cold; from the rows file, one page per row, %s us cached and ",
    "%s us cold. Hence the one-time copy in the model's layout.\n"),
    d + 1, sprintf("%.1f", layout$warm[["column-major"]]), sprintf("%.0f", layout$cold[["column-major"]]),
    sprintf("%.1f", layout$warm[["rows"]]), sprintf("%.0f", layout$cold[["rows"]])))
}
cat(sprintf("\n(bench/large-data.R, %.0f s in all)\n",
            proc.time()[["elapsed"]] - t_script))
