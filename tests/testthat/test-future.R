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
  m <- model_logistic(type ~ ., data = pima())
  run <- function(parallel) seeded(21, function()
    sgld(m, lr = 1e-4, batch_size = 10, iter = 2000, chains = 3, thin = 3,
         diagnostics = diagnostics_every(200), monitor = monitor_every(500),
         parallel = parallel))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  local <- run("threads")
  fut <- run("future")
  expect_same_fit(local$fit, fut$fit)
  expect_identical(local$seed, fut$seed)
  expect_s3_class(summary(fut$fit), "summary.sgld_fit")

  # continuing either fit, either way, gives the same draws
  more <- function(fit, parallel) sgld(m, lr = 1e-4, batch_size = 10, iter = 1000, chains = 3,
                                       burnin = 0, init = fit, parallel = parallel)
  expect_same_fit(more(local$fit, "threads"), more(fut$fit, "future"))

  # another sampler and a rule with state
  run2 <- function(parallel) seeded(5, function()
    sghmc(m, lr = 1e-6, friction = 0.2, batch_size = 20, iter = 500, chains = 2,
          parallel = parallel))
  expect_same_fit(run2("threads")$fit, run2("future")$fit)
})

test_that("futures on plan(multisession) give the local run's draws (4 chains, 2 workers)", {
  skip_on_cran()
  m <- model_logistic(type ~ ., data = pima())
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  run <- function(parallel) seeded(61, function()
    sgld(m, lr = 1e-4, batch_size = 10, iter = 5000, chains = 4, control_variates = TRUE,
         parallel = parallel))
  local <- run("threads")
  fut <- run("future")
  expect_same_fit(local$fit, fut$fit)
  expect_identical(local$seed, fut$seed)
  expect_identical(as.array(local$fit), as.array(fut$fit))
})

test_that("a chain whose future fails leaves a fit of the others and a warning naming it", {
  m <- model_logistic(type ~ ., data = pima())
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
  expect_identical(fit$status, c("done", "failed", "done"))
  set.seed(8)
  local <- sgld(m, lr = 1e-4, batch_size = 10, iter = 500, chains = 3, init = init)
  expect_identical(unname(as.array(fit)), unname(as.array(local)[, c(1, 3), , drop = FALSE]))
  expect_s3_class(summary(fit), "summary.sgld_fit")
  expect_error(sgld(m, lr = 1e-4, iter = 10, chains = 3, init = fit),
               "chain 2 of the fit failed and cannot be continued")
})

test_that("parallel is checked", {
  m <- model_logistic(type ~ ., data = pima())
  expect_error(sgld(m, lr = 1e-4, parallel = "cluster"),
               "`parallel` must be \"threads\" or \"future\", not")
})

test_that("a model written in R functions travels to its futures, and its failures stop the run", {
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  m <- handout_custom(handout[1:500, ])
  run <- function(parallel) {
    set.seed(9)
    sgld(m, lr = 1e-5, batch_size = 20, iter = 300, chains = 2, parallel = parallel)
  }
  expect_same_fit(run("threads"), run("future"))

  broken <- handout_custom(handout[1:200, ], grad_logprior = function(w) c(NA, 0, 0))
  err <- tryCatch(sgld(broken, lr = 1e-5, batch_size = 20, iter = 50, chains = 2,
                       parallel = "future"), sgld_model_error = function(e) e)
  expect_s3_class(err, "sgld_model_error")
  expect_match(conditionMessage(err), "`grad_logprior`")
})
