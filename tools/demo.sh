#!/bin/sh
# demo.sh - set up, then record the whole system for 3 seconds while a demo
# workload (hashing and a file write) runs, and replay the run as CSV.
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== demo workload: sha256sum of zeros + a 200 MB write, recorded every 0.5 s"
( timeout 3 sha256sum /dev/zero >/dev/null 2>&1 & \
  dd if=/dev/zero of="$tmp/blob" bs=1M count=200 conv=fsync status=none & wait ) &
build/resource-tracker --interval 0.5 --count 6 --job-name demo
wait
echo "== runs in the store (default: ~/.local/share/resource-tracker)"
build/rt-export runs
echo "== the same run replayed as CSV"
build/rt-export replay latest -f csv
