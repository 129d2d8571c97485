# The learning rate of every iteration is recorded with the draws, so a
# gradient-descent run with thin = 1 shows the schedule the engine used.
etas <- function(lr, iter) {
  # (a decay outside (0.5, 1] is tried on purpose: its warning is muffled)
  fit <- quietly_checked(sgd(model_linear(y ~ x1, data = small_data(), prior = prior_nig()),
                             lr = lr, batch_size = 10, iter = iter), "schedule")
  fit$lr[, 1]
}

test_that("a bare number is a constant schedule", {
  expect_identical(etas(1e-4, 50), rep(1e-4, 50))
  expect_identical(etas(lr_constant(1e-4), 50), rep(1e-4, 50))
})

test_that("lr_poly follows a (b + t)^-gamma", {
  expect_equal(etas(lr_poly(a = 0.01, b = 3, gamma = 0.55), 200),
               0.01 * (3 + 1:200)^-0.55, tolerance = 1e-14)
  expect_equal(etas(lr_poly(a = 0.01, b = 3, gamma = 0.55, floor = 0.003), 200),
               pmax(0.003, 0.01 * (3 + 1:200)^-0.55), tolerance = 1e-14)
})

test_that("lr_range runs from start at t = 1 to end at t = T", {
  e <- etas(lr_range(start = 1e-3, end = 1e-5, gamma = 0.55), 5000)
  expect_equal(e[1], 1e-3, tolerance = 1e-12)
  expect_equal(e[5000], 1e-5, tolerance = 1e-12)
  expect_true(all(diff(e) < 0))
})

test_that("lr_piecewise is constant, decays, then holds", {
  e <- etas(lr_piecewise(C0 = 1e-4, T0 = 30, T1 = 60, s = 0.51), 100)
  expect_identical(e[1:30], rep(1e-4, 30))
  expect_equal(e[31:60], 1e-4 * (31:60 - 30)^-0.51, tolerance = 1e-14)
  expect_equal(e[61:100], rep(1e-4 * 30^-0.51, 40), tolerance = 1e-14)
})

test_that("schedules check their arguments", {
  expect_error(lr_constant(-1), "`eta` must be greater than 0")
  expect_error(lr_constant(NA), "`eta` must be a single finite number")
  expect_error(lr_poly(a = 1, b = -1), "`b` must be at least 0")
  expect_warning(lr_poly(a = 1, gamma = 0.4), "Robbins-Monro")
  expect_warning(lr_poly(a = 1, gamma = 1.5), "Robbins-Monro")
  expect_error(lr_range(start = 1e-5, end = 1e-3), "`end` must be smaller than `start`")
  expect_error(lr_piecewise(C0 = 1, T0 = 10, T1 = 5), "`T1` must be greater than `T0`")
  expect_error(lr_piecewise(C0 = 1, T0 = 1.5, T1 = 5), "`T0` must be a single whole number")
  expect_output(print(lr_range(0.01, 1e-4)), "from 0.01 at t = 1 to 0.0001 at the last", fixed = TRUE)
})

test_that("lr_exp decays exponentially between its ends, and lr_values agrees with the engine", {
  e <- etas(lr_exp(1e-3, 1e-7), 101)
  expect_equal(e, 1e-3 * (1e-4)^((0:100) / 100), tolerance = 1e-13)
  expect_equal(lr_values(lr_exp(1e-3, 1e-7), 1:101), e)
  expect_equal(lr_values(lr_range(1e-3, 1e-5), c(1, 5000)), c(1e-3, 1e-5))
  expect_error(lr_exp(1e-7, 1e-3), "`end` must be smaller than `start`")
  expect_error(lr_values(1e-3, 0), "`t` must be whole numbers from 1")
})

# short runs about the schedules, not the posterior: their checks may warn
quiet <- function(x) quietly_checked(x)

# lr_cyclical() directly from its definition: cycles of L = ceiling(T / M)
# iterations, r = mod(t - 1, L) / L, eta = (a / 2) (cos(pi r) + 1); sampling
# where r >= beta.
cyclical_r <- function(t, iter, cycles) {
  L <- ceiling(iter / cycles)
  ((t - 1) %% L) / L
}

