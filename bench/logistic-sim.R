# The simulated logistic regression of bench/nuts.R and bench/vi.R, and its
# Stan program: sourced by both after they set d (20), so they run on the
# same data. Model: y_i ~ Bernoulli(logit^-1(x_i' beta)), x_i = (1, z_i),
# z_i ~ N(0, I_{d-1}), beta_j ~ N(0, prior_sd^2) for every coefficient.

# Fixed true coefficients, moderate effects (linear predictor sd about 1.3)
set.seed(20240612)
beta_true <- c(-0.5, round(rnorm(d - 1, 0, 0.3), 2))

simulate <- function(n) {
  set.seed(1000 + log10(n))
  X <- matrix(0, n, d)
  X[, 1] <- 1
  X[, -1] <- rnorm(n * (d - 1))
  colnames(X) <- c("(Intercept)", paste0("x", seq_len(d - 1)))
  y <- as.numeric(runif(n) < plogis(drop(X %*% beta_true)))
  list(X = X, y = y)
}

stan_code <- "
data {
  int<lower=1> N;
  int<lower=1> K;
  matrix[N, K] X;                 // includes the intercept column
  int<lower=0, upper=1> y[N];
  real<lower=0> prior_sd;
}
parameters {
  vector[K] beta;
}
model {
  beta ~ normal(0, prior_sd);     // sd, as sgld's prior_normal(0, 10)
  y ~ bernoulli_logit_glm(X, 0, beta);
}
"
