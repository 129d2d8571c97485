# Fuzzing: call every .Call entry point with malformed arguments (valid model
# and settings lists with one to three elements replaced by values of the
# wrong type, length or range, or dropped) and every exported sampler with
# random arguments; continue fits whose saved state was tampered with; and
# run models on file-backed matrices whose copy of the rows (or backing file)
# was truncated, cut, overwritten or removed. All in child R processes,
# reporting any case that kills the child (a crash) or runs past the time
# limit (a hang). R errors are the expected outcome and are only counted.
#
#   Rscript tools/fuzz.R [cases] [seed]       (default 2000 cases)
#
# Cases run in batches of 250 per child; a batch that dies is rerun case by
# case to name the culprit. Exits with status 1 on any crash or hang.
args <- commandArgs(trailingOnly = TRUE)
n_cases <- if (length(args) >= 1) as.integer(args[1]) else 2000L
seed <- if (length(args) >= 2) as.integer(args[2]) else 1L
batch <- 250L
if (!requireNamespace("callr", quietly = TRUE)) stop("tools/fuzz.R needs the callr package")

# Runs cases first..last of the stream given by seed; returns counts of outcomes.
run_cases <- function(seed, first, last) {
  library(sgld)
  set.seed(1)
  df <- data.frame(y = rnorm(40), x = rnorm(40), g = factor(rep(c("a", "b"), 20)))
  models <- list(
    linear = model_linear(y ~ x, data = df),
    logistic = model_logistic(g ~ x, data = df),
    sparse = model_logistic(cbind(1, diag(40)[, 1:6]), rep(0:1, 20), sparse = TRUE),
    weighted = model_linear(y ~ x, data = cbind(df, w = rep(1:4, 10)), weights = w, offset = x),
    counts = model_logistic(cbind(s, f) ~ x, data = cbind(df, s = rep(0:3, 10), f = rep(1:2, 20)),
                            weights = f, offset = x / 2),
    poisson = model_poisson(s ~ x, data = cbind(df, s = rep(0:3, 10)), offset = x / 2),
    negbin = model_negbin(s ~ x, data = cbind(df, s = rep(0:3, 10), f = rep(1:2, 20)),
                          weights = f),
    mixture = model_mixture(df$x),
    ica = model_ica(cbind(df$x, df$y, rnorm(40))),
    sv = model_sv(df$y, type = "ar1", errors = "t"),
    mlp = model_mlp(y ~ x, data = df, hidden = 3, prior = prior_gamma(1, 1)),
    mlp_default = model_mlp(y ~ x, data = df, hidden = 3),
    mlp_classes = model_mlp(g ~ x + y, data = df, hidden = c(3, 2), family = "categorical")
  )
  # a multilevel model with the centred moves of its covariance parameters
  # (model_glmm.c), a correlated two-coefficient term and a crossed one, and
  # prior weights (obs_weight, mutated with the rest); poisson and the
  # negative binomial (its log phi and tables by count)
  glmm_moves <- if (requireNamespace("lme4", quietly = TRUE)) lapply(c("poisson", "negbin"),
    function(family) {
      mg <- sgld:::model_glmm(s ~ x + (1 + x | g) + (1 | k),
                              cbind(df, s = rep(0:3, 10), k = gl(4, 1, 40)), family,
                              weights = rep(c(0.5, 1, 2, 3), 10))
      mg$exact_moves <- 1L
      mg$local_parameters <- FALSE
      mg
    })
  # a model on a file-backed matrix, and the arguments of the row copy it is built by
  fbm_dir <- tempfile("sgld-fbm-")
  dir.create(fbm_dir)
  fbm_cache <- file.path(fbm_dir, "cache")
  options(sgld.cache_dir = fbm_cache)
  fbm <- bigmemory::as.big.matrix(cbind(`(Intercept)` = 1, x = df$x, y = rep(0:1, 20)), backingfile = "f.bin",
                                  descriptorfile = "f.desc", backingpath = fbm_dir)
  models$file <- model_logistic(fbm, y = 3)
  rows_args <- list(float = 0L, n = 40, ncol = 3L, cols = 0:1, ycol = 2L, y = df$y, binary = 1L)
  # fits to continue, one with a rule state (SGHMC's momenta)
  state_fits <- list(
    suppressWarnings(sgld(models$logistic, lr = 1e-6, batch_size = 5, iter = 30, chains = 2)),
    suppressWarnings(sghmc(models$linear, lr = 1e-6, batch_size = 5, iter = 30, chains = 2)))
  palette <- list(NULL, NA, NaN, Inf, -Inf, -1, 0, 0.5, 1, 2, 3, 7.5, 1e300, -1e300,
                  .Machine$integer.max, 2^53, "a", c("a", "b"), TRUE, NA_integer_, 1:3,
                  c(1, 2, 3, 4, 5, 6, 7, 8, 9), numeric(0), integer(0), list(), list(1, "a"),
                  matrix(1, 2, 2), as.raw(1:4), function() 1, quote(x), 1i)
  mutate <- function(x, k) {
    for (i in seq_len(k)) {
      nm <- sample(names(x), 1)
      v <- palette[sample(length(palette), 1)]
      if (runif(1) < 0.15) x[[nm]] <- NULL else x[nm] <- v
    }
    x
  }
  # a mutant that is valid must still end quickly: huge but valid iteration
  # counts (say 2^31 - 1) are cut to 10^4; the other huge counts stay
  big_but_valid <- function(v) is.numeric(v) && length(v) == 1 && !is.na(v) && v > 1e5 && v <= 2^52
  clamp_iter <- function(s) {
    for (nm in intersect(c("iter", "times"), names(s))) if (big_but_valid(s[[nm]])) s[[nm]] <- 1e4
    s
  }
  draw <- function() {                   # a palette value, huge counts tamed
    v <- palette[[sample(length(palette), 1)]]
    if (big_but_valid(v)) 1e3 else v
  }
  # iterations stay small so that a valid mutant ends quickly
  # (model_sv() runs on full data, without diagnostics)
  settings_for <- function(m) {
    local <- isTRUE(m$local_parameters)
    # a constant or a cyclical schedule (whose sampling phases the collector reads)
    lr <- sample(list(1e-6, lr_cyclical(1e-6, 3, 0.5)), 1)[[1]]
    sgld:::run_settings(m, lr = lr, batch_size = if (local) NULL else 5, iter = 50,
                        burnin = 10, thin = 2, temperature = 1, chains = 2, init = NULL,
                        replace = FALSE, clip = NULL, threads = 2,
                        diagnostics = if (!local) diagnostics_every(10))
  }
  # one part of a saved state damaged: replaced by a palette value, cut
  # short, an element made NA, negative or huge, its type changed, or (the
  # random streams) a stream zeroed or garbled
  tamper <- function(x) {
    k <- sample(6, 1)
    if (k == 1 || !length(x)) return(draw())
    if (k == 2) return(x[seq_len(sample(0:(length(x) - 1), 1))])
    if (k == 3 && is.raw(x)) {
      stream <- sample(length(x) %/% 32, 1)
      x[(stream - 1) * 32 + 1:32] <- if (runif(1) < 0.7) as.raw(0) else as.raw(sample(0:255, 32, TRUE))
      return(x)
    }
    if (k == 4) return(if (is.raw(x)) as.integer(x) else as.character(x))
    if (is.raw(x)) return(raw(length(x)))
    x[sample(length(x), 1)] <- sample(list(NA, NaN, Inf, -1, -1e300, 2^60, 0.5), 1)[[1]]
    x
  }
  # a logistic regression on a fresh file-backed matrix, with its own cache
  file_model <- function() {
    dir <- tempfile("sgld-fz-")
    dir.create(dir)
    options(sgld.cache_dir = file.path(dir, "cache"))
    bm <- bigmemory::as.big.matrix(cbind(`(Intercept)` = 1, x = df$x, y = rep(0:1, 20)), backingfile = "f.bin",
                                   descriptorfile = "f.desc", backingpath = dir)
    list(model = model_logistic(bm, y = 3), source = file.path(dir, "f.bin"))
  }
  # a file damaged: cut to a random length, bytes overwritten in place, or removed
  damage <- function(path) {
    size <- file.size(path)
    Sys.chmod(path, "644")
    switch(sample(6, 1),
      writeBin(readBin(path, "raw", sample(c(0, 8, 100, 4095, 4096, size %/% 2, size - 8), 1)),
               path),
      {
        con <- file(path, "r+b")
        seek(con, sample(0:(size - 8), 1), rw = "write")
        writeBin(sample(list(1e300, NaN, 0, as.raw(0:255)), 1)[[1]], con)
        close(con)
      },
      unlink(path),
      writeBin(as.raw(sample(0:255, size, TRUE)), path),
      { # changed in place with its time set back: only a checksum sees it
        time <- file.mtime(path)
        con <- file(path, "r+b")
        seek(con, sample(0:(size - 8), 1), rw = "write")
        writeBin(sample(list(1e10, -1, 0), 1)[[1]], con)
        close(con)
        Sys.setFileTime(path, time)
      },
      { # another file moved over it
        other <- tempfile(tmpdir = dirname(path))
        writeBin(as.raw(sample(0:255, size, TRUE)), other)
        file.rename(other, path)
      })
  }
  outcome <- c(error = 0, ok = 0)
  for (case in first:last) {
    set.seed(seed * 1e6 + case)
    which_model <- sample(names(models), 1)
    m <- models[[which_model]]
    target <- sample(c("run", "coordinates", "vi", "whiten", "eval", "expected", "log_joint", "gradient", "rng",
                       "schedule", "codes", "sampler", "predict", "predict_mixture", "ksd", "psis_loo",
                       "file_rows", "state", "state_engine", "file", "loglik_draws", "mode",
                       "gram", "rule_factor", "moves", "leapfrog", "imh", "ess_ar"), 1)
    if (nzchar(Sys.getenv("FUZZ_VERBOSE"))) cat("case", case, target, which_model, "\n")
    res <- tryCatch({
      switch(target,
        run = {
          s <- settings_for(m)
          if (!isTRUE(m$local_parameters) && runif(1) < 0.2) {
            # the wide models' rule (update_precond.c): a diagonal plus
            # low-rank factor in Leimkuhler-Matthews steps
            s$update <- "precond_lm"
            s$update_opts <- list(scale = rep(1, m$d), basis = matrix(1 / sqrt(m$d), m$d),
                                  coef = 0.5)
          }
          if (runif(1) < 0.5) s <- mutate(s, sample(1:3, 1)) else m <- mutate(unclass(m), sample(1:2, 1))
          s <- clamp_iter(s)
          if (nzchar(Sys.getenv("FUZZ_VERBOSE"))) str(s[setdiff(names(s), c("schedule", "init"))])
          .Call(sgld:::C_sgld_run, m, s)
        },
        moves = {
          # a multilevel model's centred moves: the model, w or the count
          # mutated, alone (sgld_model_moves) or after MALA's steps
          if (is.null(glmm_moves)) stop("no lme4")
          gm <- glmm_moves[[sample(2, 1)]]
          a <- mutate(list(model = gm, w = rnorm(gm$d, sd = 0.3), times = 5L), sample(1:2, 1))
          a$times <- if (big_but_valid(a$times)) 1e3 else a$times
          mm <- if (is.list(a$model) && runif(1) < 0.5) mutate(unclass(a$model), 1) else a$model
          .Call(sgld:::C_sgld_model_moves, mm, a$w, a$times)
          s <- sgld:::run_settings(gm, lr = 0.01, batch_size = NULL, iter = 30,
                                   burnin = 5, thin = 1, temperature = 1, chains = 2,
                                   init = NULL, replace = FALSE, clip = NULL, threads = 2,
                                   mala = TRUE)
          .Call(sgld:::C_sgld_run, mm, s)
        },
        coordinates = {
          # coordinate updates (coordinate.c): their list mutated, on every
          # model (those without logpost_coordinate must be refused, not crash)
          s <- settings_for(m)
          s$diag_every <- 0
          s$coordinates <- mutate(list(index = 0L, start = c(0, 2), rows = c(0, 1), width = 1),
                                  sample(0:2, 1))
          .Call(sgld:::C_sgld_run, m, clamp_iter(s))
        },
        vi = {
          # Bayes by Backprop's gradient estimator (gradient_vi.c) whose own
          # options are mutated, under Adam
          family <- sample(c("meanfield", "fullrank"), 1)
          d <- m$d
          metric <- stats::runif(1) < 0.5
          gradient <- list(name = paste0("vi_", family), opts = list(
            samples = 2L, scale_init = sgld:::vi_scale_parameters(diag(0.1, d), d, family),
            factor = if (metric) diag(d), precision = if (metric) diag(d),
            curvature = if (metric) rep(1, d),
            # local reparameterisation and the expectations on every model,
            # also those without them (the engine must refuse them, not crash)
            local = if (family == "meanfield") sample(0:2, 1) else 0L,
            elbo_batch = sample(0:1, 1)))
          s <- sgld:::run_settings(m, lr = 1e-6, batch_size = 5, iter = 50, burnin = 0, thin = 2,
                                   temperature = 0, chains = 2, init = NULL, replace = FALSE,
                                   clip = NULL, threads = 2, rule = opt_adam(),
                                   gradient = gradient)
          s$gradient_opts <- mutate(s$gradient_opts, sample(1:2, 1))
          .Call(sgld:::C_sgld_run, m, clamp_iter(s))
        },
        whiten = {
          # the path whitened (update_whiten.c): its options, the settings or
          # the model mutated, under SGLD or MALA; and the map R reads
          msv <- models$sv
          kg <- msv$k - msv$path_level       # mu is whitened with the path
          rule <- sgld:::update_rule(sample(c("whiten", "whiten_lm"), 1), "whiten",
                                     list(chol = as.double(diag(kg)), globals = numeric(kg)),
                                     sampler = TRUE)
          s <- sgld:::run_settings(msv, lr = 0.05, batch_size = NULL, iter = 50, burnin = 10,
                                   thin = 2, temperature = 1, chains = 2, init = NULL,
                                   replace = FALSE, clip = NULL, threads = 2, rule = rule,
                                   mala = rule$name == "whiten" && stats::runif(1) < 0.5)
          u <- stats::runif(1)
          if (u < 0.4) s$update_opts <- mutate(s$update_opts, 1)
          else if (u < 0.7) s <- mutate(s, sample(1:2, 1))
          else msv <- mutate(unclass(msv), 1)
          .Call(sgld:::C_sgld_run, msv, clamp_iter(s))
          .Call(sgld:::C_sgld_whiten_eval, mutate(unclass(models$sv), sample(0:1, 1)),
                draw() %||% rnorm(models$sv$d), draw(), draw())
        },
        expected = .Call(sgld:::C_sgld_model_expected, mutate(unclass(m), sample(0:2, 1)),
                         palette[[sample(length(palette), 1)]] %||% rnorm(m$d),
                         palette[[sample(length(palette), 1)]] %||% abs(rnorm(m$d))),
        log_joint = .Call(sgld:::C_sgld_log_joint_draws, mutate(unclass(m), sample(0:2, 1)),
                          if (stats::runif(1) < 0.5) matrix(rnorm(3 * m$d), m$d)
                          else draw() %||% matrix(0, m$d, 0)),
        eval = {
          w <- palette[[sample(length(palette), 1)]] %||% rnorm(m$d)
          .Call(sgld:::C_sgld_model_eval, mutate(unclass(m), sample(0:2, 1)), w)
          .Call(sgld:::C_sgld_model_fused, mutate(unclass(m), sample(0:2, 1)), w)
        },
        loglik_draws = {
          a <- mutate(list(W = matrix(rnorm(2 * m$d), m$d), items = c(1, 3, 40)), sample(1:2, 1))
          .Call(sgld:::C_sgld_loglik_draws, mutate(unclass(m), sample(0:1, 1)), a$W, a$items)
          .Call(sgld:::C_sgld_pointwise_loglik, mutate(unclass(m), sample(0:1, 1)), a$W,
                mutate(list(threads = 2L), sample(0:1, 1))$threads)
        },
        mode = {
          a <- mutate(list(init = rnorm(m$d), maxit = 20L, tol = 1e-12), sample(1:2, 1))
          .Call(sgld:::C_sgld_posterior_mode, mutate(unclass(m), sample(0:1, 1)), a)
        },
        gradient = .Call(sgld:::C_sgld_gradient_draws, m,
                         clamp_iter(mutate(list(w = rnorm(m$d), batch_size = 3, times = 5,
                                                replace = 0L, cv_mode = NULL), sample(1:3, 1)))),
        imh = {
          # independence Metropolis-Hastings' batch (src/imh.c), each argument mutated
          a <- mutate(list(location = rnorm(m$d), factor = diag(m$d), df = 7, K = 5,
                           from_w = rnorm(m$d), from_lw = -10,
                           stream = .Call(sgld:::C_sgld_streams, 1L)[1:32]), sample(1:3, 1))
          .Call(sgld:::C_sgld_imh_batch, mutate(unclass(m), sample(0:1, 1)), a$location,
                a$factor, a$df, a$K, a$from_w, a$from_lw, a$stream)
        },
        ess_ar = {
          # coda's effective sample sizes (src/ess.c): a palette value, or
          # draws with palette values among them
          x <- if (runif(1) < 0.3) draw() else {
            v <- matrix(rnorm(60), sample(c(1, 2, 3, 20), 1))
            p <- draw()
            if (is.numeric(p) && length(p)) v[sample(length(v), 2)] <- p[1]
            v
          }
          .Call(sgld:::C_sgld_ess_ar, x)
        },
        rng = {
          .Call(sgld:::C_sgld_rng_draws, draw(), draw(), draw(), draw())
          .Call(sgld:::C_sgld_streams, draw())
        },
        # the files stay fixed (a mutated path could write anywhere)
        file_rows = .Call(sgld:::C_sgld_file_rows,
                          c(mutate(rows_args, sample(1:3, 1)),
                            list(source = file.path(fbm_dir, "f.bin"), cache = fbm_cache))),
        # a fit's saved state damaged, then continued (init = fit)
        state = {
          fit <- state_fits[[sample(length(state_fits), 1)]]
          part <- sample(c("w", "update", "rng", "iteration"), 1)
          fit$state[part] <- list(tamper(fit$state[[part]]))
          f <- if (fit$state$rule$name == "sghmc") sghmc else sgld
          suppressWarnings(f(fit$model, lr = 1e-6, batch_size = 5, iter = 30, burnin = 0,
                             chains = 2, init = fit))
        },
        # the same state handed to the engine without R's checks
        state_engine = {
          fit <- state_fits[[sample(length(state_fits), 1)]]
          s <- sgld:::run_settings(fit$model, lr = 1e-6, batch_size = 5, iter = 30, burnin = 0,
                                   thin = 1, temperature = 1, chains = 2, init = fit,
                                   replace = FALSE, clip = NULL, rule = fit$state$rule)
          part <- sample(c("rng_init", "state_init", "t_offset", "init"), 1)
          s[part] <- list(tamper(s[[part]]))
          .Call(sgld:::C_sgld_run, fit$model, s)
        },
        # a model's copy of its rows, or its backing file, damaged after it
        # was built (and perhaps mapped by a run), then run, perhaps after
        # saving and loading it or as futures
        file = {
          fm <- file_model()
          m <- fm$model
          run <- function(m, ...) suppressWarnings(sgld(m, lr = 1e-6, batch_size = 5, iter = 30, ...))
          if (runif(1) < 0.5) run(m)
          damage(if (runif(1) < 0.8) m$file$path else fm$source)
          how <- sample(3, 1)
          if (how == 2) m <- unserialize(serialize(m, NULL))
          if (how == 3) {
            future::plan(future::sequential)
            run(m, chains = 2, parallel = "future")
          } else run(m)
        },
        leapfrog = {
          # leapfrog trajectories (langevin.c): alone, and as mala()'s
          # proposals in a run, its settings or the model mutated
          a <- list(model = m, factor = if (runif(1) < 0.5) diag(m$d), w = rnorm(m$d, sd = 0.1),
                    r = rnorm(m$d), step = c(0.01, 3, 1))
          a <- mutate(a, sample(0:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_leapfrog), unname(a)))
          s <- sgld:::run_settings(m, lr = 1e-4, batch_size = m$n, iter = 20, burnin = 5,
                                   thin = 1, temperature = 1, chains = 2, init = NULL,
                                   replace = FALSE, clip = NULL, threads = 2, mala = TRUE,
                                   leapfrog = 2)
          s <- clamp_iter(mutate(s, sample(0:2, 1)))
          .Call(sgld:::C_sgld_run, m, s)
        },
        rule_factor = {
          # a rule's preconditioner factor (update_table.c), on every model
          a <- list(model = m, rule = sample(c("psgld", "precond", "precond_lm", "sgld",
                                               "natural", "whiten", "nothing"), 1),
                    opts = list(alpha = 0.99, lambda = 1e-5, v_init = 0, scale = rep(1, m$d),
                                basis = matrix(1 / sqrt(m$d), m$d), coef = 0.5),
                    w = rnorm(m$d), state = runif(2 * m$d))
          a <- mutate(a, sample(0:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_rule_factor), unname(a)))
        },
        codes = {
          .Call(sgld:::C_sgld_codes)
          .Call(sgld:::C_sgld_rows_lost_since)
          .Call(sgld:::C_sgld_allow_interrupts)
          .Call(sgld:::C_sgld_code_of, sample(c(names(sgld:::engine_codes()), "x"), 1), draw())
        },
        predict = {
          a <- list(X = cbind(1, rnorm(6)), chains = list(matrix(rnorm(10), 5)), pick = c(1, 4),
                    offset = NULL, link = "logit", keep = FALSE, threads = 1L)
          a <- mutate(a, sample(1:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_predict), unname(a)))
        },
        predict_mixture = {
          a <- list(x = rnorm(6), chains = list(matrix(rnorm(10), 5)), pick = c(1, 4),
                    sigma2_x = 2, keep = TRUE)
          a <- mutate(a, sample(1:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_predict_mixture), unname(a)))
        },
        gram = {
          # the sparse rank check (gram.c): a design's rows, mutated
          a <- list(row_start = c(0L, 2L, 3L, 5L), col = c(0L, 2L, 1L, 0L, 2L),
                    val = c(1, 2, 1, 0.5, 1), d = 3L, tol = 1e-10)
          a <- mutate(a, sample(1:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_sparse_gram_rank), unname(a)))
        },
        psis_loo = {
          a <- list(ll = matrix(-abs(rnorm(40)), 20), chains = 2L, r_eff = NULL,
                    zn = stats::qnorm(stats::ppoints(10)), weights = TRUE, threads = 2L)
          a <- mutate(a, sample(1:3, 1))
          do.call(.Call, c(list(sgld:::C_sgld_psis_loo), unname(a)))
        },
        ksd = .Call(sgld:::C_sgld_ksd, draw() %||% matrix(rnorm(6), 2), draw() %||% matrix(rnorm(6), 2),
                    draw(), draw()),
        schedule = .Call(sgld:::C_sgld_schedule_values,
                         mutate(unclass(sgld:::resolve_lr(sample(list(lr_poly(1e-3, 1, 0.55),
                                                                      lr_cyclical(1e-3, 3)), 1)[[1]],
                                                          100)), 1),
                         palette[[sample(length(palette), 1)]], palette[[sample(length(palette), 1)]]),
        sampler = {
          f <- sample(list(sgld, sgd, psgld, sghmc, mala, bbb), 1)[[1]]
          a <- list(lr = 1e-6, iter = 30, batch_size = 5)
          a <- clamp_iter(mutate(a, sample(1:3, 1)))
          suppressWarnings(do.call(f, c(list(m), a)))
        })
      "ok"
    }, error = function(e) "error", warning = function(w) "error")
    outcome[res] <- outcome[res] + 1
  }
  outcome
}

