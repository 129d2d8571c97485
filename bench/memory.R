# Memory: peak resident memory of a run against the data plus the kept draws.
#
# Acceptance criterion measured here (the issue's wording):
#   "Memory: peak resident memory of a run relative to the size of the data
#    plus the kept draws (/usr/bin/time -v), and no growth with iterations
#    when thinning."   Target: peak <= 1.2 x (data + kept draws).
#
# Run from the package root:   Rscript bench/memory.R     (about 2-3 minutes)
#   MEMORY_N=1e5 Rscript bench/memory.R   a smaller data set, for a quick check
# The markdown section goes to stdout; progress goes to stderr when it is a
# terminal or BENCH_PROGRESS=1 is set.
#
# Every measurement is a fresh Rscript process run under /usr/bin/time -v,
# whose "Maximum resident set size" is the peak. The processes:
#   * R only:   library(sgld), nothing else -- the cost of R and the package;
#   * build:    simulate X (n x 20, with an intercept column) and y, build
#               model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL), save it (uncompressed) for the others;
#   * loaded:   library(sgld) and readRDS() of that model -- the baseline of
#               an R process holding the package and the data;
#   * runs:     the loaded process, then one sgld() call (1 chain, batch 100,
#               burnin = 0 so that every kept iteration is a draw), or the
#               same with control variates (centred at a mode passed in).
# "Data" is what the model holds: its (d + 1) x n matrix of covariates and
# response, 8 (d + 1) n bytes (the user's X is not kept: the processes read
# the model alone). "Kept draws" is 8 d K bytes for K kept iterations; the fit
# also stores each draw's learning rate and iteration (16 K bytes more), which
# is counted as overhead, not as draws.
# Reported: the raw peak, the peak minus the "R only" process (memory that the
# data and the run add to R), both relative to data + draws, and the run's
# extra memory (peak minus the "loaded" baseline minus the draws).

t_script <- proc.time()[["elapsed"]]
# Progress goes to stderr only on a terminal or with BENCH_PROGRESS=1: bench/run-all.R
# captures stderr together with stdout, and the markdown must come first.
progress <- nzchar(Sys.getenv("BENCH_PROGRESS")) || isatty(stderr())
say <- function(...) if (progress) message(sprintf(...))
n <- as.numeric(Sys.getenv("MEMORY_N", "1e6"))
d <- 20
time_bin <- "/usr/bin/time"
if (!file.exists(time_bin)) stop("/usr/bin/time is needed (Debian package 'time').")
rscript <- file.path(R.home("bin"), "Rscript")
work <- tempfile("sgld-memory-")
dir.create(work)
on.exit(unlink(work, recursive = TRUE), add = TRUE)
model_file <- file.path(work, "model.rds")
mode_file <- file.path(work, "mode.rds")

# The child: prints key=value lines on stdout.
child <- file.path(work, "child.R")
writeLines(c(
  'args <- commandArgs(TRUE)',
  'what <- args[1]',
  'rss_mb <- function() {',
  '  s <- readLines("/proc/self/status")',
  '  as.numeric(gsub("[^0-9]", "", grep("^VmRSS", s, value = TRUE))) / 1024',
  '}',
  'out <- function(...) cat(paste0(..., "\\n"), sep = "")',
  'suppressPackageStartupMessages(library(sgld))',
  'if (what == "R") { invisible(gc()); out("rss_mb=", rss_mb()); quit(save = "no") }',
  'if (what == "build") {',
  '  n <- as.numeric(args[2]); d <- as.integer(args[3])',
  '  set.seed(1)',
  '  X <- matrix(0, n, d); X[, 1] <- 1; X[, -1] <- rnorm(n * (d - 1))',
  '  colnames(X) <- c("(Intercept)", paste0("x", seq_len(d - 1)))',
  '  beta <- c(-0.5, rep(c(0.3, -0.2), length.out = d - 1))',
  '  y <- as.numeric(runif(n) < plogis(drop(X %*% beta)))',
  '  out("rss_data_mb=", rss_mb())',
  '  t0 <- proc.time()[[3]]',
  '  m <- model_logistic(X, y, prior = prior_normal(0, 10), prior_intercept = NULL)',
  '  out("build_s=", proc.time()[[3]] - t0)',
  '  out("model_mb=", as.numeric(object.size(m)) / 2^20)',
  '  out("X_mb=", as.numeric(object.size(X)) / 2^20)',
  '  saveRDS(m, args[4], compress = FALSE)',
  '  rm(X, y); invisible(gc())',
  '  saveRDS(posterior_mode(m)$mode, args[5])',
  '  quit(save = "no")',
  '}',
  'm <- readRDS(args[2])',
  'invisible(gc())',
  'out("rss_loaded_mb=", rss_mb())',
  'if (what == "loaded") quit(save = "no")',
  'iter <- as.numeric(args[3]); thin <- as.numeric(args[4]); cv <- args[5] == "cv"',
  'set.seed(1)',
  'fit <- sgld(m, lr = if (cv) 3e-6 * 1e5 / m$n else 1e-8 * (1e5 / m$n)^2, batch_size = 100,',
  '            iter = iter, burnin = 0, thin = thin, chains = 1, threads = 1,',
  '            init = if (cv) NULL else rep(0, m$d),',
  '            control_variates = if (cv) readRDS(args[6]) else FALSE)',
  'out("rss_after_mb=", rss_mb())',
  'out("kept=", nrow(fit$draws[[1]]))',
  'out("engine_s=", fit$time)',
  'out("fit_mb=", as.numeric(object.size(fit)) / 2^20)',
  'out("status=", fit$status[1])'
), child)

