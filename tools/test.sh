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
echo "== ctest"
(cd build && ctest --output-on-failure -j2)
echo "== ctest under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DRT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd build-asan && ctest --output-on-failure -j2)
echo "== fuzzing (libFuzzer, ${RT_FUZZ_SECONDS:-15} s per target)"
CC=clang cmake -S . -B build-fuzz -DRT_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz
sh tests/fuzz/run.sh build-fuzz "${RT_FUZZ_SECONDS:-15}"
echo "== all tests passed"
