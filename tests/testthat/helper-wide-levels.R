# A binary response on a continuous covariate and a factor of many levels
# (issue 49's formula face): `levels` levels of about n / levels rows each
# (drawn at random, so some have a handful of rows and, all events or none,
# half-flat posteriors), level effects from N(0, 0.5^2). Used by
# test-wide-levels.R, data-raw/wide-levels-reference.R and
# bench/wide-levels.R.
wide_levels_data <- function(levels, n, seed = 1) {
  set.seed(seed)
  g <- factor(sprintf("L%05d", sample.int(levels, n, replace = TRUE)))
  x <- stats::rnorm(n)
  effect <- stats::rnorm(levels, 0, 0.5)
  data.frame(g = g, x = x,
             y = stats::rbinom(n, 1, stats::plogis(-0.5 + 0.5 * x + effect[as.integer(g)])))
}
