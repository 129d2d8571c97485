# Every code R and C share has its name in one table in C (src/codes.c);
# R passes names and reads back the names C reports. These tests walk each
# code from R to C and back, and check that the two sides know the same set.

codes <- function() sgld:::engine_codes()
code_of <- function(table, name) .Call(sgld:::C_sgld_code_of, table, name)

# each name of a table R passes from comes back as its own position
expect_round_trip <- function(table) {
  names <- codes()[[table]]
  expect_gt(length(names), 0)
  expect_identical(vapply(names, function(nm) code_of(table, nm), integer(1), USE.NAMES = FALSE),
                   seq_along(names) - 1L, label = table)
}

test_that("the engine reports every table once, as character vectors", {
  cd <- codes()
  expect_identical(names(cd), c("schedule", "clip", "burnin", "thin", "moment_scale", "link",
                                "status", "diagnostics", "metrics", "rules", "limits"))
  for (nm in setdiff(names(cd), c("metrics", "limits"))) {
    expect_type(cd[[nm]], "character")
    expect_false(anyDuplicated(cd[[nm]]) > 0, label = nm)
  }
  expect_identical(cd, .Call(sgld:::C_sgld_codes))
})

test_that("predict() names its inverse link as C knows it, and C holds R's limits", {
  expect_round_trip("link")
  expect_setequal(codes()$link, c("identity", "logit", "log"))
  X <- cbind(1, c(-1, 0, 2))
  draws <- list(matrix(c(0.5, 1, -0.5, 2), 2))   # 2 draws of 2 coefficients
  eta <- X %*% t(draws[[1]])
  for (link in codes()$link) {
    inverse <- switch(link, identity = identity, logit = stats::plogis, log = exp)
    expect_equal(.Call(sgld:::C_sgld_predict, X, draws, NULL, NULL, link, TRUE, 1L),
                 unname(inverse(eta)), tolerance = 1e-14, label = link)
  }
  expect_error(.Call(sgld:::C_sgld_predict, X, draws, NULL, NULL, "probit", FALSE, 1L),
               "internal: unknown link 'probit'")
  limit <- codes()$limits[["vi_samples"]]
  expect_identical(limit, 1000000L)
  m <- handout_model()
  expect_error(bbb(m, samples = limit + 1), "samples")
})

test_that("every schedule kind R makes is one C knows, and back", {
  expect_round_trip("schedule")
  made <- vapply(list(lr_constant(1e-3), lr_poly(1e-3, 1, 0.55), lr_range(1e-2, 1e-4),
                      lr_piecewise(1e-3, 10, 20), lr_exp(1e-2, 1e-4), lr_cyclical(1e-3, 4)),
                 function(lr) sgld:::resolve_lr(lr, 100)$type, character(1))
  expect_setequal(made, codes()$schedule)
  # the engine evaluates each kind by its name
  for (lr in list(lr_constant(0.5), lr_poly(1, 0, 1), lr_piecewise(1, 2, 4, s = 1), lr_exp(1, 0.01),
                  lr_cyclical(1, 2)))
    expect_true(all(is.finite(lr_values(lr, 1:5))))
  expect_identical(lr_values(lr_poly(1, 0, 1), 1:4), 1 / (1:4))
  bad <- sgld:::resolve_lr(lr_constant(1), 10)
  bad$type <- "cosine"
  expect_error(.Call(sgld:::C_sgld_schedule_values, bad, 1, FALSE),
               "internal: unknown schedule type 'cosine'")
})

test_that("every clip kind R makes is one C knows, and back", {
  expect_round_trip("clip")
  expect_setequal(c("none", clip_norm(1)$type, clip_value(1)$type), codes()$clip)
  m <- handout_model()
  for (clip in list(NULL, clip_norm(1), clip_value(1))) {
    s <- sgld:::run_settings(m, lr = 1e-6, batch_size = 10, iter = 5, burnin = 0, thin = 1,
                             temperature = 1, chains = 1, init = NULL, replace = FALSE, clip = clip)
    expect_identical(s$clip_type, if (is.null(clip)) "none" else clip$type)
    set.seed(1)
    res <- .Call(sgld:::C_sgld_run, m, s)
    expect_identical(res$clip_count > 0, !is.null(clip))   # a threshold of 1 always fires
  }
  s$clip_type <- "hard"
  expect_error(.Call(sgld:::C_sgld_run, m, s), "internal: unknown clip type 'hard'")
  s$clip_type <- 2L
  expect_error(.Call(sgld:::C_sgld_run, m, s), "internal: a clip type must be given as one name")
})

