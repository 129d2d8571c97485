# Fixed runs whose every computed number is hashed: the engine's reorganisations
# must leave the draws of every model and rule bit-identical (test-checksums.R).
checksum_cases <- function() {
  lin <- model_linear(y ~ x, data = sgld::handout, prior = prior_nig())
  set.seed(11)
  n <- 2000
  X <- matrix(rnorm(n * 4), n, 4)
  yl <- as.integer(runif(n) < plogis(drop(X %*% c(0.5, -1, 0.25, 0))))
  logit <- model_logistic(X, yl, prior = prior_normal(0, 10), prior_intercept = NULL)
  mix <- model_mixture(mixture_data(100))
  ica <- model_ica(ica_data(300)$X)
  # many covariates: the dense kernels (src/dense.h), whose wide (AVX2) build
  # must give the bits of the baseline (SSE2) build the hashes were recorded with
  set.seed(12)
  n <- 600
  Xd <- cbind(1, matrix(rnorm(n * 49), n))
  yd <- rbinom(n, 1, plogis(drop(Xd %*% rnorm(50, sd = 0.2))))
  dense <- model_logistic(Xd, yd, sparse = FALSE, prior = prior_normal(0, 10), prior_intercept = NULL)
  dense_f <- model_logistic(Xd, yd, sparse = FALSE, storage = "float", prior = prior_normal(0, 10), prior_intercept = NULL)
  dense_lin <- model_linear(Xd[, -1], drop(Xd %*% rnorm(50)) + rnorm(n), prior = prior_nig())
  # n >= 2^20: the batch's items kept in a hash set, not a byte per item
  # (src/minibatch.c); batches of 2000 repeat an item about twice each
  n_big <- 2^20 + 3
  x_big <- rnorm(n_big)
  big <- model_linear(x_big, 1 + 2 * x_big + rnorm(n_big), prior = prior_nig())
  list(
    sgld_b10 = function() sgld(lin, lr = 1e-7, batch_size = 10, iter = 3000, chains = 2),
    sgld_threads = function() sgld(lin, lr = 1e-7, batch_size = 100, iter = 2000, chains = 3,
                                   threads = 2, replace = TRUE),
    # the other rules that take their normals ready-drawn (sgld.h: step_drawn)
    # on a split batch, where the gradient's region draws them (src/gradient.c)
    psgld_split = function() psgld(dense, lr = 1e-4, batch_size = 103, iter = 500, chains = 1),
    sghmc_split = function() sghmc(dense, lr = 1e-6, batch_size = 103, iter = 500, threads = 2, chains = 1),
    precond_split = function() sgld(dense, lr = 1e-4, batch_size = 103, iter = 500, threads = 2,
                                    precondition = diag(seq(0.5, 2, length.out = 50)), chains = 1),
    psgld = function() psgld(lin, lr = 1e-4, batch_size = 100, iter = 2000, chains = 1),
    precond = function() sgld(lin, lr = 1e-3, iter = 2000, precondition = diag(c(1e-4, 1e-4, 1e-3)), chains = 1),
    sghmc = function() sghmc(lin, lr = 1e-8, batch_size = 100, iter = 2000, chains = 1),
    momentum = function() sgd(lin, lr = 1e-6, iter = 500, optimizer = "momentum"),
    adagrad = function() sgd(lin, lr = 0.1, iter = 500, optimizer = "adagrad"),
    rmsprop = function() sgd(lin, lr = 0.01, iter = 500, optimizer = "rmsprop"),
    adam = function() sgd(lin, lr = 0.01, iter = 500, optimizer = "adam"),
    gd = function() gd(lin, lr = 1e-5, iter = 300),
    mala = function() mala(lin, lr = 1e-5, iter = 1000, chains = 1),
    logistic_cv = function() sgld(logit, lr = 1e-4, batch_size = 50, iter = 2000,
                                  control_variates = TRUE, clip = clip_norm(1e4), chains = 1),
    logistic_diag = function() sgld(logit, lr = lr_poly(1e-3, 10, 0.55), batch_size = 20,
                                    iter = 2000, diagnostics = diagnostics_every(200),
                                    monitor = monitor_every(500), chains = 1),
    mixture_threshold = function() sgld(mix, lr = lr_range(0.005, 5e-5), batch_size = 1,
                                        iter = 5000, burnin = sampling_threshold(0.5, every = 100),
                                        thin = mixing_distance(1e-3), chains = 1),
    ica_natural = function() sgld(ica, lr = 1e-5, batch_size = 100, iter = 500, chains = 1),
    ica_mala = function() mala(ica, lr = 1e-6, iter = 200, chains = 1),
    # batch 103: the batch in 4 pieces (gradient.c), each in blocks of 8 and 4
    # rows and single rows; batch 13: one piece, the fused prior pass
    logistic_dense = function() sgld(dense, lr = 1e-4, batch_size = 103, iter = 500, chains = 1),
    logistic_dense_small = function() sgld(dense, lr = 1e-4, batch_size = 13, iter = 500, chains = 1),
    logistic_float = function() sgld(dense_f, lr = 1e-4, batch_size = 103, iter = 500, chains = 1),
    linear_dense = function() sgld(dense_lin, lr = 1e-6, batch_size = 103, iter = 500, chains = 1),
    minibatch_hash = function() sgld(big, lr = 1e-10, batch_size = 2000, iter = 300, chains = 1),
    continued = function() {
      f <- sgld(lin, lr = 1e-7, batch_size = 10, iter = 1000, burnin = 0, chains = 1)
      sgld(lin, lr = 1e-7, batch_size = 10, iter = 1000, burnin = 0, init = f, chains = 1)
    }
  )
}

# md5 of the bytes of everything a run produces that the engine computes
run_checksum <- function(fit) {
  # the engine's output only: not the rule's settings, which fit$state also records
  parts <- c(lapply(fit$draws, unclass),
             list(fit$lr, fit$state[c("w", "update", "rng", "iteration")], fit$diagnostics,
                  fit$monitor, fit$iteration, fit$last))
  f <- tempfile()
  on.exit(unlink(f))
  con <- file(f, "wb")
  write_numbers <- function(p) {
    if (is.data.frame(p)) p <- as.list(p)
    if (is.list(p)) for (q in p) write_numbers(q)
    else if (is.raw(p)) writeBin(p, con)
    else if (is.numeric(p)) writeBin(as.double(p), con)
  }
  write_numbers(parts)
  close(con)
  unname(tools::md5sum(f))
}
