# Chains run in chunks of iterations; between chunks the main thread polls for
# interrupts and draws the progress display (src/chunks.c, src/progress.c).

test_that("an interrupt stops 4 chains on 2 threads together, keeps every draw, and continues", {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  out <- interrupted_run(function(flag) {
    m <- model_linear(y ~ x, data = handout, prior = prior_nig())
    set.seed(1)
    sgld(m, lr = 1e-7, batch_size = 10, iter = 1e9, burnin = 0, thin = 1e4, chains = 4,
         threads = 2)
  }, settle = 2)   # thin 1e4: a draw is kept even on a slow (sanitizer, loaded) machine
  fit <- out$fit
  # all four stopped, at the end of the same chunk
  expect_identical(fit$status, rep("interrupted", 4))
  expect_identical(length(unique(fit$stop_iter)), 1L)
  expect_gt(fit$stop_iter[1], 1e4)
  expect_true(any(grepl("interrupted by the user at iteration [0-9]+ of chains 1, 2, 3, 4",
                        out$warnings)))
  # every draw made before the interrupt is there, at the right iterations
  expect_identical(fit$kept, rep(floor(fit$stop_iter[1] / 1e4), 4))
  expect_identical(nrow(fit$draws[[1]]), as.integer(fit$kept[1]))
  expect_identical(fit$iteration[fit$kept[1], ], rep(1e4 * fit$kept[1], 4))
  expect_identical(fit$state$iteration, fit$stop_iter)
  # and the run continues from where it stopped, as one run would have
  more <- expect_run_warnings(sgld(fit$model, lr = 1e-7, batch_size = 10, iter = 1000,
                                   burnin = 0, chains = 4, threads = 2, init = fit))
  expect_identical(more$iteration[1, ], fit$stop_iter + 1)
  expect_identical(more$status, rep("done", 4))
})

test_that("the progress display is drawn on stderr when on, and nothing when off", {
  m <- handout_model()
  run <- function(progress) {
    set.seed(1)
    capture.output(type = "message",
      # (batches of 10 at this step: the sampling threshold and Stein's check warn)
      fit <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 1e7, burnin = 0,
                                      thin = 1e4, chains = 2, progress = progress)))
  }
  on <- run(TRUE)
  # each redraw starts with a carriage return, so the line is overwritten in place
  lines <- strsplit(paste(on, collapse = ""), "\r", fixed = TRUE)[[1]]
  expect_true(any(grepl(paste0("^sgld +[0-9]+% \\| [0-9.]+[kM]?/20M it \\| [0-9.]+[kM]? it/s ",
                               "\\| [0-9ms]+ left \\| chains: 2 running, 0 done, 0 diverged"),
                        lines)))
  expect_match(lines[length(lines)],
               "^sgld 100% \\| 20M/20M it .* total \\| chains: 0 running, 2 done, 0 diverged")
  expect_identical(run(FALSE), character())
  # the default follows getOption("sgld.progress", interactive())
  withr_opt <- options(sgld.progress = TRUE)
  on.exit(options(withr_opt))
  set.seed(1)
  expect_match(paste(capture.output(type = "message",
    fit <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 1e7, burnin = 0,
                                    thin = 1e4, chains = 1))),
    collapse = ""), "10M/10M it")
})

test_that("a run expected to outlast the limit without progress says so, and warns", {
  m <- handout_model()
  old <- options(sgld.long_run_seconds = 0.01)
  on.exit(options(old))
  set.seed(1)
  note <- capture.output(type = "message", out <- with_warnings(
    sgld(m, lr = 1e-7, batch_size = 10, iter = 5e6, burnin = 0, thin = 1e4, progress = FALSE, chains = 1)))
  expect_match(paste(note, collapse = ""), "sgld: this run will take about .* hours")
  expect_true(any(grepl("this run was expected to take .* with no progress display; set `progress = TRUE`",
                        out$warnings)))
  expect_gt(out$value$expected_time, 0.01)
  # not with the display on, nor for a run within the limit
  options(sgld.long_run_seconds = 3600)
  set.seed(1)
  quiet <- capture.output(type = "message", out <- with_warnings(
    sgld(m, lr = 1e-7, batch_size = 10, iter = 5e6, burnin = 0, thin = 1e4, progress = FALSE, chains = 1)))
  expect_identical(quiet, character())
  expect_false(any(grepl("expected to take", out$warnings)))
})

test_that("the sampling time spans the iterations and leaves out the rest of the call", {
  f <- linear_custom_functions()
  slow <- f$grad_loglik
  f$grad_loglik <- function(w, batch) {
    Sys.sleep(0.02)   # 20 iterations: at least 0.4 s of sampling
    slow(w, batch)
  }
  m <- do.call(model_custom, c(list(data = cbind(1, handout$x, handout$y), d = 3), f))
  set.seed(1)
  fit <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 20, burnin = 0,
                                  init = c(0, 0, 0), chains = 1))
  expect_gte(fit$sampling_time, 0.4)
  expect_lte(fit$sampling_time, fit$time + 0.002)   # proc.time(), which times the call: 1 ms steps
  # auto's search and set-up count in time, not in sampling_time
  set.seed(1)
  # (2000 iterations of one chain are fewer than lr = "auto" would run: its ESS warns)
  auto <- expect_run_warnings(sgld(model_linear(y ~ x, data = handout, prior = prior_nig()),
                                   iter = 2000, chains = 1), "ess")
  expect_lt(auto$sampling_time, auto$time)
  expect_gt(auto$sampling_time, 0)
})
