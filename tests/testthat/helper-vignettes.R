# The warnings a built vignette shows its reader: knitr prints each one as a
# line "#> Warning: ..." or "#> Warning in f(...): ..." (with the chunk's
# comment prefix, "#>" or "##") among the chunk's output. Returns those lines.
html_warnings <- function(path) {
  html <- paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
  # the base64 images are long and hold no text
  html <- gsub("data:[a-z]+/[a-z+.-]+;base64,[A-Za-z0-9+/=]+", "", html)
  text <- gsub("<[^>]*>", "", html)
  entities <- c("&gt;" = ">", "&lt;" = "<", "&quot;" = "\"", "&#39;" = "'", "&amp;" = "&")
  for (e in names(entities)) text <- gsub(e, entities[[e]], text, fixed = TRUE)
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  grep("^\\s*(#>|##)\\s*Warning( in .*)?:", lines, value = TRUE)
}
