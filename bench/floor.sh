#!/usr/bin/env bash
# Build the standalone floor program against the package's own generator
# (src/rng.c) and time it: prints million iterations per second for each run.
# usage: bench/floor.sh ITER BATCH REPS
# With FLOOR_BUILD_DIR set, the exported data and the program are kept in that
# directory and reused by later calls (bench/throughput.R runs one repetition
# at a time between its other measurements); otherwise a temporary directory
# is used and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
iter=${1:-1000000}; batch=${2:-10}; reps=${3:-7}
if [ -n "${FLOOR_BUILD_DIR:-}" ]; then
  out=$FLOOR_BUILD_DIR; mkdir -p "$out"
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
[ -s "$out/handout.txt" ] ||
  Rscript -e "write.table(sgld::handout, '$out/handout.txt', row.names = FALSE, col.names = FALSE)"
inc=$(R RHOME)/include
[ -d "$inc" ] || inc=/usr/share/R/include
[ -x "$out/floor" ] || gcc -O2 -std=gnu99 -I"$inc" -o "$out/floor" bench/floor.c src/rng.c \
  -L"$(R RHOME)/lib" -lR -lm
for _ in $(seq "$reps"); do
  LD_LIBRARY_PATH="$(R RHOME)/lib" "$out/floor" "$out/handout.txt" "$iter" "$batch" |
    awk -v it="$iter" '{ printf "%.3f\n", it / $1 / 1e6 }'
done
