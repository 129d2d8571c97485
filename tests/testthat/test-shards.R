# Data in shards on worker processes (R/shards.R, R/model-sharded.R): the
# full-data quantities equal the one-machine model's, and fits agree.

skip_on_cran()
skip_if_not_installed("bigmemory")

# n rows of a regression with an intercept column, its response `y`, and the
# rows cut in two shards (unequal, so a shard's size matters) written as
# file-backed big.matrix descriptor files
shard_data <- function(n, family, seed = 1) {
  set.seed(seed)
  X <- cbind("(Intercept)" = 1, x1 = stats::rnorm(n), x2 = stats::rnorm(n, 2, 3),
             x3 = stats::rbinom(n, 1, 0.3))
  eta <- drop(X %*% c(-0.5, 0.8, -0.2, 0.6))
  y <- if (family == "logistic") stats::rbinom(n, 1, stats::plogis(eta))
       else stats::rpois(n, exp(eta / 2))
  dir <- tempfile("shards")
  dir.create(dir)
  cut <- list(seq_len(round(0.57 * n)), (round(0.57 * n) + 1):n)
  paths <- vapply(1:2, function(k) {
    bigmemory::as.big.matrix(cbind(X[cut[[k]], ], y = y[cut[[k]]]), backingpath = dir,
                             backingfile = paste0("s", k, ".bin"),
                             descriptorfile = paste0("s", k, ".desc"))
    file.path(dir, paste0("s", k, ".desc"))
  }, "")
  list(X = X, y = y, paths = paths, dir = dir)
}

rel <- function(a, b) max(abs(a - b)) / max(abs(b))

test_that("rows 1..N map to shards and local rows, runs as ranges", {
  x <- list(n = c(1710, 1290, 5))
  for (idx in list(c(3L, 1711L, 3001L, 1710L, 3005L), 1700:1720, 1:3005, 1711:3000, 3002:3003)) {
    sp <- sgld:::split_rows(x, idx)
    plain <- sgld:::split_rows(x, idx, ranges = FALSE)
    expect_identical(sp$which, plain$which)
    expect_identical(unname(lapply(sp$rows, as.integer)), unname(plain$rows))
    back <- unlist(Map(function(k, r) r + c(0, cumsum(x$n))[k], sp$which, sp$rows))
    expect_identical(as.integer(back), as.integer(idx[order(findInterval(idx - 1, cumsum(x$n)))]))
  }
})

