adult_parts <- function(set) {
  d <- sgld::adult[sgld::adult$set == set, ]
  list(x = cbind("(Intercept)" = 1, adult_design(d)), y = adult_response(d))
}

test_that("the Adult data have a9a's shape", {
  expect_identical(dim(sgld::adult), c(48842L, 16L))
  expect_identical(as.vector(table(sgld::adult$set)), c(32561L, 16281L))
  X <- adult_design(sgld::adult[1:2000, ])
  expect_identical(ncol(X), 123L)
  na_groups <- rowSums(is.na(sgld::adult[1:2000, 1:14]))
  expect_identical(unname(rowSums(X)), as.double(14 - na_groups))
})

test_that("one sweep of SGLD at batch size 10 predicts Adult's test set (accuracy >= 0.84)", {
  tr <- adult_parts("train")
  te <- adult_parts("test")
  # (full one-hot coding: the design is rank deficient, which the model says)
  m <- expect_run_warnings(model_logistic(tr$x, tr$y, prior = prior_laplace(0, 1),
                                          prior_intercept = NULL), "design")
  expect_identical(m$sparse, 1L)
  set.seed(81)
  sweep <- ceiling(m$n / 10)
  # (one sweep is about prediction, not a posterior sample: the run checks warn)
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = sweep, burnin = 0,
                                  thin = 1, monitor = monitor_every(sweep %/% 4, newdata = te),
                                  chains = 1))
  acc <- mean((predict(fit, te$x) > 0.5) == (te$y == 1))
  expect_gte(acc, 0.84)
  # the monitor's accuracy of the last state is the engine's own count
  last <- fit$monitor[nrow(fit$monitor), ]
  w <- as.matrix(fit)[last$iteration, ]
  expect_equal(last$test_accuracy, mean(((te$x %*% w) > 0) == (te$y == 1)))
  expect_gt(last$test_accuracy, 0.8)
  expect_equal(last$sweep, last$iteration * 10 / m$n)
})

test_that("sparse and dense storage give the same model and the same draws", {
  d <- sgld::adult[sgld::adult$set == "train", ][1:3000, ]
  X <- cbind("(Intercept)" = 1, adult_design(d))
  y <- adult_response(d)
  # (3000 rows leave some one-hot columns empty, which the models say)
  sp <- expect_run_warnings(model_logistic(X, y, prior = prior_laplace(0, 1),
                                           prior_intercept = NULL), "design")
  de <- expect_run_warnings(model_logistic(X, y, prior = prior_laplace(0, 1), sparse = FALSE,
                                           prior_intercept = NULL), "design")
  expect_identical(c(sp$sparse, de$sparse), c(1L, 0L))
  w <- seq(-1, 1, length.out = ncol(X))
  a <- log_posterior(sp, w)
  b <- log_posterior(de, w)
  expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
  expect_equal(a$grad_loglik, b$grad_loglik, tolerance = 1e-12)
  # non-binary sparse values too
  X2 <- X * c(1, rep(2.5, ncol(X) - 1))[col(X)]
  built <- function(sparse)
    expect_run_warnings(model_logistic(X2, y, sparse = sparse, prior = prior_normal(0, 10),
                                       prior_intercept = NULL), "design")
  expect_equal(log_posterior(built(TRUE), w)$grad_loglik, log_posterior(built(FALSE), w)$grad_loglik,
               tolerance = 1e-12)
  # (a step too small to move in 500 iterations: the run checks warn)
  set.seed(3); f1 <- expect_run_warnings(sgld(sp, lr = 1e-5, batch_size = 10, iter = 500, chains = 1))
  set.seed(3); f2 <- expect_run_warnings(sgld(de, lr = 1e-5, batch_size = 10, iter = 500, chains = 1))
  expect_equal(as.matrix(f1), as.matrix(f2), tolerance = 1e-10)
  expect_equal(predict(f1, X[1:5, ]), predict(f1)[1:5])
})

