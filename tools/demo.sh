#!/bin/sh
# demo.sh - set up, then track a demo job (hashing, a 200 MB write, a
# growing buffer) every 0.5 s, and show the answer: what the job needed,
# the recommended resources and an HTML report with charts.
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== demo job, tracked every 0.5 s into the store; its summary when it ends"
build/resource-tracker --interval 0.5 --job-name demo --quiet --summary -- sh -c '
	timeout 3 sha256sum /dev/zero > /dev/null 2>&1 &
	dd if=/dev/zero of="$1/blob" bs=1M count=200 conv=fsync status=none &
	python3 -c "import time; b = bytearray(64 << 20); time.sleep(2)"
	wait' demo "$tmp"
echo "== its first samples as CSV (rt-export replay latest; -f json for every metric)"
build/rt-export replay latest -f csv | head -4
echo "== runs in the store (default: ~/.local/share/resource-tracker)"
build/rt-export runs
echo "== what to ask for next time"
build/rt-export recommend latest
echo "== the report"
build/rt-export report latest -o rt-demo-report.html
echo "open rt-demo-report.html in a browser (it works offline)"
