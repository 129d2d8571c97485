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
  m <- model_logistic(tr$x, tr$y, prior = prior_laplace(0, 1))
  expect_identical(m$sparse, 1L)
  set.seed(81)
  sweep <- ceiling(m$n / 10)
  fit <- sgld(m, lr = 1e-5, batch_size = 10, iter = sweep, burnin = 0, thin = 1,
              monitor = monitor_every(sweep %/% 4, newdata = te))
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
  sp <- model_logistic(X, y, prior = prior_laplace(0, 1))
  de <- model_logistic(X, y, prior = prior_laplace(0, 1), sparse = FALSE)
  expect_identical(c(sp$sparse, de$sparse), c(1L, 0L))
  w <- seq(-1, 1, length.out = ncol(X))
  a <- log_posterior(sp, w)
  b <- log_posterior(de, w)
  expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
  expect_equal(a$grad_loglik, b$grad_loglik, tolerance = 1e-12)
  # non-binary sparse values too
  X2 <- X * c(1, rep(2.5, ncol(X) - 1))[col(X)]
  expect_equal(log_posterior(model_logistic(X2, y), w)$grad_loglik,
               log_posterior(model_logistic(X2, y, sparse = FALSE), w)$grad_loglik,
               tolerance = 1e-12)
  set.seed(3); f1 <- sgld(sp, lr = 1e-5, batch_size = 10, iter = 500)
  set.seed(3); f2 <- sgld(de, lr = 1e-5, batch_size = 10, iter = 500)
  expect_equal(as.matrix(f1), as.matrix(f2), tolerance = 1e-10)
  expect_equal(predict(f1, X[1:5, ]), predict(f1)[1:5])
})

test_that("repeated splits record each run and summarise over them", {
  d <- sgld::adult[sgld::adult$set == "train", ][1:5000, ]
  X <- cbind("(Intercept)" = 1, adult_design(d))
  y <- adult_response(d)
  set.seed(82)
  r <- logistic_split_runs(X, y, runs = 3, sweeps = 2, per_sweep = 4)
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
