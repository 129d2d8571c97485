# Runs every benchmark of the package and writes bench/RESULTS.md.
#
#   make bench            (installs the package first), or
#   Rscript bench/run-all.R [script ...]    from the package root
#
# Each script prints its own section: markdown when its output starts with a
# "## " heading, plain text otherwise (then shown as it printed it). A script
# that fails is reported as failed with its last lines (standard output and
# error); the others still run.
args <- commandArgs(trailingOnly = TRUE)
scripts <- if (length(args)) args else c(
  "bench/throughput.R",        # sgld vs plain R, PyTorch and the C floor
  "bench/speed.R",             # large workloads vs PyTorch float32/float64 and the memory floor
  "bench/scaling.R",           # time per iteration against n and d
  "bench/sgld-throughput.R",   # engine vs whole call, thinning
  "bench/logistic-adult.R",    # sparse vs dense storage, 2 threads vs 1
  "bench/sparse-density.R",    # a full pass sparse vs dense against the design's density
  "bench/memory.R",            # peak resident memory
  "bench/defaults.R",          # sgld(model) with every setting left to its default
  "bench/adult-samplers.R",    # Adult's default profiled; MALA and HMC passes per ESS
  "bench/conditioning.R",      # pSGLD vs SGLD on a badly conditioned posterior
  "bench/control-variates.R",  # gradient noise and accuracy with control variates
  "bench/ica.R",               # Welling and Teh's ICA experiment at full length
  "bench/custom-model.R",      # models written in R functions against the built-in one
  "bench/engine.R",            # cost of the progress display, memory with `pars`
  "bench/predict.R",           # predict() on Adult's test rows against the R reference
  "bench/large-data.R",        # a 4.2 GB file-backed matrix: memory, time per iteration
  "bench/vi.R",                # Bayes by Backprop against rstan::vb (ADVI)
  "bench/vi-local.R",          # bbb()'s local reparameterisation: gradient variance
  "bench/vi-defaults.R",       # bbb(m) against sgld(m) at their defaults: wall time
  "bench/vi-heldout.R",        # bbb(m) on held-out regressions against exact references
  "bench/fashion-mnist-speed.R", # one network epoch against PyTorch
  "bench/fashion-mnist.R",     # neural network classification: accuracy, calibration
  "bench/uci.R",               # Bayesian neural networks, UCI protocol (20 splits)
  "bench/sv.R",                # stochastic volatility: accuracy against NUTS, cost against T
  "bench/sv-ar1.R",            # the AR(1) model's default against NUTS and stochvol
  "bench/sv-ar1-mala.R",       # mala() on the AR(1) model against NUTS
  "bench/nuts.R"               # time to accuracy against Stan's NUTS
)
scripts <- scripts[file.exists(scripts)]

git <- function(...) tryCatch(suppressWarnings(system2("git", c(...), stdout = TRUE, stderr = FALSE)),
                               error = function(e) character())
commit <- git("rev-parse", "--short", "HEAD")
commit <- if (length(commit) == 1L) commit else "unknown"
dirty <- length(git("status", "--porcelain", "--untracked-files=no")) > 0L
cpu <- tryCatch({
  l <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)
  sprintf("%s x %d", trimws(sub(".*:", "", l[1])), length(l))
}, error = function(e) "unknown")
header <- c(
  "# sgld benchmark results", "",
  sprintf("- Date: %s", format(Sys.time(), "%Y-%m-%d %H:%M %Z")),
  sprintf("- Machine: %s (%s), %s", Sys.info()[["nodename"]], cpu, R.version$platform),
  sprintf("- R: %s; sgld %s", R.version.string, as.character(utils::packageVersion("sgld"))),
  sprintf("- Code: commit %s%s", commit, if (dirty) " with uncommitted changes" else ""),
  "- Reproduce: `make bench` from the package root (it installs the package and runs",
  "  `Rscript bench/run-all.R`, which writes this file). Every figure below comes from",
  "  that one run; timings are medians of repeated runs where the section says so, and",
  "  ratios compare implementations measured in the same run.", ""
)

started <- Sys.time()
sections <- character()
for (s in scripts) {
  cmd <- if (grepl("\\.sh$", s)) "bash" else file.path(R.home("bin"), "Rscript")
  t0 <- Sys.time()
  # A section is the script's standard output. Its standard error (progress
  # lines, and the warnings of runs made past the sampling threshold on
  # purpose, to time them) is shown only when the script fails.
  err_file <- tempfile(fileext = ".txt")
  out <- suppressWarnings(system2(cmd, s, stdout = TRUE, stderr = err_file))
  err <- if (file.exists(err_file)) readLines(err_file, warn = FALSE) else character()
  unlink(err_file)
  secs <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  status <- attr(out, "status")
  failed <- !is.null(status) && status != 0
  cat(sprintf("%-28s %s in %.0f s\n", s, if (failed) "FAILED" else "done", secs))
  body <- if (length(out) && startsWith(out[1], "## ") && !failed) out
          else c(sprintf("## %s", basename(s)), "", "```text",
                 if (failed) c(utils::tail(c(out, err), 30), sprintf("(exit status %d)", status)) else out,
                 "```")
  sections <- c(sections, body, "", sprintf("_`%s`: %.0f s._", s, secs), "")
  # Written after every script, so that a run cut short keeps what it measured.
  done <- match(s, scripts)
  status_line <- if (done < length(scripts))
    sprintf("- Incomplete: %d of %d scripts so far (the run was still going or was stopped).", done, length(scripts))
  else sprintf("- Complete: all %d scripts, %.0f minutes in all.", length(scripts),
               as.numeric(difftime(Sys.time(), started, units = "mins")))
  writeLines(c(header[-length(header)], status_line, "", sections), "bench/RESULTS.md")
}
cat("wrote bench/RESULTS.md\n")
