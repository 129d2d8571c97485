# A binary response on a continuous covariate and a factor of many levels
# (issue 49's formula face): `levels` levels of about n / levels rows each
# (drawn at random, so some have a handful of rows and, all events or none,
# half-flat posteriors), level effects from N(0, 0.5^2). `family` "gaussian"
# gives y with residual sd 1 instead, "poisson" counts of that log mean
# (the same g, x and effects for the same seed). Used by
# test-wide-levels.R, data-raw/wide-levels-reference.R, bench/wide-levels.R
# and bench/wide-faces.R.
wide_levels_data <- function(levels, n, seed = 1,
                             family = c("binomial", "gaussian", "poisson")) {
  family <- match.arg(family)
  set.seed(seed)
  g <- factor(sprintf("L%05d", sample.int(levels, n, replace = TRUE)))
  x <- stats::rnorm(n)
  effect <- stats::rnorm(levels, 0, 0.5)
  eta <- -0.5 + 0.5 * x + effect[as.integer(g)]
  y <- switch(family,
              binomial = stats::rbinom(n, 1, stats::plogis(eta)),
              gaussian = eta + stats::rnorm(n),
              poisson = stats::rpois(n, exp(eta)))
  data.frame(g = g, x = x, y = y)
}