test_that("lr_cyclical follows (a/2)(cos(pi r) + 1) in cycles of ceiling(T/M)", {
  for (case in list(c(iter = 100, cycles = 4), c(iter = 103, cycles = 4), c(iter = 50, cycles = 1),
                    c(iter = 7, cycles = 7))) {
    t <- seq_len(case[["iter"]])
    r <- cyclical_r(t, case[["iter"]], case[["cycles"]])
    expect_identical(lr_values(lr_cyclical(0.3, case[["cycles"]]), t), 0.15 * (cos(pi * r) + 1))
  }
  # every cycle starts at a and falls towards 0; the last one of 103 is cut short
  e <- lr_values(lr_cyclical(2, 4), 1:103)
  expect_identical(e[c(1, 27, 53, 79)], rep(2, 4))
  expect_true(all(diff(e[1:26]) < 0) && all(diff(e[79:103]) < 0))
  expect_equal(e[26], 1 - cos(pi / 26), tolerance = 1e-14)
  # with beta = 0 every iteration samples, so sgd() keeps the whole trajectory
  # and its recorded learning rates are the schedule's
  expect_identical(etas(lr_cyclical(1e-4, 3, beta = 0), 90),
                   lr_values(lr_cyclical(1e-4, 3, beta = 0), 1:90))
  expect_output(print(lr_cyclical(1e-3, 4, 0.8)), "cyclical cosine from 0.001, 4 cycles, the first 0.8 of each exploring (optimising)", fixed = TRUE)
})

test_that("a cyclical schedule keeps draws only in the sampling part of each cycle", {
  m <- model_linear(y ~ x1, data = small_data(), prior = prior_nig())
  iter <- 103
  r <- cyclical_r(1:iter, iter, 4)
  sampling <- which(r >= 0.8)
  expect_identical(sampling, c(22:26, 48:52, 74:78, 100:103))
  # thinning counts each sampling part from its start; burn-in comes first
  expected <- function(thin, burnin) {
    unlist(lapply(split(sampling[sampling > burnin], cumsum(c(1, diff(sampling[sampling > burnin]) > 1))),
                  function(run) run[seq_along(run) %% thin == 0]), use.names = FALSE)
  }
  for (case in list(c(thin = 1, burnin = 0), c(thin = 2, burnin = 0), c(thin = 2, burnin = 49),
                    c(thin = 5, burnin = 0))) {
    set.seed(4)
    fit <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0.8), batch_size = 10, iter = iter,
                      burnin = case[["burnin"]], thin = case[["thin"]], chains = 2))
    want <- expected(case[["thin"]], case[["burnin"]])
    expect_identical(fit$iteration, matrix(as.double(want), length(want), 2), label = toString(case))
    expect_identical(fit$lr[, 1], lr_values(lr_cyclical(1e-4, 4, 0.8), want, iter = iter))
    # coda counts kept draws, not iterations, at irregular iterations
    expect_identical(coda::mcpar(fit$draws[[1]]), c(1, length(want), 1))
    expect_identical(nrow(fit$draws[[2]]), length(want))
  }
  # thin = 2, burnin = 49: the second part (48-52) is entered at 50, so 51 is its 2nd
  expect_identical(expected(2, 49), c(51L, 75L, 77L, 101L, 103L))
  # exploring by sampling, the run's draws at the kept iterations equal those of a
  # run that keeps every iteration: the collector chooses, the chain does not change
  set.seed(4)
  all_it <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0.8, explore = "sample"), batch_size = 10,
                       iter = iter, burnin = 0, chains = 1))
  set.seed(4)
  every <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0), batch_size = 10, iter = iter, burnin = 0, chains = 1))
  expect_false(identical(all_it$iteration[, 1], every$iteration[, 1]))
  expect_identical(as.matrix(all_it$draws[[1]]), as.matrix(every$draws[[1]])[sampling, , drop = FALSE],
                   ignore_attr = TRUE)
  # a mixing distance sums the learning rates from the start of each sampling part
  set.seed(4)
  fit <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0.8), batch_size = 10, iter = iter, burnin = 0,
                    thin = mixing_distance(5e-6), chains = 1))
  e <- lr_values(lr_cyclical(1e-4, 4, 0.8), 1:iter)
  want <- unlist(lapply(split(sampling, cumsum(c(1, diff(sampling) > 1))), function(run) {
    kept <- integer(); acc <- 0
    for (t in run) { acc <- acc + e[t]; if (acc >= 5e-6) { kept <- c(kept, t); acc <- 0 } }
    kept
  }), use.names = FALSE)
  expect_gt(length(want), 0)
  expect_identical(fit$iteration[, 1], as.double(want))
})

