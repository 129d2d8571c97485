## SGD and SGLD on the lecture handout's Bayesian linear regression,
## checked against the exact (conjugate) posterior.
library(sgld)

m <- model_linear(y ~ x, data = handout, prior = prior_nig())
ex <- linear_exact_posterior(m)
# The exact mode is reported on the sampler's scale (log sigma2), where SGD
# converges; map it back so it can sit next to SGD's last iterate, which
# as.matrix() gives on the user's scale (sigma2).
mode_user <- c(ex$mode[seq_len(m$p)], sigma2 = exp(ex$mode[["log_sigma2"]]))

## SGD from the handout's deliberately poor start.
start <- c(1.1, -2, 1)
set.seed(2023)
fit_sgd <- sgd(m, lr = 1e-5, batch_size = 100, iter = 1000, init = start)
sgd_path <- as.matrix(fit_sgd)[, m$names]   # without the derived sigma
print(cbind(sgd = sgd_path[nrow(sgd_path), ], exact_mode = mode_user), digits = 4)

## SGLD. A tiny constant learning rate keeps the minibatch part of the
## gradient noise small next to the injected noise (2 * lr per coordinate),
## so the draws match the posterior rather than a widened version of it.
## Small steps mix slowly, hence many iterations, thinned.
set.seed(2024)
fit_sgld <- sgld(m, lr = 2e-8, batch_size = 100, iter = 2e6, thin = 100, chains = 2)
print(summary(fit_sgld))
cat("\nExact posterior:\n")
print(cbind(mean = ex$mean, sd = ex$sd), digits = 4)

## Figure: SGD traces (top) and SGLD histograms against the exact marginals.
out <- file.path(getwd(), "sgld-demo.png")
grDevices::png(out, width = 1500, height = 900, res = 120)
op <- par(mfrow = c(2, 3), mar = c(4.2, 4.2, 2.5, 1))
# Prepend the start so the traces show where SGD set off from.
path <- rbind(start, sgd_path)
draws <- as.matrix(fit_sgld)
for (p in m$names) {
  plot(0:1000, path[, p], type = "l", xlab = "iteration", ylab = p,
       main = paste("SGD:", p))
  abline(h = mode_user[[p]], col = "red")
}
for (p in m$names) {
  h <- hist(draws[, p], breaks = 40, plot = FALSE)
  grid_x <- seq(min(h$breaks), max(h$breaks), length.out = 300)
  dens <- ex$density(grid_x, p)
  # Set the height by hand so neither the bars nor the curve are cut off.
  plot(h, freq = FALSE, ylim = c(0, max(h$density, dens)), xlab = p,
       main = paste("SGLD:", p), col = "grey85", border = "grey50")
  lines(grid_x, dens, col = "red", lwd = 2)
}
par(op)
invisible(grDevices::dev.off())
cat("\nFigure written to", normalizePath(out), "\n")
