# What rstanarm does with `weights` in a gaussian model, to decide which
# convention sgld's multilevel `weights` follow (bench/glmm-weights.md).
# (1) stan_glm()'s log density (rstan::log_prob on its stanfit, transforms
# not adjusted) minus the priors' densities, regressed on the candidate
# terms at random parameter values: it shows which sums the likelihood holds.
# (2) A run with weights against one without and one on the rows repeated.
# Run: Rscript bench/glmm-weights-rstanarm.R (about a minute).
suppressMessages(library(rstanarm))
set.seed(1)
d <- data.frame(x = rnorm(6))
d$y <- 1 + d$x + rnorm(6)
w <- c(1, 2, 1, 2, 3, 3)
pr <- list(prior = normal(0, 10, autoscale = FALSE),
           prior_intercept = normal(0, 10, autoscale = FALSE),
           prior_aux = exponential(1, autoscale = FALSE))
fw <- suppressWarnings(do.call(stan_glm, c(list(y ~ x, data = d, weights = w, chains = 1,
                                                iter = 20, refresh = 0, seed = 1), pr)))
xbar <- mean(d$x)
rows <- NULL
for (t in 1:12) {
  up <- rnorm(3, 0, 0.7)   # (gamma, z_beta, log sigma)
  cp <- rstan::constrain_pars(fw$stanfit, up)
  lp <- rstan::log_prob(fw$stanfit, up, adjust_transform = FALSE)
  r <- d$y - (cp$gamma[1] + (d$x - xbar) * cp$beta[1])
  s <- cp$aux
  prior <- dnorm(up[2], 0, 1, log = TRUE) + dnorm(cp$gamma[1], 0, 10, log = TRUE) +
    dexp(s, 1, log = TRUE)
  rows <- rbind(rows, c(lik = lp - prior, weighted_ss = sum(w * r^2) / s^2,
                        unweighted_ss = sum(r^2) / s^2, log_sigma = log(s),
                        sum_w_log_sigma = sum(w) * log(s)))
}
rows <- as.data.frame(rows)
cat("(1) the log likelihood's terms (coefficients; residual sd of the fit):\n")
fit <- lm(lik ~ weighted_ss + unweighted_ss + log_sigma, rows)
print(round(coef(fit), 6))
cat("residual sd", format(summary(fit)$sigma, digits = 2), "\n")

set.seed(1)
d <- data.frame(x = rnorm(20))
d$y <- 1 + d$x + rnorm(20)
w <- rep(c(1, 30), 10)
run <- function(...) suppressWarnings(do.call(stan_glm, c(list(y ~ x, chains = 1, iter = 2000,
                                                               refresh = 0, seed = 1), pr, list(...))))
U <- list(weighted = run(data = d, weights = w), unweighted = run(data = d),
          repeated = run(data = d[rep(1:20, w), ]))
cat("(2) posterior means\n")
print(t(sapply(U, function(f) colMeans(as.matrix(f)))))
cat("rstanarm", as.character(packageVersion("rstanarm")), "\n")
