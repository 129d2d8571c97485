# Time per epoch of sgld() on a 784-H-10 ReLU network (Fashion-MNIST, batch
# 100, one chain) against PyTorch float32 doing the same SGLD
# (bench/torch_mlp_sgld.py), on 1 and on 2 threads, back to back, with the
# load average before each timing.
#
#   Rscript bench/fashion-mnist-speed.R [n_train] [hidden] [epochs] [repeats]
#
# from the package root; defaults 60000 400 2 2. The order is sgld 1 thread,
# PyTorch 1 thread, sgld 2 threads, PyTorch 2 threads, repeated `repeats`
# times, so that a change of load falls on both. sgld's time per epoch is
# the whole sgld() call (setup, the run, the end-of-run summaries of every
# weight) over the epochs; PyTorch's is the mean of its epochs after the
# first (the first includes its warm-up), timed inside Python. Both read the
# images from Debian's dataset-fashion-mnist and standardise the inputs with
# the training images' means and sds; the prior sd of every layer is given
# to both. Python: SGLD_BENCH_PYTHON, default /usr/bin/python3.

library(sgld)
args <- as.numeric(commandArgs(trailingOnly = TRUE))
n_train <- if (length(args) >= 1) args[1] else 60000
hidden <- if (length(args) >= 2) args[2] else 400
epochs <- if (length(args) >= 3) args[3] else 2
repeats <- if (length(args) >= 4) args[4] else 2
prior_sd <- 0.3
batch <- 100
python <- Sys.getenv("SGLD_BENCH_PYTHON", "/usr/bin/python3")

load_avg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
train <- read_fashion_mnist(split = "train", n = n_train)
m <- model_mlp(train$x, train$y, hidden = hidden, family = "categorical",
               prior = prior_normal(0, prior_sd))
iter <- epochs * n_train / batch

ours <- function(threads) {
  set.seed(1)
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(sgld(m, lr = 0.05 / n_train, batch_size = batch, iter = iter,
                               threads = threads))
  (proc.time()[["elapsed"]] - t0) / epochs
}
torch <- function(threads) {
  out <- system2(python, c("bench/torch_mlp_sgld.py", n_train, hidden, max(2, epochs), threads,
                           "float32", prior_sd), stdout = TRUE)
  secs <- as.numeric(sub("^epoch [0-9]+: ([0-9.]+) s$", "\\1", grep("^epoch", out, value = TRUE)))
  mean(secs[-1])
}

rows <- list()
for (r in seq_len(repeats)) for (threads in 1:2) {
  l1 <- load_avg()
  a <- ours(threads)
  l2 <- load_avg()
  b <- torch(threads)
  rows[[length(rows) + 1]] <- data.frame(repeat_ = r, threads = threads, sgld = a, load_sgld = l1,
                                         torch = b, load_torch = l2)
}
out <- do.call(rbind, rows)
cat(sprintf("## Time per epoch, %s training images, 784-%d-10 ReLU, batch %d (bench/fashion-mnist-speed.R)\n\n",
            format(n_train, big.mark = ","), hidden, batch))
cat(sprintf("%s, %d cores; sgld over %g epochs, PyTorch %s float32 the mean of epochs 2-%d.\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M %Z"), parallel::detectCores(), epochs,
            paste(system2(python, c("-c", shQuote("import torch; print(torch.__version__)")),
                          stdout = TRUE), collapse = ""), max(2, epochs)))
cat("| repeat | threads | sgld s/epoch | load (1, 5, 15 min) | PyTorch s/epoch | load | PyTorch / sgld |\n")
cat("|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(out)))
  cat(sprintf("| %d | %d | %.2f | %s | %.2f | %s | %.2f |\n", out$repeat_[i], out$threads[i],
              out$sgld[i], out$load_sgld[i], out$torch[i], out$load_torch[i],
              out$torch[i] / out$sgld[i]))
cat("\nLoad average after: ", load_avg(), "\n", sep = "")