`%||%` <- function(a, b) if (is.null(a)) b else a
t0 <- Sys.time()
totals <- c(error = 0, ok = 0)
failures <- character()
for (first in seq(1L, n_cases, by = batch)) {
  last <- min(n_cases, first + batch - 1L)
  out <- tryCatch(callr::r(run_cases, args = list(seed, first, last), timeout = 300,
                           env = c(callr::rcmd_safe_env(), OMP_NUM_THREADS = "2")),
                  error = function(e) e)
  if (!inherits(out, "error")) {
    totals <- totals + out
    next
  }
  # find the culprit(s) one by one
  for (case in first:last) {
    one <- tryCatch(callr::r(run_cases, args = list(seed, case, case), timeout = 60),
                    error = function(e) e)
    if (inherits(one, "error")) {
      failures <- c(failures, sprintf("case %d (seed %d): %s", case, seed,
                                      gsub("\n", " ", conditionMessage(one))))
    } else {
      totals <- totals + one
    }
  }
}
cat(sprintf("fuzz: %d cases (seed %d) in %.0f s: %d R errors, %d returned normally, %d crashes or hangs\n",
            n_cases, seed, as.numeric(difftime(Sys.time(), t0, units = "secs")),
            totals[["error"]], totals[["ok"]], length(failures)))
if (length(failures)) {
  cat(failures, sep = "\n")
  quit(status = 1)
}
