# The engine's own generators: seeded from R, exact in distribution, one
# independent stream per chain. Seeds are fixed, so these tests are deterministic;
# the thresholds are what a correct generator passes with probability > 0.9999.

rng_draws <- function(n, kind, bound = 0, stream = 0L) {
  .Call(sgld:::C_sgld_rng_draws, as.double(n), as.integer(kind), as.double(bound),
        as.integer(stream))
}

test_that("normal draws are standard normal, including the ziggurat's tail", {
  set.seed(11)
  z <- rng_draws(1e6, 0)
  expect_true(all(is.finite(z)))
  expect_lt(abs(mean(z)), 4.5 / sqrt(1e6))
  expect_lt(abs(var(z) - 1), 4.5 * sqrt(2 / 1e6))
  expect_gt(suppressWarnings(ks.test(z[1:1e5], "pnorm")$p.value), 1e-4)
  # beyond the base strip's edge r = 3.654 every draw comes from the tail sampler
  p_tail <- 2 * pnorm(-3.6541528853610088)
  n_tail <- sum(abs(z) > 3.6541528853610088)
  expect_lt(abs(n_tail - 1e6 * p_tail), 4.5 * sqrt(1e6 * p_tail))
  # and the tail itself has the right shape: P(|z| > 4.5 | |z| > r)
  p_far <- pnorm(-4.5) / pnorm(-3.6541528853610088)
  n_far <- sum(abs(z) > 4.5)
  expect_lt(abs(n_far - n_tail * p_far), 4.5 * sqrt(n_tail * p_far) + 1)
  # the wedges: decile frequencies of |z| against the half-normal
  counts <- table(cut(abs(z), qnorm(seq(0.5, 1, by = 0.05)), include.lowest = TRUE))
  expect_gt(chisq.test(counts)$p.value, 1e-4)
})

test_that("uniform draws lie in (0, 1) and integers below a bound are uniform", {
  set.seed(12)
  u <- rng_draws(1e5, 1)
  expect_true(all(u > 0 & u < 1))
  expect_gt(ks.test(u, "punif")$p.value, 1e-4)
  k <- rng_draws(1e5, 2, bound = 7)
  expect_setequal(unique(k), 0:6)
  expect_gt(chisq.test(table(k))$p.value, 1e-4)
  big <- rng_draws(1e4, 2, bound = 3e9)
  expect_true(all(big >= 0 & big < 3e9 & big == floor(big)))
  expect_gt(ks.test(big / 3e9, "punif")$p.value, 1e-4)
})

test_that("the generator is seeded from R's RNG and streams are independent", {
  set.seed(5); a <- rng_draws(1000, 0)
  set.seed(5); b <- rng_draws(1000, 0)
  set.seed(6); c <- rng_draws(1000, 0)
  expect_identical(a, b)
  expect_false(any(a == c))
  set.seed(5); s1 <- rng_draws(1000, 0, stream = 1L)
  expect_false(any(a == s1))
  expect_lt(abs(cor(a, s1)), 4.5 / sqrt(1000))
})
