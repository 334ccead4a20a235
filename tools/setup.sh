#!/bin/sh
# setup.sh - install rt's build and run-time dependencies (Debian 12
# packages; libjs-dygraphs draws the charts of rt-export report) and
# configure + build into ./build. Safe to run again.
set -eu
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config clang liblmdb-dev libcurl4-openssl-dev libssl-dev
zlib1g-dev libcjson-dev libcriterion-dev libclang-rt-14-dev python3 python3-botocore curl
libjs-dygraphs libprotobuf-c-dev protobuf-c-compiler libsnappy-dev python3-pytest python3-pip
python3-setuptools python3-venv"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "setup: installing$missing"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
