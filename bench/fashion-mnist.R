# Bayesian neural networks on Fashion-MNIST: test accuracy and calibration
# (expected calibration error, 15 equal-width bins of the top probability) of
# SGLD, pSGLD and SGHMC against SGD after the same number of epochs, and the
# time per epoch.
#
#   Rscript bench/fashion-mnist.R [n_train] [hidden] [epochs]    from the package root
#
# The full run is `Rscript bench/fashion-mnist.R 60000 400 20`; the default
# (2000 images, 100 units, 3 epochs) is the short version, under a minute.
# Needs Debian's dataset-fashion-mnist (tools/install-deps.sh --bench).
# Bayes by Backprop is not here: it is being written separately. PyTorch's
# time for the same SGLD: bench/torch_mlp_sgld.py.
#
# Measured (branch mlp, blocked backpropagation, `Rscript bench/fashion-mnist.R
# 20000 400 5`, 2026-11-23 22:15-22:25 UTC, load average 5-8 on a shared
# 2-core machine): test accuracy / ECE / s per epoch (whole run / epochs)
#   SGD 0.8400 / 0.0495 / 11.4   SGD (Adam) 0.8053 / 0.0266 / 11.7
#   SGLD 0.8402 / 0.0543 / 10.1  pSGLD 0.7344 / 0.0496 / 7.0   SGHMC 0.8406 / 0.0532 / 7.0
# SGLD and SGHMC are as accurate as SGD (+0.0002, +0.0006: not a difference)
# but not better calibrated at 5 epochs with 10 draws; pSGLD (lr 1e-4, not
# tuned) is behind. All 60000 images, 2 epochs (`... 60000 400 2`, load 5-6):
#   SGD 0.8573 / 0.0309 / 27.3   SGD (Adam) 0.8439 / 0.0179 / 27.4
#   SGLD 0.8549 / 0.0241 / 26.8  pSGLD 0.7712 / 0.0505 / 27.9  SGHMC 0.8551 / 0.0248 / 28.6
# (samplers better calibrated than SGD, 0.002 less accurate). All 60000
# images, 10 epochs (`... 60000 400 10`, 2026-11-23 23:00-23:19 UTC, niced
# beside a CI run, load 2.5-3):
#   SGD 0.8658 / 0.0278 / 19.5   SGD (Adam) 0.8557 / 0.0201 / 22.0
#   SGLD 0.8647 / 0.0327 / 20.4  pSGLD 0.7639 / 0.0724 / 8.2   SGHMC 0.8649 / 0.0314 / 18.1
# (at 10 epochs the samplers are 0.001 less accurate than SGD and no longer
# better calibrated: the issue's target is missed). The 20-epoch
# full run was not made (time, and the machine's load); the earlier 10000-image, 10-epoch run (commit a27988d)
# had SGLD's ECE 0.071 below SGD's 0.077.

library(sgld)
args <- as.numeric(commandArgs(trailingOnly = TRUE))
n_train <- if (length(args) >= 1) args[1] else 2000
hidden <- if (length(args) >= 2) args[2] else 100
epochs <- if (length(args) >= 3) args[3] else 3
batch <- 100
threads <- 1L

train <- read_fashion_mnist(split = "train", n = n_train)
test <- read_fashion_mnist(split = "test")
m <- model_mlp(train$x, train$y, hidden = hidden, family = "categorical")
iter <- ceiling(epochs * n_train / batch)
# keep 10 draws per chain from the last half of the run
thin <- max(1, floor(iter / 2 / 10))

ece <- function(prob, y) {
  conf <- apply(prob, 1, max)
  hit <- max.col(prob, ties.method = "first") == as.integer(y)
  bins <- cut(conf, seq(0, 1, length.out = 16), include.lowest = TRUE)
  gaps <- vapply(split(seq_along(conf), bins), function(i)
    if (length(i)) abs(mean(hit[i]) - mean(conf[i])) * length(i) else 0, numeric(1))
  sum(gaps) / length(conf)
}

runs <- list(
  "SGD" = function() sgd(m, lr = 0.05 / n_train, batch_size = batch, iter = iter,
                         threads = threads),
  "SGD (Adam)" = function() sgd(m, lr = 1e-3, batch_size = batch, iter = iter,
                                optimizer = "adam", threads = threads),
  "SGLD" = function() sgld(m, lr = 0.05 / n_train, batch_size = batch, iter = iter, thin = thin,
                           pars = TRUE, threads = threads),
  # lambda: psgld()'s default for networks, 1 (with 1e-5, the default for
  # other models, the noise on weights of pixels that are nearly always 0
  # swamped the network: test accuracy 0.107 in the short run)
  "pSGLD" = function() psgld(m, lr = 1e-4, batch_size = batch, iter = iter,
                             thin = thin, pars = TRUE, threads = threads),
  "SGHMC" = function() sghmc(m, lr = 0.005 / n_train, batch_size = batch, iter = iter,
                             thin = thin, pars = TRUE, threads = threads))

out <- data.frame()
for (k in names(runs)) {
  set.seed(7)
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(runs[[k]]())
  secs <- proc.time()[["elapsed"]] - t0
  prob <- predict(fit, test$x, type = "response")
  acc <- mean(max.col(prob, ties.method = "first") == as.integer(test$y))
  out <- rbind(out, data.frame(method = k, accuracy = acc, ece = ece(prob, test$y),
                               seconds_per_epoch = secs / epochs, status = fit$status[1]))
}

cat("## Bayesian neural networks on Fashion-MNIST (bench/fashion-mnist.R)\n\n")
cat(sprintf(paste0("%d training images, 784-%d-10 ReLU network, N(0, 1/fan-in) priors, batch %d, ",
                   "%g epochs (%d iterations), 1 chain on %d thread; samplers average the ",
                   "predictive probabilities of %d draws from the second half. Test set: 10,000 images.\n\n"),
            n_train, hidden, batch, epochs, iter, threads, floor(iter / 2 / thin)))
cat("| method | test accuracy | ECE | s per epoch | status |\n|---|---|---|---|---|\n")
for (i in seq_len(nrow(out)))
  cat(sprintf("| %s | %.4f | %.4f | %.2f | %s |\n", out$method[i], out$accuracy[i], out$ece[i],
              out$seconds_per_epoch[i], out$status[i]))
