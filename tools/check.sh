#!/usr/bin/env bash
# Builds the tarball (running every vignette) and runs R CMD check --as-cran
# on it (tests included), then prints the test tally as "N passed, N failed". Exits non-zero
# on any check ERROR or WARNING, or on a failed test.
set -uo pipefail
cd "$(dirname "$0")/.."
pkg=sgld
version=$(sed -n 's/^Version: //p' DESCRIPTION)
tarball="${pkg}_${version}.tar.gz"

rm -rf "$pkg.Rcheck" "$tarball"
R CMD build . || exit 1
# offline: no CRAN incoming checks (the "unable to verify current time" NOTE
# also comes from having no network). --no-vignettes: R CMD build above has
# just run every vignette in full from these sources and fails on any error;
# check would run their code twice more (tangled, then rebuilt), about 4
# minutes of CPU each.
_R_CHECK_CRAN_INCOMING_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false \
  _R_CHECK_FORCE_SUGGESTS_=true NOT_CRAN=true \
  R CMD check --as-cran --no-manual --no-vignettes "$tarball"
status=$?

rout=$(ls "$pkg.Rcheck"/tests/testthat.Rout* 2>/dev/null | head -n 1)
if [ -n "$rout" ]; then
  tally=$(grep -E '\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$rout" | tail -n 1)
  if [ -n "$tally" ]; then
    fail=$(echo "$tally" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
    skip=$(echo "$tally" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
    pass=$(echo "$tally" | sed -E 's/.*PASS ([0-9]+).*/\1/')
    [ "$status" -eq 0 ] || tail -n 60 "$rout"
    echo "tests: $pass passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ] || status=1
  else
    echo "tests: no testthat tally found in $rout" >&2
    tail -n 60 "$rout"
    status=1
  fi
else
  echo "tests: the test log is missing" >&2
  status=1
fi

if grep -q "Status:.*WARNING" "$pkg.Rcheck/00check.log" 2>/dev/null; then
  echo "R CMD check reported a WARNING" >&2
  status=1
fi
exit $status
