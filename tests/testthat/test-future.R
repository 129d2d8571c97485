# parallel = "future": each chain a future, bound into one fit identical to
# the local run's.

skip_if_not_installed("future")

# every field of a fit that comes from the engine
engine_fields <- c("draws", "lr", "iteration", "chain_ids", "partial", "last", "status",
                   "stop_iter", "kept", "collect_from", "clipped", "acceptance", "monitor",
                   "diagnostics", "state", "moments", "pars")

expect_same_fit <- function(a, b) {
  for (f in engine_fields) expect_identical(a[[f]], b[[f]], label = paste0("fit$", f))
}

# run `f` after set.seed(seed), returning the fit and R's RNG state after it
seeded <- function(seed, f) {
  set.seed(seed)
  fit <- f()
  list(fit = fit, seed = .Random.seed)
}

test_that("futures on plan(sequential) give the local run's draws, state and RNG", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  # (short runs: their R-hat and ESS warn, the same way local or as futures)
  run <- function(parallel) seeded(21, function()
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 2000, chains = 3, thin = 3,
                             diagnostics = diagnostics_every(200),
                             monitor = monitor_every(500), parallel = parallel)))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  local <- run("threads")
  fut <- run("future")
  expect_same_fit(local$fit, fut$fit)
  expect_identical(local$seed, fut$seed)
  expect_s3_class(expect_run_warnings(summary(fut$fit)), "summary.sgld_fit")

  # continuing either fit, either way, gives the same draws
  more <- function(fit, parallel)
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 1000, chains = 3, burnin = 0,
                             init = fit, parallel = parallel))
  expect_same_fit(more(local$fit, "threads"), more(fut$fit, "future"))

  # another sampler and a rule with state
  run2 <- function(parallel) seeded(5, function()
    expect_run_warnings(sghmc(m, lr = 1e-6, friction = 0.2, batch_size = 20, iter = 500,
                              chains = 2, parallel = parallel)))
  expect_same_fit(run2("threads")$fit, run2("future")$fit)
})

test_that("futures on plan(multisession) give the local run's draws (4 chains, 2 workers)", {
  skip_on_cran()
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  run <- function(parallel) seeded(61, function()
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 5000, chains = 4,
                             control_variates = TRUE, parallel = parallel)))
  local <- run("threads")
  fut <- run("future")
  expect_same_fit(local$fit, fut$fit)
  expect_identical(local$seed, fut$seed)
  expect_identical(as.array(local$fit), as.array(fut$fit))
})

test_that("a chain whose future fails leaves a fit of the others and a warning naming it", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  init <- matrix(0, 3, m$d)
  init[, 1] <- c(0.1, 0.2, 0.3)
  # the chain's future fails outside the engine, as when its worker is lost
  real <- future_chain
  utils::assignInNamespace("future_chain", function(model, settings) {
    if (settings$init[1] == 0.2) stop("worker lost")
    real(model, settings)
  }, "sgld")
  on.exit(utils::assignInNamespace("future_chain", real, "sgld"), add = TRUE)
  set.seed(8)
  got <- with_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 500, chains = 3,
                            init = init, parallel = "future"))
  fit <- got$value
  expect_match(got$warnings, "chain 2 failed on its worker \\(chain 2: worker lost\\)", all = FALSE)
  expect_identical(fit$chain_ids, c(1L, 3L))
  expect_identical(fit$status, c("done", "lost", "done"))
  set.seed(8)
  local <- expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 500, chains = 3,
                                    init = init))
  expect_identical(unname(as.array(fit)), unname(as.array(local)[, c(1, 3), , drop = FALSE]))
  expect_s3_class(expect_run_warnings(summary(fit)), "summary.sgld_fit")
  expect_error(sgld(m, lr = 1e-4, iter = 10, chains = 3, init = fit),
               "chain 2 of the fit was lost and cannot be continued")
})

test_that("parallel is checked", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_error(sgld(m, lr = 1e-4, parallel = "cluster", chains = 1),
               "`parallel` must be \"threads\" or \"future\", not")
})

test_that("a model written in R functions travels to its futures, and its failures stop the run", {
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  m <- handout_custom(handout[1:500, ])
  run <- function(parallel) {
    set.seed(9)
    expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 20, iter = 300, chains = 2,
                             parallel = parallel))
  }
  expect_same_fit(run("threads"), run("future"))

  broken <- handout_custom(handout[1:200, ], grad_logprior = function(w) c(NA, 0, 0))
  err <- tryCatch(sgld(broken, lr = 1e-5, batch_size = 20, iter = 50, chains = 2,
                       parallel = "future"), sgld_model_error = function(e) e)
  expect_s3_class(err, "sgld_model_error")
  expect_match(conditionMessage(err), "`grad_logprior`")
})

