# Runs the test suite against the sanitizer build in /tmp/sgld-asan (`make sanitize`).
library(sgld, lib.loc = "/tmp/sgld-asan")
r <- as.data.frame(testthat::test_dir("tests/testthat", package = "sgld", load_package = "none",
                                      reporter = "summary"))
if (sum(r$failed) > 0 || any(r$error)) quit(status = 1)
