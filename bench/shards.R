# Data in shards on worker processes (R/shards.R) against one machine, on
# loopback: the bytes that pass between the leader and the workers per
# iteration, and the time of the default call sgld(model) on 2 shards
# against the same call on the concatenated rows in memory.
#
#   R_LIBS=<library> Rscript bench/shards.R [n]
#
# Bytes are counted as parallel's socket protocol serialises them: each
# call's message (type "EXEC": the function, its arguments) and each reply
# (type "VALUE"), by a counting wrapper around sgld's shard_call(); the
# sockets' own framing and TCP headers are not in them.
library(sgld)
args <- commandArgs(TRUE)
n <- if (length(args)) as.numeric(args[1]) else 1e5
set.seed(1)
X <- cbind("(Intercept)" = 1, x1 = rnorm(n), x2 = rnorm(n, 2, 3), x3 = rbinom(n, 1, 0.3),
           x4 = runif(n))
y <- rbinom(n, 1, plogis(drop(X %*% c(-0.5, 0.8, -0.2, 0.6, 0.3))))
dir <- tempfile("shards")
dir.create(dir)
# the first half of the rows in shard 1, the rest in shard 2
write_shard <- function(k, rows) {
  name <- sprintf("half%d", k)
  bigmemory::as.big.matrix(cbind(X, y = y)[rows, ], backingpath = dir,
                           backingfile = paste0(name, ".bin"),
                           descriptorfile = paste0(name, ".desc"))
  file.path(dir, paste0(name, ".desc"))
}
half <- ceiling(n / 2)
paths <- c(write_shard(1, seq_len(half)), write_shard(2, (half + 1):n))

s <- shards(paths)
m <- model_logistic(s, y = "y")
one <- model_logistic(X, y)
bytes <- c(batch = 0)   # by task
counted <- function(x, what, args, which = seq_along(args)) {
  msg <- function(a) length(serialize(list(type = "EXEC", data = list(
    fun = sgld:::shard_task, args = list(a, what = what), return = TRUE, tag = NULL),
    tag = NULL), NULL, xdr = FALSE))
  out <- original(x, what, args, which)
  reply <- function(v) length(serialize(list(type = "VALUE", value = v, success = TRUE,
                                             time = proc.time() - proc.time(), tag = NULL),
                                        NULL, xdr = FALSE))
  add <- sum(vapply(args, msg, 0)) + sum(vapply(out, reply, 0))
  bytes[what] <<- (if (is.na(bytes[what])) 0 else bytes[what]) + add
  out
}
original <- sgld:::shard_call
environment(counted) <- environment()
utils::assignInNamespace("shard_call", counted, "sgld")
cat(sprintf("n = %s rows in 2 shards, d = %d; %s; load average %s\n",
            format(n, big.mark = ","), ncol(X), format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
            paste(readLines("/proc/loadavg"), collapse = "")))

# bytes and time per iteration at fixed settings (batch 100, control variates)
anchor <- posterior_mode(m)$mode
iters <- 2000
bytes[] <- 0
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(sgld(m, lr = 1e-5, batch_size = 100, control_variates = anchor,
                             iter = iters, burnin = 0, chains = 1))
t1 <- proc.time()[["elapsed"]]
# the iterations' calls are the "batch" ones; the run's anchor gradient (one
# pass) and the fit-time checks (gradient draws, passes) are the rest
cat(sprintf(paste0("batch 100 with control variates: %.0f bytes per iteration between leader and ",
                   "workers, %.2f ms per iteration (the whole call: %.0f kB of other tasks: %s)\n"),
            bytes[["batch"]] / iters, 1000 * (t1 - t0) / iters,
            sum(bytes[names(bytes) != "batch"]) / 1e3,
            paste(sprintf("%s %.0f kB", names(bytes), bytes / 1e3), collapse = ", ")))

# a round trip to the workers alone (parallel::clusterApply of a no-op)
t0 <- proc.time()[["elapsed"]]
for (i in 1:500) parallel::clusterApply(s$handle$cluster, list(1, 2), function(a) a)
cat(sprintf("a bare round trip to both workers: %.2f ms\n",
            2 * (proc.time()[["elapsed"]] - t0)))

# the default call, both ways
set.seed(2)
t0 <- proc.time()[["elapsed"]]
f1 <- sgld(one)
t_one <- proc.time()[["elapsed"]] - t0
set.seed(2)
bytes[] <- 0
t0 <- proc.time()[["elapsed"]]
f2 <- sgld(m)
t_sharded <- proc.time()[["elapsed"]] - t0
iter_total <- f2$auto$iter * length(f2$status)
cat(sprintf(paste0("sgld(model) default: one machine %.1f s, 2 shards %.1f s (%s iterations in ",
                   "all, %.0f bytes each; %.0f kB in all: %s)\n"),
            t_one, t_sharded, format(iter_total, big.mark = ","), bytes[["batch"]] / iter_total,
            sum(bytes) / 1e3,
            paste(sprintf("%s %.0f kB", names(bytes), bytes / 1e3), collapse = ", ")))
cat("settings, shards: ", f2$auto$reason, "\n")
sd1 <- apply(as.matrix(f1), 2, sd)
cat(sprintf("agreement: largest |mean difference| %.3f posterior sd, largest sd ratio - 1 %.3f\n",
            max(abs(coef(f2) - coef(f1)) / sd1),
            max(abs(apply(as.matrix(f2), 2, sd) / sd1 - 1))))
close(s)
