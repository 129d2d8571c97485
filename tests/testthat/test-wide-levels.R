# The wide recipe (R/auto-wide.R) on the formula face with a factor of many
# levels (issue 49): y ~ x + g, g of 1,000 levels of about 10 rows each.

test_that("the levels of a factor are probed together: the exact diagonal", {
  dat <- wide_levels_data(1000, 10000)
  m <- model_logistic(y ~ x + g, data = dat)
  exact <- coupled_coordinates(m)
  expect_setequal(m$sampler_names[exact], c("(Intercept)", "x"))
  groups <- orthogonal_groups(m, setdiff(seq_len(m$d), exact))
  # the levels share no row: one group
  expect_length(groups, 1)
  expect_setequal(groups[[1]], setdiff(seq_len(m$d), exact))
  # columns that share rows go to different groups
  X <- Matrix::sparseMatrix(i = c(1, 2, 2, 3, 1, 3), j = c(1, 1, 2, 2, 3, 3), x = 1,
                            dims = c(3, 3))
  tiny <- model_logistic(X, c(0, 1, 1), prior = prior_normal(0, 1))
  expect_equal(sort(lengths(orthogonal_groups(tiny, 1:3))), c(1L, 1L, 1L))
  pm <- posterior_mode(m, covariance = TRUE)
  H <- solve(pm$covariance)
  hvp <- hessian_product(m, pm$sampler)
  h <- hessian_diagonal(hvp, m$d, exact, groups)
  # exact up to the prior's couplings and the differences' rounding, down to
  # the levels whose rows are all events or none (curvatures near 1e-4,
  # which the old floor, 1e-6 of the intercept's, raised 40-fold)
  expect_lt(min(diag(H)), 1e-6 * max(diag(H)))
  expect_equal(h, unname(diag(H)), tolerance = 1e-4)
})

test_that("a second round's correction merges with the first into one of the same form", {
  set.seed(3)
  d <- 12
  s <- stats::runif(d, 0.5, 2)
  V1 <- qr.Q(qr(matrix(stats::rnorm(d * 2), d)))
  V2 <- qr.Q(qr(matrix(stats::rnorm(d * 3), d)))
  c1 <- c(1.5, -0.6)
  c2 <- c(3, -0.9, 0.2)
  M1 <- diag(d) + V1 %*% (c1 * t(V1))
  M2 <- diag(d) + V2 %*% (c2 * t(V2))
  # the steps go through L = S M1 M2: P = L L'
  L <- s * M1 %*% M2
  fix <- merge_corrections(list(basis = V1, coef = c1), list(basis = V2, coef = c2))
  expect_lte(length(fix$coef), 5)
  expect_equal(crossprod(fix$basis), diag(length(fix$coef)))
  expect_true(all(fix$coef > -1))
  merged <- s * (diag(d) + fix$basis %*% (fix$coef * t(fix$basis)))
  expect_equal(tcrossprod(merged), tcrossprod(L))
  ops <- precondition_ops(s, fix$basis, fix$coef)
  expect_equal(ops$L(diag(d)[, 4]), merged[, 4])
  expect_identical(merge_corrections(NULL, fix), fix)
})

test_that("the default call on a factor of 1,000 levels agrees with the exact reference", {
  # y ~ x + g at sgld's defaults on 1,000 levels x 10,000 rows (1,001
  # parameters: the wide recipe without moving the bar) against a Gibbs
  # reference (data-raw/wide-levels-reference.R: level means by slice
  # sampling, exact for these priors; 4 chains, bulk ESS >= 5,879, R-hat <=
  # 1.0013), every coefficient, at the bar. Measured at seeds 1-3
  # (bench/sparse.md), with the run's target of 3,000 effective draws when
  # levels are drawn alone: means within 0.068-0.097 sd, sds within 5.9-6.6%
  # (the former 1,000: 0.120-0.131 sd and 10.8-12.7%, Monte Carlo error
  # of the other few-row levels). At step 0.8 the intercept (the mean of the
  # baseline level's 5 rows) came out 5-6% wide and every level with it; at
  # 0.5, the step when levels are drawn alone, 0.4-0.7%.
  ref <- readRDS(test_path("wide-levels-reference.rds"))
  dat <- wide_levels_data(1000, 10000)
  set.seed(1)
  fit <- sgld(y ~ x + g, data = dat, family = binomial())
  expect_identical(fit$auto$strategy, "langevin-diagonal")
  # the levels drawn alone are exactly those whose rows are all events or none
  one_end <- tapply(dat$y, dat$g, function(v) all(v == v[1]))
  half_flat <- paste0("g", names(one_end)[one_end])
  expect_setequal(fit$auto$coordinates, half_flat)
  nm <- names(ref$mean)
  z <- abs(posterior_mean(fit)[nm] - ref$mean) / ref$sd
  r <- sqrt(posterior_var(fit)[nm]) / ref$sd
  expect_lt(max(z), 0.15)
  expect_lt(max(abs(r - 1)), 0.10)
})
