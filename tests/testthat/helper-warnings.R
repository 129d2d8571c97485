# The kinds of warning the checks at the end of a run give (?sgld_warning):
# a short run of a test about mechanics may trip any of them.
run_check_kinds <- c("convergence", "stein", "threshold", "threshold_burnin", "acceptance",
                     "vi_importance", "vi_khat", "vi_nonfinite", "vi_convergence")

# A short run that is expected to warn: expr must give at least one warning
# of the sgld classes named (e.g. "ess", "rhat", "stein", or the full class
# "sgld_warning_ess"); those warnings are muffled, and every other warning
# (of another kind, from another package or from R) is let through to the
# test log, so no unexpected warning is hidden. Returns expr's value.
expect_run_warnings <- function(expr, kinds = c("convergence", "stein", "threshold")) {
  classes <- ifelse(startsWith(kinds, "sgld_warning"), kinds, paste0("sgld_warning_", kinds))
  seen <- 0L
  value <- withCallingHandlers(expr, warning = function(w) {
    if (inherits(w, classes)) {
      seen <<- seen + 1L
      invokeRestart("muffleWarning")
    }
  })
  testthat::expect(seen > 0L, sprintf("the run gave no warning of class %s",
                                      paste(classes, collapse = ", ")))
  invisible(value)
}

# A run of a test about mechanics, not about its checks, whose short length
# may or may not trip them (which depends on the seed and the machine's
# threads): the package's run-check warnings are muffled whether or not
# they come; every other warning is let through.
quietly_checked <- function(expr, kinds = run_check_kinds) {
  classes <- ifelse(startsWith(kinds, "sgld_warning"), kinds, paste0("sgld_warning_", kinds))
  withCallingHandlers(expr, warning = function(w)
    if (inherits(w, classes)) invokeRestart("muffleWarning"))
}
