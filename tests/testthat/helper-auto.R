# A simulated logistic regression whose posterior its Laplace approximation
# gets wrong: 1,300 rows, 12 coefficients, predictors on scales from 1 to
# 10^4 (income about 4,000, debt about 1,200, age about 45, counts of a few),
# and ratio = debt / income, a predictor that is the ratio of two others
# and nearly separates the classes: y = 1 with probability
# plogis(k (ratio - 0.45) + ...), k = 1000, so that only rows within about
# 0.005 of ratio = 0.45 are mixed. As debt and income are predictors too,
# the classes are nearly separated by a linear combination of them, and the
# posterior reaches far along it (income's coefficient -8.3, sd 2.8, where
# the mode is at -0.9). The exact posterior's means and sds are stored in
# nearly-separated-reference.rds (data-raw/nearly-separated-reference.R).
nearly_separated_data <- function(seed = 1, n = 1300, k = 1000) {
  set.seed(seed)
  income <- round(rlnorm(n, log(4000), 0.5))
  debt <- round(income * rbeta(n, 2, 5))
  ratio <- debt / income
  age <- round(rnorm(n, 45, 12))
  owner <- rbinom(n, 1, 0.4)
  savings <- round(rexp(n, 1 / 300))
  members <- rpois(n, 1.5) + 1
  years <- rpois(n, 8)
  visits <- rpois(n, 3)
  score <- rnorm(n, 600, 80)
  cards <- rpois(n, 2)
  eta <- k * (ratio - 0.45) + 0.02 * (age - 45) + 0.5 * owner - 0.3
  y <- rbinom(n, 1, plogis(eta))
  data.frame(y, income, debt, ratio, age, owner, savings, members, years, visits, score, cards)
}

nearly_separated_model <- function(...) {
  model_logistic(y ~ income + debt + ratio + age + owner + savings + members + years + visits +
                   score + cards, data = nearly_separated_data(...), prior = prior_normal(0, 10), prior_intercept = NULL)
}

# A logistic regression whose factor has rare levels whose rows hold no
# events (h, i) or only events (j): its posterior is far from Gaussian
# along those levels' coefficients, close to it along the others. The
# reference is data-raw/rare-levels-reference.R.
rare_levels_data <- function(n = 3000) {
  set.seed(37)
  # level a takes the rows beyond the others' 2,100 (900 at the default n)
  sizes <- c(a = n - 2100, b = 700, c = 500, d = 400, e = 300, f = 150, g = 30, h = 12, i = 5,
             j = 3)
  group <- factor(rep(names(sizes), sizes), levels = names(sizes))
  x1 <- stats::rnorm(n)
  x2 <- stats::rexp(n)
  effect <- c(a = 0, b = 0.3, c = -0.4, d = 0.5, e = 0.2, f = -0.6, g = 0, h = 0, i = 0, j = 0)
  y <- stats::rbinom(n, 1, stats::plogis(-0.5 + 0.8 * x1 - 0.4 * x2 + effect[group]))
  y[group %in% c("h", "i")] <- 0
  y[group == "j"] <- 1
  data.frame(y, x1, x2, group)[sample(n), ]
}
rare_levels_model <- function() model_logistic(y ~ x1 + x2 + group, data = rare_levels_data(), prior = prior_normal(0, 10), prior_intercept = NULL)
