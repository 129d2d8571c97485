# The site's logo, man/figures/logo.png, and its icon, pkgdown/favicon/
# favicon.ico: the exact posterior of Welling and Teh's mixture with tied
# means (vignette("welling-teh")), its two modes in contour lines. pkgdown
# shows the logo at the top of every page; with an icon of its own the site
# needs no web service to make one.
#   Rscript tools/make-logo.R        (from the package's top directory)
library(sgld)
set.seed(17)
m <- model_mixture(mixture_data(100))
g <- grid_posterior(m, seq(-1.5, 2.5, length.out = 81), seq(-3, 3, length.out = 91))
draw <- function(file, size, lwd) {
  grDevices::png(file, width = size, height = size)
  graphics::par(mar = rep(0.5, 4))
  graphics::contour(g$x, g$y, g$density, drawlabels = FALSE, axes = FALSE, nlevels = 9,
                    lwd = lwd, col = grDevices::hcl.colors(12, "Blues 3")[1:9])
  graphics::box(col = "grey70")
  invisible(grDevices::dev.off())
}
draw("man/figures/logo.png", 240, 3)

# an .ico file holding one PNG image: a 6-byte header, one 16-byte entry
# (width, height, colours, reserved, planes, bits per pixel, size, offset)
png_file <- tempfile(fileext = ".png")
draw(png_file, 48, 2)
bytes <- readBin(png_file, "raw", file.size(png_file))
dir.create("pkgdown/favicon", showWarnings = FALSE, recursive = TRUE)
con <- file("pkgdown/favicon/favicon.ico", "wb")
writeBin(as.integer(c(0, 1, 1)), con, size = 2, endian = "little")
writeBin(as.raw(c(48, 48, 0, 0)), con)
writeBin(as.integer(c(1, 32)), con, size = 2, endian = "little")
writeBin(as.integer(c(length(bytes), 22)), con, size = 4, endian = "little")
writeBin(bytes, con)
close(con)
