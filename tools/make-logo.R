# The site's logo, man/figures/logo.png: the exact posterior of Welling and
# Teh's mixture with tied means (vignette("welling-teh")), its two modes in
# contour lines. pkgdown shows it at the top of every page.
#   Rscript tools/make-logo.R        (from the package's top directory)
library(sgld)
set.seed(17)
m <- model_mixture(mixture_data(100))
g <- grid_posterior(m, seq(-1.5, 2.5, length.out = 81), seq(-3, 3, length.out = 91))
grDevices::png("man/figures/logo.png", width = 240, height = 240)
graphics::par(mar = rep(0.5, 4))
graphics::contour(g$x, g$y, g$density, drawlabels = FALSE, axes = FALSE, nlevels = 9, lwd = 3,
                  col = grDevices::hcl.colors(12, "Blues 3")[1:9])
graphics::box(col = "grey70")
invisible(grDevices::dev.off())
