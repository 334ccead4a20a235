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
# a pip-installed rt, its programs on no PATH: the R package finds them
# through the venv's Python (RETICULATE_PYTHON); R users of rt_tracker over
# reticulate get R lists
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -m venv "$T/venv" > /dev/null 2>&1 || fail "python3 -m venv"
RT_BUILD="$BUILD" "$T/venv/bin/python" -m pip install -q --no-index "$HERE/python" > pip.log 2>&1 ||
	fail "pip install ./python: $(tail -3 pip.log)"
cat > pip.R <<'RS'
library(resource.tracker)
rec <- find_binary("rt-recorder")
stopifnot(startsWith(rec, Sys.getenv("VENV")))
tracker <- ResourceTracker$new(interval = 0.2)
Sys.sleep(1)
tracker$stop()
stopifnot(nrow(tracker$process_metrics) >= 3)
library(reticulate)
use_python(Sys.getenv("RETICULATE_PYTHON"), required = TRUE)
rt <- import("rt_tracker")
t <- rt$ResourceTracker(interval = 0.2)
t$start()
Sys.sleep(1)
t$stop()
r <- t$recommend_resources()
stopifnot(is.list(r), identical(sort(names(r)), c("cpu", "gpu", "memory", "vram")), r$memory >= 128)
cat("found", rec, "; over reticulate:", paste(names(r), unlist(r), sep = "=", collapse = " "), "\n")
RS
env -i HOME="$T" PATH=/usr/bin:/bin R_LIBS="$T/resource.tracker.Rcheck" VENV="$T/venv" \
	RETICULATE_PYTHON="$T/venv/bin/python" RT_IMDS_ADDR=127.0.0.1:1 RT_STORE="$T/rstore" \
	RT_SHM_DIR="$RT_SHM_DIR" Rscript pip.R > pip.out 2>&1 || fail "a pip-installed rt from R: $(tail -8 pip.out)"
ok "a pip-installed rt, on no PATH, found by the R package through its Python; over reticulate recommend_resources() is an R list ($(tail -1 pip.out))"
if [ -n "${RT_REFERENCE:-}" ]; then
	sh "$HERE/tools/reference-r-tests.sh" "$RT_REFERENCE" "$BUILD" > ref.log 2>&1 || fail "the reference's test-r6.R: $(tail -10 ref.log)"
	ok "$(tail -1 ref.log)"
else
	echo "note: the reference's own test-r6.R was not run (set RT_REFERENCE to a checkout of SpareCores/resource-tracker)"
fi
