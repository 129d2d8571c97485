test_that("threads = 1 and threads = 2 give bit-identical draws", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  run <- function(threads) {
    set.seed(61)
    # (the checks of a run from spread-out starts with batches of 10 warn)
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 20000, chains = 4,
                             threads = threads))
  }
  one <- run(1)
  two <- run(2)
  expect_identical(as.array(one), as.array(two))
  expect_identical(one$last, two$last)
  expect_error(sgld(m, lr = 1e-4, threads = 0, chains = 1), "`threads` must be a whole number between 1")
})

test_that("the default runs 4 chains on at most one thread per processor", {
  m <- handout_model()
  # (a step too small for 100 iterations: the run checks warn; every other
  # warning, such as the one about threads, passes)
  run <- function(...) expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 100, ...))
  # a 2-core machine, whatever this one has (parallelly and R's fallback
  # both honour mc.cores)
  old_options <- options(mc.cores = 2L, sgld.threads = NULL)
  on.exit(options(old_options), add = TRUE)
  fit <- run()
  expect_identical(fit$settings$chains, 4)
  expect_identical(length(fit$draws), 4L)
  expect_lte(fit$settings$threads, 2L)
  expect_lte(fit$settings$threads, sgld:::available_cores())
  # and none beyond the idle ones
  expect_lte(fit$settings$threads, sgld:::idle_cores(2L))
  expect_true(sgld:::idle_cores(2L) %in% 1:2)
  expect_identical(run(chains = 1)$settings$threads, 1L)
  # the option and an explicit number are respected; beyond the processors,
  # one warning a session
  options(sgld.threads = 1L)
  expect_identical(run()$settings$threads, 1L)
  options(sgld.threads = NULL)
  session <- sgld:::session
  old_warned <- session$warned_threads
  session$warned_threads <- NULL
  on.exit(session$warned_threads <- old_warned, add = TRUE)
  expect_warning(over <- run(threads = 3L), "`threads` = 3 is more than the 2 processors")
  expect_identical(over$settings$threads, 3L)
  expect_no_warning(run(threads = 3L), message = "processors")
})
