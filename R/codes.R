# The names of every code R and C share, as C's tables hold them
# (src/codes.c): read once per session from the engine, never written twice.
# Each element is a character vector in code order, so element k + 1 names
# code k; `metrics` holds each model type's held-out metrics, `rules` the
# update rules, `limits` the largest values C takes for some arguments.
engine_codes <- local({
  cached <- NULL
  function() {
    if (is.null(cached)) cached <<- .Call(C_sgld_codes)
    cached
  }
})

# What the fit calls each chain status the engine reports: both kinds of
# non-finite values are a divergence to the user.
status_labels <- c(done = "done", nonfinite_parameter = "diverged",
                   nonfinite_gradient = "diverged", interrupted = "interrupted",
                   not_run = "not run", model_failed = "failed")

# The engine's status codes as the fit's labels.
chain_status <- function(codes) {
  unname(status_labels[engine_codes()$status[codes + 1L]])
}
