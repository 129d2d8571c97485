test_that("the monitor records the log joint per datum and held-out metrics", {
  tr <- MASS::Pima.tr
  te <- MASS::Pima.te
  m <- model_logistic(type ~ glu + bmi + age, data = tr, prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(91)
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 3000, chains = 2,
                                  monitor = monitor_every(500, newdata = te)))
  mon <- fit$monitor
  expect_identical(names(mon), c("chain", "iteration", "sweep", "log_joint", "test_loglik",
                                 "test_accuracy"))
  expect_identical(mon$chain, rep(1:2, each = 6))
  expect_identical(mon$iteration, rep(seq(500, 3000, by = 500), 2))
  # compare the last row of chain 2 with R's own arithmetic at the last draw
  w <- as.matrix(fit)[nrow(as.matrix(fit)), ]
  lp <- log_posterior(m, w)
  expect_equal(mon$log_joint[12], (lp$loglik + lp$logprior) / nrow(tr))
  Xt <- model.matrix(~ glu + bmi + age, te)
  yt <- te$type == "Yes"
  eta <- drop(Xt %*% w)
  expect_equal(mon$test_loglik[12], mean(ifelse(yt, plogis(eta, log.p = TRUE),
                                                plogis(-eta, log.p = TRUE))))
  expect_equal(mon$test_accuracy[12], mean((eta > 0) == yt))
})

test_that("the linear model's monitor gives test log likelihood and RMSE", {
  m <- handout_model()
  set.seed(92)
  held <- data.frame(x = c(-1, 0, 1), y = c(-0.8, 0.1, 1))
  fit <- sgd(m, lr = 1e-5, batch_size = 100, iter = 400, monitor = monitor_every(400, held))
  w <- as.matrix(fit, scale = "sampler")[400, ]
  r <- held$y - w[1] - w[2] * held$x
  expect_equal(fit$monitor$test_rmse, sqrt(mean(r^2)))
  expect_equal(fit$monitor$test_loglik, mean(dnorm(r, 0, exp(w[3] / 2), log = TRUE)))
  expect_null(sgd(m, lr = 1e-5, iter = 10)$monitor)
})

test_that("monitor arguments are checked", {
  m <- model_logistic(type ~ glu, data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_error(monitor_every(0), "`every` must be a whole number between 1")
  expect_error(sgld(m, lr = 1e-5, iter = 10, monitor = 5, chains = 1), "`monitor` must be NULL or made by monitor_every")
  expect_error(sgld(m, lr = 1e-5, iter = 10, monitor = monitor_every(20), chains = 1), "must be at most `iter`")
  bad <- MASS::Pima.te
  levels(bad$type) <- c("No", "Maybe")
  expect_error(sgld(m, lr = 1e-5, iter = 10, monitor = monitor_every(5, bad), chains = 1),
               "the response has value 'Maybe' not among the training classes")
  expect_error(sgld(m, lr = 1e-5, iter = 10, monitor = monitor_every(5, MASS::Pima.te["glu"]), chains = 1),
               "`newdata` has no response column 'type'")
  mx <- model_logistic(cbind(1, MASS::Pima.tr$glu), MASS::Pima.tr$type, prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_error(sgld(mx, lr = 1e-5, iter = 10, monitor = monitor_every(5, MASS::Pima.te), chains = 1),
               "must be a list with `x` and `y`")
})
