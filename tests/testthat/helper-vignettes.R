# The text lines of a built vignette's HTML, as its reader sees them.
html_text_lines <- function(path) {
  html <- paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
  # the base64 images are long and hold no text
  html <- gsub("data:[a-z]+/[a-z+.-]+;base64,[A-Za-z0-9+/=]+", "", html)
  text <- gsub("<[^>]*>", "", html)
  entities <- c("&gt;" = ">", "&lt;" = "<", "&quot;" = "\"", "&#39;" = "'", "&amp;" = "&")
  for (e in names(entities)) text <- gsub(e, entities[[e]], text, fixed = TRUE)
  strsplit(text, "\n", fixed = TRUE)[[1]]
}

warning_line <- "^\\s*(#>|##)\\s*Warning( in .*)?:"

# The warnings a built vignette shows its reader: knitr prints each one as a
# line "#> Warning: ..." or "#> Warning in f(...): ..." (with the chunk's
# comment prefix, "#>" or "##") among the chunk's output. Returns those lines.
html_warnings <- function(path) grep(warning_line, html_text_lines(path), value = TRUE)

# The warning blocks a built vignette shows: runs of output lines (each
# starting with the comment prefix) that hold at least one warning, so that
# the warnings one call raises together count once. Returns each block's
# first warning line.
html_warning_blocks <- function(path) {
  lines <- html_text_lines(path)
  output <- grepl("^\\s*(#>|##)", lines)
  warning <- grepl(warning_line, lines)
  # a run starts at every line that is not output and at output after such a line
  run <- cumsum(!output | c(TRUE, !output[-length(output)]))
  first <- vapply(split(seq_along(lines), run), function(i) i[warning[i]][1], 1L)
  lines[first[!is.na(first)]]
}
