# Knits each vignette alone, in a fresh R process, against the installed sgld
# (set R_LIBS to choose which), and prints its build time and how many warning
# messages its HTML shows. The limits are 60 s per vignette and 5 minutes for
# the set; the script exits non-zero when one is missed.
#
#   R_LIBS=/tmp/lib Rscript tools/vignette-times.R [name ...]
#
# Run from the package's top directory; output goes to a temporary directory.
args <- commandArgs(trailingOnly = TRUE)
sources <- list.files("vignettes", pattern = "\\.Rmd$", full.names = TRUE)
if (length(args)) sources <- sources[sub("\\.Rmd$", "", basename(sources)) %in% args]
if (!length(sources)) stop("no vignette matches: ", paste(args, collapse = ", "))
source("tests/testthat/helper-vignettes.R")
in_dir <- function(dir, expr) {
  old <- setwd(dir)
  on.exit(setwd(old))
  expr
}

# outside R's session directory, so that the pages outlive this script
out <- tempfile("vignettes-", tmpdir = dirname(tempdir()))
dir.create(out)
invisible(file.copy(list.files("vignettes", full.names = TRUE), out, recursive = TRUE))
rscript <- file.path(R.home("bin"), "Rscript")
rows <- lapply(sources, function(src) {
  name <- sub("\\.Rmd$", "", basename(src))
  code <- sprintf("rmarkdown::render('%s.Rmd', quiet = TRUE, envir = globalenv())", name)
  t0 <- proc.time()
  status <- in_dir(out, system2(rscript, c("-e", shQuote(code)),
                                   stdout = FALSE, stderr = file.path(out, paste0(name, ".log"))))
  used <- proc.time() - t0
  seconds <- used[["elapsed"]]
  cpu <- used[["user.child"]] + used[["sys.child"]]
  html <- file.path(out, paste0(name, ".html"))
  warnings <- if (status == 0 && file.exists(html)) length(html_warnings(html)) else NA
  cat(sprintf("%-28s %6.1f s (CPU %6.1f s)  %s  warnings shown: %s\n", name, seconds, cpu,
              if (status == 0) "built " else "FAILED", warnings))
  data.frame(vignette = name, seconds = seconds, cpu = cpu, built = status == 0,
             warnings = warnings)
})
rows <- do.call(rbind, rows)
total <- sum(rows$seconds)
cat("HTML and logs in", out, "\n")
cat(sprintf("total %.1f s (CPU %.1f s) over %d vignettes; load average %s\n", total,
            sum(rows$cpu), nrow(rows),
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
ok <- all(rows$built) && all(rows$seconds < 60) && (length(args) || total < 300)
if (!ok) quit(status = 1)
