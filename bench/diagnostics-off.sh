#!/usr/bin/env bash
# What the Welling-Teh diagnostics, MALA and collection policies cost when
# they are off: SGLD on the handout data (batch 10, 10^6 iterations, thin 100)
# with the current engine against the engine from before they were added
# (commit ${BASE:-4dc463e}), both installed side by side and run alternately.
# usage: bench/diagnostics-off.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-9}
base=${BASE:-4dc463e}
tmp=$(mktemp -d)
git worktree add -q "$tmp/old" "$base"
mkdir -p "$tmp/lib_old" "$tmp/lib_new"
R CMD INSTALL --no-test-load --library="$tmp/lib_old" "$tmp/old" >/dev/null 2>&1
R CMD INSTALL --no-test-load --library="$tmp/lib_new" . >/dev/null 2>&1
git worktree remove --force "$tmp/old"
cat > "$tmp/run.R" <<'RS'
args <- commandArgs(TRUE)
library(sgld, lib.loc = args[1])
m <- model_linear(y ~ x, data = handout)
set.seed(1)
f <- sgld(m, lr = 1e-7, batch_size = 10, iter = 1e6, burnin = 0, thin = 100)
cat(f$time, "\n")
RS
old=(); new=()
for _ in $(seq "$reps"); do
  old+=("$(Rscript "$tmp/run.R" "$tmp/lib_old" | tr -d ' ')")
  new+=("$(Rscript "$tmp/run.R" "$tmp/lib_new" | tr -d ' ')")
done
join() { local IFS=,; echo "$*"; }
Rscript -e "old <- c($(join "${old[@]}")); new <- c($(join "${new[@]}"));
  cat(sprintf('engine seconds per 10^6 iterations, median [min, max] of %d\n', length(old)));
  cat(sprintf('before the diagnostics: %.3f [%.3f, %.3f]\n', median(old), min(old), max(old)));
  cat(sprintf('now, diagnostics off:   %.3f [%.3f, %.3f]\n', median(new), min(new), max(new)));
  cat(sprintf('ratio now / before: %.3f\n', median(new) / median(old)))"
rm -rf "$tmp"
