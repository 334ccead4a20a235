#!/bin/sh
# test.sh - set up, then run the whole test suite: unit, golden and
# integration tests (ctest), the same suite under ASan+UBSan, and every
# fuzz target for a bounded time (RT_FUZZ_SECONDS, default 15).
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
# the S3 test peer (npm, locked; Debian's node when the machine has none)
# and headless Chromium, which opens the HTML reports in the tests
need=""
command -v npm >/dev/null 2>&1 || need="nodejs npm"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
# the metrics engine the fleet sinks are tested against
command -v prometheus >/dev/null 2>&1 || need="$need prometheus"
# the R package's check: R and the libraries it uses, from Debian
for p in r-base-core r-cran-r6 r-cran-processx r-cran-jsonlite r-cran-testthat r-cran-reticulate; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
# a real IPython kernel and nbconvert for the notebook test (it_notebook),
# and pandas for to_pandas()
for p in python3-ipykernel jupyter-nbconvert python3-pandas; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
# a real single-node Slurm for the node mode's tests (it_slurm), with
# slurmdbd and a MariaDB for the answer in the job's record (it_slurmrecord)
for p in slurmctld slurmd slurm-client munge slurmdbd mariadb-server; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
# real containers for the node's --jobs podman and --jobs kubernetes
# (it_containers), on an image made from busybox-static; mmdebstrap makes
# the Debian base the container image is built on, python3-yaml reads
# the DaemonSet's spec (it_image)
for p in podman runc busybox-static mmdebstrap python3-yaml; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
# the house rules' check (tools/house.sh): Universal Ctags over the sources
dpkg -s universal-ctags >/dev/null 2>&1 || need="$need universal-ctags"
# the node's service (it_service): systemd-analyze verify on its unit, and
# setpriv and unshare to run the node as the unit confines it
for p in systemd util-linux; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
fi
# (puppeteer, under mermaid-cli, drives the Debian chromium: it downloads
# no browser of its own)
if [ ! -d tests/peers/node_modules/@20minutes/s3rver ] || [ ! -d tests/peers/node_modules/@opentelemetry/otlp-transformer ] ||
	[ ! -x tests/peers/node_modules/.bin/mmdc ]; then
	(cd tests/peers && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --engine-strict=false --loglevel=error)
fi
# Every stage runs, whatever failed before it; the failures are listed at
# the end and make the exit non-zero (a failure in the first stage used to
# leave the sanitizers and the fuzzers unrun).
failed=""
stage() { # NAME COMMAND...: run one stage, note it when it fails (ok=0)
	name=$1; shift
	echo "== $name"
	ok=1
	if ! "$@"; then
		ok=0
		failed="$failed
  - $name"
		echo "== $name: FAILED (the next stages run all the same)"
	fi
}
asan_build() {
	cmake -S . -B build-asan -DRT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
		cmake --build build-asan -j"$(nproc)"
}
fuzz_build() {
	CC=clang cmake -S . -B build-fuzz -DRT_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null &&
		cmake --build build-fuzz -j"$(nproc)" --target fuzz
}
# the failed tests' own output again at the very end (the middle of a long
# log is where a CI page cuts): the last lines of each, from ctest's log
failed_tails=""
ctest_in() { # DIR: the suite in DIR; its failures' tails noted for the end
	(cd "$1" && ctest --output-on-failure -j2) && return 0
	failed_tails="$failed_tails $1"
	return 1
}
say_tails() { # DIR: the last 40 lines each failed test in DIR printed
	[ -f "$1/Testing/Temporary/LastTestsFailed.log" ] || return 0
	cut -d: -f2 "$1/Testing/Temporary/LastTestsFailed.log" | while read -r t; do
		echo "== $1: $t, its last lines"
		awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" {on = 1; next}
			on && /^<end of output>$/ {exit} on' "$1/Testing/Temporary/LastTest.log" | tail -40
	done
}
stage "ctest" ctest_in build
stage "build under AddressSanitizer + UndefinedBehaviorSanitizer" asan_build
[ $ok = 1 ] && stage "ctest under AddressSanitizer + UndefinedBehaviorSanitizer" ctest_in build-asan
stage "build the fuzz targets (libFuzzer)" fuzz_build
[ $ok = 1 ] && stage "fuzzing (libFuzzer, ${RT_FUZZ_SECONDS:-15} s per target)" sh tests/fuzz/run.sh build-fuzz "${RT_FUZZ_SECONDS:-15}"
if [ -n "$failed" ]; then
	for d in $failed_tails; do say_tails "$d"; done
	echo "== FAILED:$failed"
	exit 1
fi
echo "== all tests passed"
