# `make site`: the package's web site in docs/, by pkgdown (_pkgdown.yml),
# then the parts of MathJax its pages load, copied from Debian's
# libjs-mathjax, so that the site needs no network to read.
#
#   Rscript tools/build-site.R        (from the package's top directory)
#
# pkgdown installs the package into a temporary library, renders every
# vignette as an article (their code runs again) and every help page with
# its examples.
mathjax <- "/usr/share/javascript/mathjax"
if (!file.exists(file.path(mathjax, "MathJax.js")))
  stop("MathJax is not at ", mathjax, ": install Debian's libjs-mathjax ",
       "(bash tools/install-deps.sh --site)", call. = FALSE)
if (!requireNamespace("pkgdown", quietly = TRUE))
  stop("pkgdown is not installed (bash tools/install-deps.sh --site)", call. = FALSE)

started <- proc.time()[["elapsed"]]
# offline, pkgdown's look-up of the package on CRAN and Bioconductor (for the
# home page's links) would fail the build; the site links to neither
options(pkgdown.internet = FALSE)
pkgdown::build_site(preview = FALSE)

# what the configuration TeX-AMS_CHTML (head.html) loads: the TeX input, the
# CommonHTML output and its web fonts, and the extensions it names
parts <- c("MathJax.js", "config/TeX-AMS_CHTML.js", "jax/input/TeX", "jax/element",
           "jax/output/CommonHTML", "extensions", "fonts/HTML-CSS/TeX/woff")
site <- file.path("docs", "mathjax")
unlink(site, recursive = TRUE)
for (p in parts) {
  to <- file.path(site, dirname(p))
  dir.create(to, recursive = TRUE, showWarnings = FALSE)
  if (!file.copy(file.path(mathjax, p), to, recursive = TRUE))
    stop("could not copy ", file.path(mathjax, p), call. = FALSE)
}
cat(sprintf("site built in docs/ (%.0f s); open docs/index.html\n",
            proc.time()[["elapsed"]] - started))