test_that("full-data quantities on 2 shards equal the one-machine model's", {
  dat <- shard_data(3000, "logistic")
  cl <- parallel::makePSOCKcluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  s <- shards(dat$paths, workers = cl)
  expect_equal(s$n, c(1710, 1290))
  expect_output(print(s), "Data in 2 shards: 3,000 rows \\(1,710 \\+ 1,290\\)")
  # workers = NULL takes the cluster of plan(cluster, workers = cl)
  if (requireNamespace("future", quietly = TRUE)) {
    old <- future::plan(future::cluster, workers = cl)
    expect_identical(shards(dat$paths)$handle$pids, s$handle$pids)
    future::plan(old)
  }
  for (family in c("logistic", "poisson")) {
    if (family == "poisson") {
      dat <- shard_data(3000, "poisson", seed = 2)
      s <- shards(dat$paths, workers = cl)
    }
    make <- if (family == "logistic") model_logistic else model_poisson
    m <- make(s, y = "y")
    one <- make(dat$X, dat$y)
    expect_equal(m$n, 3000)
    expect_output(print(m), "on 2 shards: 3,000 observations, 4 coefficients")
    # the priors autoscaled from the shards' X'X are the one-machine ones
    expect_equal(m$prior_model$prior_scale, one$prior_scale, tolerance = 1e-12)
    pm <- posterior_mode(m, covariance = TRUE)
    p1 <- posterior_mode(one, covariance = TRUE)
    expect_true(pm$converged)
    if (family == "logistic") {
      # Newton's method on both: the same numbers
      expect_equal(p1$method, "newton")
      expect_lt(rel(pm$mode, p1$mode), 1e-8)
      expect_lt(rel(pm$covariance, p1$covariance), 1e-8)
    } else {
      # one machine searches by BFGS (no Hessian in C), the shards by Newton:
      # the shards' mode is the one-machine posterior's, to 1e-7 posterior
      # sds by its own exact gradient, and BFGS's mode within its accuracy
      g1 <- sgld:::full_gradient(one, pm$sampler)
      expect_lt(sum(g1 * drop(pm$covariance %*% g1)), 1e-14)
      expect_lt(rel(pm$mode, p1$mode), 1e-5)
      expect_lt(rel(pm$covariance, p1$covariance), 1e-5)
    }
    # away from the mode: log posterior, gradient, each row's log likelihood
    w <- p1$sampler + c(0.1, -0.05, 0.02, 0.2)
    e1 <- .Call(sgld:::C_sgld_model_eval, one, w)
    e2 <- .Call(sgld:::C_sgld_model_eval, m, w)
    expect_lt(abs((e2$loglik + e2$logprior) - (e1$loglik + e1$logprior)) / abs(e1$loglik), 1e-12)
    expect_lt(rel(e2$grad_loglik + e2$grad_logprior, e1$grad_loglik + e1$grad_logprior), 1e-10)
    W <- rbind(w, p1$sampler)
    expect_lt(rel(sgld:::model_loglik_rows(m, W), sgld:::model_loglik_rows(one, W)), 1e-12)
    # the control-variate estimator's noise at a point off the mode: one
    # machine's and the shards' (other batches) agree within sampling error
    at <- p1$mode + 2 * sqrt(diag(p1$covariance))
    set.seed(4)
    G1 <- stochastic_gradients(one, at, batch_size = 50, times = 1500, control_variates = TRUE)
    G2 <- stochastic_gradients(m, at, batch_size = 50, times = 1500, control_variates = TRUE)
    # means: within 4 standard errors; sds: within 10% (1,500 draws: 1.8% each)
    se <- apply(G1, 2, sd) / sqrt(1500)
    expect_lt(max(abs(colMeans(G2) - colMeans(G1)) / se), 4 * sqrt(2))
    expect_lt(max(abs(apply(G2, 2, sd) / apply(G1, 2, sd) - 1)), 0.1)
  }
  # bad input: a clear error naming the argument or the shard's file
  expect_error(shards(character(0)), "`paths` must be the shards' file paths")
  expect_error(shards(c("a.desc", "a.desc"), workers = cl), "'a.desc' is given twice")
  expect_error(shards(c(dat$paths[1], "/no/such.desc"), workers = cl),
               "no file '/no/such.desc' on this worker")
  expect_error(shards(dat$paths, workers = cl[1]), "each shard needs a worker of its own")
  expect_error(model_poisson(s, y = "z"), "`y` must name the response's column")
  expect_error(model_logistic(s, y = "x1"), "0/1 or -1/\\+1")
  expect_error(sgld(model_poisson(s, y = "y"), lr = 1e-4, iter = 10, parallel = "future"),
               "shards\\(\\) its workers' connections")
  close(s)
  expect_error(posterior_mode(m), "these shards were closed")
  # a cluster given is its owner's: close() leaves it running
  expect_identical(length(parallel::clusterCall(cl, Sys.getpid)), 2L)
})

