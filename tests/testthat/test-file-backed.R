# Models on file-backed matrices: the same draws as the same data in memory,
# and clear errors for files that cannot be read.

skip_if_not_installed("bigmemory")
skip_on_os("windows")

file_matrix <- function(M, type = "double", dir = withr_dir(), name = "m", ...) {
  bigmemory::as.big.matrix(M, type = type, backingfile = paste0(name, ".bin"),
                           descriptorfile = paste0(name, ".desc"), backingpath = dir, ...)
}

withr_dir <- function() {
  dir <- tempfile("sgld-fbm")
  dir.create(dir)
  dir
}

logistic_data <- function(n = 3000) {
  set.seed(4)
  X <- cbind(`(Intercept)` = 1, a = rnorm(n), b = rnorm(n), c = runif(n))
  y <- rbinom(n, 1, plogis(X %*% c(-0.5, 1, -1, 0.5)))
  list(X = X, y = y)
}

test_that("a logistic regression on a file gives the draws of the same data in memory", {
  dat <- logistic_data()
  bm <- file_matrix(cbind(dat$X, y = dat$y))
  from_file <- model_logistic(bm, y = "y", prior = prior_normal(0, 5))
  in_memory <- model_logistic(dat$X, dat$y, prior = prior_normal(0, 5))
  expect_lt(as.numeric(object.size(from_file)), 20000)
  expect_identical(from_file$names, in_memory$names)
  run <- function(m) {
    set.seed(12)
    sgld(m, lr = 1e-4, batch_size = 30, iter = 2000, chains = 2, control_variates = TRUE,
         monitor = monitor_every(250), diagnostics = diagnostics_every(500))
  }
  a <- run(from_file)
  b <- run(in_memory)
  expect_identical(as.array(a), as.array(b))
  expect_identical(a$monitor, b$monitor)
  expect_identical(a$diagnostics, b$diagnostics)
  expect_identical(a$state, b$state)
  expect_identical(posterior_mode(from_file), posterior_mode(in_memory))

  # by descriptor, with y given as a vector, and after saving and loading
  by_desc <- model_logistic(bigmemory::describe(file_matrix(dat$X, name = "x")), y = dat$y,
                            prior = prior_normal(0, 5))
  expect_identical(as.array(run(by_desc)), as.array(b))
  # building the model again replaces its rows file, under the mapping of the first
  again <- model_logistic(bm, y = "y", prior = prior_normal(0, 5))
  expect_identical(as.array(run(from_file)), as.array(b))
  expect_identical(as.array(run(again)), as.array(b))
  saved <- tempfile(fileext = ".rds")
  saveRDS(from_file, saved)
  expect_identical(as.array(run(readRDS(saved))), as.array(b))

  # held-out data for the monitor are in memory; predictions need newdata
  mon <- monitor_every(500, newdata = list(x = dat$X[1:100, ], y = dat$y[1:100]))
  set.seed(1)
  f1 <- sgld(from_file, lr = 1e-4, batch_size = 30, iter = 1000, monitor = mon)
  set.seed(1)
  f2 <- sgld(in_memory, lr = 1e-4, batch_size = 30, iter = 1000, monitor = mon)
  expect_identical(f1$monitor, f2$monitor)
  expect_error(predict(f1), "reads it from the file .*give `newdata`")
  expect_identical(predict(f1, newdata = dat$X[1:5, ]), predict(f2, newdata = dat$X[1:5, ]))
})

test_that("a linear regression on a float file gives the draws of the float data in memory", {
  set.seed(5)
  n <- 1000
  X <- cbind(x1 = rnorm(n), x2 = rnorm(n))
  y <- 1 + X %*% c(2, -1) + rnorm(n)
  old <- options(bigmemory.typecast.warning = FALSE)
  on.exit(options(old), add = TRUE)
  bm <- file_matrix(cbind(x1 = 1, x2 = X[, 1], x3 = X[, 2], y = y), type = "float")
  stored <- bm[, ]            # the values as floats hold them
  from_file <- model_linear(bm, y = 4)
  in_memory <- model_linear(cbind(x1 = stored[, 1], x2 = stored[, 2], x3 = stored[, 3]),
                            stored[, 4])
  expect_equal(from_file$default_init, in_memory$default_init, tolerance = 1e-12)
  run <- function(m) {
    set.seed(2)
    sgld(m, lr = 1e-5, batch_size = 50, iter = 1000, init = c(0, 0, 0, 1))
  }
  expect_identical(as.array(run(from_file)), as.array(run(in_memory)))
})

