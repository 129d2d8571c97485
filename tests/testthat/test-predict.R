fit_logistic <- local({
  d <- pima()
  set.seed(71)
  # (one chain of batches of 20: its ESS warns; the tests use its draws as given)
  expect_run_warnings(sgld(model_logistic(type ~ glu + bmi + age, data = d,
                                          prior = prior_normal(0, 10), prior_intercept = NULL),
                           lr = 2e-4, batch_size = 20, iter = 20000, thin = 10, chains = 1))
})

test_that("predictions average the predictive probability over the draws", {
  d <- pima()
  W <- as.matrix(fit_logistic)
  X <- model.matrix(~ glu + bmi + age, d)
  expect_equal(predict(fit_logistic, d), rowMeans(plogis(X %*% t(W))), ignore_attr = TRUE)
  expect_equal(predict(fit_logistic, d, type = "link"), rowMeans(X %*% t(W)), ignore_attr = TRUE)
  expect_equal(predict(fit_logistic), predict(fit_logistic, d))
  cls <- predict(fit_logistic, d, type = "class")
  expect_identical(levels(cls), c("No", "Yes"))
  expect_identical(as.character(cls), unname(ifelse(predict(fit_logistic, d) > 0.5, "Yes", "No")))
  # named by the data's rows, as predict.glm()
  expect_identical(names(predict(fit_logistic, d)), rownames(d))
  expect_identical(names(cls), rownames(d))
  expect_identical(names(fitted(fit_logistic)), rownames(d))
  expect_identical(names(residuals(fit_logistic)), rownames(d))
  expect_identical(rownames(predict(fit_logistic, d, draws = TRUE)), rownames(d))
  expect_identical(dim(predict(fit_logistic, d, draws = TRUE)), c(nrow(d), nrow(W)))
  # a training accuracy well above the base rate of 0.66
  expect_gt(mean(cls == d$type), 0.72)
})

test_that("factor levels and contrasts of the training formula are reused", {
  df <- small_data(300)
  fit <- sgd(model_linear(y ~ x1 + g, data = df, prior = prior_nig()), lr = 1e-4, batch_size = 300, iter = 3000)
  new <- data.frame(x1 = c(0, 1), g = factor(c("c", "a"), levels = c("c", "a")))
  b <- coef(fit)
  expect_equal(predict(fit, new), c(b[[1]] + b[["gc"]], b[[1]] + b[["x1"]]), ignore_attr = TRUE)
})

test_that("newdata must carry every column and no unseen level", {
  df <- small_data(100)
  fit <- sgd(model_linear(y ~ x1 + g, data = df, prior = prior_nig()), lr = 1e-4, batch_size = 10, iter = 10)
  expect_error(predict(fit, data.frame(x1 = 1)), "`newdata` has no column named 'g'")
  expect_error(predict(fit, data.frame(x1 = 1, g = "z")), "column 'g' has level 'z' not seen")
  expect_error(predict(fit, data.frame(x1 = NA, g = "a")), "column 'x1' has missing values")
  expect_error(predict(fit, data.frame(x1 = 1, g = "a"), type = "class"), "is for logistic models")
  expect_error(predict(fit, list(x1 = 1)), "`newdata` must be a data frame")
  expect_error(predict(fit, data.frame(x1 = 1, g = "a"), foo = 1), "unknown argument: `foo`")
})

test_that("averaged predictions equal the mean over per-draw predictions (block-wise sums)", {
  d <- pima()
  m <- model_logistic(type ~ glu + bmi + age, data = d, prior = prior_normal(0, 10), prior_intercept = NULL)
  set.seed(3)
  fit <- expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 20, iter = 3000, chains = 2))
  newd <- MASS::Pima.te
  newd[1:7] <- scale(newd[1:7])
  for (type in c("response", "link")) {
    expect_equal(predict(fit, newd, type = type),
                 rowMeans(predict(fit, newd, type = type, draws = TRUE)), tolerance = 1e-12)
  }
  expect_identical(predict(fit, newd, type = "class"),
                   factor(ifelse(predict(fit, newd) > 0.5, "Yes", "No"), levels = c("No", "Yes")))
})