test_that("a sparse-stored model answers every method as the dense one", {
  d <- sgld::adult[sgld::adult$set == "train", ][1:3000, ]
  X <- adult_design(d)
  # one-hot columns with no row here, and the collinearity of full one-hot
  # sets (the rank warning): neither matters to the comparison
  X <- X[, colSums(X[1:2500, ]) > 0 & !duplicated(t(X[1:2500, ]))]
  df <- data.frame(X, check.names = FALSE)
  names(df) <- paste0("x", seq_len(ncol(X)))
  df$y <- adult_response(d)
  fit_data <- df[1:2500, ]
  new <- df[2501:2510, ]
  # the formula face stores the mostly-zero design sparse by itself
  sp <- expect_run_warnings(model_logistic(y ~ ., data = fit_data, prior = prior_normal(0, 10),
                                           prior_intercept = NULL), "design")
  de <- expect_run_warnings(model_logistic(y ~ ., data = fit_data, sparse = FALSE,
                                           prior = prior_normal(0, 10), prior_intercept = NULL),
                            "design")
  expect_identical(c(sp$sparse, de$sparse), c(1L, 0L))
  # the mode search and its Hessian (Newton's method in C, one pass each step)
  ms <- posterior_mode(sp, covariance = TRUE)
  md <- posterior_mode(de, covariance = TRUE)
  expect_equal(ms$mode, md$mode, tolerance = 1e-8)
  expect_equal(ms$covariance, md$covariance, tolerance = 1e-8)
  # minibatch gradients with control variates at the mode: the same batches
  at <- ms$mode + 0.01
  set.seed(4); gs <- stochastic_gradients(sp, at, batch_size = 50, times = 20,
                                          control_variates = ms$mode)
  set.seed(4); gd <- stochastic_gradients(de, at, batch_size = 50, times = 20,
                                          control_variates = ms$mode)
  expect_equal(gs, gd, tolerance = 1e-10)
  # (runs too short for their diagnostics, which warn)
  short <- function(f, ...) quietly_checked(f(...))
  set.seed(5); fs <- short(sgld, sp, lr = 1e-4, batch_size = 100, iter = 200,
                           control_variates = TRUE, init = ms$mode)
  set.seed(5); fd <- short(sgld, de, lr = 1e-4, batch_size = 100, iter = 200,
                           control_variates = TRUE, init = ms$mode)
  expect_equal(as.matrix(fs), as.matrix(fd), tolerance = 1e-10)
  # the pointwise log likelihood and predictions, on the data and on new rows
  expect_equal(rstantools::log_lik(fs), rstantools::log_lik(fd), tolerance = 1e-10)
  expect_equal(rstantools::log_lik(fs, newdata = new), rstantools::log_lik(fd, newdata = new), tolerance = 1e-10)
  expect_equal(predict(fs, new), predict(fd, new), tolerance = 1e-10)
  set.seed(6); ps <- rstantools::posterior_predict(fs, ndraws = 20)
  set.seed(6); pd <- rstantools::posterior_predict(fd, ndraws = 20)
  expect_identical(ps, pd)
  # Metropolis-adjusted full-data steps
  set.seed(7); as <- short(mala, sp, lr = 0.2, precondition = ms$covariance, iter = 100,
                           init = ms$mode)
  set.seed(7); ad <- short(mala, de, lr = 0.2, precondition = md$covariance, iter = 100,
                           init = md$mode)
  expect_equal(as.matrix(as), as.matrix(ad), tolerance = 1e-8)
  expect_identical(as$acceptance, ad$acceptance)
})

test_that("repeated splits record each run and summarise over them", {
  d <- sgld::adult[sgld::adult$set == "train", ][1:5000, ]
  X <- cbind("(Intercept)" = 1, adult_design(d))
  y <- adult_response(d)
  set.seed(82)
  # (5000 rows leave some one-hot columns empty: each split's model says so)
  r <- expect_run_warnings(logistic_split_runs(X, y, runs = 3, sweeps = 2, per_sweep = 4),
                           "design")
  expect_s3_class(r, "sgld_split_runs")
  expect_identical(sort(unique(r$run)), 1:3)
  expect_identical(as.vector(table(r$run)), rep(8L, 3))
  s <- summary(r)
  expect_identical(nrow(s), 8L)
  first <- r[r$iteration == s$iteration[8], ]
  expect_equal(s$test_accuracy_mean[8], mean(first$test_accuracy))
  expect_equal(s$log_joint_sd[8], sd(first$log_joint))
  expect_gt(s$test_accuracy_mean[8], 0.8)
  pdf(NULL)
  on.exit(dev.off())
  expect_identical(plot(r), r)
  expect_error(logistic_split_runs(X, y, train = 1), "`train` must leave")
})