test_that("every burn-in and thinning mode R makes is one C knows, and back", {
  expect_round_trip("burnin")
  expect_round_trip("thin")
  sched <- sgld:::resolve_lr(lr_constant(1e-3), 100)
  plain <- sgld:::resolve_collection(10, 2, NULL, 100, sched)
  by_alpha <- sgld:::resolve_collection(sampling_threshold(0.1, 10), mixing_distance(0.01),
                                        NULL, 100, sched)
  expect_setequal(c(plain$burnin_mode, by_alpha$burnin_mode), codes()$burnin)
  expect_setequal(c(plain$thin_mode, by_alpha$thin_mode), codes()$thin)
  m <- handout_model()
  s <- sgld:::run_settings(m, lr = 1e-6, batch_size = 10, iter = 5, burnin = 0, thin = 1,
                           temperature = 1, chains = 1, init = NULL, replace = FALSE, clip = NULL)
  s$burnin_mode <- "forever"
  expect_error(.Call(sgld:::C_sgld_run, m, s), "internal: unknown burn-in mode 'forever'")
  s$burnin_mode <- "count"
  s$thin_mode <- "random"
  expect_error(.Call(sgld:::C_sgld_run, m, s), "internal: unknown thinning mode 'random'")
})

test_that("every chain status C reports has a label in the fit", {
  status <- codes()$status
  expect_setequal(names(sgld:::status_labels), status)
  labels <- sgld:::chain_status(seq_along(status) - 1L)
  expect_false(anyNA(labels))
  expect_setequal(labels, c("done", "diverged", "interrupted", "not run", "failed"))
  # through a run: a chain that finishes, and one that diverges
  m <- handout_model()
  set.seed(1)
  expect_identical(expect_run_warnings(sgld(m, lr = 1e-8, iter = 20, chains = 1))$status, "done")
  set.seed(2)
  expect_identical(expect_run_warnings(sgld(m, lr = 1, batch_size = 10, iter = 100, chains = 1),
                                       "diverged")$status, "diverged")
})

test_that("the diagnostics columns and the held-out metrics are named by C", {
  m <- handout_model()
  set.seed(1)
  fit <- expect_run_warnings(sgld(m, lr = 1e-8, iter = 20, burnin = 0, diagnostics = diagnostics_every(10),
                                  monitor = monitor_every(10, newdata = sgld::handout[1:50, ]), chains = 1))
  expect_identical(names(fit$diagnostics), c("chain", codes()$diagnostics))
  expect_identical(names(fit$monitor),
                   c("chain", "iteration", "sweep", "log_joint", codes()$metrics$linear))
  # each built-in model type with held-out metrics, and those without
  metrics <- codes()$metrics
  expect_true(all(c("linear", "logistic", "mixture", "ica", "compiled", "r") %in% names(metrics)))
  for (type in c("linear", "logistic", "mixture", "ica"))
    expect_identical(metrics[[type]][1], "test_loglik", label = type)
  expect_identical(metrics$compiled, character(0))
  set.seed(2)
  sim <- ica_data(100)
  fit <- sgd(model_ica(sim$X), lr = 1e-4, batch_size = 5, iter = 20,
             monitor = monitor_every(10, newdata = sim$X[1:20, ]))
  expect_identical(setdiff(names(fit$monitor), c("chain", "iteration", "sweep", "log_joint")),
                   metrics$ica)
})

test_that("an unknown table or a malformed name is an internal error", {
  expect_error(code_of("colour", "red"), "internal: unknown code table 'colour'")
  expect_error(code_of("clip", NA_character_), "internal: a clip type must be given as one name")
  expect_error(code_of("schedule", c("poly", "exp")), "internal: a schedule type must be given as one name")
})

test_that("every moment scale R names is one C knows, and back", {
  expect_round_trip("moment_scale")
  set.seed(1)
  used <- unique(unlist(lapply(list(handout_model(), model_mixture(mixture_data(20)),
                                    model_sv(rnorm(20), errors = "t")),
                               sgld:::moment_scales)))
  expect_setequal(used, codes()$moment_scale)
  m <- handout_model()
  s <- sgld:::run_settings(m, lr = 1e-6, batch_size = 10, iter = 5, burnin = 0, thin = 1,
                           temperature = 1, chains = 1, init = NULL, replace = FALSE, clip = NULL)
  s$moment_scale[2] <- "log"
  expect_error(.Call(sgld:::C_sgld_run, m, s), "internal: unknown moment scale 'log'")
  s$moment_scale <- s$moment_scale[1:2]
  expect_error(.Call(sgld:::C_sgld_run, m, s), "must hold 3 names of a moment scale")
})
