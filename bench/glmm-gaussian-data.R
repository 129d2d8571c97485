# The simulated gaussian data set of bench/glmm-gaussian.R: 10^4 rows in 200
# groups of 50, y = 1 + 0.5 x + b_g + e, b_g ~ N(0, 0.8^2), e ~ N(0, 1).
glmm_gaussian_formula <- y ~ x + (1 | g)
glmm_gaussian_data <- function(n = 1e4, G = 200, seed = 1) {
  set.seed(seed)
  g <- factor(sprintf("g%03d", rep(seq_len(G), length.out = n)))
  x <- rnorm(n)
  data.frame(y = 1 + 0.5 * x + rnorm(G, 0, 0.8)[g] + rnorm(n), x = x, g = g)
}
