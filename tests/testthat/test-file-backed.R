# Models on file-backed matrices: the same draws as the same data in memory,
# and clear errors for files that cannot be read.

skip_if_not_installed("bigmemory")
skip_on_os("windows")

# the copies of rows go to a cache directory of the test run, not the user's
cache <- tempfile("sgld-cache-")
old_cache <- options(sgld.cache_dir = cache)

# Writes the first `bytes` bytes of a copy back over it, as another process
# or a user cleaning up might (the copy is read-only: made writable first).
truncate_copy <- function(path, bytes) {
  keep <- readBin(path, "raw", bytes)
  Sys.chmod(path, "644")
  writeBin(keep, path)
}

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
  # the raw intercept's prior: the centred one's column means come from the
  # file's X'X, equal to colMeans() to rounding only (checked below)
  from_file <- model_logistic(bm, y = "y", prior = prior_normal(0, 5), prior_intercept = NULL)
  in_memory <- model_logistic(dat$X, dat$y, prior = prior_normal(0, 5), prior_intercept = NULL)
  expect_lt(as.numeric(object.size(from_file)), 20000)
  # the default priors, autoscaled from the file's moments
  f0 <- model_logistic(bm, y = "y")
  m0 <- model_logistic(dat$X, dat$y)
  expect_equal(f0$prior_scale, m0$prior_scale, tolerance = 1e-12)
  expect_equal(f0$prior_centre, m0$prior_centre, tolerance = 1e-12)
  expect_error(model_logistic(file_matrix(cbind(dat$X[, -1], y = dat$y), name = "noint"),
                              y = "y"),
               "`prior`: autoscaling needs the columns' sds.*\"\\(Intercept\\)\" column")
  expect_identical(from_file$names, in_memory$names)
  run <- function(m) {
    set.seed(12)
    # (a short run: its R-hat and ESS warn, the same for every copy)
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 30, iter = 2000, chains = 2,
                             control_variates = TRUE, monitor = monitor_every(250),
                             diagnostics = diagnostics_every(500)))
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
                            prior = prior_normal(0, 5), prior_intercept = NULL)
  expect_identical(as.array(run(by_desc)), as.array(b))
  # building the model again finds its copy and reuses it
  again <- model_logistic(bm, y = "y", prior = prior_normal(0, 5), prior_intercept = NULL)
  expect_identical(again$file$path, from_file$file$path)
  expect_identical(as.array(run(from_file)), as.array(b))
  expect_identical(as.array(run(again)), as.array(b))
  # the copy is in the cache directory, read-only, nothing beside the data
  expect_identical(dirname(from_file$file$path), normalizePath(cache))
  expect_identical(format(file.info(from_file$file$path)$mode), "444")
  expect_identical(sort(list.files(bigmemory::describe(bm)@description$dirname)),
                   c("m.bin", "m.desc"))
  saved <- tempfile(fileext = ".rds")
  saveRDS(from_file, saved)
  expect_identical(as.array(run(readRDS(saved))), as.array(b))

  # held-out data for the monitor are in memory; predictions need newdata
  mon <- monitor_every(500, newdata = list(x = dat$X[1:100, ], y = dat$y[1:100]))
  set.seed(1)
  f1 <- expect_run_warnings(sgld(from_file, lr = 1e-4, batch_size = 30, iter = 1000,
                                 monitor = mon, chains = 1))
  set.seed(1)
  f2 <- expect_run_warnings(sgld(in_memory, lr = 1e-4, batch_size = 30, iter = 1000,
                                 monitor = mon, chains = 1))
  expect_identical(f1$monitor, f2$monitor)
  expect_error(predict(f1), "reads it from the file .*give `newdata`")
  expect_identical(predict(f1, newdata = dat$X[1:5, ]), predict(f2, newdata = dat$X[1:5, ]))
  # each row's log likelihood is read from the file's rows by C
  skip_if_not_installed("rstantools")
  set.seed(2)
  ll1 <- rstantools::log_lik(f1, ndraws = 5)
  set.seed(2)
  expect_equal(ll1, rstantools::log_lik(f2, ndraws = 5), ignore_attr = TRUE)
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
  from_file <- model_linear(bm, y = 4, prior = prior_nig())
  in_memory <- model_linear(cbind(x1 = stored[, 1], x2 = stored[, 2], x3 = stored[, 3]),
                            stored[, 4], prior = prior_nig())
  expect_equal(from_file$default_init, in_memory$default_init, tolerance = 1e-12)
  run <- function(m) {
    set.seed(2)
    expect_run_warnings(sgld(m, lr = 1e-5, batch_size = 50, iter = 1000, init = c(0, 0, 0, 1),
                             chains = 1))
  }
  expect_identical(as.array(run(from_file)), as.array(run(in_memory)))
})