test_that("chains as futures read the file on their workers", {
  skip_if_not_installed("future")
  dat <- logistic_data(1000)
  m <- model_logistic(file_matrix(cbind(dat$X, y = dat$y)), y = "y")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  run <- function(parallel) {
    set.seed(3)
    sgld(m, lr = 1e-4, batch_size = 20, iter = 500, chains = 2, parallel = parallel)
  }
  expect_identical(as.array(run("future")), as.array(run("threads")))
})

test_that("files that cannot be read give clear errors", {
  dat <- logistic_data(200)
  dir <- withr_dir()
  bm <- file_matrix(cbind(dat$X, y = dat$y), dir = dir)
  desc <- bigmemory::describe(bm)
  path <- file.path(dir, "m.bin")

  # the descriptor's dimensions disagree with the file
  wrong <- desc
  info <- wrong@description
  info$totalRows <- info$nrow <- 300
  info$rowOffset <- c(0, 300)
  wrong@description <- info
  expect_error(model_logistic(wrong, y = "y"),
               "has 8000 bytes, but a 300 x 5 matrix of doubles needs 12000.*disagree")

  # a model whose rows file was truncated after it was built
  m <- model_logistic(desc, y = "y")
  rows <- paste0(normalizePath(path), ".sgld-rows")
  writeBin(readBin(rows, "raw", 1000), rows)
  m2 <- readRDS({ f <- tempfile(); saveRDS(m, f); f })
  expect_error(sgld(m2, lr = 1e-4, iter = 10), "has 1000 bytes where the model expects 8000.*truncated")

  # a truncated or missing backing file
  writeBin(readBin(path, "raw", 5000), path)
  expect_error(model_logistic(desc, y = "y"), "has 5000 bytes, but a 200 x 5 matrix of doubles needs 8000")
  unlink(path)
  expect_error(model_logistic(desc, y = "y"), "backing file .* does not exist")

  # not file-backed, separated, or of another type
  shared <- bigmemory::big.matrix(10, 2, type = "double", init = 0)
  expect_error(model_logistic(shared, y = rep(0:1, 5)), "must be a file-backed big.matrix")
  sep <- bigmemory::filebacked.big.matrix(10, 2, type = "double", separated = TRUE,
                                          backingfile = "s.bin", descriptorfile = "s.desc",
                                          backingpath = dir)
  expect_error(model_linear(sep, y = rnorm(10)), "must not be a separated big.matrix")
  ints <- file_matrix(matrix(1:20, 10), type = "integer", dir = dir, name = "i")
  expect_error(model_linear(ints, y = rnorm(10)), "type \"double\" or \"float\", not \"integer\"")

  # the response
  ok <- file_matrix(cbind(a = rnorm(10), b = rep(0:1, 5)), dir = dir, name = "ok")
  expect_error(model_linear(ok, y = rnorm(9)), "`y` has length 9 but `x` has 10 rows")
  expect_error(model_linear(ok, y = "zz"), "one column of `x` \\(a name or a number from 1 to 2\\)")
  expect_error(model_linear(ok), "`y` is missing")
  expect_error(model_logistic(ok, y = 1), "the response must be 0/1 or -1/\\+1; it has .* in row 1")
  expect_error(model_logistic(ok, y = rep(1, 10)), "must have two classes; it is all 1")
  bad <- file_matrix(cbind(a = c(1, NA, 3), b = 1:3), dir = dir, name = "na")
  expect_error(model_linear(bad, y = "b"), "`x` must be finite; it has NA in row 2, column 1")
})
