# A response on a continuous covariate and a factor of many levels (issue
# 49's formula face): `levels` levels of about n / levels rows each (drawn at
# random, so some have a handful of rows and, for binomial all events or
# none and for poisson all zeros, half-flat posteriors), level effects from
# N(0, effect_sd^2). The intercept and slope `coef` default by family:
# binomial logit -0.5 + 0.5 x + effect; poisson log rate -1 + 0.3 x + effect;
# gaussian 1 + 0.5 x + effect + N(0, 1) noise (the stored Gibbs references
# of data-raw/wide-levels-reference.R are on these). test-wide-faces.R and
# bench/wide-faces.R give coef = c(-0.5, 0.5) for every family. Used too by
# test-wide-levels.R, bench/wide-levels.R and bench/wide-levels-accuracy.R.
wide_levels_data <- function(levels, n, seed = 1,
                             family = c("binomial", "gaussian", "poisson"),
                             effect_sd = 0.5, coef = NULL) {
  family <- match.arg(family)
  if (is.null(coef))
    coef <- switch(family, binomial = c(-0.5, 0.5), poisson = c(-1, 0.3), gaussian = c(1, 0.5))
  set.seed(seed)
  g <- factor(sprintf("L%05d", sample.int(levels, n, replace = TRUE)))
  x <- stats::rnorm(n)
  effect <- stats::rnorm(levels, 0, effect_sd)
  eta <- coef[1] + coef[2] * x + effect[as.integer(g)]
  y <- switch(family,
              binomial = stats::rbinom(n, 1, stats::plogis(eta)),
              gaussian = eta + stats::rnorm(n),
              poisson = stats::rpois(n, exp(eta)))
  data.frame(g = g, x = x, y = y)
}
