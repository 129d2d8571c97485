# Update rules other than plain SGLD: each against the exact posterior or mode,
# continuation from a fit's state, and composition of options.

# sds and means of a fit against the exact posterior of the handout model,
# with a check that the run is long enough for the tolerances to mean something
expect_exact_posterior <- function(fit, ex, mean_tol = 0.15, sd_tol = 0.10) {
  s <- summary(fit)$statistics[names(ex$mean), ]   # the parameters (sigma is derived)
  mcse <- s[, "sd"] / sqrt(s[, "n_eff"])
  expect_true(all(3 * mcse < mean_tol * ex$sd), info = paste("ESS", format(s[, "n_eff"])))
  z <- abs(s[, "mean"] - ex$mean) / ex$sd
  expect_true(all(z < mean_tol), info = paste(fit$rule, names(z), format(z), collapse = "; "))
  ratio <- s[, "sd"] / ex$sd
  expect_true(all(abs(ratio - 1) < sd_tol),
              info = paste(fit$rule, names(ratio), format(ratio), collapse = "; "))
}

test_that("pSGLD reproduces the exact posterior", {
  # The RMSprop scaling makes each coordinate's effective step about
  # eta / |g_bar| ~ 15 eta here. alpha = 0.999: with the default 0.99 and this
  # small a step, v follows the chain's position, G varies across the
  # posterior, and the sd of sigma2 came out 1.33 times too large (see
  # ?update_rules); at 0.999 the sd ratios were 1.05, 1.05, 1.04.
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(11)
  fit <- psgld(m, lr = 1.5e-8, alpha = 0.999, batch_size = 1000, iter = 2e5, burnin = 1e4,
               thin = 50, chains = 2)
  expect_identical(fit$rule, "pSGLD (RMSprop preconditioner)")
  expect_exact_posterior(fit, ex)
  # the averages of squared gradients are kept per chain, and are positive
  expect_identical(dim(fit$state$update), c(3L, 2L))
  expect_true(all(fit$state$update > 0))
})

test_that("SGLD with a fixed preconditioner reproduces the exact posterior", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  # P = the posterior covariance on the sampler's scale (diagonal): every
  # coordinate then mixes at the same rate, with a learning rate near 0.01
  # instead of 2e-7
  P <- diag(c(ex$sd[1:2]^2, (ex$sd[3] / ex$mean[3])^2))
  set.seed(12)
  fit <- sgld(m, lr = 0.01, batch_size = 1000, iter = 1.5e5, burnin = 1e4, thin = 50,
              chains = 2, precondition = P)
  expect_exact_posterior(fit, ex)
  # a full (non-diagonal) P goes through its Cholesky factor: same target
  P2 <- P + 0.5 * sqrt(outer(diag(P), diag(P))) * (1 - diag(3))
  P2[3, ] <- P2[, 3] <- c(0, 0, P[3, 3])
  set.seed(13)
  fit2 <- sgld(m, lr = 0.01, batch_size = 1000, iter = 1.5e5, burnin = 1e4, thin = 50,
               chains = 2, precondition = P2)
  expect_exact_posterior(fit2, ex)
})

test_that("SGHMC reproduces the exact posterior", {
  # Control variates remove most of the gradient noise, whose variance would
  # otherwise add eta^2 Var(g_hat) per step to the 2 a eta of the injected noise.
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(14)
  fit <- sghmc(m, lr = 5e-8, friction = 0.05, batch_size = 100, iter = 1.5e5, burnin = 1e4,
               thin = 50, chains = 2, control_variates = TRUE)
  expect_identical(fit$rule, "SGHMC")
  expect_exact_posterior(fit, ex)
})

test_that("SGHMC with friction 1 is SGLD, draw for draw", {
  m <- handout_model()
  set.seed(15)
  # (a step this small barely moves the chain: the run checks warn)
  a <- expect_run_warnings(sghmc(m, lr = 1e-7, friction = 1, batch_size = 50, iter = 2000,
                                 chains = 1))
  set.seed(15)
  b <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 50, iter = 2000, chains = 1))
  expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-12)
})

