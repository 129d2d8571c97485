# Lists every R and C function of the package longer than a limit (100
# lines by default), longest first, and exits non-zero if there is one.
# R: each top-level function assigned in R/ (its srcref's lines). C: each
# function definition in src/ (from its opening line to the matching
# closing brace at the start of a line). Usage:
#   Rscript tools/function-length.R [limit]
limit <- as.integer(commandArgs(TRUE)[1])
if (is.na(limit)) limit <- 100L

r_lengths <- function(file) {
  exprs <- parse(file, keep.source = TRUE)
  refs <- attr(exprs, "srcref")
  out <- list()
  for (k in seq_along(exprs)) {
    e <- exprs[[k]]
    if (is.call(e) && as.character(e[[1]]) %in% c("<-", "=") && is.call(e[[3]]) &&
        identical(e[[3]][[1]], as.name("function"))) {
      out[[length(out) + 1]] <- data.frame(file = file, name = deparse(e[[2]]),
                                           lines = refs[[k]][3] - refs[[k]][1] + 1)
    }
  }
  do.call(rbind, out)
}

c_lengths <- function(file) {
  src <- readLines(file, warn = FALSE)
  # a definition: a line at column 0 that opens a body, not a declaration,
  # a struct, an enum or an initializer
  starts <- grep("^[A-Za-z_].*\\)\\s*\\{\\s*$", src)
  starts <- starts[!grepl("^(typedef|struct|enum|union|static const|const)\\b.*=", src[starts])]
  ends <- grep("^\\}", src)
  out <- lapply(starts, function(s) {
    e <- ends[ends > s][1]
    if (is.na(e)) return(NULL)
    name <- sub("\\(.*$", "", src[s])
    name <- sub("^.*[ *]", "", name)
    data.frame(file = file, name = name, lines = e - s + 1)
  })
  do.call(rbind, out)
}

r <- do.call(rbind, lapply(list.files("R", pattern = "\\.R$", full.names = TRUE), r_lengths))
cc <- do.call(rbind, lapply(list.files("src", pattern = "\\.(c|h)$", full.names = TRUE),
                            c_lengths))
all <- rbind(r, cc)
long <- all[all$lines > limit, ]
long <- long[order(-long$lines), ]
if (nrow(long)) {
  cat(sprintf("%d functions over %d lines:\n", nrow(long), limit))
  print(long, row.names = FALSE)
  quit(status = 1)
}
cat(sprintf("no R or C function over %d lines (%d R, %d C functions)\n", limit,
            nrow(r), nrow(cc)))
