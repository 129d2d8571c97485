# model_custom(): a function that fails stops the run with an error naming it
# and the rule, and the draws made before the failure stay available.

# The handout model on 200 rows whose function `fun` behaves from its
# `from`-th call on as `bad` says (a function of the good value).
failing_model <- function(fun, bad, from) {
  f <- linear_custom_functions()
  calls <- 0L
  good <- f[[fun]]
  f[[fun]] <- function(...) {
    calls <<- calls + 1L
    value <- good(...)
    if (calls >= from) bad(value) else value
  }
  handout_custom(handout[1:200, ], grad_loglik = f$grad_loglik, loglik = f$loglik,
                 grad_logprior = f$grad_logprior, logprior = f$logprior)
}

# Runs `run` on the model, which must fail with an sgld_model_error whose
# message matches `pattern`; returns the partial fit it carries.
expect_model_error <- function(run, pattern) {
  err <- tryCatch(run, sgld_model_error = function(e) e)
  expect_s3_class(err, "sgld_model_error")
  expect_match(conditionMessage(err), pattern)
  expect_match(conditionMessage(err), "draws made before it are kept")
  err$fit
}

# Each way a function can break its contract, and the rule the message gives.
breakages <- list(
  error = list(function(v) stop("no convergence in step 3"), "failed: no convergence in step 3"),
  length = list(function(v) v[-1], "returned a vector of length [02]; it must return"),
  character = list(function(v) as.character(v), "returned a character vector; it must return"),
  list = list(function(v) as.list(v), "returned a list; it must return"),
  missing = list(function(v) replace(v, 1, NA), "returned NA"),
  nan = list(function(v) replace(v, 1, NaN), "returned NaN"),
  inf = list(function(v) replace(v, 1, Inf), "returned Inf")
)

test_that("a failing gradient function stops sgld() with its name, keeping the draws", {
  from <- 31L                # the gradient of iteration 31 fails
  for (fun in c("grad_loglik", "grad_logprior")) {
    for (kind in names(breakages)) {
      b <- breakages[[kind]]
      m <- failing_model(fun, b[[1]], from)
      set.seed(1)
      fit <- expect_model_error(
        sgld(m, lr = 1e-5, batch_size = 10, iter = 100, burnin = 0, chains = 2),
        paste0("^`", fun, "` ", b[[2]], ".*at iteration 31 of chain 1"))
      expect_identical(fit$status, c("failed", "not run"))
      expect_identical(fit$kept[1], from - 1)
      expect_identical(fit$stop_iter[1], as.double(from))
      x <- as.matrix(fit)
      expect_identical(nrow(x), from - 1L)
      expect_true(all(is.finite(x)))
      # the draws are those of a run that never failed
      set.seed(1)
      # (30 iterations: too few for the ESS, which warns)
      ok <- expect_run_warnings(sgld(handout_custom(handout[1:200, ]), lr = 1e-5,
                                     batch_size = 10, iter = 30, burnin = 0, chains = 1))
      expect_identical(x, as.matrix(ok))
    }
  }
})

test_that("a failing log density stops mala() with its name, keeping the draws", {
  # mala() evaluates the log densities once at the start and once per iteration
  from <- 21L
  for (fun in c("loglik", "logprior")) {
    for (kind in names(breakages)) {
      b <- breakages[[kind]]
      m <- failing_model(fun, b[[1]], from)
      set.seed(2)
      fit <- expect_model_error(
        mala(m, lr = 1e-5, iter = 100, burnin = 0, chains = 1),
        paste0("^`", fun, "` ", b[[2]], ".*at iteration 20 of chain 1"))
      expect_identical(fit$status, "failed")
      expect_identical(nrow(as.matrix(fit)), from - 2L)
      expect_true(all(is.finite(as.matrix(fit))))
    }
  }
  # -Inf is a point of zero density, not a failure: the proposal is rejected
  m <- failing_model("loglik", function(v) -Inf, 21L)
  set.seed(2)
  fit <- expect_run_warnings(mala(m, lr = 1e-5, iter = 40, burnin = 0, chains = 1))
  expect_identical(fit$status, "done")
  expect_identical(unname(as.matrix(fit)[40, ]), unname(as.matrix(fit)[19, ]))
})