test_that("each SGD variant reaches the posterior mode", {
  # Full batches, so that the only error is the optimiser's own; settings
  # found by trying a few learning rates from the handout's start.
  m <- handout_model()
  mode <- linear_exact_posterior(m)$mode
  start <- c(1.1, -2, 1)
  runs <- list(
    momentum = list(lr = 1e-6, iter = 3000),
    adagrad = list(lr = 0.5, iter = 5000),
    rmsprop = list(lr = lr_exp(0.05, 1e-8), iter = 5000),
    adam = list(lr = lr_exp(0.1, 1e-5), iter = 5000)
  )
  for (opt in names(runs)) {
    fit <- sgd(m, lr = runs[[opt]]$lr, batch_size = m$n, iter = runs[[opt]]$iter,
               optimizer = opt, init = start)
    w <- fit$state$w[1, ]
    err <- max(abs(w - mode) / abs(mode))
    expect_lt(err, 1e-4, label = paste(opt, "relative error", format(err)))
    # and it moved: the start is far from the mode
    expect_gt(max(abs(c(start[1:2], log(start[3])) - mode)), 1)
  }
  # the same optimisers given as objects with settings
  fit <- sgd(m, lr = lr_exp(0.1, 1e-5), batch_size = m$n, iter = 5000, init = start,
             optimizer = opt_adam(beta1 = 0.8, beta2 = 0.99))
  expect_lt(max(abs(fit$state$w[1, ] - mode) / abs(mode)), 1e-4)
  expect_identical(fit$rule, "SGD (Adam)")
})

test_that("with minibatches the SGD variants end near the mode", {
  # with minibatch noise the end point scatters around the mode by a small
  # fraction of a posterior sd once the learning rate has decayed
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  sd_sampler <- c(ex$sd[1:2], ex$sd[3] / ex$mean[3])
  set.seed(16)
  for (opt in c("rmsprop", "adam")) {
    fit <- sgd(m, lr = lr_exp(0.01, 1e-6), batch_size = 100, iter = 2e4, optimizer = opt,
               init = c(1.1, -2, 1))
    z <- abs(fit$state$w[1, ] - ex$mode) / sd_sampler
    expect_true(all(z < 0.5), info = paste(opt, format(z), collapse = " "))
  }
})

test_that("a continued run gives the draws of one long run", {
  m <- handout_model()
  check_continuation <- function(run, label) {
    set.seed(21)
    long <- run(4000, NULL)
    set.seed(21)
    first <- run(2000, NULL)
    set.seed(999)   # the continuation must not depend on R's generator
    second <- run(2000, first)
    rows <- function(fit, c) matrix(fit$draws[[c]], ncol = m$d)
    for (c in seq_along(long$draws))
      expect_identical(rbind(rows(first, c), rows(second, c)), rows(long, c),
                       label = paste(label, "chain", c))
    expect_identical(second$state, long$state, label = label)
    expect_identical(coda::mcpar(second$draws[[1]]), c(2001, 4000, 1))
    expect_true(all(second$iteration[1, ] == 2001))
  }
  # (thin = 1: every draw, so that the two halves are the long run's rows)
  # a decaying schedule is evaluated at the chain's own iteration count
  lr <- lr_poly(1e-6, 100, 0.55)
  # (the samplers' short runs with tiny steps warn from their run checks)
  expect_run_warnings(check_continuation(function(iter, init) psgld(m, lr = 1e-8,
    batch_size = 100, iter = iter, burnin = 0, thin = 1, chains = 2, init = init), "pSGLD"))
  expect_run_warnings(check_continuation(function(iter, init) sghmc(m, lr = 2e-8,
    batch_size = 100, iter = iter, burnin = 0, thin = 1, chains = 2, init = init, threads = 2),
    "SGHMC"))
  check_continuation(function(iter, init) sgd(m, lr = 1e-3, batch_size = 100, iter = iter,
                     optimizer = "adam", init = init), "Adam")
  check_continuation(function(iter, init) sgd(m, lr = 1e-7, batch_size = 100, iter = iter,
                     optimizer = "momentum", init = init), "momentum")
  # large batches (partial shuffles) and a decaying schedule
  expect_run_warnings(check_continuation(function(iter, init) sgld(m, lr = lr,
    batch_size = 7000, iter = iter, burnin = 0, thin = 1, init = init, chains = 1),
    "SGLD, batch > n/2"))
})

test_that("continuing checks that the fit matches the run", {
  m <- handout_model()
  set.seed(1)
  fit <- expect_run_warnings(psgld(m, lr = 1e-8, batch_size = 100, iter = 500, chains = 2,
                                   burnin = 0))
  expect_error(sgld(m, lr = 1e-8, batch_size = 100, iter = 500, chains = 2, init = fit),
               "`init`: the fit to continue used the update rule pSGLD")
  expect_error(psgld(m, lr = 1e-8, batch_size = 100, iter = 500, chains = 2, init = fit,
                     alpha = 0.9), "other settings")
  expect_error(psgld(m, lr = 1e-8, batch_size = 100, iter = 500, chains = 1, init = fit),
               "`init`: the fit to continue has 2 chains; set `chains = 2`")
  other <- model_linear(y ~ 1, data = sgld::handout, prior = prior_nig())
  expect_error(psgld(other, lr = 1e-8, batch_size = 100, iter = 500, chains = 2, init = fit),
               "different model")
  set.seed(2)
  bad <- expect_run_warnings(sgld(m, lr = 1, batch_size = 10, iter = 100, burnin = 0,
                                  chains = 1), "diverged")
  expect_identical(bad$status, "diverged")
  expect_error(sgld(m, lr = 1e-8, iter = 100, init = bad, chains = 1), "diverged and cannot be continued")
})

