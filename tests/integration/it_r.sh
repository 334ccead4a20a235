#!/bin/sh
# resource.tracker, the R package (R/): R CMD build and R CMD check with
# Debian's R and packaged libraries (R6, processx, jsonlite, testthat),
# its testthat suite run by the check against this build's programs: the
# reference's contract, 400 MB of doubles, rt's stats, no recorder left by
# the garbage collector or at R's exit, no rt. The check must pass with no
# error or warning. With RT_REFERENCE (a checkout of
# SpareCores/resource-tracker), the reference's own test-r6.R too.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
command -v R > /dev/null 2>&1 || fail "R is needed (tools/test.sh installs r-base-core and the packaged libraries)"
cd "$T"
R CMD build --no-build-vignettes "$HERE/R" > build.log 2>&1 || fail "R CMD build: $(tail -5 build.log)"
RT_PREFIX="$BUILD" _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual resource.tracker_*.tar.gz > check.log 2>&1 ||
	fail "R CMD check: $(grep -B2 -A12 -E 'ERROR|WARNING' check.log | head -40; tail -30 resource.tracker.Rcheck/tests/testthat.Rout.fail 2> /dev/null)"
grep -E "^\* checking .*(WARNING|ERROR)$" check.log && fail "R CMD check warned: $(grep -A5 WARNING check.log | head -10)"
status=$(grep "^Status:" check.log)
ok "R CMD check: $status; $(grep -o '\[ FAIL [0-9]* | WARN [0-9]* | SKIP [0-9]* | PASS [0-9]* \]' resource.tracker.Rcheck/tests/testthat.Rout | tail -1)"
grep -q "SKIP 0 " resource.tracker.Rcheck/tests/testthat.Rout || fail "tests were skipped: $(grep -i skip resource.tracker.Rcheck/tests/testthat.Rout | head -3)"
if [ -n "${RT_REFERENCE:-}" ]; then
	sh "$HERE/tools/reference-r-tests.sh" "$RT_REFERENCE" "$BUILD" > ref.log 2>&1 || fail "the reference's test-r6.R: $(tail -10 ref.log)"
	ok "$(tail -1 ref.log)"
else
	echo "note: the reference's own test-r6.R was not run (set RT_REFERENCE to a checkout of SpareCores/resource-tracker)"
fi
