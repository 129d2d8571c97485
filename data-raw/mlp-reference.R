# The exact reference for the automatic settings of a network
# (tests/testthat/test-model-mlp.R): a 1-3-1 tanh network with model_mlp()'s
# default prior on 50 points of a noisy sine, sampled by MALA (16 chains from
# the network's own random starts, 1,000,000 iterations each at lr 7e-4,
# thinned by 200; acceptance, R-hat and ESS printed),
# and the posterior predictive mean and sd of the network's output at 10
# grid points, and sigma2's mean and sd, stored small.
#
#   Rscript data-raw/mlp-reference.R    (from the package root; a few minutes)
library(sgld)
set.seed(5)
n <- 50
d <- data.frame(x = runif(n, -2, 2))
d$y <- sin(1.5 * d$x) + rnorm(n, sd = 0.2)
net <- model_mlp(y ~ x, data = d, hidden = 3, activation = "tanh")
grid <- data.frame(x = seq(-2, 2, length.out = 10))
set.seed(1)
ref <- mala(net, lr = 7e-4, iter = 1e6, thin = 200, chains = 16, threads = 1,
            pars = TRUE)
print(ref$acceptance); print(ref$checks$convergence[c("rhat_max", "ess_min")])
pr <- predict(ref, grid, draws = TRUE)
s2 <- as.matrix(ref)[, "sigma2"]
out <- list(data = d, grid = grid, mean = rowMeans(pr), sd = apply(pr, 1, sd),
            sigma2 = c(mean = mean(s2), sd = sd(s2)), acceptance = ref$acceptance,
            rhat_max = ref$checks$convergence$rhat_max, ess_min = ref$checks$convergence$ess_min)
print(out[-(1:2)])
saveRDS(out, "tests/testthat/mlp-reference.rds", version = 2)