# Run the child under /usr/bin/time -v; returns its key=value lines and the peak.
measure <- function(label, args) {
  tf <- file.path(work, "time.txt")
  t0 <- proc.time()[["elapsed"]]
  res <- system2(time_bin, c("-v", "-o", shQuote(tf), shQuote(rscript), "--vanilla",
                             shQuote(child), args), stdout = TRUE, stderr = FALSE)
  wall <- proc.time()[["elapsed"]] - t0
  st <- attr(res, "status")
  if (!is.null(st) && st != 0) stop("the child '", label, "' failed (status ", st, ")")
  tv <- readLines(tf)
  peak_kb <- as.numeric(sub(".*: *", "", grep("Maximum resident set size", tv, value = TRUE)))
  kv <- strsplit(grep("=", res, value = TRUE, fixed = TRUE), "=", fixed = TRUE)
  vals <- stats::setNames(lapply(kv, `[`, 2), vapply(kv, `[`, "", 1))
  say("  %-28s peak %8.1f MB  (%.0f s) %s", label, peak_kb / 1024, wall,
      paste(names(vals), unlist(vals), sep = "=", collapse = " "))
  list(label = label, peak = peak_kb / 1024, wall = wall, vals = vals)
}
num <- function(x, key) as.numeric(x$vals[[key]])

# R_LIBS of this process must reach the children (--vanilla does not drop it)
say("memory benchmark, n = %g, d = %d", n, d)
r_only <- measure("R + sgld", "R")
build <- measure("build the model", c("build", format(n, scientific = FALSE), d,
                                      shQuote(model_file), shQuote(mode_file)))
loaded <- measure("R + sgld + model (baseline)", c("loaded", shQuote(model_file)))

runs <- list(
  list(label = "SGLD, iter 1e5, thin 1", iter = 1e5, thin = 1, cv = "plain"),
  list(label = "SGLD, iter 1e5, thin 1000", iter = 1e5, thin = 1000, cv = "plain"),
  list(label = "SGLD, iter 1e6, thin 1000", iter = 1e6, thin = 1000, cv = "plain"),
  list(label = "SGLD, iter 1e6, thin 1", iter = 1e6, thin = 1, cv = "plain"),
  list(label = "SGLD + control variates, iter 1e5, thin 1000", iter = 1e5, thin = 1000, cv = "cv")
)
res <- lapply(runs, function(r) {
  x <- measure(r$label, c("run", shQuote(model_file), format(r$iter, scientific = FALSE),
                          r$thin, r$cv, shQuote(mode_file)))
  c(x, r)
})

## ---- markdown --------------------------------------------------------------

