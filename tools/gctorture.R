# Every .Call entry point on a tiny input under gctorture(TRUE), which runs
# the garbage collector at every allocation: a missing PROTECT then shows up
# as a crash or as corrupted output. The arguments are built first, with
# gctorture off; the results are compared with the same calls without it.
#   Rscript tools/gctorture.R
library(sgld)
set.seed(1)
df <- data.frame(y = rnorm(20), x = rnorm(20), g = factor(rep(c("a", "b"), 10)))
models <- list(linear = model_linear(y ~ x, data = df), logistic = model_logistic(g ~ x, data = df),
               mixture = model_mixture(df$x), ica = model_ica(cbind(df$x, df$y)),
               mlp = model_mlp(y ~ x, data = df, hidden = 3, prior = prior_gamma(1, 1)),
               mlp_default = model_mlp(y ~ x, data = df, hidden = 3),
               mlp_classes = model_mlp(g ~ x + y, data = df, hidden = c(3, 2),
                                       activation = "tanh", family = "categorical"))
# case weights, an offset and binomial counts: the models' per-observation fields
df$w <- rep(1:4, 5)
df$s <- rep(0:3, 5)
models$weighted <- model_linear(y ~ x, data = df, weights = w, offset = x / 2)
models$counts <- model_logistic(cbind(s, w) ~ x, data = df, offset = x / 3, sparse = TRUE)
models$poisson <- model_poisson(s ~ x, data = df, weights = w, offset = x / 4)
models$negbin <- model_negbin(s ~ x, data = df, offset = x / 4)
# model_custom(): the linear model in R functions, on w = (beta, log sigma2),
# whose callbacks allocate at every step; and one whose gradient breaks its
# contract whenever row 7 is in the batch, for the failure path
z <- cbind(1, df$x, df$y, id = seq_len(nrow(df)))
custom_grad <- function(w, batch) {
  r <- batch[, 3] - batch[, 1:2, drop = FALSE] %*% w[1:2]
  c(exp(-w[3]) * crossprod(batch[, 1:2, drop = FALSE], r),
    -nrow(batch) / 2 + exp(-w[3]) * sum(r^2) / 2)
}
custom_fns <- list(
  grad_loglik = custom_grad,
  loglik = function(w, batch)
    -nrow(batch) * w[3] / 2 -
      exp(-w[3]) * sum((batch[, 3] - batch[, 1:2, drop = FALSE] %*% w[1:2])^2) / 2,
  grad_logprior = function(w) -w / 100, logprior = function(w) -sum(w^2) / 200)
models$custom <- do.call(model_custom, c(list(z, names = c("b0", "b1", "sigma2"), transform = list(
  to_user = function(w) c(w[1:2], exp(w[3])), to_sampler = function(v) c(v[1:2], log(v[3])))),
  custom_fns))
custom_fns$grad_loglik <- function(w, batch) if (any(batch[, "id"] == 7)) w[1:2] else custom_grad(w, batch)
models$custom_failing <- do.call(model_custom, c(list(z, d = 3), custom_fns))
# The example plug-in package (inst/examples/sgldpoisson), built into a
# temporary library: its model goes through every entry point like the
# built-in ones, and its constructor through sgld's registered callable.
plugin_dir <- tempfile("sgldpoisson-")
dir.create(file.path(plugin_dir, "lib"), recursive = TRUE)
invisible(file.copy(system.file("examples", "sgldpoisson", package = "sgld"), plugin_dir,
                     recursive = TRUE))
status <- system2(file.path(R.home("bin"), "R"),
                  c("CMD", "INSTALL", "--no-docs", paste0("--library=", file.path(plugin_dir, "lib")),
                    file.path(plugin_dir, "sgldpoisson")),
                  stdout = file.path(plugin_dir, "install.log"), stderr = file.path(plugin_dir, "install.log"),
                  env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = .Platform$path.sep))))