test_that("a run's stop file stops its chains as an interrupt does, or before they start", {
  # the signal by which a session tells its futures' workers of Ctrl-C, or
  # that it has ended (its directory of the file is gone)
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  dir <- tempfile()
  dir.create(dir)
  stop_file <- file.path(dir, "stop")
  file.create(stop_file)
  s <- sgld:::run_settings(m, lr = 1e-5, batch_size = 10, iter = 1e7, burnin = 0, thin = 100,
                           temperature = 1, chains = 2, init = NULL, replace = FALSE,
                           clip = NULL, threads = 2)
  s$stop_file <- c(stop_file, dir)
  res <- .Call(sgld:::C_sgld_run, m, s)
  expect_identical(sgld:::chain_status(res$status), rep("not run", 2))
  expect_identical(res$kept, c(0, 0))
  expect_identical(c(res$last), s$init)
  unlink(stop_file)
  # a model in R functions makes the file, or removes its directory, during
  # the run: every chain stops at the end of that chunk, its draws kept
  run_until <- function(signal) {
    calls <- 0
    f <- linear_custom_functions()
    g <- f$grad_loglik
    f$grad_loglik <- function(w, batch) {
      calls <<- calls + 1
      if (calls == 5000) signal()
      g(w, batch)
    }
    mc <- do.call(model_custom, c(list(data = handout_matrix(), d = 3), f))
    s <- sgld:::run_settings(mc, lr = 1e-7, batch_size = 10, iter = 1e6, burnin = 0, thin = 100,
                             temperature = 1, chains = 2, init = c(0, 0, 0), replace = FALSE,
                             clip = NULL)
    s$stop_file <- c(stop_file, dir)
    .Call(sgld:::C_sgld_run, mc, s)
  }
  for (signal in list(function() file.create(stop_file),
                      function() unlink(dir, recursive = TRUE))) {
    dir.create(dir, showWarnings = FALSE)
    res <- run_until(signal)
    unlink(stop_file)
    expect_identical(sgld:::chain_status(res$status), c("interrupted", "not run"))
    expect_gte(res$stop_iter[1], 5000)
    expect_lt(res$stop_iter[1], 1e6)
    expect_identical(res$kept[1], floor(res$stop_iter[1] / 100))
  }
  # a worker that does not see the directory when it begins (another
  # machine) runs to the end
  s$iter <- 200
  s$stop_file <- c(file.path(dir, "none", "stop"), file.path(dir, "none"))
  expect_identical(sgld:::chain_status(.Call(sgld:::C_sgld_run, m, s)$status), rep("done", 2))
})

# Ctrl-C in a child session running 4 chains as futures: `signal_workers`
# also interrupts its workers, as a terminal's Ctrl-C reaches the whole
# process group. The model is the handout's in R functions, whose gradient
# leaves a file named by its process when it first runs, so that the
# interrupt comes once every worker is sampling. Returns the child's fit, its
# continuation, and the processes of the child's group still alive 1 s after
# it ended.
interrupted_futures <- function(plan, signal_workers, continue = TRUE) {
  flags <- tempfile()
  dir.create(flags)
  child <- callr::r_bg(function(flags, plan, f, data, continue) {
    library(sgld)
    if (plan == "multisession") future::plan(future::multisession, workers = 2)
    else future::plan(future::sequential)
    g <- f$grad_loglik
    f$grad_loglik <- function(w, batch) {
      if (!file.exists(file.path(flags, Sys.getpid()))) writeLines("", file.path(flags, Sys.getpid()))
      g(w, batch)
    }
    m <- do.call(model_custom, c(list(data = data, d = 3), f))
    set.seed(1)
    warnings <- character()
    fit <- withCallingHandlers(
      sgld(m, lr = 1e-7, batch_size = 10, iter = 1e9, burnin = 0, thin = 1000, chains = 4,
           init = c(0, 0, 0), parallel = "future"),
      warning = function(w) {
        warnings <<- c(warnings, conditionMessage(w))
        invokeRestart("muffleWarning")
      })
    more <- if (continue)
      suppressWarnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 100, burnin = 0, chains = 4,
                            init = fit, parallel = "future"))
    list(fit = fit, warnings = warnings, more = more)
  }, args = list(flags = flags, plan = plan, f = linear_custom_functions(),
                 data = handout_matrix(), continue = continue))
  on.exit(child$kill_tree(), add = TRUE)
  group <- function() {   # alive (not zombies), from /proc/<pid>/stat: state, pgid
    pids <- setdiff(as.integer(list.files("/proc", pattern = "^[0-9]+$")), child$get_pid())
    # a process that ends between the listing and the reading (another
    # program's, on a busy machine) makes file() warn, then fail: not alive
    stat <- vapply(pids, function(p) tryCatch(
      sub("^.*\\) ", "", readLines(file.path("/proc", p, "stat"), warn = FALSE)[1]),
      warning = function(w) NA_character_, error = function(e) NA_character_), "")
    fields <- strsplit(stat, " ")
    alive <- vapply(fields, function(f) length(f) >= 3 && f[1] != "Z" &&
                      as.integer(f[3]) == child$get_pid(), NA)
    pids[alive]
  }
  running <- if (plan == "multisession") 2 else 1
  deadline <- Sys.time() + 60
  while (length(list.files(flags)) < running && Sys.time() < deadline) Sys.sleep(0.1)
  Sys.sleep(0.5)
  expect_true(child$is_alive())
  if (signal_workers) tools::pskill(group(), tools::SIGINT)
  child$interrupt()
  child$wait(60000)
  expect_false(child$is_alive())
  out <- child$get_result()
  Sys.sleep(1)
  out$left <- group()
  out
}

