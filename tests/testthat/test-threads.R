test_that("threads = 1 and threads = 2 give bit-identical draws", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  run <- function(threads) {
    set.seed(61)
    sgld(m, lr = 1e-4, batch_size = 10, iter = 20000, chains = 4, threads = threads)
  }
  one <- run(1)
  two <- run(2)
  expect_identical(as.array(one), as.array(two))
  expect_identical(one$last, two$last)
  expect_error(sgld(m, lr = 1e-4, threads = 0), "`threads` must be a whole number between 1")
})