if (status != 0) {
  writeLines(readLines(file.path(plugin_dir, "install.log")))
  stop("could not build the example plug-in package")
}
plugin <- loadNamespace("sgldpoisson", lib.loc = file.path(plugin_dir, "lib"))
counts <- rpois(20, 2)
models$compiled <- plugin$poisson_model(cbind(1, df$x), counts)
# a logistic regression on a file-backed matrix (its rows memory-mapped)
fbm_dir <- tempfile("sgld-fbm-")
dir.create(fbm_dir)
options(sgld.cache_dir = file.path(fbm_dir, "cache"))
fbm <- bigmemory::as.big.matrix(cbind(`(Intercept)` = 1, x = df$x, y = rep(0:1, 10)), backingfile = "f.bin",
                                descriptorfile = "f.desc", backingpath = fbm_dir)
models$file <- model_logistic(fbm, y = 3)
# A call may have a "before" function, run before each of its two calls:
# the copy of rows written afresh each time (and found, not written, by the
# second entry), and the file model's mapping dropped so that each run maps
# and checks its copy again.
calls <- list()
rows_args <- list(source = file.path(fbm_dir, "f.bin"), cache = file.path(fbm_dir, "rows"),
                  float = 0L, n = 20, ncol = 3L, cols = 0:1, ycol = -1L, y = df$y, binary = 0L)
calls[["file rows"]] <- structure(list(sgld:::C_sgld_file_rows, rows_args), before = function() {
  unlink(rows_args$cache, recursive = TRUE)
  dir.create(rows_args$cache)
})
calls[["file rows found"]] <- list(sgld:::C_sgld_file_rows, rows_args)
calls[["rows lost"]] <- list(sgld:::C_sgld_rows_lost_since)
calls[["allow interrupts"]] <- list(sgld:::C_sgld_allow_interrupts)
# a copy removed while this process maps it: the run reads the mapping
# (mmap.c, kept_mapping()); a model of its own, in its own cache directory
options(sgld.cache_dir = file.path(fbm_dir, "cache2"))
orphan <- model_logistic(fbm, y = 3)
options(sgld.cache_dir = file.path(fbm_dir, "cache"))
orphan_settings <- sgld:::run_settings(orphan, lr = 1e-6, batch_size = 4, iter = 20, burnin = 5,
                                       thin = 2, temperature = 1, chains = 2, init = NULL,
                                       replace = FALSE, clip = NULL, threads = 1)
calls[["file run orphaned"]] <- structure(list(sgld:::C_sgld_run, orphan, orphan_settings),
  before = function() {
    if (is.null(orphan$file$ptr))
      .Call(sgld:::C_sgld_model_eval, orphan, orphan_settings$init[seq_len(orphan$d)])
    unlink(orphan$file$path)
  })
calls[["state sizes"]] <- list(sgld:::C_sgld_state_sizes, models$linear, "sghmc", "minibatch", list())
calls[["rule factor"]] <- list(sgld:::C_sgld_rule_factor, models$linear, "psgld",
                               list(alpha = 0.99, lambda = 1e-5, v_init = 0),
                               rnorm(models$linear$d), runif(2 * models$linear$d))
# leapfrog trajectories (langevin.c), alone and as a run's proposals
calls[["leapfrog"]] <- list(sgld:::C_sgld_leapfrog, models$linear, diag(models$linear$d),
                            rnorm(models$linear$d, sd = 0.1), rnorm(models$linear$d),
                            c(0.01, 3, 1))
calls[["leapfrog run"]] <- list(sgld:::C_sgld_run, models$logistic, sgld:::run_settings(
  models$logistic, lr = 1e-3, batch_size = models$logistic$n, iter = 20, burnin = 5, thin = 1,
  temperature = 1, chains = 2, init = NULL, replace = FALSE, clip = NULL, threads = 1,
  mala = TRUE, leapfrog = 3, rule = sgld:::mala_rule(diag(models$logistic$d), models$logistic)))
