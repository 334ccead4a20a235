#!/bin/sh
# run.sh FUZZ_BUILD_DIR SECONDS: run every fuzz target for a bounded time.
set -eu
dir=$1; secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
for t in procfs record toml inventory; do
	work=$(mktemp -d)
	cp -r "$here/corpus/$t/." "$work/" 2>/dev/null || true
	echo "fuzz_$t: ${secs}s"
	"$dir/fuzz_$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=1024 \
		-print_final_stats=0 "$work" 2>&1 | tail -2
	rm -rf "$work"
done
