#!/bin/sh
# run.sh FUZZ_BUILD_DIR SECONDS: run every fuzz target for a bounded time.
set -eu
dir=$1; secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
for t in procfs record toml inventory ring sentinel keeper; do
	work=$(mktemp -d)
	cp -r "$here/corpus/$t/." "$work/" 2>/dev/null || true
	echo "fuzz_$t: ${secs}s"
	if ! "$dir/fuzz_$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=1024 \
		-artifact_prefix="$work/" "$work" > "$work.log" 2>&1; then
		tail -40 "$work.log"
		echo "fuzz_$t FAILED (crash input kept in $work)"
		exit 1
	fi
	tail -1 "$work.log"
	rm -rf "$work" "$work.log"
done