for (nm in names(models)) {
  m <- models[[nm]]
  s <- sgld:::run_settings(m, lr = 1e-6, batch_size = 4, iter = 20, burnin = 5, thin = 2,
                           temperature = 1, chains = 2, init = NULL, replace = FALSE, clip = NULL,
                           threads = 1, diagnostics = diagnostics_every(5),
                           monitor = monitor_every(5))
  calls[[paste(nm, "run")]] <- structure(list(sgld:::C_sgld_run, m, s), before = function()
    if (!is.null(m$file)) m$file$ptr <- NULL)
  # the model's start (one chain's row: networks start at random weights)
  w0 <- s$init[seq_len(m$d)]
  calls[[paste(nm, "eval")]] <- list(sgld:::C_sgld_model_eval, m, w0)
  calls[[paste(nm, "loglik draws")]] <- list(sgld:::C_sgld_loglik_draws, m,
                                             matrix(w0, m$d, 2), c(1, 3))
  calls[[paste(nm, "fused")]] <- list(sgld:::C_sgld_model_fused, m, w0)
  calls[[paste(nm, "mode")]] <- list(sgld:::C_sgld_posterior_mode, m,
                                     list(init = w0, maxit = 5L, tol = 1e-12))
  calls[[paste(nm, "gradient")]] <- list(sgld:::C_sgld_gradient_draws, m,
    list(w = w0, batch_size = 3, times = 4, replace = 0L, cv_mode = w0))
}
# model_glmm() (internal, full data only): evaluation, per-row log likelihood
# and a short MALA run, with a correlated two-coefficient term and a crossed one
if (requireNamespace("lme4", quietly = TRUE)) {
  dg <- data.frame(y = rpois(40, 2), x = rnorm(40), a = gl(5, 8), b = gl(4, 1, 40))
  mg <- sgld:::model_glmm(y ~ x + (1 + x | a) + (1 | b), dg, "poisson",
                          weights = rep(c(0.5, 2), 20))   # prior weights read too
  wg <- rnorm(mg$d, sd = 0.1)
  calls[["glmm eval"]] <- list(sgld:::C_sgld_model_eval, mg, wg)
  calls[["glmm loglik draws"]] <- list(sgld:::C_sgld_loglik_draws, mg, matrix(wg, mg$d, 2),
                                       c(1, 3))
  mg$local_parameters <- FALSE
  s <- sgld:::run_settings(mg, lr = 1e-3, batch_size = NULL, iter = 20, burnin = 5, thin = 2,
                           temperature = 1, chains = 2, init = NULL, replace = FALSE,
                           clip = NULL, threads = 1, mala = TRUE)
  calls[["glmm mala run"]] <- list(sgld:::C_sgld_run, mg, s)
  # the centred moves of its covariance parameters, alone and after MALA's steps
  mg$exact_moves <- 1L
  calls[["glmm moves"]] <- list(sgld:::C_sgld_model_moves, mg, wg, 3L)
  calls[["glmm mala run with moves"]] <- list(sgld:::C_sgld_run, mg, s)
  # the negative binomial: its log phi, tables by count and moves
  mn <- sgld:::model_glmm(y ~ x + (1 | a) + (1 | b), dg, "negbin")
  wn <- rnorm(mn$d, sd = 0.1)
  calls[["glmm negbin eval"]] <- list(sgld:::C_sgld_model_eval, mn, wn)
  mn$exact_moves <- 1L
  calls[["glmm negbin moves"]] <- list(sgld:::C_sgld_model_moves, mn, wn, 3L)
}
# model_sv(): full data only (no diagnostics, no held-out monitor), with pSGLD,
# whose preconditioner reads the local-parameter gradient
msv <- model_sv(df$y, type = "rw")
s <- sgld:::run_settings(msv, lr = 1e-6, batch_size = NULL, iter = 20, burnin = 5, thin = 2,
                         temperature = 1, chains = 2, init = NULL, replace = FALSE, clip = NULL,
                         threads = 1, rule = precond_rmsprop())
