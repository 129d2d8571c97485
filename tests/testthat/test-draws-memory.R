# A run whose stored draws would not fit in memory is refused before it
# starts, with the figures and the remedy (R/pars.R).

test_that("the memory counted on is the least the system reports, or the option", {
  skip_on_os(c("windows", "mac", "solaris"))
  avail <- sgld:::memory_available()
  expect_true(is.finite(as.numeric(avail[["bytes"]])))
  expect_gt(as.numeric(avail[["bytes"]]), 0)
  old <- options(sgld.memory_limit = 5e8)
  on.exit(options(old))
  expect_identical(sgld:::memory_available()[["from"]], "options(sgld.memory_limit)")
  options(sgld.memory_limit = "lots")
  expect_error(sgld:::memory_available(), "`options\\(sgld.memory_limit\\)` must be a positive number of bytes")
})

test_that("draws beyond the memory available are refused up front, naming the limit", {
  m <- model_logistic(type ~ ., data = pima(), prior = prior_normal(0, 10), prior_intercept = NULL)
  old <- options(sgld.memory_limit = 2^28)
  on.exit(options(old))
  # 4e6 kept rows of 8 parameters: 27 numbers a row, 0.8 GiB at the peak
  expect_error(sgld(m, lr = 1e-5, batch_size = 10, iter = 4e6, burnin = 0, thin = 1, chains = 1),
               paste0("the run would keep up to 4e\\+06 draws of 8 parameters \\(0.238 GiB\\), ",
                      "and building its fit holds about three copies of them at once \\(0.805 GiB\\), ",
                      "more than the 0.25 GiB of memory available \\(options\\(sgld.memory_limit\\)\\); ",
                      "increase `thin`"))
  # the same run thinned, or storing fewer parameters, fits
  expect_s3_class(quietly_checked(sgld(m, lr = 1e-5, batch_size = 10, iter = 4e4, burnin = 0,
                                        pars = "glu", chains = 1)), "sgld_fit")
  settings <- function(thin) sgld:::run_settings(m, lr = 1e-5, batch_size = 10, iter = 4e6,
                                                 burnin = 0, thin = thin, temperature = 1,
                                                 chains = 1, init = NULL, replace = FALSE,
                                                 clip = NULL)
  expect_error(settings(thin = 1), "would keep up to 4e\\+06 draws")
  expect_identical(settings(thin = 10)$capacity, 4e5)
})

test_that("under an address-space limit a run too large for it stops before it starts", {
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_not_installed("callr")
  # AddressSanitizer reserves terabytes of address space: no run fits under ulimit -v
  skip_if(grepl("asan", Sys.getenv("LD_PRELOAD")), "an address-space limit under AddressSanitizer")
  # a child under ulimit -v 1.5 GB: 2e7 kept draws of 8 parameters need about
  # 4.0 GiB at the peak; before this check the run went ahead and failed in
  # the allocator when its fit was built, its draws lost
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(sgld)",
    "m <- model_logistic(type ~ ., data = MASS::Pima.tr, prior = prior_normal(0, 10), prior_intercept = NULL)",
    "r <- tryCatch(sgld(m, lr = 1e-5, batch_size = 10, iter = 2e7, burnin = 0, thin = 1, chains = 1),",
    "              error = function(e) conditionMessage(e))",
    "cat(if (is.character(r)) r else 'ran', '\\n')"), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- callr::run("sh", c("-c", sprintf("ulimit -v 1500000 && exec '%s' '%s'", rscript, script)),
                       env = c("current", R_LIBS = paste(.libPaths(), collapse = ":")),
                       timeout = 120, error_on_status = FALSE)
  expect_match(out$stdout, paste0("the run would keep up to 2e\\+07 draws of 8 parameters .*",
                                  "more than the [0-9.]+ GiB of memory available \\(the ",
                                  "address-space limit \\(ulimit -v\\)\\)"))
})
