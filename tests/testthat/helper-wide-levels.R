# A response on a continuous covariate and a factor of many levels (issue
# 49's formula face): `levels` levels of about n / levels rows each (drawn at
# random, so some have a handful of rows and, for binomial all events or
# none and for poisson all zeros, half-flat posteriors), level effects from
# N(0, effect_sd^2). binomial: logit -0.5 + 0.5 x + effect; poisson: log
# rate -1 + 0.3 x + effect; gaussian: 1 + 0.5 x + effect + N(0, 1) noise.
# Used by test-wide-levels.R, data-raw/wide-levels-reference.R,
# bench/wide-levels.R and bench/wide-levels-accuracy.R.
wide_levels_data <- function(levels, n, seed = 1, family = "binomial", effect_sd = 0.5) {
  set.seed(seed)
  g <- factor(sprintf("L%05d", sample.int(levels, n, replace = TRUE)))
  x <- stats::rnorm(n)
  effect <- stats::rnorm(levels, 0, effect_sd)
  eta <- effect[as.integer(g)]
  y <- switch(family,
              binomial = stats::rbinom(n, 1, stats::plogis(-0.5 + 0.5 * x + eta)),
              poisson = stats::rpois(n, exp(-1 + 0.3 * x + eta)),
              gaussian = 1 + 0.5 * x + eta + stats::rnorm(n),
              stop("family must be binomial, poisson or gaussian"))
  data.frame(g = g, x = x, y = y)
}