calls[["sv run"]] <- list(sgld:::C_sgld_run, msv, s)
calls[["sv eval"]] <- list(sgld:::C_sgld_model_eval, msv, as.double(msv$default_init))
# the path whitened given the globals (update_whiten.c): Euler's steps
# (SGLD, MALA) and Leimkuhler-Matthews steps (SGLD), on the random walk and
# on the AR(1) model (mu whitened with the path), and the map and gradient R
# reads
mar1 <- model_sv(df$y)
for (mm in list(rw = msv, ar1 = mar1)) {
  for (lm in c(FALSE, TRUE)) for (mala in if (lm) FALSE else c(FALSE, TRUE)) {
    s <- sgld:::run_settings(mm, lr = 0.05, batch_size = NULL, iter = 20, burnin = 5, thin = 2,
                             temperature = 1, chains = 2, init = NULL, replace = FALSE,
                             clip = NULL, threads = 1, rule = sgld:::whiten_rule(mm, "w", lm = lm),
                             mala = mala)
    calls[[paste("sv whiten run", mm$variant, if (mala) "mala" else if (lm) "sgld lm" else "sgld")]] <-
      list(sgld:::C_sgld_run, mm, s)
  }
  w_sv <- sgld:::resolve_init(mm, NULL, 1)[1, ]
  calls[[paste("sv whiten eval", mm$variant)]] <- list(sgld:::C_sgld_whiten_eval, mm, w_sv, 1, FALSE)
  calls[[paste("sv whiten inverse", mm$variant)]] <- list(sgld:::C_sgld_whiten_eval, mm, w_sv, 1, TRUE)
}
# the update rules whose build() reads options (and allocates) on the linear model
for (rule in list(precond_rmsprop(), opt_adam(),
                  sgld:::resolve_precondition(diag(3), models$linear),
                  # the wide models' diagonal plus low-rank factor in
                  # Leimkuhler-Matthews steps (R/auto-wide.R)
                  sgld:::update_rule("precond_lm", "lm", list(
                    scale = c(1, 0.5, 2), basis = matrix(c(0.6, 0.8, 0), 3), coef = 0.5),
                    sampler = TRUE))) {
  s <- sgld:::run_settings(models$linear, lr = 1e-6, batch_size = 4, iter = 20, burnin = 5,
                           thin = 2, temperature = 1, chains = 2, init = NULL, replace = FALSE,
                           clip = clip_norm(10), rule = rule, diagnostics = diagnostics_every(5))
  calls[[paste("linear", rule$name)]] <- list(sgld:::C_sgld_run, models$linear, s)
}
# coordinate updates (coordinate.c) on the sparse logistic model with counts
# and on the Poisson model, beside a fixed preconditioner's steps
for (nm in c("counts", "poisson")) {
  m <- models[[nm]]
  rows <- sgld:::model_coordinate_rows.default(m, 2)   # sparse or dense rows alike
  s <- sgld:::run_settings(m, lr = 1e-3, batch_size = m$n, iter = 20, burnin = 5, thin = 2,
                           temperature = 1, chains = 2, init = NULL, replace = FALSE,
                           clip = NULL, rule = sgld:::update_rule("precond", "p",
                             list(chol = c(1, 0, 0, 0)), sampler = TRUE),
                           coordinates = list(index = 1L, start = c(0, length(rows[[1]])),
                                              rows = as.double(rows[[1]]), width = 1))
  calls[[paste(nm, "coordinates")]] <- list(sgld:::C_sgld_run, m, s)
}
# Bayes by Backprop's gradient estimators (gradient_vi.c) under Adam: both
# families, several draws per iteration, with and without the Laplace
# metric and its control variate, and the ways of forming the mean-field
# likelihood part (a draw of w, local reparameterisation, expectations)
vi_gradient <- function(model, family, local = 0L, laplace = FALSE, samples = 2L) {
  d <- model$d
  lap <- if (laplace) posterior_mode(model, covariance = TRUE)$covariance
  opts <- list(samples = samples,
               scale_init = sgld:::vi_scale_parameters(diag(0.1, d), d, family),
               factor = if (laplace) t(chol(lap)),
               precision = if (laplace && local == 0L) solve(lap),
               curvature = if (laplace) diag(solve(lap)), local = as.integer(local),
               elbo_batch = 1L)
  list(name = paste0("vi_", family), opts = opts)
}
vi_settings <- function(model, gradient, clip = NULL)
  sgld:::run_settings(model, lr = 1e-3, batch_size = 4, iter = 20, burnin = 0, thin = 2,
                      temperature = 0, chains = 2, init = NULL, replace = FALSE, clip = clip,
                      rule = opt_adam(), gradient = gradient)
