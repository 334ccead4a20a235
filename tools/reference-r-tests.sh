#!/bin/sh
# The reference R package's own testthat test, run against rt's R package.
#
#   sh tools/reference-r-tests.sh REFERENCE [BUILD]
#
# REFERENCE: a checkout, or a bare git directory, of SpareCores/resource-tracker.
# Its R/tests/testthat/test-r6.R is run as it is (testthat, Debian's
# r-cran-testthat) with rt's package (R/, installed into a temporary
# library) and this build's programs (BUILD, default build). Nothing of the
# reference is kept here. CI reaches no GitHub: R/tests carries the same
# contract in rt's own tests.
set -eu
[ $# -ge 1 ] || { echo "usage: sh tools/reference-r-tests.sh REFERENCE [BUILD]" >&2; exit 2; }
REF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${2:-$HERE/build}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for p in R/tests/testthat/test-r6.R; do
	if [ -f "$REF/$p" ]; then cp "$REF/$p" "$T/test-r6.R"
	elif git --git-dir="$REF" show "HEAD:$p" > "$T/test-r6.R" 2> /dev/null; then :
	else git -C "$REF" show "HEAD:$p" > "$T/test-r6.R"; fi
done
mkdir "$T/lib"
R CMD INSTALL -l "$T/lib" "$HERE/R" > "$T/install.log" 2>&1 || { tail -5 "$T/install.log"; exit 1; }
cd "$T"
RT_PREFIX="$BUILD" R_LIBS="$T/lib" RT_IMDS_ADDR=${RT_IMDS_ADDR:-127.0.0.1:1} Rscript -e '
library(testthat)
library(resource.tracker)
r <- test_file("test-r6.R", reporter = "summary")
d <- as.data.frame(r)
cat(sprintf("the reference test: %d expectations, %d failed, %d errors\n",
            sum(d$nb), sum(d$failed), sum(d$error)))
if (any(d$failed > 0) || any(d$error)) quit(status = 1)'
