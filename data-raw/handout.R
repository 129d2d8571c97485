# The handout's data: n = 10^4 bivariate normal pairs with correlation 0.9.
# Run from the package root: Rscript data-raw/handout.R
set.seed(2023)
xy <- mvtnorm::rmvnorm(10000, mean = c(0, 0), sigma = matrix(c(1, 0.9, 0.9, 1), 2))
handout <- data.frame(x = xy[, 1], y = xy[, 2])
save(handout, file = "data/handout.rda", compress = "xz", version = 2)
