# Ctrl-C during lr = "auto": polled in every phase (the mode search in C,
# the warm-up, the run), never ignored, and what was made comes back. Each
# run is a child R process interrupted as Ctrl-C would (helper-sgld.R); a
# tracer on run_sampler() writes the flag when the call whose iteration
# count passes `above` starts: the phase under test. The child sees only
# what is written into the function it runs.
skip_interrupt_test <- function() {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  skip_on_cran()
}

phase_run <- function(data, above, call) {
  eval(bquote(function(flag) {
    trace("run_sampler", where = asNamespace("sgld"), print = FALSE,
          tracer = substitute(if (iter > A) writeLines("phase", F), list(A = .(above), F = flag)))
    d <- .(data)
    m <- if (is.null(d$ratio)) model_linear(y ~ x, data = d, prior = prior_nig())
         else model_logistic(y ~ income + debt + ratio + age + owner + savings + members +
                               years + visits + score + cards, data = d, prior = prior_normal(0, 10), prior_intercept = NULL)
    set.seed(1)
    .(call)
  }))
}

test_that("an interrupt in the warm-up returns the warm-up's draws, with a warning", {
  skip_interrupt_test()
  out <- interrupted_run(phase_run(handout, 1e6, quote(sgld(m, burnin = 1e9, thin = 1e3, chains = 1))),
                         settle = 1, flag_first = FALSE)
  fit <- out$fit
  expect_identical(fit$status, "interrupted")
  expect_identical(fit$auto$interrupted, "warm-up")
  expect_gt(fit$kept, 10)
  expect_identical(nrow(as.matrix(fit)), as.integer(fit$kept))
  expect_true(any(grepl("lr = \"auto\" was interrupted in its warm-up: the fit holds", out$warnings)))
  expect_output(print(fit), "interrupted in its warm-up")
})

test_that("an interrupt in the run returns the run's draws so far", {
  skip_interrupt_test()
  out <- interrupted_run(phase_run(handout, 1e6, quote(sgld(m, iter = 1e9, thin = 1e4, chains = 1))),
                         settle = 1.5, flag_first = FALSE)
  fit <- out$fit
  expect_identical(fit$status, "interrupted")
  expect_gt(fit$kept, 0)
  # the run continued its warm-up (the burn-in)
  expect_identical(fit$iteration[1, 1], fit$auto$burnin + 1e4)
  expect_true(any(grepl("interrupted by the user at iteration", out$warnings)))
  # print() repeats the interrupted run's convergence warnings
  expect_output(quietly_checked(print(fit), "convergence"), "lr = \"auto\": preconditioner")
  # a remedy for too few effective draws counts from the iterations reached,
  # not from the 10^9 asked for
  more <- regmatches(out$warnings, regexpr("about iter = [0-9,]+", out$warnings))
  if (length(more)) expect_lt(as.numeric(gsub("[^0-9]", "", more)), 1e8)
})

test_that("the Metropolis-adjusted phases of a hard posterior are interrupted likewise", {
  skip_interrupt_test()
  d <- nearly_separated_data()
  out <- interrupted_run(phase_run(d, 1e5, quote(sgld(m, burnin = 1e6, chains = 1))), settle = 1,
                         flag_first = FALSE)
  fit <- out$fit
  expect_identical(fit$method, "mala")
  expect_identical(fit$status, "interrupted")
  expect_identical(fit$auto$interrupted, "warm-up")
  expect_gt(fit$kept, 10)
  expect_true(any(grepl("interrupted in its warm-up", out$warnings)))
  # thin 10: under a heavy load a second of the run proper kept only 10
  # draws at thin 100
  out <- interrupted_run(phase_run(d, 1e5, quote(sgld(m, iter = 1e8, thin = 10, chains = 1))), settle = 1,
                         flag_first = FALSE)
  fit <- out$fit
  expect_identical(fit$method, "mala")
  expect_identical(fit$status, "interrupted")
  expect_identical(fit$auto$strategy, "mala")
  expect_null(fit$auto$interrupted)
  expect_gt(fit$kept, 10)
})

test_that("an interrupt in the mode search stops it in C, and nothing is returned", {
  skip_interrupt_test()
  after <- tempfile()
  run <- eval(bquote(function(flag) {
    set.seed(3)
    n <- 60000
    X <- matrix(rnorm(n * 200), n)
    m <- model_logistic(X, rbinom(n, 1, plogis(X[, 1:5] %*% c(1, -1, 0.5, 0.5, 2))), prior = prior_normal(0, 10), prior_intercept = NULL)
    # the statement after the search in C marks it finished: with the
    # interrupt polled inside the search, it never runs
    body_calls <- vapply(as.list(body(sgld:::posterior_mode)),
                         function(e) paste(deparse(e), collapse = " "), "")
    search_at <- grep("C_sgld_posterior_mode", body_calls)[1]
    trace("posterior_mode", where = asNamespace("sgld"), print = FALSE, at = search_at + 1L,
          tracer = substitute(writeLines("finished", A), list(A = .(after))))
    writeLines("search", flag)
    tryCatch(sgld(m, chains = 1), interrupt = function(cond) "interrupted")
  }))
  out <- interrupted_run(run, settle = 0.3, flag_first = FALSE)
  expect_identical(out$fit, "interrupted")
  expect_false(file.exists(after))
})
