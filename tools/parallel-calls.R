# Checks that nothing a chain runs inside a parallel region can reach the R API.
#
#   Rscript tools/parallel-calls.R DIR    (DIR: the .ci call graphs of every
#                                          src/*.c, from gcc -fcallgraph-info)
#   make parallel-check                    (compiles them and runs this)
#
# The roots are the bodies of every parallel region (gcc outlines each as
# "<function>._omp_fn.<k>": today the chains' chunks in src/chunks.c and the
# prediction blocks in src/predict.c). From them this follows every call gcc
# records. A call
# through a pointer (a model's or an update rule's function) is taken to reach
# every function of every model and rule file, except the builders, which read
# R objects on the main thread before any thread starts, and the model written
# in R functions, whose chains never run in threads (main_thread_only). Any R
# API function reachable from a root is an error, printed with its path.
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "."
files <- list.files(dir, pattern = "\\.ci$", full.names = TRUE)
if (!length(files)) stop("no .ci files in ", dir)

nodes <- character(); defined <- character(); origin <- character()
from <- character(); to <- character()
for (f in files) {
  lines <- readLines(f, warn = FALSE)
  unit <- sub("\\.ci$", "", basename(f))
  node <- regmatches(lines, regexec('^node: \\{ title: "([^"]+)".*', lines))
  for (i in which(lengths(node) > 0)) {
    t <- node[[i]][2]
    nodes <- c(nodes, t)
    if (!grepl("shape : ellipse", lines[i])) {
      defined <- c(defined, t)
      origin[t] <- unit
    }
  }
  edge <- regmatches(lines, regexec('^edge: \\{ sourcename: "([^"]+)" targetname: "([^"]+)"', lines))
  edge <- edge[lengths(edge) > 0]
  from <- c(from, vapply(edge, `[`, "", 2))
  to <- c(to, vapply(edge, `[`, "", 3))
}
defined <- unique(defined)
plain <- function(x) sub("^.*:", "", x)

# What a pointer may call: the functions that the model, rule and gradient
# estimator files put in their tables (the designated initializers
# `.field = function`), read from the sources. A model written in R
# functions is left out: its chains never run in threads (main_thread_only).
src <- file.path(dirname(normalizePath(dir)), "src")
if (length(args) > 1) src <- args[2]
table_files <- setdiff(list.files(src, pattern = "^((model|update|gradient)_[a-z]+|gradient)\\.c$",
                                  full.names = TRUE),
                       file.path(src, c("model_r.c", "model_table.c", "update_table.c",
                                        "model_eval.c")))
in_tables <- unique(unlist(lapply(table_files, function(f) {
  code <- paste(readLines(f), collapse = "\n")
  # designated initializers only (after "{" or ","), not assignments to a
  # struct's field (e.cv_mode = list_doubles(...) in gradient.c)
  m <- regmatches(code, gregexpr("[{,][[:space:]]*\\.[a-z_]+ *= *&?([A-Za-z_][A-Za-z0-9_]*)",
                                 code))[[1]]
  m <- sub("^[{,][[:space:]]*", "", m)
  # a rule's `build` (or `build_model`) reads R's options on the main thread,
  # before any thread starts
  m <- m[!grepl("^\\.build(_model)? ", m)]
  sub("^.*= *&?", "", m)
})))
pointer_targets <- defined[plain(defined) %in% in_tables]
# the bodies of the parallel regions, which gcc outlines as "<function>._omp_fn.<k>"
roots <- grep("_omp_fn", defined, value = TRUE)
if (!length(roots)) stop("no parallel region found: compile with OpenMP")
# R's standalone math library (nmath): pure functions that warn only for
# arguments at or below 0, which no model passes (model_sv.c: nu > 0;
# model_negbin.c: y + phi > 0 and phi > 0, also for its Hessian's trigamma).
nmath <- c("Rf_lgammafn", "Rf_digamma", "Rf_trigamma", "Rf_lbeta")
r_api <- "^(Rf_|R_|Rprintf|REprintf|error|warning|unif_rand|norm_rand|exp_rand|GetRNGstate|PutRNGstate|INTEGER|REAL|RAW|LOGICAL|CHAR|TYPEOF|XLENGTH|LENGTH|VECTOR_ELT|STRING_ELT|SET_|ATTRIB|protect|unprotect|alloc|mkChar|install|Scalar|list_|find_model|find_update)"

# breadth-first from the roots, remembering how each function was reached
reached <- setNames(rep(NA_character_, length(roots)), roots)
queue <- roots
while (length(queue)) {
  f <- queue[1]; queue <- queue[-1]
  callees <- to[from == f]
  if ("__indirect_call" %in% callees) callees <- c(callees, pointer_targets)
  # a call by plain name reaches the global function, or a static one of the
  # same unit (gcc names those "unit.c:name")
  for (g in setdiff(unique(callees), "__indirect_call")) {
    if (!is.na(match(g, names(reached)))) next
    reached[g] <- f
    queue <- c(queue, g)
  }
}
bad <- names(reached)[grepl(r_api, plain(names(reached))) & !plain(names(reached)) %in% nmath]
path <- function(g) {
  p <- g
  while (!is.na(reached[p[1]])) p <- c(reached[[p[1]]], p)
  paste(p, collapse = " -> ")
}
cat(sprintf("parallel-calls: %d functions reachable from %s\n", length(reached),
            paste(roots, collapse = ", ")))
if (length(bad)) {
  cat("R API reachable inside a parallel region:\n", paste0("  ", vapply(bad, path, ""), "\n"), sep = "")
  quit(status = 1)
}
cat("parallel-calls: no R API function is reachable inside a parallel region\n")