test_that("fits convert to posterior's draws when posterior is installed", {
  skip_if_not_installed("posterior")
  m <- handout_model()
  set.seed(4)
  fit <- expect_run_warnings(sgld(m, lr = 1e-7, batch_size = 100, iter = 2000, chains = 2))
  d <- posterior::as_draws_array(fit)
  expect_identical(posterior::nchains(d), 2L)
  expect_identical(posterior::variables(d), c(m$names, "sigma"))   # sigma derived
  expect_equal(unclass(d)[, 2, "x"], unname(as.array(fit)[, 2, "x"]), ignore_attr = TRUE)
  df <- posterior::as_draws_df(fit)
  expect_identical(nrow(df), 2L * 1000L)
})

test_that("C predictions equal the R reference on a one-hot design, for any threads", {
  a <- adult[adult$set == "train", ][1:2000, ]
  X <- cbind("(Intercept)" = 1, adult_design(a))
  set.seed(9)
  # (2000 rows leave one-hot columns empty, which the model says; the short
  # run's checks warn)
  m <- expect_run_warnings(model_logistic(X, adult_response(a), prior = prior_laplace(0, 1),
                                          prior_intercept = NULL), "design")
  fit <- expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 10, iter = 3000, thin = 5,
                                  chains = 2))
  te <- cbind("(Intercept)" = 1, adult_design(adult[adult$set == "test", ][1:700, ]))
  W <- as.matrix(fit)
  eta <- te %*% t(W)
  expect_equal(predict(fit, te), rowMeans(plogis(eta)), tolerance = 1e-12)
  expect_equal(predict(fit, te, type = "link"), rowMeans(eta), tolerance = 1e-12)
  expect_equal(predict(fit, te, draws = TRUE), plogis(eta), tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(predict(fit, te, threads = 2), predict(fit, te))
  expect_identical(predict(fit, te, draws = TRUE, threads = 2), predict(fit, te, draws = TRUE))
  # a random subset of draws, as posterior_epred() chooses them
  set.seed(4)
  sub <- predict(fit, te, ndraws = 300)
  set.seed(4)
  rows <- sort(sample.int(nrow(W), 300))
  expect_equal(sub, rowMeans(plogis(eta[, rows])), tolerance = 1e-12)
  expect_error(predict(fit, te, ndraws = 0), "`ndraws` must be a whole number between 1")
  expect_error(predict(fit, te, threads = 0), "`threads` must be a whole number")
})

test_that("linear predictions and optimiser fits go through the same code", {
  df <- small_data(300)
  set.seed(2)
  fit <- expect_run_warnings(sgld(model_linear(y ~ x1 + g, data = df, prior = prior_nig()),
                                  lr = 1e-4, batch_size = 30, iter = 2000, chains = 3))
  X <- model.matrix(~ x1 + g, df)
  W <- as.matrix(fit)[, 1:4]
  expect_equal(predict(fit), rowMeans(X %*% t(W)), tolerance = 1e-12, ignore_attr = TRUE)
  f <- sgd(model_linear(y ~ x1 + g, data = df, prior = prior_nig()), lr = 1e-4, batch_size = 30, iter = 200, chains = 2)
  expect_equal(predict(f, df[1:5, ]), drop(X[1:5, ] %*% colMeans(f$last[, 1:4])),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_error(predict(f, ndraws = 3), "`ndraws` is for samplers' fits")
})

test_that("the mixture predicts its posterior predictive density", {
  set.seed(12)
  x <- mixture_data(60)
  # (a mixture's labels can switch between chains: R-hat and the ESS warn)
  fit <- expect_run_warnings(sgld(model_mixture(x), lr = 1e-3, batch_size = 6, iter = 4000,
                                  chains = 2))
  W <- as.matrix(fit)
  at <- c(-3, 0, 0.5, 2)
  dens <- sapply(at, function(v) mean(0.5 * dnorm(v, W[, 1], sqrt(2)) +
                                        0.5 * dnorm(v, W[, 1] + W[, 2], sqrt(2))))
  expect_equal(predict(fit, at), dens, tolerance = 1e-12)
  expect_equal(predict(fit, at, draws = TRUE)[2, ],
               0.5 * dnorm(0, W[, 1], sqrt(2)) + 0.5 * dnorm(0, W[, 1] + W[, 2], sqrt(2)),
               tolerance = 1e-12)
  expect_length(predict(fit), 60)
  expect_error(predict(fit, at, type = "link"), "`type` must be \"response\"")
  expect_error(predict(fit, "a"), "`newdata` must be a vector of finite numbers")
  f <- expect_run_warnings(sgld(model_ica(ica_data(50, heavy = 1, gaussian = 1)$X), lr = 1e-4,
                                batch_size = 10, iter = 20, chains = 1))
  expect_error(predict(f), "predict\\(\\) is not available for sgld_model_ica")
})