data_mb <- 8 * (d + 1) * n / 2^20
base_R <- r_only$peak
base_loaded <- loaded$peak
fmt <- function(x) sprintf("%.1f", x)
cat("## Memory\n\n")
cat(sprintf("*`Rscript bench/memory.R`, %s; R %s, sgld %s.*\n\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            getRversion(), as.character(utils::packageVersion("sgld"))))
cat(sprintf(paste("**Set-up.** Logistic regression, n = %s, d = %d (intercept + %d N(0, 1) covariates),",
                  "batch 100, 1 chain, `burnin = 0` (every kept iteration is a draw). Each row is a fresh",
                  "`Rscript` process under `/usr/bin/time -v`; *peak* is its maximum resident set size.",
                  "**Data** = the model's (d + 1) x n matrix of covariates and response = %s MB",
                  "(`object.size(model)` = %s MB; the processes read the model with `readRDS()`, so no",
                  "copy of the user's X is held). **Draws** = 8 d K bytes for K kept iterations (the",
                  "fit's per-draw learning rate and iteration, 16 K bytes, count as overhead).",
                  "Baselines: R with sgld loaded = %s MB; R with sgld and the model loaded = %s MB",
                  "(peaks of processes that stop there).\n\n"),
            format(n, big.mark = ",", scientific = FALSE), d, d - 1, fmt(data_mb),
            fmt(num(build, "model_mb")), fmt(base_R), fmt(base_loaded)))
cat("| run | kept draws | draws MB | data + draws MB | peak MB | peak / (data + draws) | (peak - R baseline) / (data + draws) | run's extra MB (peak - loaded - draws) | engine s |\n")
cat("|---|---|---|---|---|---|---|---|---|\n")
for (x in res) {
  K <- num(x, "kept")
  draws_mb <- 8 * d * K / 2^20
  tot <- data_mb + draws_mb
  cat(sprintf("| %s | %s | %s | %s | %s | %.2f | **%.2f** | %s | %.1f |\n", x$label,
              format(K, big.mark = ",", scientific = FALSE), fmt(draws_mb), fmt(tot), fmt(x$peak), x$peak / tot,
              (x$peak - base_R) / tot, fmt(x$peak - base_loaded - draws_mb), num(x, "engine_s")))
}
cat("\n")
thin_runs <- Filter(function(x) x$thin == 1000 && x$cv == "plain", res)
growth <- thin_runs[[2]]$peak - thin_runs[[1]]$peak
net <- vapply(res, function(x) (x$peak - base_R) / (data_mb + 8 * d * num(x, "kept") / 2^20), 1)
raw <- vapply(res, function(x) x$peak / (data_mb + 8 * d * num(x, "kept") / 2^20), 1)
cat(sprintf(paste("Building the model from X (not part of a run; the user's X and y still in memory):",
                  "the process held %s MB before `model_logistic()` (X alone is %s MB) and peaked at %s MB,",
                  "so the call needs up to %s MB, %.1f x the data, on top of X and y while it builds",
                  "its own (d + 1) x n copy (it took %.1f s).\n\n"),
            fmt(num(build, "rss_data_mb")), fmt(num(build, "X_mb")), fmt(build$peak),
            fmt(build$peak - num(build, "rss_data_mb")),
            (build$peak - num(build, "rss_data_mb")) / data_mb, num(build, "build_s")))
ok <- net <= 1.2
big_draws <- Filter(function(x) 8 * d * num(x, "kept") / 2^20 > 0.05 * data_mb, res)
cat(sprintf(paste("**Verdict.** Net of the R baseline, the peak is %.2f-%.2f x (data + draws); the target",
                  "(<= 1.2 x) is met in %d of %d runs%s. The raw peak, which also counts R and the package",
                  "(%s MB), is %.2f-%.2f x. Growth with iterations when thinning (1000): from 10^5 to 10^6",
                  "iterations the peak changes by %+.1f MB (%s)."),
            min(net), max(net), sum(ok), length(ok),
            if (all(ok)) "" else sprintf(" (fails: %s)", paste(vapply(res[!ok], `[[`, "", "label"), collapse = "; ")),
            fmt(base_R), min(raw), max(raw), growth, if (abs(growth) < 5) "no growth" else "growth"))
for (x in big_draws) {
  dm <- 8 * d * num(x, "kept") / 2^20
  extra <- x$peak - base_loaded - dm
  cat(sprintf(paste(" In \"%s\" the run's extra memory, %s MB, is %.2f x the kept draws (%s MB)",
                    "after the %s MB of per-draw learning rates and iterations are set aside: %s."),
              x$label, fmt(extra), (extra - 16 * num(x, "kept") / 2^20) / dm, fmt(dm),
              fmt(16 * num(x, "kept") / 2^20),
              if ((extra - 16 * num(x, "kept") / 2^20) / dm > 0.8)
                "the draws exist twice at the peak (a copy is made while the fit is assembled)"
              else "no second copy of the draws"))
}
cat("\n\n")
cat(sprintf("*Total time of the benchmark: %.0f s.*\n", proc.time()[["elapsed"]] - t_script))
