# The two logistic regressions of vignette("rstanarm", package = "sgld"),
# sourced by the vignette and by data-raw/rstanarm-reference.R so that both
# fit the same data. Each is a design matrix X (its first column the
# intercept) and a 0/1 response y; every coefficient has the prior N(0, 10^2)
# (sgld's default prior_normal(0, 10); in rstanarm normal(0, 10) without
# autoscaling, the intercept a column of X so that it gets the same prior).
rstanarm_datasets <- function() {
  # A real one of a few thousand rows: 4,000 people drawn at random from the
  # training rows of the package's Adult data, income above 50K against six
  # of their attributes (19 coefficients and the intercept).
  adult <- sgld::adult
  train <- adult[adult$set == "train", ]
  set.seed(20261126)
  rows <- train[sort(sample(nrow(train), 4000)), ]
  X_small <- stats::model.matrix(~ age + education_num + sex + hours_per_week +
                                   relationship + capital_gain, data = rows)
  y_small <- as.numeric(rows$income == ">50K")

  # A simulated one of 100,000 rows: six correlated normal covariates
  # (correlation 0.5^|j - k|), three binary ones (probabilities 0.1, 0.3,
  # 0.5), fixed coefficients, y ~ Bernoulli(plogis(X beta)).
  n <- 100000
  set.seed(20261127)
  S <- 0.5^abs(outer(1:6, 1:6, "-"))
  Z <- matrix(stats::rnorm(n * 6), n, 6) %*% chol(S)
  B <- sapply(c(0.1, 0.3, 0.5), function(p) as.numeric(stats::runif(n) < p))
  X_large <- cbind(1, Z, B)
  colnames(X_large) <- c("(Intercept)", paste0("z", 1:6), paste0("b", 1:3))
  beta <- c(-1, 0.8, -0.5, 0.3, 0, 0.2, -0.1, 1.5, -0.7, 0.4)
  y_large <- as.numeric(stats::runif(n) < stats::plogis(drop(X_large %*% beta)))

  list(small = list(X = X_small, y = y_small),
       large = list(X = X_large, y = y_large, beta = beta))
}
