#!/bin/sh
# run.sh FUZZ_BUILD_DIR SECONDS: run every fuzz target built there for a
# bounded time (the CI's short run; tools/fuzz.sh MINUTES is the long one).
set -eu
dir=$1; secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
for bin in "$dir"/fuzz_*; do
	t=${bin##*/fuzz_}
	work=$(mktemp -d)
	cp -r "$here/corpus/$t/." "$work/" 2>/dev/null || true
	cp -r "$here/regress/$t/." "$work/" 2>/dev/null || true # inputs that once crashed
	echo "fuzz_$t: ${secs}s"
	if ! "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=1024 -close_fd_mask=3 \
		-artifact_prefix="$work/" "$work" > "$work.log" 2>&1; then
		tail -40 "$work.log"
		echo "fuzz_$t FAILED (crash input kept in $work)"
		exit 1
	fi
	grep '^Done ' "$work.log" | tail -1 || tail -1 "$work.log"
	rm -rf "$work" "$work.log"
done
