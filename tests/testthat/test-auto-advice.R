# Advice that fits the run: automatic runs record their settings before they
# run, every ESS or length advice counts the run as it was, a chain that did
# not move is told about its step, and init = fit continues an automatic run
# with its own settings.

advice_iters <- function(warnings) {
  hits <- regmatches(warnings, gregexpr("iter = [0-9,]+", warnings))
  as.numeric(gsub("[^0-9]", "", unlist(hits)))
}

test_that("a short automatic run's advice counts its whole length, never fewer iterations", {
  m <- model_logistic(type ~ ., data = pima())
  set.seed(1)
  got <- with_warnings(sgld(m, iter = 1000, chains = 2))
  fit <- got$value
  # the run continued its warm-up: the fit records the run as a whole
  expect_identical(fit$settings$iter, 1000)
  expect_identical(fit$settings$burnin, fit$auto$burnin)
  expect_identical(fit$auto$settings$iter, 1000)
  advice <- advice_iters(got$warnings)
  expect_true(all(advice > 1000))
  # print() promises the effective draws the plan expects of this length,
  # and says what the run reached when it fell short
  planned <- fit$auto$settings$expected_ess
  expect_lt(planned, fit$auto$target_ess)
  # print() repeats the run's convergence warnings (asserted above)
  shown <- function() quietly_checked(print(fit), "convergence")
  expect_output(shown(), sprintf("for about %s\\s+effective\\s+draws",
                                 format(planned, big.mark = ",")))
  reached <- fit$checks$convergence$ess_min
  if (reached < 0.9 * planned)
    expect_output(shown(), "reached a smallest effective sample size of")
  expect_false(any(grepl("about 2,000 effective draws", capture.output(shown()))))
})

test_that("a chain that did not move is told about its step, not its length", {
  m <- model_logistic(type ~ ., data = pima())
  set.seed(2)
  got <- with_warnings(mala(m, lr = 100, iter = 400, chains = 2))
  expect_identical(got$value$acceptance, c(0, 0))
  moved <- grep("did not move", got$warnings, value = TRUE)
  expect_length(moved, 1)
  expect_match(moved, "chains 1, 2 did not move \\(acceptance 0, 0\\).*smaller `lr`")
  expect_false(any(grepl("effective sample size is below|R-hat", got$warnings)))
  expect_length(advice_iters(got$warnings), 0)
  # an unadjusted step too small to change a value
  set.seed(2)
  got <- with_warnings(sgld(m, lr = 1e-300, iter = 200, chains = 1, init = rep(0.5, m$d)))
  expect_match(got$warnings, "chain 1 did not move: every stored draw is the same.*step `lr`",
               all = FALSE)
  expect_length(advice_iters(got$warnings), 0)
})

test_that("an automatic run stopped after its warm-up says so, and init = fit finishes it", {
  m <- model_logistic(type ~ ., data = pima())
  run <- function() sgld(m, iter = 3000, chains = 2)
  set.seed(3)
  whole <- quietly_checked(run())
  # an interrupt as the run proper starts: the warm-up's draws come back
  suppressMessages(trace("run_sampler", where = asNamespace("sgld"), print = FALSE,
        tracer = quote(if (!is.null(as_run)) signalCondition(
          structure(class = c("interrupt", "condition"), list(message = "", call = NULL))))))
  untraced <- FALSE
  untrace_it <- function() if (!untraced) {
    suppressMessages(untrace("run_sampler", where = asNamespace("sgld")))
    untraced <<- TRUE
  }
  on.exit(untrace_it(), add = TRUE)
  set.seed(3)
  got <- with_warnings(run())
  untrace_it()
  warm <- got$value
  expect_match(got$warnings, "interrupted after its warm-up", all = FALSE)
  expect_identical(warm$status, c("warm-up", "warm-up"))
  expect_identical(warm$auto$interrupted, "warm-up")
  a <- warm$auto$settings
  expect_identical(a$rule$name, whole$auto$settings$rule$name)
  expect_identical(a$batch_size, whole$auto$batch_size)
  expect_identical(a$iter, 3000)
  # following the warning: with `lr` given, or with nothing given; either
  # gives the draws of the run that was not interrupted
  set.seed(4)
  more <- quietly_checked(sgld(m, lr = warm$auto$lr, init = warm))
  expect_identical(more$rule, whole$rule)
  expect_identical(unname(as.array(more)), unname(as.array(whole)))
  set.seed(4)
  more <- quietly_checked(sgld(m, init = warm))
  expect_identical(unname(as.array(more)), unname(as.array(whole)))
  expect_identical(more$status, c("done", "done"))
  expect_true(more$auto$continued)
  # a finished automatic run continued: its settings, as long again, no burn-in
  again <- quietly_checked(sgld(m, init = whole))
  expect_identical(again$rule, whole$rule)
  expect_identical(again$settings$batch_size, whole$settings$batch_size)
  expect_identical(again$settings$iter, 3000 - whole$auto$burnin)
  expect_identical(again$settings$burnin, 0)
  # settings given are taken: another batch size
  other <- quietly_checked(sgld(m, init = whole, batch_size = 50, iter = 100))
  expect_identical(other$settings$batch_size, 50)
})
