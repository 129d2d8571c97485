# After `make demo`: every vignette in vignettes/ must be installed, so that
# the README's vignette("...", package = "sgld") calls open. Run from the
# package's top directory.
sources <- sub("\\.Rmd$", "", list.files("vignettes", pattern = "\\.Rmd$"))
installed <- vignette(package = "sgld")$results[, "Item"]
missing <- setdiff(sources, installed)
if (length(missing)) {
  message("vignettes not installed: ", paste(missing, collapse = ", "))
  quit(status = 1)
}
# and every vignette the README names is one of them
readme <- readLines("README.md")
named <- unique(unlist(regmatches(readme, gregexpr('(?<=vignette\\(")[^"]+', readme, perl = TRUE))))
unknown <- setdiff(named, installed)
if (length(unknown)) {
  message("the README names vignettes that are not installed: ", paste(unknown, collapse = ", "))
  quit(status = 1)
}
cat("vignettes installed:", paste(installed, collapse = ", "), "\n")
