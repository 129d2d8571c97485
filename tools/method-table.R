# Writes the model x method table of ARCHITECTURE.md (between its
# "method-table" markers) from the models' declarations (R/capabilities.R:
# model_methods()), as ?sgld_fit_methods renders them through roxygen.
# Run from the package root after installing the package:
#   Rscript tools/method-table.R
# tests/testthat/test-method-grid.R checks that the file holds what this writes.
path <- "ARCHITECTURE.md"
text <- readLines(path)
begin <- grep("<!-- method-table: begin", text, fixed = TRUE)
end <- grep("<!-- method-table: end", text, fixed = TRUE)
if (length(begin) != 1L || length(end) != 1L || end < begin)
  stop(path, " must hold one pair of method-table markers.")
table <- sgld:::method_table_markdown()
writeLines(c(text[seq_len(begin)], table, text[end:length(text)]), path)
cat("wrote", length(table), "lines of the method table into", path, "\n")