for (family in c("meanfield", "fullrank")) for (laplace in c(FALSE, TRUE)) {
  s <- vi_settings(models$linear, vi_gradient(models$linear, family, laplace = laplace),
                   clip = clip_norm(10))
  calls[[paste("linear vi", family, if (laplace) "laplace")]] <- list(sgld:::C_sgld_run,
                                                                      models$linear, s)
}
# local reparameterisation and the expectations (the models' grad_loglik_local
# and expected_loglik) with the minibatch ELBO, on the regressions and a network
for (name in c("linear", "logistic", "counts", "weighted", "mlp")) {
  for (local in if (name == "mlp") 1L else 1:2) {
    s <- vi_settings(models[[name]], vi_gradient(models[[name]], "meanfield", local = local))
    calls[[paste(name, "vi local", local)]] <- list(sgld:::C_sgld_run, models[[name]], s)
  }
}
for (name in c("linear", "logistic", "counts", "weighted"))
  calls[[paste(name, "expected")]] <- list(sgld:::C_sgld_model_expected, models[[name]],
                                           rep(0.1, models[[name]]$d), rep(0.5, models[[name]]$d))
calls[["logistic log joint draws"]] <- list(sgld:::C_sgld_log_joint_draws, models$logistic,
                                            matrix(rnorm(2 * 5), 2, 5))
# a cyclical schedule: draws kept only in each cycle's sampling part
s <- sgld:::run_settings(models$linear, lr = lr_cyclical(1e-6, 3, 0.5), batch_size = 4, iter = 20,
                         burnin = 0, thin = 2, temperature = 1, chains = 2, init = NULL,
                         replace = FALSE, clip = NULL)
calls[["linear cyclical"]] <- list(sgld:::C_sgld_run, models$linear, s)
calls[["codes"]] <- list(sgld:::C_sgld_codes)
calls[["code of"]] <- list(sgld:::C_sgld_code_of, "schedule", "piecewise")
calls[["rng"]] <- list(sgld:::C_sgld_rng_draws, 10, 0L, 0, 2L)
calls[["predict"]] <- list(sgld:::C_sgld_predict, cbind(1, df$x[1:7]),
                           list(matrix(rnorm(6), 3), matrix(rnorm(8), 4)), c(1, 5, 7),
                           rnorm(7), "logit", FALSE, 1L)
calls[["predict draws"]] <- list(sgld:::C_sgld_predict, cbind(1, df$x[1:7]),
                                 list(matrix(rnorm(6), 3)), NULL, NULL, "log", TRUE, 2L)
calls[["imh batch"]] <- list(sgld:::C_sgld_imh_batch, models$negbin, rep(0.1, models$negbin$d),
                             diag(models$negbin$d), 7, 4, rep(0, models$negbin$d), -50,
                             .Call(sgld:::C_sgld_streams, 1L)[1:32])
calls[["ess ar"]] <- list(sgld:::C_sgld_ess_ar, matrix(rnorm(60), 20))
calls[["model info"]] <- list(sgld:::C_sgld_model_info, models$negbin)
calls[["pointwise loglik"]] <- list(sgld:::C_sgld_pointwise_loglik, models$negbin,
                                matrix(rnorm(3 * models$negbin$d), models$negbin$d), 2L)
calls[["pointwise loglik, one row at a time"]] <- list(sgld:::C_sgld_pointwise_loglik, models$mixture,
                                                   matrix(rnorm(3 * models$mixture$d), models$mixture$d), 1L)
calls[["pointwise loglik, network"]] <- list(sgld:::C_sgld_pointwise_loglik, models$mlp_classes,
                                            matrix(rnorm(3 * models$mlp_classes$d),
                                                   models$mlp_classes$d), 2L)
sv <- model_sv(df$y, type = "rw")
calls[["pointwise loglik, volatility"]] <- list(sgld:::C_sgld_pointwise_loglik, sv,
                                              matrix(rnorm(3 * sv$d), sv$d), 2L)
calls[["predict mixture"]] <- list(sgld:::C_sgld_predict_mixture, df$x[1:5],
                                   list(matrix(rnorm(6), 3), matrix(rnorm(4), 2)), c(2, 5), 2, FALSE)
calls[["predict mixture draws"]] <- list(sgld:::C_sgld_predict_mixture, df$x[1:5],
                                         list(matrix(rnorm(6), 3)), NULL, 2, TRUE)
