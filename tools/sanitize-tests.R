# Runs the test suite against the sanitizer build in /tmp/sgld-asan (`make sanitize`).
# first on the library path, so that child R processes started by the tests
# (the interrupt test) load the same build
.libPaths(c("/tmp/sgld-asan", .libPaths()))
library(sgld)
stopifnot(startsWith(getNamespaceInfo("sgld", "path"), "/tmp/sgld-asan"))
r <- as.data.frame(testthat::test_dir("tests/testthat", package = "sgld", load_package = "none",
                                      reporter = "summary"))
if (sum(r$failed) > 0 || any(r$error)) quit(status = 1)