test_that("an interrupted chain continues from where it stopped", {
  # simulate the driver's record of a chain stopped at iteration 700 of 1000:
  # continuing must start at 701
  m <- handout_model()
  set.seed(5)
  fit <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 1000, burnin = 0,
                                  chains = 1))
  fit$status <- "interrupted"
  fit$state$iteration <- 700
  more <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 10, iter = 10, burnin = 0,
                                   init = fit, chains = 1))
  expect_identical(more$iteration[1, 1], 701)
})

test_that("the options compose: pSGLD with control variates, thinning, 4 chains on 2 threads", {
  m <- handout_model()
  ex <- linear_exact_posterior(m)
  set.seed(31)
  fit <- psgld(m, lr = 3e-8, batch_size = 100, iter = 1.6e5, burnin = 1e4, thin = 40,
               chains = 4, threads = 2, control_variates = TRUE)
  expect_identical(nchain <- length(fit$draws), 4L)
  expect_identical(nrow(fit$draws[[1]]), as.integer((1.6e5 - 1e4) / 40))
  expect_exact_posterior(fit, ex)
  # the same on one thread, bit for bit
  set.seed(31)
  one <- psgld(m, lr = 3e-8, batch_size = 100, iter = 1.6e5, burnin = 1e4, thin = 40,
               chains = 4, threads = 1, control_variates = TRUE)
  expect_identical(as.array(one), as.array(fit))
})

test_that("update rules and optimisers reject bad settings by name", {
  m <- handout_model()
  expect_error(sgd(m, lr = 0.1, optimizer = "adamw"), "`optimizer` must be one of")
  expect_error(sgd(m, lr = 0.1, optimizer = precond_rmsprop()), "`optimizer` must be NULL")
  expect_error(sgd(m, lr = 0.1, optimizer = 3), "`optimizer` must be one of|`optimizer` must be NULL")
  expect_error(sgld(m, lr = 0.1, precondition = "adam", chains = 1), "`precondition` must be NULL")
  expect_error(sgld(m, lr = 0.1, precondition = opt_adam(), chains = 1), "`precondition` must be NULL")
  expect_error(sgld(m, lr = 0.1, precondition = diag(2), chains = 1), "`precondition` must be a finite 3 x 3")
  expect_error(sgld(m, lr = 0.1, precondition = -diag(3), chains = 1), "positive definite")
  expect_error(precond_rmsprop(alpha = 1), "`alpha` must be less than 1")
  expect_error(precond_rmsprop(lambda = 0), "`lambda` must be greater than 0")
  expect_error(precond_rmsprop(v_init = -1), "`v_init` must be at least 0")
  expect_error(opt_momentum(momentum = NA), "`momentum` must be a single finite number")
  expect_error(opt_adam(beta2 = 1.5), "`beta2` must be less than 1")
  expect_error(opt_rmsprop(eps = -1), "`eps` must be greater than 0")
  expect_error(sghmc(m, lr = 1e-8, friction = 0, chains = 1), "`friction` must be greater than 0")
  expect_error(sghmc(m, lr = 1e-8, friction = 2, chains = 1), "`friction` must be at most 1")
  expect_error(psgld(m, lr = 1e-8, alpha = "a", chains = 1), "`alpha` must be a single finite number")
})

test_that("printing names the update rule", {
  m <- handout_model()
  set.seed(1)
  fit <- expect_run_warnings(psgld(m, lr = 1e-8, batch_size = 100, iter = 200, chains = 1))
  out <- capture.output(expect_run_warnings(print(fit)))   # print() says the ESS again
  expect_match(out[1], "^pSGLD \\(RMSprop preconditioner\\) on sgld_model_linear")
  out <- capture.output(print(sgd(m, lr = 1e-3, iter = 100, optimizer = "adam")))
  expect_match(out[1], "^SGD \\(Adam\\) on")
  # each rule's settings under the names of its own arguments
  expect_output(print(opt_adam()), "Update rule: SGD \\(Adam\\) \\(beta1 = 0.9, beta2 = 0.999, eps = 1e-08\\)")
  expect_output(print(precond_rmsprop()), "\\(alpha = 0.99, lambda = 1e-05\\)")
  expect_output(print(opt_momentum(0.5)), "SGD with momentum \\(momentum = 0.5\\)")
})

