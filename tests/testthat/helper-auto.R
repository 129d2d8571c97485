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
                   score + cards, data = nearly_separated_data(...))
}
