# A fit's state, read back to continue it (`init = fit`), is checked before
# the engine sees it: each damage is an error that names it, never a hang or
# a run from nonsense.

state_fit <- function(sampler = sgld, chains = 2) {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(3)
  fit <- expect_run_warnings(sampler(m, lr = 1e-5, batch_size = 20, iter = 200, chains = chains))
  list(m = m, fit = fit, sampler = sampler, chains = chains)
}

continue_with <- function(x, fit) {
  expect_run_warnings(x$sampler(x$m, lr = 1e-5, batch_size = 20, iter = 50, burnin = 0,
                            chains = x$chains, init = fit))
}

test_that("a random stream that is all zero is an error, in R and in the engine, not a hang", {
  skip_if_not_installed("callr")
  # in a child with a time limit: an all-zero stream of xoshiro256 never
  # moves, and the minibatch sampler's rejection loop would spin on it
  out <- callr::r(function() {
    library(sgld)
    m <- model_logistic(type ~ ., data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)
    set.seed(3)
    fit <- sgld(m, lr = 1e-5, batch_size = 20, iter = 200, chains = 2)
    caught <- function(expr) tryCatch({ expr; "no error" }, error = conditionMessage)
    main <- fit
    main$state$rng[33:64] <- as.raw(0)           # chain 2's main stream
    diag <- fit
    diag$state$rng[65:96] <- as.raw(0)           # chain 1's diagnostics stream
    # the engine itself, given such a stream without R's check
    s <- sgld:::run_settings(m, lr = 1e-5, batch_size = 20, iter = 50, burnin = 0, thin = 1,
                             temperature = 1, chains = 2, init = NULL, replace = FALSE,
                             clip = NULL)
    s$rng_init <- raw(128)
    list(main = caught(sgld(m, lr = 1e-5, batch_size = 20, iter = 50, chains = 2, init = main)),
         diag = caught(sgld(m, lr = 1e-5, batch_size = 20, iter = 50, chains = 2, init = diag,
                            diagnostics = diagnostics_every(10))),
         engine = caught(.Call(sgld:::C_sgld_run, m, s)))
  }, timeout = 60)
  expect_match(out$main, paste0("`init`: the state of the fit to continue is damaged: `state\\$rng` ",
                                "holds an all-zero random stream \\(the main stream of chain 2\\)"))
  expect_match(out$main, "Start afresh, e.g. from `init = fit\\$last`")
  expect_match(out$diag, "all-zero random stream \\(the diagnostics stream of chain 1\\)")
  expect_match(out$engine, "a chain's random stream of the fit to continue is all zero")
})

test_that("each damaged part of a fit's state is named", {
  x <- state_fit()
  damage <- function(f) { fit <- x$fit; f(fit) }
  err <- function(f, pattern) expect_error(continue_with(x, damage(f)), pattern)
  err(function(fit) { fit$state$rng <- fit$state$rng[1:10]; fit },
      "`state\\$rng` must be a raw vector of 128 bytes \\(two random streams of 32 bytes per chain\\), not 10 bytes")
  err(function(fit) { fit$state$rng <- as.integer(fit$state$rng); fit },
      "`state\\$rng` must be a raw vector of 128 bytes .*not an integer vector of length 128")
  err(function(fit) { fit$state$iteration <- c(-5, 200); fit },
      "`state\\$iteration` must hold 2 whole numbers of iterations, at least 0")
  err(function(fit) { fit$state$iteration <- c(NaN, 200); fit }, "`state\\$iteration`.*it is")
  err(function(fit) { fit$state$iteration <- c(200.5, 200); fit }, "`state\\$iteration`")
  err(function(fit) { fit$state$iteration <- 200; fit }, "`state\\$iteration`")
  err(function(fit) { fit$state$w[2, 3] <- NaN; fit },
      "`state\\$w` has the non-finite value NaN \\(chain 2\\)")
  err(function(fit) { fit$state$w <- fit$state$w[, -1]; fit },
      "`state\\$w` must be a numeric matrix with 8 columns")
  # a rule with a state of its own: SGHMC's momenta
  h <- state_fit(sghmc)
  bad <- h$fit
  bad$state$update <- bad$state$update[-1, , drop = FALSE]
  expect_error(continue_with(h, bad),
               "`state\\$update` must hold 16 numbers \\(8 per chain for the rule SGHMC\\), not 14")
  bad <- h$fit
  bad$state$update[3] <- Inf
  expect_error(continue_with(h, bad), "`state\\$update` \\(the state of the rule SGHMC\\) has the non-finite value Inf")
  # an intact fit continues, as one run would have
  more <- continue_with(h, h$fit)
  expect_identical(more$status, rep("done", 2))
  expect_identical(more$iteration[1, ], h$fit$state$iteration + 1)
})