test_that("a failure before the first iteration is reported as such", {
  m <- failing_model("loglik", function(v) stop("bad start"), 1L)
  fit <- expect_model_error(mala(m, lr = 1e-5, iter = 10, chains = 1),
                            "`loglik` failed: bad start \\(before the first iteration of chain 1\\)")
  expect_identical(fit$kept, 0)
  # evaluations outside a run fail with a plain error naming the function
  expect_error(log_posterior(m, c(0, 0, 0)), "^`loglik` failed: bad start$")
  m <- failing_model("grad_loglik", function(v) v[1:2], 1L)
  expect_error(stochastic_gradients(m, c(0, 1, 1), batch_size = 5, times = 3),
               "`grad_loglik` returned a vector of length 2; it must return a numeric vector of length 3")
  # a failed chain cannot be continued
  m <- failing_model("grad_loglik", function(v) stop("late"), 11L)
  fit <- tryCatch(sgld(m, lr = 1e-5, batch_size = 10, iter = 20, burnin = 0, chains = 1),
                  sgld_model_error = function(e) e$fit)
  expect_error(sgld(m, lr = 1e-5, batch_size = 10, iter = 20, init = fit, chains = 1),
               "`init`: chain 1 of the fit failed and cannot be continued")
})

test_that("warnings are re-issued after the run, and are errors under options(warn = 2)", {
  m <- failing_model("grad_logprior", function(v) { warning("prior is odd"); v }, 5L)
  set.seed(3)
  out <- with_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 20, burnin = 0, chains = 1))
  # the model's warning once, with its count (a run this short also warns
  # that its effective sample size is small)
  expect_identical(grep("grad_logprior", out$warnings, value = TRUE),
                   "`grad_logprior`: prior is odd (16 times)")
  expect_identical(out$value$status, "done")
  m <- failing_model("grad_logprior", function(v) { warning("prior is odd"); v }, 5L)
  old <- options(warn = 2)
  on.exit(options(old))
  set.seed(3)
  fit <- expect_model_error(sgld(m, lr = 1e-5, batch_size = 10, iter = 20, burnin = 0, chains = 1),
                            "`grad_logprior` failed: \\(converted from warning\\) prior is odd")
  expect_identical(fit$kept, 4)
})

test_that("a jump that skips the error handlers is stopped and reported", {
  m <- failing_model("grad_loglik", function(v) invokeRestart("abort"), 4L)
  fit <- expect_model_error(sgld(m, lr = 1e-5, batch_size = 10, iter = 20, burnin = 0, chains = 1),
                            "`grad_loglik` was left by a jump that skipped its error handling")
  expect_identical(fit$kept, 3)
})

test_that("an interrupt inside a function ends the run with a warning, keeping the draws", {
  # the condition R signals on Ctrl-C, raised from inside the gradient
  interrupt <- function(v) signalCondition(structure(class = c("interrupt", "condition"),
                                                     list(message = "", call = NULL)))
  m <- failing_model("grad_loglik", interrupt, 8L)
  out <- with_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 50, burnin = 0, chains = 2))
  fit <- out$value
  expect_identical(fit$status, c("interrupted", "not run"))
  expect_identical(fit$kept[1], 7)
  expect_identical(fit$stop_iter[1], 7)        # the last finished iteration
  expect_true(any(grepl("interrupted by the user at iteration 7 of chain 1", out$warnings)))
})

test_that("a real interrupt during a slow R function returns the draws made so far", {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  out <- interrupted_run(function(flag) {
    m <- model_custom(cbind(x = 1:100), d = 1,
      grad_loglik = function(w, batch) {
        if (!file.exists(flag)) writeLines("started", flag)
        Sys.sleep(0.01)
        -nrow(batch) * w
      },
      grad_logprior = function(w) -w)
    sgld(m, lr = 1e-3, batch_size = 5, iter = 1e6, burnin = 0, thin = 1, chains = 1)
  }, settle = 1, flag_first = FALSE)
  expect_identical(out$fit$status, "interrupted")
  expect_gte(out$fit$kept, 10)
  expect_identical(nrow(as.matrix(out$fit)), as.integer(out$fit$kept))
  expect_true(any(grepl("interrupted by the user", out$warnings)))
})