test_that("chains as futures read the file on their workers", {
  skip_if_not_installed("future")
  dat <- logistic_data(1000)
  m <- model_logistic(file_matrix(cbind(dat$X, y = dat$y)), y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  run <- function(parallel) {
    set.seed(3)
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 20, iter = 500, chains = 2,
                             parallel = parallel))
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

  # a model whose copy was truncated after it was built, loaded again
  m <- model_logistic(desc, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  truncate_copy(m$file$path, 1000)
  m2 <- readRDS({ f <- tempfile(); saveRDS(m, f); f })
  expect_error(sgld(m2, lr = 1e-4, iter = 10, chains = 1),
               "copy of its rows .* has 1000 bytes where it was written with [0-9]+: it was truncated")

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

test_that("a copy truncated or changed after a run is an error, never a bus error", {
  skip_if_not_installed("callr")
  # in a child with a time limit: reading a mapping whose file has shrunk
  # kills the process (SIGBUS)
  out <- callr::r(function(cache) {
    library(sgld)
    options(sgld.cache_dir = cache)
    dir <- tempfile("fbm")
    dir.create(dir)
    set.seed(4)
    X <- cbind(`(Intercept)` = 1, a = rnorm(2000), b = rnorm(2000))
    y <- rbinom(2000, 1, plogis(X %*% c(0.5, 1, -1)))
    bm <- bigmemory::as.big.matrix(cbind(X, y = y), backingfile = "m.bin",
                                   descriptorfile = "m.desc", backingpath = dir)
    m <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
    run <- function(m, chains = 1, ...) {
      set.seed(1)
      sgld(m, lr = 1e-4, batch_size = 50, iter = 500, chains = chains, ...)
    }
    caught <- function(expr) tryCatch({ expr; "no error" }, error = conditionMessage)
    first <- run(m)                                  # mapped, and the mapping kept
    saved <- tempfile()
    saveRDS(m, saved)
    path <- m$file$path
    keep <- readBin(path, "raw", 1000)
    Sys.chmod(path, "644")
    writeBin(keep, path)
    future::plan(future::multicore, workers = 2)     # forked: the mapping goes along
    out <- list(same = caught(run(m)), saved = caught(run(readRDS(saved))),
                future = caught(run(m, chains = 2, parallel = "future")))
    future::plan(future::sequential)
    # building the model again writes a new copy: the same draws as at first
    again <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
    out$again <- identical(as.array(run(again)), as.array(first)) &&
      identical(as.array(run(m)), as.array(first)) && identical(again$file$path, path)
    # a copy changed in place (same size): its modification time moves
    con <- file(path, "r+b")
    seek(con, file.size(path) - 800, rw = "write")
    writeBin(rep(1e6, 10), con)
    close(con)
    out$changed <- caught(run(m))
    out
  }, args = list(cache = file.path(cache, "child")), timeout = 120)
  truncated <- "copy of its rows .* has 1000 bytes where it was written with [0-9]+: it was truncated after it was written; build the model again"
  expect_match(out$same, truncated)
  expect_match(out$saved, truncated)
  expect_match(out$future, truncated)
  expect_true(out$again)
  expect_match(out$changed, "copy of its rows .* was modified after it was written")
})

test_that("models of one file with other columns or codings keep their own copies", {
  dat <- logistic_data(2000)
  bm <- file_matrix(cbind(dat$X, y = dat$y))
  # the user's file that the copy's name used to take, beside the data
  theirs <- file.path(bigmemory::describe(bm)@description$dirname, "m.bin.sgld-rows")
  writeLines("mine", theirs)
  logistic <- model_logistic(bm, y = "y", prior = prior_normal(0, 5), prior_intercept = NULL)
  ref <- model_logistic(dat$X, dat$y, prior = prior_normal(0, 5), prior_intercept = NULL)
  run <- function(m) {
    set.seed(6)
    expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 50, iter = 1000, chains = 1))
  }
  want <- as.array(run(ref))
  saved <- tempfile(fileext = ".rds")
  saveRDS(logistic, saved)
  # y as 0/1 (a linear model) and other columns: two more copies
  linear <- suppressWarnings(model_linear(bm, y = "y", prior = prior_nig()))
  fewer <- model_logistic(bm[, c(1, 2, 5)] |> (\(M) file_matrix(M, name = "f"))(), y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_length(unique(c(logistic$file$path, linear$file$path, fewer$file$path)), 3)
  expect_identical(as.array(run(logistic)), want)
  expect_identical(as.array(run(readRDS(saved))), want)
  # as the worker of a future sees it: a model that travelled, mapped afresh
  skip_if_not_installed("future")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  travelled <- unserialize(serialize(logistic, NULL))
  set.seed(6)
  expect_identical(as.array(expect_run_warnings(sgld(travelled, lr = 1e-4, batch_size = 50,
                                                     iter = 1000, parallel = "future",
                                                     chains = 1))), want)
  expect_identical(readLines(theirs), "mine")
  set.seed(6)
  expect_equal(coef(run(linear)), coef(run(model_linear(dat$X, dat$y, prior = prior_nig()))), tolerance = 0.2)
})

test_that("a backing file replaced after the model was built is an error; stale copies go", {
  dat <- logistic_data(500)
  dir <- withr_dir()
  bm <- file_matrix(cbind(dat$X, y = dat$y), dir = dir)
  m <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  first <- m$file$path
  rm(bm)
  gc()
  Sys.sleep(0.01)   # a modification time apart
  unlink(file.path(dir, c("m.bin", "m.desc")))
  X2 <- dat$X
  X2[1:5, 2] <- 10
  bm <- file_matrix(cbind(X2, y = dat$y), dir = dir)
  expect_error(sgld(m, lr = 1e-4, iter = 10, chains = 1),
               "backing file '.*m.bin' was modified after the model was built.*build the model again")
  m2 <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_false(identical(m2$file$path, first))
  expect_false(file.exists(first))      # a copy of the matrix as it was: removed
  expect_error(sgld(m, lr = 1e-4, iter = 10, chains = 1), "backing file .* was modified")
  expect_s3_class(expect_run_warnings(sgld(m2, lr = 1e-4, iter = 10, batch_size = 10,
                                           chains = 1)), "sgld_fit")
  # the model reads its copy alone: a moved backing file leaves it working
  unlink(file.path(dir, "m.bin"))
  expect_s3_class(expect_run_warnings(sgld(m2, lr = 1e-4, iter = 10, batch_size = 10,
                                           chains = 1)), "sgld_fit")
})

test_that("the cache directory: a damaged copy is written again, a foreign file refused", {
  dat <- logistic_data(300)
  bm <- file_matrix(cbind(dat$X, y = dat$y))
  m <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  truncate_copy(m$file$path, 10)
  expect_error(sgld(m, lr = 1e-4, iter = 10, chains = 1), "has 10 bytes, too few for its header")
  again <- model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL)
  expect_identical(again$file$path, m$file$path)
  expect_s3_class(expect_run_warnings(sgld(m, lr = 1e-4, iter = 10, batch_size = 10,
                                           chains = 1)), "sgld_fit")
  unlink(m$file$path)
  # this process still maps the copy: it reads that; a fresh one cannot
  expect_run_warnings(expect_warning(sgld(m, lr = 1e-4, iter = 10, batch_size = 10, chains = 1),
                 "copy of its rows .* was removed while this process had it mapped"))
  expect_error(sgld(unserialize(serialize(m, NULL)), lr = 1e-4, iter = 10, chains = 1),
               "copy of its rows .* cannot be read .*a cleaned cache.*build the model again")
  writeLines(strrep("not ours ", 100), m$file$path)
  expect_error(model_logistic(bm, y = "y"), "holds a file .* that is not a copy written by sgld")
  unlink(m$file$path)
  old <- options(sgld.cache_dir = NA_character_)
  on.exit(options(old), add = TRUE)
  expect_error(model_logistic(bm, y = "y"), "`options\\(sgld.cache_dir\\)` must be one directory path")
})

test_that("the design checks read the file's columns", {
  dat <- logistic_data(400)
  # no warning for a full-rank design (the rank was once read off a placeholder)
  bm <- file_matrix(cbind(dat$X, y = dat$y))
  expect_silent(model_logistic(bm, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL))
  expect_silent(model_linear(bm, y = "a", prior = prior_nig()))
  # a dependent column, an all-zero column, a column whose squares overflow
  dep <- file_matrix(cbind(dat$X, d = dat$X[, "a"] - 2 * dat$X[, "b"], y = dat$y), name = "dep")
  expect_warning(model_logistic(dep, y = "y", prior = prior_normal(0, 10), prior_intercept = NULL), "rank deficient \\(rank 4 with 5 columns\\): 'd'")
  zero <- file_matrix(cbind(dat$X, z = 0, y = dat$y), name = "zero")
  expect_warning(model_linear(zero, y = "y", prior = prior_nig()), "all-zero column 'z'")
  big <- dat$X
  big[, "b"] <- big[, "b"] * 1e300
  expect_error(model_logistic(file_matrix(cbind(big, y = dat$y), name = "big"), y = "y"),
               "column 'b' holds values so large \\(up to [0-9.]+e\\+300\\)")
})


test_that("copies are keyed by content: a change in place through bigmemory is seen", {
  skip_if_not_installed("callr")
  # the finding: x1's sign flipped in place (no change of size or time) and
  # the model built again read the old copy, in this process and a fresh one
  dir <- withr_dir()
  set.seed(4)
  X <- cbind(`(Intercept)` = 1, x1 = rnorm(2000))
  y <- rbinom(2000, 1, plogis(X %*% c(0, 1.8)))
  bm <- file_matrix(cbind(X, y = y), dir = dir)
  # fixed priors: autoscaling would read a file's column moments from its
  # X'X and the matrix's directly, equal only to rounding
  flat <- list(prior = prior_normal(0, 10), prior_intercept = NULL)
  run <- function(m) {
    set.seed(1)
    quietly_checked(sgld(m, lr = 1e-3, batch_size = 100, iter = 1000))
  }
  before <- do.call(model_logistic, c(list(bm, y = "y"), flat))
  slope <- function(m) unname(coef(run(m))["x1"])
  expect_gt(slope(before), 1)
  bm[, "x1"] <- -bm[, "x1"]   # through bigmemory's map: on Linux size and time stay
  bigmemory::flush(bm)
  after <- do.call(model_logistic, c(list(bm, y = "y"), flat))
  expect_false(identical(after$file$path, before$file$path))
  expect_lt(slope(after), -1)
  expect_identical(as.array(run(after)),
                   as.array(run(do.call(model_logistic,
                                        c(list(cbind(X[, 1], x1 = -X[, 2]) |>
                                                 `colnames<-`(colnames(X)), y), flat)))))
  # the model built before the change refuses to run on the old data
  expect_error(run(before), "backing file .* was (changed in place|modified) after the model was built")
  # a fresh process, from the descriptor, sees the new data too
  out <- callr::r(function(cache, desc) {
    options(sgld.cache_dir = cache)
    m <- sgld::model_logistic(desc, y = "y")
    set.seed(1)
    list(path = m$file$path,
         slope = unname(coef(suppressWarnings(sgld::sgld(m, lr = 1e-3, batch_size = 100,
                                                         iter = 1000)))["x1"]))
  }, args = list(cache = cache, desc = bigmemory::describe(bm)), timeout = 60)
  expect_identical(out$path, after$file$path)
  expect_lt(out$slope, -1)
})

test_that("a copy changed after it was written, its time set back, is never read", {
  dat <- logistic_data(1500)
  bm <- file_matrix(cbind(dat$X, y = dat$y))
  m <- model_logistic(bm, y = "y", prior = prior_normal(0, 5))
  run <- function(m) {
    set.seed(5)
    quietly_checked(sgld(m, lr = 1e-4, batch_size = 30, iter = 500))
  }
  want <- as.array(run(m))   # mapped now, and the mapping kept
  path <- m$file$path
  time <- file.mtime(path)
  # rows overwritten with 1e10, the time restored: the finding's means of 1e10
  Sys.chmod(path, "644")
  con <- file(path, "r+b")
  seek(con, file.size(path) - 8 * 5 * 100, rw = "write")
  writeBin(rep(1e10, 5 * 100), con)
  close(con)
  Sys.chmod(path, "444")
  Sys.setFileTime(path, time)
  expect_identical(file.mtime(path), time)
  expect_error(run(m), "copy of its rows .* was modified after it was written \\(its content no longer matches")
  saved <- unserialize(serialize(m, NULL))   # mapped afresh
  expect_error(run(saved), "its content no longer matches the checksum")
  # the header changed: the response's mean it records
  again <- model_logistic(bm, y = "y", prior = prior_normal(0, 5))   # written again
  expect_identical(again$file$path, path)
  expect_identical(as.array(run(again)), want)
  expect_identical(as.array(run(m)), want)
  time <- file.mtime(path)
  Sys.chmod(path, "644")
  con <- file(path, "r+b")
  seek(con, 120, rw = "write")
  writeBin(0.123, con)
  close(con)
  Sys.setFileTime(path, time)
  expect_error(run(m), "its content no longer matches the checksum")
})

# a file-backed logistic regression whose run lasts a second or more, for
# what happens to its copy during the run; `act` runs in another process
# `after` seconds after it is ready (its start-up is not counted)
long_run_with <- function(act, after = 0.3, seed = 9, cache_dir = cache) {
  dat <- logistic_data(2000)
  dir <- withr_dir()
  bm <- file_matrix(cbind(dat$X, y = dat$y), dir = dir)
  m <- model_logistic(bm, y = "y", prior = prior_normal(0, 5))
  other <- model_logistic(file_matrix(cbind(dat$X[, 1:2], y = dat$y), dir = dir, name = "o"),
                          y = "y")
  run <- function() {
    set.seed(seed)
    # one thread, so that the run lasts past `after` (two chains on two
    # threads could end before a change made a second in)
    sgld(m, lr = 1e-4, batch_size = 50, iter = 3e5, thin = 500, burnin = 0,
         control_variates = TRUE, chains = 2, threads = 1)
  }
  ready <- tempfile("ready-")
  start <- function() {
    bg <- callr::r_bg(function(act, ready, ...) {
      file.create(ready)
      act(...)
    }, args = list(act = act, ready = ready, path = m$file$path, other = other$file$path,
                   after = after))
    while (!file.exists(ready) && bg$is_alive()) Sys.sleep(0.02)
    bg
  }
  list(m = m, run = run, other = other$file$path, act = start)
}

test_that("a copy removed or replaced during a run: the run reads its mapping", {
  skip_if_not_installed("callr")
  skip_on_cran()
  for (what in c("remove", "replace")) {
    act <- if (what == "remove") function(path, other, after) { Sys.sleep(after); unlink(path) }
           else function(path, other, after) {
             Sys.sleep(after)
             file.copy(other, paste0(path, ".new"))
             file.rename(paste0(path, ".new"), path)
           }
    r <- long_run_with(act)
    # the same data (in another file) and seed: the same draws
    if (what == "remove") want <- suppressWarnings(r$run())
    bg <- r$act()
    got <- with_warnings(r$run())
    bg$wait()
    expect_false(file.exists(r$m$file$path) && what == "remove")
    expect_match(got$warnings, sprintf("copy of its rows .* was %s while this process had it mapped; the run reads its mapping",
                                       if (what == "remove") "removed" else "replaced by another file"),
                 all = FALSE)
    expect_identical(got$value$status, c("done", "done"))
    expect_identical(as.array(got$value), as.array(want))   # no draw lost or changed
  }
  # extended in place under the run (no read faults): the draws come back on
  # the error that says the copy changed, rather than being lost with it
  r <- long_run_with(function(path, other, after) {
    Sys.sleep(after)
    Sys.chmod(path, "644")
    con <- file(path, "ab")
    writeBin(rep(0, 1000), con)
    close(con)
  })
  bg <- r$act()
  err <- tryCatch(r$run(), sgld_data_error = function(e) e)
  bg$wait()
  expect_match(conditionMessage(err), "copy of its rows changed during the run.*extended after it was written.*draws are kept")
  expect_identical(as.array(err$fit), as.array(want))
})

test_that("a copy truncated during a run ends it with an R error and the draws so far", {
  skip_if_not_installed("callr")
  skip_on_cran()
  # in a child with a time limit: an unguarded read of the lost pages is a
  # bus error that kills R
  out <- callr::r(function(cache, long_run_with, logistic_data, file_matrix, withr_dir) {
    # started 0.3 s into a run of about a second (more on a loaded machine)
    library(sgld)
    options(sgld.cache_dir = cache)
    r <- long_run_with(function(path, other, after) {
      Sys.sleep(after)
      Sys.chmod(path, "644")           # the copy is read-only to its owner
      con <- file(path, "r+b")
      truncate(con)                    # at position 0: nothing left
      close(con)
    }, after = 1, cache_dir = cache)
    want <- suppressWarnings(r$run())
    bg <- r$act()
    err <- tryCatch(r$run(), sgld_data_error = function(e) e)
    bg$wait()
    fit <- err$fit
    kept <- lapply(seq_along(fit$partial), function(k) unclass(fit$partial[[k]]))
    list(message = conditionMessage(err), status = fit$status, kept = fit$kept,
         stop_iter = fit$stop_iter, partial = fit$partial, want = want,
         after = tryCatch(r$run(), error = conditionMessage))
  }, args = list(cache = file.path(cache, "truncated"), long_run_with = long_run_with,
                 logistic_data = logistic_data, file_matrix = file_matrix,
                 withr_dir = withr_dir), timeout = 120)
  expect_match(out$message, "copy of its rows .* was truncated during the run .*stopped at iterations? [0-9, ]+, before keeping any draw made from the lost rows.*sgld_data_error")
  expect_true(any(out$status == "failed"))
  expect_true(all(out$status %in% c("failed", "interrupted")))
  expect_lt(max(out$stop_iter), 3e5)
  # every draw kept is the undisturbed run's draw at that iteration
  want <- as.array(out$want)
  for (c in seq_along(out$kept)) if (out$kept[c] > 0) {
    got <- out$partial[[sprintf("chain %d", c)]]
    attributes(got) <- list(dim = dim(got))
    expect_identical(got, unname(want[seq_len(out$kept[c]), c, ]))
  }
  expect_gt(sum(out$kept), 0)
  expect_match(out$after, "copy of its rows .* (has 0 bytes|truncated)")
})

test_that("a copy that passes the file size limit is an R error; partial files are cleaned", {
  skip_if_not_installed("callr")
  skip_on_cran()
  skip_if(Sys.which("bash") == "" || Sys.which("timeout") == "")
  dir <- file.path(cache, "limits")
  dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  # the backing file is written here, before the child's limit
  set.seed(1)
  X <- cbind(1, matrix(rnorm(40000 * 3), 40000))
  bm <- file_matrix(cbind(X, y = rbinom(40000, 1, 0.5)), dir = withr_dir())
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(sgld)",
    sprintf("options(sgld.cache_dir = '%s')", dir),
    sprintf("bm <- bigmemory::attach.big.matrix('%s')",
            file.path(bigmemory::describe(bm)@description$dirname, "m.desc")),
    "msg <- tryCatch({ model_logistic(bm, y = 'y'); 'built' }, error = conditionMessage)",
    "cat(msg)"), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  # the copy (40,000 rows of 5 doubles, 1.6 MB) passes a limit of 1 MB; the
  # backing file (1.6 MB) is written before the limit is set
  out <- system2("timeout", c("120", "bash", "-c",
                              shQuote(sprintf("ulimit -f 1024 2>/dev/null; '%s' '%s'", rscript, script))),
                 stdout = TRUE, stderr = TRUE)
  status <- attr(out, "status")
  out <- paste(out, collapse = "\n")
  expect_null(status)
  expect_match(out, "would pass this process's file size limit \\(`ulimit -f`, RLIMIT_FSIZE\\).*partial copy was removed")
  expect_length(list.files(dir, pattern = "partial"), 0)
  # a partial copy left by a process that died (SIGKILL mid-copy) goes at the
  # next build in the directory; one of a live process stays
  host <- gsub("[-/]", "_", Sys.info()[["nodename"]])
  dead <- callr::r_bg(function() Sys.getpid())
  dead$wait()
  alive <- callr::r_bg(function() Sys.sleep(30))
  on.exit(alive$kill(), add = TRUE)
  stale <- file.path(dir, sprintf("sgld-0123456789abcdef.rows.partial-%s-%d", host, dead$get_pid()))
  running <- file.path(dir, sprintf("sgld-0123456789abcdef.rows.partial-%s-%d", host, alive$get_pid()))
  writeBin(raw(100), stale)
  writeBin(raw(100), running)
  old <- options(sgld.cache_dir = dir)
  on.exit(options(old), add = TRUE)
  dat <- logistic_data(300)
  model_logistic(file_matrix(cbind(dat$X, y = dat$y)), y = "y")
  expect_false(file.exists(stale))
  expect_true(file.exists(running))
})

options(old_cache)
