# Developer entry points. `make demo` and `make test` are the two README commands.
PKG     := sgld
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz

.PHONY: deps document install build install-built demo test check warnings sanitize valgrind bench fuzz gctorture site clean

deps:
	bash tools/install-deps.sh

# roxygen reads the installed package, so the source tree gets no debug build
document:
	R CMD INSTALL --preclean . >/dev/null
	Rscript -e 'roxygen2::roxygenise(load_code = roxygen2::load_installed)'
	rm -f src/*.o src/*.so

# a quick install from the source tree, for development: it builds no vignettes
install: deps
	R CMD INSTALL --preclean .

# the source tarball, with the vignettes built (R CMD build runs them)
build: deps
	rm -f $(TARBALL)
	R CMD build .

# installed from the tarball, so that vignette() finds every vignette
install-built: build
	R CMD INSTALL $(TARBALL)

demo: install-built
	Rscript -e 'demo("handout", package = "sgld", ask = FALSE)'

# every test, the vignettes and R CMD check --as-cran on the built tarball,
# after a strict compile (-Wall -Wextra -pedantic -Werror)
test: deps warnings
	bash tools/check.sh

check: deps
	bash tools/check.sh

warnings:
	R_MAKEVARS_USER=$(CURDIR)/tools/Makevars.strict R CMD INSTALL --preclean --no-test-load \
	  --library=$$(mktemp -d) . >/tmp/sgld-strict.log 2>&1 || { cat /tmp/sgld-strict.log; exit 1; }
	@echo "C code compiles without warnings under -Wall -Wextra -pedantic"

# the whole test suite against a build with -fsanitize=address,undefined
# (R itself is not instrumented, so the runtime is preloaded; leaks are R's own)
ASAN_LIB := $(shell gcc -print-file-name=libasan.so)
sanitize: deps
	rm -rf /tmp/sgld-asan && mkdir -p /tmp/sgld-asan
	R_MAKEVARS_USER=$(CURDIR)/tools/Makevars.sanitize R CMD INSTALL --preclean --no-test-load \
	  --library=/tmp/sgld-asan . >/tmp/sgld-asan.log 2>&1 || { cat /tmp/sgld-asan.log; exit 1; }
	LD_PRELOAD=$(ASAN_LIB) ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 Rscript tools/sanitize-tests.R

# every entry point on a small run under valgrind memcheck; fails on any error
valgrind: install
	R -d "valgrind --error-exitcode=1 --track-origins=yes" --vanilla -f tools/valgrind-smoke.R

# every benchmark, written to bench/RESULTS.md (121 minutes on 2 cores on
# 2026-11-26, 37 of them nuts.R's and 38 sv.R's), after installing rstan,
# stochvol, PyTorch and GNU time (tools/install-deps.sh --bench)
bench: install
	bash tools/install-deps.sh --bench
	Rscript bench/run-all.R

# the web site in docs/ (pkgdown: reference pages grouped by task, every
# vignette an article; MathJax copied in, so it reads offline), then every page
# opened in headless Chromium: no console error, every figure loaded
site:
	bash tools/install-deps.sh --site
	Rscript tools/build-site.R
	python3 tools/check-site.py docs

# a bounded fuzzing run of the C entry points and the samplers (tools/fuzz.R)
fuzz: install
	Rscript tools/fuzz.R 1000

# no R API function reachable inside any parallel region: gcc's call graph of
# every source file, followed from the outlined region bodies (tools/parallel-calls.R)
parallel-check:
	rm -rf /tmp/sgld-callgraph && mkdir -p /tmp/sgld-callgraph
	cd /tmp/sgld-callgraph && for f in $(CURDIR)/src/*.c; do \
	  gcc -I$$(R RHOME)/include -I/usr/share/R/include -I$(CURDIR)/inst/include -fopenmp -O2 \
	    -fcallgraph-info -c $$f -o /dev/null -dumpbase $$(basename $$f .c) || exit 1; done
	Rscript tools/parallel-calls.R /tmp/sgld-callgraph $(CURDIR)/src

# every entry point under gctorture(TRUE)
gctorture: install
	Rscript tools/gctorture.R

clean:
	rm -rf $(PKG).Rcheck $(PKG)_*.tar.gz src/*.o src/*.so sgld-demo.png docs