test_that("exploring by optimisation takes noiseless steps, then samples", {
  m <- model_linear(y ~ x1, data = small_data(), prior = prior_nig())
  # one run of 2 cycles of 40 iterations, the first 30 of each exploring ...
  lr <- lr_cyclical(1e-4, 2, 0.75)
  set.seed(5)
  one <- quiet(sgld(m, lr = lr, batch_size = 10, iter = 80, burnin = 0, thin = 2, chains = 1))
  expect_identical(one$iteration[, 1], as.double(c(seq(32, 40, 2), seq(72, 80, 2))))
  # ... is sgd() over each exploring part and sgld() over each sampling part, continued
  # one from the other with the whole run's schedule (the plain rule draws no noise at
  # temperature 0, so the random streams stay in step)
  whole <- structure(list(type = "resolved", schedule = sgld:::resolve_lr(lr, 80)), class = "sgld_lr")
  set.seed(5)
  fit <- NULL
  parts <- list()
  for (cycle in 1:2) {
    fit <- quiet(sgd(m, lr = whole, batch_size = 10, iter = 30, init = fit))
    fit <- quiet(sgld(m, lr = whole, batch_size = 10, iter = 10, burnin = 0, thin = 2, init = fit, chains = 1))
    parts[[cycle]] <- as.matrix(fit$draws[[1]])
  }
  expect_identical(do.call(rbind, parts), as.matrix(one$draws[[1]]), ignore_attr = TRUE)
  # exploring by sampling, the first exploring part already differs
  set.seed(5)
  noisy <- quiet(sgld(m, lr = lr_cyclical(1e-4, 2, 0.75, explore = "sample"), batch_size = 10,
                      iter = 80, burnin = 0, thin = 2, chains = 1))
  expect_identical(noisy$iteration, one$iteration)
  expect_false(any(as.matrix(noisy$draws[[1]]) == as.matrix(one$draws[[1]])))
  # the diagnostics report no injected noise while exploring by optimisation
  set.seed(5)
  dg <- quiet(sgld(m, lr = lr, batch_size = 10, iter = 80, burnin = 0, thin = 2,
                   diagnostics = diagnostics_every(5), chains = 1))$diagnostics
  exploring <- ((dg$iteration - 1) %% 40) / 40 < 0.75
  expect_identical(dg$var_injected[exploring], rep(0, sum(exploring)))
  expect_equal(dg$var_injected[!exploring], 2 * dg$lr[!exploring], tolerance = 1e-15)
  expect_output(print(lr), "the first 0.75 of each exploring \\(optimising\\)")
  expect_error(mala(m, lr = lr, iter = 80, chains = 1), "mala\\(\\) samples at every iteration")
})

test_that("a continued cyclical run carries on its cycles", {
  m <- model_linear(y ~ x1, data = small_data(), prior = prior_nig())
  set.seed(9)
  one <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0.5), batch_size = 10, iter = 200, burnin = 0,
                    thin = 5, chains = 1))
  set.seed(9)
  first <- quiet(sgld(m, lr = lr_cyclical(1e-4, 2, 0.5), batch_size = 10, iter = 100, burnin = 0,
                      thin = 5, chains = 1))
  second <- quiet(sgld(m, lr = lr_cyclical(1e-4, 2, 0.5), batch_size = 10, iter = 100, burnin = 0,
                       thin = 5, init = first, chains = 1))
  expect_identical(one$iteration[, 1], as.double(c(30, 35, 40, 45, 50) + rep(0:3 * 50, each = 5)))
  expect_identical(c(first$iteration[, 1], second$iteration[, 1]), one$iteration[, 1])
  expect_identical(rbind(as.matrix(first$draws[[1]]), as.matrix(second$draws[[1]])),
                   as.matrix(one$draws[[1]]), ignore_attr = TRUE)
})

