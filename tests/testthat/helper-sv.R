# The exact references of the stochastic volatility tests (test-model-sv.R,
# test-whiten.R) and the accuracy bar they are judged by.
#
# sv-reference.rds (data-raw/sv-reference.R): rstan NUTS on the same model and
# priors (random walk, t returns), a simulated series of T = 500 (sigma = 0.3,
# t_8 returns), 4 chains x 5000 draws; its ESS and the cross-check against a
# long mala() of this package are stored with it.
sv_reference <- function() readRDS(test_path("sv-reference.rds"))

# errors of the globals' means in reference sds, their sd ratios, and the
# latent path's correlation of means and mean ratio of sds
sv_accuracy <- function(gmean, gsd, pmean, psd, ref) {
  list(mean_error = unname((gmean - ref$gmean) / ref$gsd),
       sd_ratio = unname(gsd / ref$gsd),
       path_cor = cor(pmean, ref$pmean),
       path_sd_ratio = mean(psd / ref$psd))
}

# the same for a sampler's fit: the globals from its draws, the path from
# its running moments
sv_fit_accuracy <- function(f, ref) {
  g <- as.matrix(f)
  mom <- sgld:::pooled_moments(f$moments, f$chain_ids)
  p <- f$model$k + seq_len(f$model$n)
  sv_accuracy(colMeans(g), apply(g, 2, sd), mom$mean[p], mom$sd[p], ref)
}

# the bar: the globals' means within 0.2 reference sd and sds within 20%, the
# path's means correlated above 0.99 and its sds within 20% on average
expect_sv_bar <- function(a) {
  expect_lt(max(abs(a$mean_error)), 0.2)
  expect_lt(max(abs(a$sd_ratio - 1)), 0.2)
  expect_gt(a$path_cor, 0.99)
  expect_lt(abs(a$path_sd_ratio - 1), 0.2)
}
