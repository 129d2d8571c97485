# The exact references of the stochastic volatility tests (test-model-sv.R,
# test-whiten.R) and the accuracy bar they are judged by.
#
# sv-reference.rds (data-raw/sv-reference.R): rstan NUTS on the same model and
# priors (random walk, t returns), a simulated series of T = 500 (sigma = 0.3,
# t_8 returns), 4 chains x 10000 draws; its ESS and the cross-check against a
# long mala() of this package are stored with it. inst/extdata's
# sv-ar1-*-reference.rds: NUTS on the AR(1) model (data-raw/sv-ar1-reference.R).
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

# the bar: the globals' means within `mean` reference sds and their sds
# within `sd`, the path's means correlated above `path_cor` and its sds
# within `path_sd` on average (by default the first wave's bar, 0.2 sd, 20%,
# 0.99 and 20%; this wave's is 0.15 sd, 10%, 0.995 and 10%)
expect_sv_bar <- function(a, mean = 0.2, sd = 0.2, path_cor = 0.99, path_sd = 0.2,
                          label = "") {
  expect_lt(max(abs(a$mean_error)), mean, label = paste(label, "mean error"))
  expect_lt(max(abs(a$sd_ratio - 1)), sd, label = paste(label, "sd ratio"))
  expect_gt(a$path_cor, path_cor, label = paste(label, "path correlation"))
  expect_lt(abs(a$path_sd_ratio - 1), path_sd, label = paste(label, "path sd ratio"))
}

# the stored NUTS reference of the AR(1) model on a series (sp500, sim, dax;
# data-raw/sv-ar1-reference.R)
sv_ar1_reference <- function(series)
  readRDS(system.file("extdata", sprintf("sv-ar1-%s-reference.rds", series), package = "sgld"))