test_that("the learning rates summed over a long cyclical run are bounded from above", {
  # beyond 10^7 iterations the engine bounds the rest of the sum instead of
  # adding it up: here iteration 10^7 + 1 is the last of a cycle (eta near 0),
  # so the bound must come from the cycles still to come, not from that term
  s <- sgld:::resolve_lr(lr_cyclical(1, 2), 2e7 + 2)
  expect_identical(s$t1, 1e7 + 1)
  expect_lt(lr_values(lr_cyclical(1, 2), 1e7 + 1, iter = 2e7 + 2), 1e-12)
  total <- sgld:::lr_total(s, 2e7 + 2)
  # the second cycle alone sums to about (1e7 + 1) / 2
  expect_gt(total, (1e7 + 1) / 2 + (1e7 + 1) / 2 - 1)
  # and below 10^7 iterations the sum is exact
  s <- sgld:::resolve_lr(lr_cyclical(1, 3), 1000)
  expect_equal(sgld:::lr_total(s, 1000), sum(lr_values(lr_cyclical(1, 3), 1:1000)), tolerance = 1e-14)
})

test_that("lr_cyclical checks its arguments and the run's", {
  expect_error(lr_cyclical(0, 4), "`a` must be greater than 0")
  expect_error(lr_cyclical(-1, 4), "`a` must be greater than 0")
  expect_error(lr_cyclical(NA, 4), "`a` must be a single finite number")
  expect_error(lr_cyclical(1e-3, 0), "`cycles` must be a whole number between 1")
  expect_error(lr_cyclical(1e-3, 2.5), "`cycles` must be a single whole number")
  expect_error(lr_cyclical(1e-3, c(2, 3)), "`cycles` must be a single whole number")
  expect_error(lr_cyclical(1e-3, 4, beta = -0.1), "`beta` must be at least 0")
  expect_error(lr_cyclical(1e-3, 4, beta = 1), "`beta` must be smaller than 1")
  expect_error(lr_cyclical(1e-3, 4, beta = "a"), "`beta` must be a single finite number")
  expect_error(lr_cyclical(1e-3, 4, explore = "anneal"), "`explore` must be one of \"optimize\", \"sample\"")
  expect_error(lr_cyclical(1e-3, 4, explore = NA), "`explore` must be one of")
  m <- model_linear(y ~ x1, data = small_data(), prior = prior_nig())
  expect_error(sgld(m, lr = lr_cyclical(1e-4, 20), iter = 10, chains = 1),
               "`lr`: lr_cyclical\\(\\) with `cycles` = 20 needs at least as many iterations")
  expect_error(lr_values(lr_cyclical(1e-4, 20), 1:10),
               "`lr`: lr_cyclical\\(\\) with `cycles` = 20 needs at least as many iterations")
  # 4 cycles of 25 iterations, the last 5 of each sampling
  expect_error(sgld(m, lr = lr_cyclical(1e-4, 4, 0.8), iter = 100, burnin = 0, thin = 6, chains = 1),
               "`thin` must be at most the length of a cycle's sampling part \\(5 iterations")
  fit <- quiet(sgld(m, lr = lr_cyclical(1e-4, 4, 0.8), iter = 100, burnin = 0, thin = 5, chains = 1))
  expect_identical(fit$iteration[, 1], c(25, 50, 75, 100))
})

test_that("rows a chain did not keep are NA in the engine's output", {
  # a cyclical schedule's capacity is an upper bound (here 4 rows, 3 kept):
  # the engine leaves no uninitialised memory in the unwritten rows
  m <- model_linear(y ~ x1, data = small_data(), prior = prior_nig())
  s <- sgld:::run_settings(m, lr = lr_cyclical(1e-6, 3, 0.5), batch_size = 4, iter = 20,
                           burnin = 0, thin = 2, temperature = 1, chains = 2, init = NULL,
                           replace = FALSE, clip = NULL)
  set.seed(2)
  res <- .Call(sgld:::C_sgld_run, m, s)
  expect_equal(res$kept, c(3, 3))
  expect_gt(nrow(res$draws[[1]]), 3)
  for (c in 1:2) {
    rows <- seq_len(nrow(res$draws[[c]])) > res$kept[c]
    expect_true(all(is.na(res$draws[[c]][rows, ])))
    expect_true(all(is.na(res$eta[rows, c])) && all(is.na(res$iteration[rows, c])))
    expect_true(all(is.finite(res$draws[[c]][!rows, ])))
  }
  set.seed(2)
  expect_identical(.Call(sgld:::C_sgld_run, m, s)[c("draws", "eta", "iteration")],
                   res[c("draws", "eta", "iteration")])
})
