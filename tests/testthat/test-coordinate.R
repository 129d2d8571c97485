# The coordinate updates (src/coordinate.c): single coefficients drawn by
# slice sampling from their full conditionals, on the rows where their
# column is not zero. Here the rule's own steps move nothing (a zero
# factor), so the run is a Gibbs sampler of the coordinate updates alone,
# checked against the posterior on a grid.

# a run of the coordinate updates of the coefficients `j` alone
coordinate_run <- function(model, j, iter, init) {
  rows <- model_coordinate_rows(model, j)
  run_sampler(model, lr = 0.1, batch_size = model$n, iter = iter, burnin = 0, thin = 1,
              temperature = 1, chains = 1, init = init, replace = FALSE, clip = NULL,
              monitor = NULL, threads = 1L, method = "sgld", call = quote(sgld()),
              rule = update_rule("precond", "no steps", list(chol = rep(0, model$d^2)),
                                 sampler = TRUE),
              checks = FALSE, thin_auto = FALSE,
              coordinates = list(index = as.integer(j - 1L),
                                 start = c(0, cumsum(lengths(rows))),
                                 rows = as.double(unlist(rows)), width = rep(0.5, length(j))))
}

# the marginal means and sds of a two-coefficient posterior, on a grid
grid_moments <- function(model, lim1, lim2, k = 400) {
  g1 <- seq(lim1[1], lim1[2], length.out = k)
  g2 <- seq(lim2[1], lim2[2], length.out = k)
  lp <- outer(g1, g2, Vectorize(function(a, b) log_posterior(model, c(a, b))$logpost))
  p <- exp(lp - max(lp))
  p <- p / sum(p)
  m1 <- rowSums(p); m2 <- colSums(p)
  mu <- c(sum(g1 * m1), sum(g2 * m2))
  list(mean = mu, sd = sqrt(c(sum(g1^2 * m1), sum(g2^2 * m2)) - mu^2),
       edge = max(m1[c(1, k)], m2[c(1, k)]))
}

# a rare level with no events: its coefficient's posterior is bounded by the
# prior on one side only, strongly skewed
rare_level_data <- function(n = 80) {
  set.seed(21)
  x <- as.double(seq_len(n) %% 10 == 0)
  y <- rbinom(n, 1, 0.4)
  y[x == 1] <- 0
  list(x = x, y = y)
}

expect_matches_grid <- function(fit, ref, label) {
  x <- as.matrix(fit)
  ess <- coda::effectiveSize(x)
  z <- sweep(x, 2, colMeans(x))
  kurt <- colMeans(z^4) / colMeans(z^2)^2
  # errors of 4 Monte Carlo standard errors: a draw of the wrong conditional
  # (the prior left out: no bound on the left; the rows' x_ij taken as 1; a
  # shrinkage step that moved away from x0) is off by many more
  expect_true(all(abs(colMeans(x) - ref$mean) / ref$sd < 4 / sqrt(ess)),
              label = paste(label, "means"))
  expect_true(all(abs(apply(x, 2, sd) / ref$sd - 1) < 4 * sqrt((kurt - 1) / (4 * ess))),
              label = paste(label, "sds"))
}

test_that("the coordinate updates alone sample a skewed logistic posterior exactly", {
  dat <- rare_level_data()
  m <- model_logistic(cbind(1, dat$x), dat$y, prior = prior_normal(0, 3), prior_intercept = NULL)
  ref <- grid_moments(m, c(-2, 1.5), c(-14, 4))
  expect_lt(ref$edge, 1e-6)
  set.seed(1)
  fit <- coordinate_run(m, 1:2, 20000, c(0, 0))
  expect_matches_grid(fit, ref, "normal prior")
  # the level's posterior is skewed (a long left tail): a Gaussian would not do
  x <- as.matrix(fit)[, 2]
  expect_lt(mean((x - mean(x))^3) / sd(x)^3, -0.5)
})

test_that("coordinate updates follow offsets, counts, a Laplace prior, a non-binary column", {
  dat <- rare_level_data()
  df <- data.frame(x = dat$x * 2.5, ev = dat$y * 2, non = (1 - dat$y) * 3,
                   off = seq(-0.3, 0.3, length.out = length(dat$y)))
  m <- model_logistic(cbind(ev, non) ~ x, data = df, offset = off,
                      prior = prior_laplace(0, 2), prior_intercept = prior_normal(0, 5))
  ref <- grid_moments(m, c(-1.5, 1), c(-40, 2), k = 600)
  expect_lt(ref$edge, 1e-6)
  set.seed(2)
  fit <- coordinate_run(m, 1:2, 20000, c(0, 0))
  expect_matches_grid(fit, ref, "counts, offset, Laplace prior")
})

test_that("coordinate updates give the same draws from sparse and dense storage", {
  dat <- rare_level_data(200)
  X <- cbind(1, dat$x, as.double(seq_along(dat$y) %% 7 == 0) * 1.5)
  sp <- model_logistic(X, dat$y, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL)
  de <- model_logistic(X, dat$y, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_identical(model_coordinate_rows(sp, 2:3), model_coordinate_rows(de, 2:3))
  expect_identical(lengths(model_coordinate_rows(sp, 1:3)), c(200L, 20L, 28L))
  set.seed(3); fs <- coordinate_run(sp, 2:3, 500, c(0.1, -1, 0.5))
  set.seed(3); fd <- coordinate_run(de, 2:3, 500, c(0.1, -1, 0.5))
  expect_equal(as.matrix(fs), as.matrix(fd), tolerance = 1e-12)
  # coordinates not in the set stay where they were
  expect_true(all(as.matrix(fs)[, 1] == 0.1))
})

test_that("coordinate updates sample Poisson coefficients exactly", {
  dat <- rare_level_data()
  # a rare level whose counts are all zero: its coefficient is skewed
  set.seed(22)
  count <- ifelse(dat$x == 1, 0, rpois(length(dat$x), 1.5))
  df <- data.frame(count, x = dat$x, expo = seq(0.5, 1.5, length.out = length(count)))
  m <- model_poisson(count ~ x, data = df, offset = log(expo), prior = prior_normal(0, 3), prior_intercept = NULL)
  ref <- grid_moments(m, c(-0.5, 0.8), c(-14, 3))
  expect_lt(ref$edge, 1e-6)
  set.seed(4)
  fit <- coordinate_run(m, 1:2, 20000, c(0, 0))
  expect_matches_grid(fit, ref, "Poisson")
  # the negative binomial's dispersion is no coefficient and reads every
  # row; its model offers no coordinate updates (src/model_negbin.c)
  nb <- model_negbin(count ~ x, data = df, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)
  expect_false(model_engine(nb)$logpost_coordinate)
  expect_true(model_engine(m)$logpost_coordinate)
})
