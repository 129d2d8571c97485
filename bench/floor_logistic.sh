#!/usr/bin/env bash
# Build the standalone logistic floor (bench/floor_logistic.c) against the
# package's own generator (src/rng.c), export Adult's training rows in the
# package's sparse storage, and time it: prints iterations per second for
# each run (one line per run).
# usage: bench/floor_logistic.sh ITER BATCH REPS [LR]
# With FLOOR_BUILD_DIR set, the exported data and the program are kept in that
# directory and reused by later calls; otherwise a temporary directory is used
# and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
iter=${1:-200000}; batch=${2:-10}; reps=${3:-7}; lr=${4:-1e-5}
if [ -n "${FLOOR_BUILD_DIR:-}" ]; then
  out=$FLOOR_BUILD_DIR; mkdir -p "$out"
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
[ -s "$out/adult.bin" ] || Rscript -e "
suppressPackageStartupMessages(library(sgld))
tr <- adult[adult\$set == 'train', ]
X <- cbind('(Intercept)' = 1, adult_design(tr))
m <- model_logistic(X, adult_response(tr), prior = prior_laplace(0, 1))
stopifnot(m\$sparse == 1)
con <- file('$out/adult.bin', 'wb')
writeBin(c(m\$n, m\$p, length(m\$sp_col), m\$sp_binary), con)
writeBin(as.double(m\$sp_start), con)
writeBin(as.integer(m\$sp_col), con, size = 4)
if (!m\$sp_binary) writeBin(as.double(m\$sp_val), con)
writeBin(as.double(m\$sp_y), con)
close(con)"
inc=$(R RHOME)/include
[ -d "$inc" ] || inc=/usr/share/R/include
[ -x "$out/floor_logistic" ] || gcc -O2 -std=gnu99 -I"$inc" -o "$out/floor_logistic" \
  bench/floor_logistic.c src/rng.c -L"$(R RHOME)/lib" -lR -lm
for _ in $(seq "$reps"); do
  LD_LIBRARY_PATH="$(R RHOME)/lib" "$out/floor_logistic" "$out/adult.bin" "$iter" "$batch" "$lr" |
    awk -v it="$iter" '{ printf "%.1f\n", it / $1 }'
done