test_that("Ctrl-C with chains as futures keeps every worker's draws and stops every worker", {
  skip_on_cran()
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_not_installed("callr")
  for (signal_workers in c(FALSE, TRUE)) {
    out <- interrupted_futures("multisession", signal_workers, continue = !signal_workers)
    fit <- out$fit
    # 4 chains on 2 workers: the two running stop with their draws; the two
    # waiting for a worker are not run
    expect_identical(fit$status, c("interrupted", "interrupted", "not run", "not run"))
    expect_true(all(fit$kept[1:2] >= 1))
    expect_identical(fit$kept, floor(fit$stop_iter / 1000))
    expect_true(any(grepl("interrupted by the user at iterations? .* of chains 1, 2;", out$warnings)))
    # no worker goes on after the run
    expect_length(out$left, 0)
    # and the fit continues from where each chain stopped
    if (!signal_workers) {
      expect_identical(out$more$iteration[1, ], fit$stop_iter + 1)
      expect_identical(out$more$status, rep("done", 4))
    }
  }
})

test_that("Ctrl-C with chains as futures on plan(sequential) stops the chain running", {
  skip_on_os("windows")
  skip_if_not_installed("callr")
  out <- interrupted_futures("sequential", FALSE)
  expect_identical(out$fit$status, c("interrupted", "not run", "not run", "not run"))
  expect_gte(out$fit$kept[1], 1)
  expect_identical(out$more$iteration[1, ], out$fit$stop_iter + 1)
})

test_that("a worker killed mid-run costs only its own chain (3 chains, 2 workers)", {
  skip_on_cran()
  skip_if_not_installed("callr")
  # in a child with a time limit: a dead worker must neither hang nor kill the run
  out <- callr::r(function() {
    library(sgld)
    set.seed(1)
    D <- cbind(x = rnorm(400))
    D <- cbind(D, y = 1 + 2 * D[, 1] + rnorm(400))
    token <- tempfile("kill-")
    # the first worker to take the token kills itself during its chain
    grad <- function(w, data) {
      if (file.exists(token) && file.rename(token, paste0(token, ".taken"))) {
        Sys.sleep(0.2)
        tools::pskill(Sys.getpid(), tools::SIGKILL)
      }
      r <- data[, "y"] - w[1] - w[2] * data[, "x"]
      c(sum(r), sum(r * data[, "x"]))
    }
    environment(grad) <- list2env(list(token = token), parent = globalenv())
    m <- model_custom(D, grad_loglik = grad, grad_logprior = function(w) -w / 100, d = 2)
    run <- function(parallel) {
      set.seed(3)
      sgld(m, lr = 1e-4, batch_size = 20, iter = 3000, chains = 3, parallel = parallel)
    }
    local <- run("threads")
    future::plan(future::multisession, workers = 2)
    file.create(token)
    warnings <- character()
    fit <- withCallingHandlers(run("future"), warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    future::plan(future::sequential)
    kept <- fit$chain_ids
    list(status = fit$status, kept = kept, warnings = warnings,
         same = identical(unname(as.array(fit)), unname(as.array(local)[, kept, , drop = FALSE])),
         continued = tryCatch(sgld(m, lr = 1e-4, iter = 10, chains = 3, init = fit),
                              error = conditionMessage))
  }, timeout = 120)
  # 3 chains on 2 workers: the third waits for a worker, and may find the
  # dead one (its future cannot be made: it runs in the session instead)
  lost <- setdiff(1:3, out$kept)
  expect_length(lost, 1)
  expect_identical(out$status[lost], "lost")
  expect_true(all(out$status[out$kept] == "done"))
  expect_true(out$same)     # the other chain's draws are those of the local run
  expect_match(out$warnings, sprintf("chain %d failed on its worker .*`fit\\$status` says \"lost\"", lost),
               all = FALSE)
  expect_match(out$continued, sprintf("chain %d of the fit was lost and cannot be continued", lost))
})
