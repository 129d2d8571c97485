#!/usr/bin/env bash
# Installs what building, checking and demonstrating sgld needs on a Debian
# machine with R: Debian's r-cran-* packages through apt (as root, or with sudo),
# plus pandoc and qpdf for the vignettes and R CMD check --as-cran, and
# stochvol (CRAN only: built from source on Debian's Rcpp and RcppArmadillo,
# a few minutes), which the stochastic-volatility vignette runs beside
# model_sv()'s AR(1) model.
#
# With --bench, also what `make bench` needs: Stan's NUTS (r-cran-rstan, and
# r-cran-bh: without Boost's headers rstan cannot compile a model; Debian's
# r-cran-bh is libboost-dev, whose headers bench/sv.R and data-raw/sv-reference.R
# point rstan to), rstanarm for the stored stan_glm()/stan_glmer() references
# (data-raw/) and glmnet for the sparse benchmark,
# PyTorch (python3-torch, under /usr/bin/python3), GNU time for peak memory
# gcc for the C floor programs and Fashion-MNIST (dataset-fashion-mnist).
#
# With --site, also what `make site` and tools/check-site.py need: pkgdown,
# MathJax (libjs-mathjax, copied into the site), headless Chromium and its
# chromedriver, and Python 3 for the check.
set -euo pipefail

r_pkgs="coda testthat knitr rmarkdown mvtnorm roxygen2 loo rstantools generics posterior future bigmemory nnet modeldata stochvol lme4 parallelly callr processx"
debs="r-cran-rcpp r-cran-rcpparmadillo r-cran-coda r-cran-loo r-cran-rstantools r-cran-generics r-cran-callr r-cran-processx r-cran-future r-cran-bigmemory r-cran-nnet r-cran-modeldata r-cran-fastica r-cran-posterior r-cran-bayesplot r-cran-testthat r-cran-knitr r-cran-rmarkdown r-cran-mvtnorm r-cran-roxygen2 r-cran-lme4 r-cran-parallelly pandoc qpdf tidy make"
tools="pandoc qpdf tidy make"
if [ "${1:-}" = "--bench" ]; then
  r_pkgs="$r_pkgs rstan rstanarm glmnet"
  debs="$debs r-cran-rstan r-cran-rstanarm r-cran-glmnet r-cran-bh python3-torch time gcc dataset-fashion-mnist"
  tools="$tools gcc"
  [ -x /usr/bin/time ] || tools="$tools /usr/bin/time"
  /usr/bin/python3 -c 'import torch' 2>/dev/null || tools="$tools python3-torch"
  # rstan needs Boost's headers (BH on CRAN; libboost-dev under Debian's r-cran-bh)
  [ -d /usr/include/boost ] || Rscript -e 'quit(status = !nzchar(system.file("include", "boost", package = "BH")))' ||
    tools="$tools r-cran-bh"
  # Fashion-MNIST's idx files for bench/fashion-mnist.R
  [ -d /usr/share/datasets/fashion-mnist ] ||
    tools="$tools dataset-fashion-mnist"
fi

if [ "${1:-}" = "--site" ]; then
  r_pkgs="$r_pkgs pkgdown"
  debs="$debs r-cran-pkgdown libjs-mathjax chromium chromium-driver python3"
  [ -f /usr/share/javascript/mathjax/MathJax.js ] || tools="$tools libjs-mathjax"
  for t in chromium chromedriver python3; do
    command -v "$t" >/dev/null 2>&1 || tools="$tools $t"
  done
fi

missing=$(Rscript -e "p <- strsplit('$r_pkgs', ' ')[[1]]; cat(p[!vapply(p, requireNamespace, NA, quietly = TRUE)])")
tools_missing=""
for t in $tools; do command -v "$t" >/dev/null 2>&1 || tools_missing="$tools_missing $t"; done

if [ -z "$missing" ] && [ -z "$tools_missing" ]; then
  echo "install-deps: everything is already installed"
  exit 0
fi
echo "install-deps: missing R packages: ${missing:-none}; missing tools:${tools_missing:- none}"

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $debs >/dev/null

still=$(Rscript -e "p <- strsplit('$r_pkgs', ' ')[[1]]; cat(p[!vapply(p, requireNamespace, NA, quietly = TRUE)])")
if [ -n "$still" ]; then
  # fall back to CRAN for anything Debian could not provide
  Rscript -e "install.packages(strsplit('$still', ' ')[[1]], repos = 'https://cloud.r-project.org')"
fi
echo "install-deps: done"