test_that("sampling on 2 shards: the one-machine chain, and the defaults agree", {
  cl <- parallel::makePSOCKcluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (family in c("logistic", "poisson")) {
    make <- if (family == "logistic") model_logistic else model_poisson
    # minibatches with control variates: the engine draws the same batches
    # and noise from the same seed, and each batch's gradient is the sum of
    # its shards' parts, so the chains are the one-machine chains to rounding
    dat <- shard_data(3000, family, seed = 3)
    s <- shards(dat$paths, workers = cl)
    m <- make(s, y = "y")
    one <- make(dat$X, dat$y)
    # the anchor given (Poisson's one-machine mode is BFGS's, the shards'
    # Newton's: 3e-6 apart, which the control variates would carry)
    anchor <- posterior_mode(one)$mode
    run <- function(model) {
      set.seed(11)
      quietly_checked(sgld(model, lr = 2e-5, batch_size = 100, control_variates = anchor,
                            iter = 200, burnin = 50, chains = 2))
    }
    a <- as.matrix(run(one))
    b <- as.matrix(run(m))
    expect_lt(rel(b, a), 1e-8)

    # the default call (full-data steps at 800 rows): the same settings and
    # draws as on one machine, so within 0.15 sd and 10% of its sds
    dat <- shard_data(800, family, seed = 4)
    s <- shards(dat$paths, workers = cl)
    m <- make(s, y = "y")
    one <- make(dat$X, dat$y)
    # (short runs: R-hat warns)
    set.seed(12)
    f1 <- quietly_checked(sgld(one, chains = 2, iter = 400))
    set.seed(12)
    f2 <- quietly_checked(sgld(m, chains = 2, iter = 400))
    expect_identical(f2$auto$batch_size, f1$auto$batch_size)
    sd1 <- apply(as.matrix(f1), 2, stats::sd)
    expect_lt(max(abs(coef(f2) - coef(f1)) / sd1), 0.15)
    expect_lt(max(abs(apply(as.matrix(f2), 2, stats::sd) / sd1 - 1)), 0.1)
    expect_lt(rel(as.matrix(f2), as.matrix(f1)), 1e-6)
  }
})

test_that("a worker killed mid-run: the draws so far, a warning naming its shard, no process left", {
  skip_if_not_installed("callr")
  skip_if_not_installed("processx")
  dat <- shard_data(2000, "logistic", seed = 5)
  out <- callr::r(function(paths) {
    library(sgld)
    s <- shards(paths)   # its own cluster, stopped by close()
    m <- model_logistic(s, y = "y")
    anchor <- posterior_mode(m)$mode
    pids <- s$handle$pids
    # worker 2 is killed 3 s into a run far longer than that
    # (a shell of processx's: R's system() here delayed the workers' replies)
    killer <- processx::process$new("sh", c("-c", sprintf("sleep 3; kill -9 %d",
                                                           as.integer(pids[2]))))
    warnings <- character()
    fit <- withCallingHandlers(
      sgld(m, lr = 2e-5, batch_size = 100, control_variates = anchor, iter = 1e5,
           burnin = 0, thin = 1, chains = 2),
      warning = function(w) {
        warnings <<- c(warnings, conditionMessage(w))
        invokeRestart("muffleWarning")
      })
    again <- tryCatch(posterior_mode(m), error = conditionMessage)
    close(s)
    list(pids = pids, warnings = warnings, kept = fit$kept, status = fit$status,
         draws = nrow(as.matrix(fit)), again = again)
  }, args = list(paths = dat$paths), timeout = 120)
  expect_length(out$warnings, 1)
  expect_match(out$warnings, "shard 2 .*was lost", perl = TRUE)
  expect_identical(out$status, c("failed", "not run"))
  expect_gte(out$kept[1], 1)
  expect_identical(out$draws, as.integer(sum(out$kept)))
  expect_match(out$again, "shard 2 .*lost earlier")
  # both workers gone (the survivor stopped by close()) within 5 s
  alive <- function(pid) {
    stat <- suppressWarnings(tryCatch(readLines(sprintf("/proc/%d/stat", as.integer(pid))),
                                      error = function(e) ""))
    length(stat) == 1L && nzchar(stat) && !grepl("^[0-9]+ \\(.*\\) Z", stat)
  }
  for (i in 1:50) if (!any(vapply(out$pids, alive, NA))) break else Sys.sleep(0.1)
  expect_false(any(vapply(out$pids, alive, NA)))
})
