#!/bin/sh
# bench_exitwait.sh [RUNS] - what a dead metrics engine adds to a wrapped
# job's exit: `resource-tracker -- sleep 0.5` timed (wall clock, as CI sees
# it) with no engine (the anchor), with TRACKER_REMOTE_WRITE_URL at a port
# that refuses, and at one that accepts and never answers, side by side in
# one run. TRACKER_PUSH_EXIT_WAIT_SECS (default 3) bounds the last two.
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-3}
B=$(pwd)/build
T=$(mktemp -d)
trap 'kill $SILENT 2>/dev/null || true; rm -rf "$T"' EXIT
export RT_STORE="$T/store" RT_SHM_DIR="$T/shm"
mkdir -p "$RT_SHM_DIR"
# a listener that accepts and never answers
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(3600)' > "$T/port" &
SILENT=$!
while [ ! -s "$T/port" ]; do sleep 0.05; done
PORT=$(cat "$T/port")
ms() { date +%s%N | cut -c1-13; }
mean() { # label, then env assignments for the job
	label=$1; shift
	total=0
	for _ in $(seq "$RUNS"); do
		t0=$(ms)
		env "$@" "$B/resource-tracker" --quiet -- sleep 0.5 2>/dev/null || true
		total=$((total + $(ms) - t0))
	done
	printf '  %-44s %6d ms\n' "$label" $((total / RUNS))
}
echo "wrapped 'sleep 0.5', wall clock to the exit, mean of $RUNS:"
mean "no metrics engine (anchor)" TRACKER_REMOTE_WRITE_URL=
mean "engine down (connection refused)" TRACKER_REMOTE_WRITE_URL=http://127.0.0.1:1/api/v1/write
mean "engine hung (accepts, never answers)" TRACKER_REMOTE_WRITE_URL=http://127.0.0.1:$PORT/api/v1/write
