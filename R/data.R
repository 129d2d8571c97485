#' The lecture handout's regression data
#'
#' Ten thousand draws of a bivariate normal pair \eqn{(x, y)}{(x, y)} with means 0,
#' variances 1 and correlation 0.9, the data of the SGD and SGLD examples of
#' the lecture handout (Figures 4.1 to 4.3). Regressing `y` on `x` the true
#' coefficients are \eqn{\beta = (0, 0.9)}{beta = (0, 0.9)} and the true residual variance
#' \eqn{\sigma^2 = 1 - 0.9^2 = 0.19}{sigma^2 = 1 - 0.9^2 = 0.19}.
#'
#' Made by `data-raw/handout.R`: `set.seed(2023)`, then
#' `mvtnorm::rmvnorm(10000, mean = c(0, 0), sigma = matrix(c(1, 0.9, 0.9, 1), 2))`,
#' first column `x`, second `y`.
#'
#' @format A data frame with 10000 rows and 2 numeric columns, `x` and `y`.
#' @source Simulated; the recipe of the lecture handout "Stochastic gradient
#'   Langevin dynamics" (Karagiannis, 2024).
#' @examples
#' summary(lm(y ~ x, data = handout))
"handout"