calls[["psis loo"]] <- list(sgld:::C_sgld_psis_loo, matrix(-abs(rnorm(40)), 20), 2L, NULL,
                            stats::qnorm(stats::ppoints(10)), TRUE, 2L)
calls[["psis loo, r_eff given"]] <- list(sgld:::C_sgld_psis_loo, matrix(-abs(rnorm(40)), 20), 1L,
                                         rep(0.5, 2), stats::qnorm(stats::ppoints(10)), FALSE, 1L)
calls[["ksd"]] <- list(sgld:::C_sgld_ksd, matrix(rnorm(12), 3), matrix(rnorm(12), 3), 1, -0.5)
calls[["streams"]] <- list(sgld:::C_sgld_streams, 3L)
calls[["schedule"]] <- list(sgld:::C_sgld_schedule_values,
                            sgld:::resolve_lr(lr_poly(1e-3, 1, 0.55), 100), c(1, 5, 50), FALSE)
calls[["schedule cyclical"]] <- list(sgld:::C_sgld_schedule_values,
                                     sgld:::resolve_lr(lr_cyclical(1e-3, 3), 100), 100, TRUE)
# A run that stopped early leaves its outputs unwritten past what it kept:
# compare only what it wrote.
# The run's expected length and its sampling time are wall-clock figures (a
# custom model's are hundreds of times longer under gctorture): not compared
# either.
written <- function(res) {
  if (is.list(res)) res$expected_seconds <- res$sampling_seconds <- NULL
  if (is.list(res) && !is.null(res$reused)) res$source_id <- NULL   # a file's times
  if (!is.list(res) || is.null(res$status) || all(res$status == 0L)) return(res)
  res$draws <- Map(function(x, k) x[seq_len(k), , drop = FALSE], res$draws, res$kept)
  res[c("draws", "kept", "status", "stop_iter", "last", "state", "rng")]
}
bad <- 0
# building a compiled model: external pointers differ from call to call, so
# compare what the models they make evaluate to
plugin_args <- list(rbind(1, df$x), as.double(counts), lfactorial(counts), 2)
build <- function() .Call(plugin$C_poisson_pointer, plugin_args[[1]], plugin_args[[2]],
                                 plugin_args[[3]], plugin_args[[4]])
eval_at <- function(ptr) .Call(sgld:::C_sgld_model_eval, model_compiled(ptr), c(0.3, -0.2))
plain <- eval_at(build())
gctorture(TRUE)
ptr <- build()
info <- .Call(sgld:::C_sgld_compiled_info, ptr)
gctorture(FALSE)
same <- identical(eval_at(ptr), plain) && identical(info, c(2, 20))
if (!same) bad <- bad + 1
cat(sprintf("%-22s %s\n", "compiled pointer", if (same) "ok" else "DIFFERS"))
# the sparse design's rank check (gram.c): rows of a 6 x 4 design with a
# dependent column, with values and as indicators
calls[["sparse gram rank"]] <- list(sgld:::C_sgld_sparse_gram_rank, c(0L, 2L, 3L, 5L, 6L, 8L, 9L),
                                    c(0L, 3L, 1L, 0L, 2L, 3L, 1L, 3L, 2L),
                                    c(1, 1, 2, 0.5, 1, 1, 2, 1, 3), 4L, 1e-10)
calls[["sparse gram rank ones"]] <- list(sgld:::C_sgld_sparse_gram_rank, c(0L, 2L, 3L),
                                         c(0L, 1L, 1L), NULL, 2L, 1e-10)
for (nm in names(calls)) {
  cl <- calls[[nm]]
  before <- attr(cl, "before")
  if (is.null(before)) before <- function() NULL
  before()
  set.seed(2); plain <- written(do.call(.Call, cl))
  before()
  set.seed(2)
  gctorture(TRUE)
  tortured <- do.call(.Call, cl)
  gctorture(FALSE)
  tortured <- written(tortured)
  same <- identical(plain, tortured)
  if (!same) bad <- bad + 1
  cat(sprintf("%-22s %s\n", nm, if (same) "ok" else "DIFFERS"))
}
if (bad) quit(status = 1)
cat("gctorture: every entry point clean\n")
