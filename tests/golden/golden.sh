#!/bin/sh
# golden.sh BUILD_DIR FIXTURE_NAME [--update]
# Records tests/fixtures/NAME with golden_run on a fake clock, replays it with
# the real rt-export, and compares with tests/golden/NAME.{jsonl,csv}.
set -eu
build=$1; name=$2
# with fake GPUs (RT_NVML_LIBRARY), the expected files carry the GPU count;
# 0 GPUs must match the plain fixture output
out=$name
[ -n "${FAKE_NVML_GPUS:-}" ] && [ "${FAKE_NVML_GPUS}" != 0 ] && out=$name-gpu$FAKE_NVML_GPUS
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RT_SHM_DIR="$tmp"
"$build/golden_run" "$here/../fixtures/$name" "$tmp/root" "$tmp/store"
"$build/rt-export" --store "$tmp/store" replay 1 -f json > "$tmp/out.jsonl"
"$build/rt-export" --store "$tmp/store" replay 1 -f csv > "$tmp/out.csv"
"$build/rt-export" --store "$tmp/store" replay 1 -f csv --csv-columns extended > "$tmp/out.xcsv"
if [ "${3:-}" = "--update" ]; then
	cp "$tmp/out.jsonl" "$here/$out.jsonl"; cp "$tmp/out.csv" "$here/$out.csv"
	cp "$tmp/out.xcsv" "$here/$out.xcsv"
	exit 0
fi
diff -u "$here/$out.jsonl" "$tmp/out.jsonl"
diff -u "$here/$out.csv" "$tmp/out.csv"
diff -u "$here/$out.xcsv" "$tmp/out.xcsv"
echo "golden $out: ok"