test_that("each rule's options hold its own fields, which the engine reads by name", {
  expect_identical(names(precond_rmsprop()$opts), c("alpha", "lambda", "v_init"))
  expect_identical(names(opt_adam()$opts), c("beta1", "beta2", "eps"))
  expect_identical(names(opt_rmsprop()$opts), c("rho", "eps"))
  expect_identical(names(opt_adagrad()$opts), "eps")
  expect_identical(names(opt_momentum()$opts), "momentum")
  m <- handout_model()
  rule <- sgld:::resolve_precondition(diag(3), m)
  expect_identical(rule$opts, list(chol = as.double(diag(3))))
  # every rule R makes is in the engine's table
  expect_true(all(c("sgld", "precond", "psgld", "sghmc", "momentum", "adagrad", "rmsprop",
                    "adam", "natural") %in% sgld:::engine_codes()$rules))
  # a missing field is an internal error that names it
  bad <- opt_adam()
  bad$opts$beta2 <- NULL
  expect_error(sgd(m, lr = 1e-3, iter = 10, optimizer = bad), "internal: element 'beta2' is missing")
  bad <- sgld:::update_rule("nosuch", "none")
  expect_error(sgd(m, lr = 1e-3, iter = 10, optimizer = bad), "internal: unknown update rule 'nosuch'")
})

test_that("fits saved before the rules owned their options can be continued", {
  m <- handout_model()
  # the state of such a fit: one shared set of options, and a fixed
  # preconditioner's factor beside them
  legacy <- function(fit, opts, chol = NULL) {
    fit$state$rule$opts <- opts
    fit$state$rule$chol <- chol
    fit
  }
  set.seed(3)
  long <- sgd(m, lr = 1e-3, batch_size = 100, iter = 400, optimizer = opt_adam(beta1 = 0.8))
  set.seed(3)
  first <- sgd(m, lr = 1e-3, batch_size = 100, iter = 200, optimizer = opt_adam(beta1 = 0.8))
  old <- legacy(first, list(rho = 0.999, beta = 0.8, eps = 1e-8, friction = 0, v_init = 0))
  second <- sgd(m, lr = 1e-3, batch_size = 100, iter = 200, optimizer = opt_adam(beta1 = 0.8),
                init = old)
  expect_identical(second$state$w, long$state$w)
  expect_error(sgd(m, lr = 1e-3, batch_size = 100, iter = 200, optimizer = opt_adam(), init = old),
               "other settings")
  P <- diag(c(2, 1, 0.5))
  set.seed(4)
  first <- expect_run_warnings(sgld(m, lr = 1e-8, batch_size = 100, iter = 200, burnin = 0,
                                    precondition = P, chains = 1))
  old <- legacy(first, list(rho = 0, beta = 0, eps = 0, friction = 0, v_init = 0),
                chol = first$state$rule$opts$chol)
  # accepted (a 10-iteration run draws the run checks' warnings, which are not the point)
  expect_error(expect_run_warnings(sgld(m, lr = 1e-8, batch_size = 100, iter = 10, burnin = 0,
                                        precondition = P, init = old, chains = 1)), NA)
  expect_error(sgld(m, lr = 1e-8, batch_size = 100, iter = 10, burnin = 0, precondition = 2 * P,
                    init = old, chains = 1), "other settings")
})

test_that("the sampling threshold is measured in the preconditioned frame", {
  # with P = c I the threshold alpha = eta n^2 lambda_max(P^1/2 V P^1/2) / (2m)
  # is c times the plain one; a negligible step keeps both chains at the start
  m <- handout_model()
  run <- function(P) {
    set.seed(1)
    expect_run_warnings(sgld(m, lr = 1e-15, batch_size = 100, iter = 20, burnin = 0,
                             precondition = P, diagnostics = diagnostics_every(10),
                             chains = 1))$diagnostics$alpha
  }
  plain <- run(NULL)
  expect_equal(run(4 * diag(3)) / plain, c(4, 4), tolerance = 1e-6)
  # pSGLD: P = diag(1 / (lambda + sqrt(v))) changes it too
  set.seed(1)
  ps <- expect_run_warnings(psgld(m, lr = 1e-15, batch_size = 100, iter = 20, burnin = 0,
                                  diagnostics = diagnostics_every(10), chains = 1))$diagnostics$alpha
  expect_false(isTRUE(all.equal(ps, plain)))
})
