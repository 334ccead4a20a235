#!/bin/sh
# bench_nodesinks.sh [JOBS] [SECONDS] - the node mode's sinks (as root):
# JOBS job cgroups (default 100, each one sleeping process) under
# --jobs at 1 Hz with Prometheus remote write (Debian's prometheus) and
# the upload (tools/sentinel_server.py and the S3 peer, TRACKER_UPLOAD_
# INTERVAL=10) on 127.0.0.1. Measured over SECONDS (default 30) after a
# 15 s warm-up, from /proc/PID/schedstat and smaps_rollup:
#   one exporter: the node's own (rt-export sinks), its CPU per job and
#     sample and its PSS, and the node's processes;
#   the anchor, in the same run: the design before, one `rt-export push
#     RUN --to prometheus` and one `rt-export upload RUN` per run
#     following the same live runs of a second node without sinks.
set -eu
cd "$(dirname "$0")/.."
N=${1:-100}
SECS=${2:-30}
B=$(pwd)/build
CG="python3 tests/integration/cgjobs.py"
command -v prometheus > /dev/null || { echo "needs prometheus"; exit 1; }
T=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PP=$(port) S3P=$(port) APIP=$(port)
printf 'storage:\n  tsdb:\n    out_of_order_time_window: 1d\n' > "$T/prom.yml"
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PP" --web.enable-remote-write-receiver > "$T/prom.log" 2>&1 &
PIDS="$!"
node tests/peers/s3peer.js "$S3P" "$T/s3" rt-test > "$T/s3.out" 2>&1 &
PIDS="$PIDS $!"
python3 tools/sentinel_server.py "$APIP" "$T/api.log" > "$T/api.out" 2>&1 &
PIDS="$PIDS $!"
TOP=/rt-bench-sinks-$$
trap 'kill $PIDS 2> /dev/null || true; for f in $(find /sys/fs/cgroup -path "*$TOP*" -name cgroup.procs 2> /dev/null); do
	for p in $(cat "$f"); do kill -9 $p 2> /dev/null || true; done; done; sleep 1; $CG rm $TOP/a; $CG rm $TOP/b; $CG rm $TOP; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PP/-/ready" > /dev/null && break; sleep 0.1; done
sleep 1
SINKS="TRACKER_REMOTE_WRITE_URL=http://127.0.0.1:$PP/api/v1/write SENTINEL_API_TOKEN=test-token \
SENTINEL_API_URL=http://127.0.0.1:$APIP TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P TRACKER_UPLOAD_INTERVAL=10"
export RT_IMDS_ADDR=127.0.0.1:1
$CG many $TOP/a "$N" $((SECS + 60)) > /dev/null
$CG many $TOP/b "$N" $((SECS + 60)) > /dev/null
env $SINKS "$B/rt-recorder" --jobs "$TOP/a/*" -i 1 --store "$T/a" 2> "$T/a.err" &
NA=$!
"$B/rt-recorder" --jobs "$TOP/b/*" -i 1 --store "$T/b" 2> "$T/b.err" &
NB=$!
PIDS="$PIDS $NA $NB"
sleep 3
# the anchor: a push and an upload per run of the node without sinks
for r in $("$B/rt-export" --store "$T/b" runs | awk 'NR > 1 {print $1}'); do
	env $SINKS "$B/rt-export" --store "$T/b" push "$r" --to prometheus 2>> "$T/anchor.err" &
	PIDS="$PIDS $!"
	env $SINKS "$B/rt-export" --store "$T/b" upload "$r" 2>> "$T/anchor.err" &
	PIDS="$PIDS $!"
done
sleep 12
sampler() { pgrep -P "$1" -f -- "--jobs" | head -1; }
SA=$(sampler $NA)
EX=$(pgrep -P "$SA" -f "sinks --store" | head -1)
ANCHOR=$(pgrep -f -- "--store $T/b (push|upload)" | tr '\n' ' ')
cpu() { # the on-CPU ns of the pids, summed
	for p in "$@"; do cut -d' ' -f1 "/proc/$p/schedstat" 2> /dev/null || echo 0; done | awk '{s += $1} END {printf "%.0f\n", s}'
}
pss() { # their PSS in KiB, summed
	for p in "$@"; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2> /dev/null || echo 0; done | awk '{s += $1} END {print s + 0}'
}
e0=$(cpu $EX) s0=$(cpu $SA) a0=$(cpu $ANCHOR)
sleep "$SECS"
e1=$(cpu $EX) s1=$(cpu $SA) a1=$(cpu $ANCHOR)
procs=$(( $(pgrep -P "$NA" | wc -l) + $(pgrep -P "$SA" | wc -l) + 1 ))
echo "$N jobs at 1 Hz, ${SECS} s: the node with its sinks is $procs processes"
awk -v n="$N" -v s="$SECS" -v e="$e1" -v e0="$e0" -v sa="$s1" -v sa0="$s0" -v a="$a1" -v a0="$a0" \
	-v ep="$(pss $EX)" -v ap="$(pss $ANCHOR)" -v an="$(echo $ANCHOR | wc -w)" 'BEGIN {
	printf "one exporter:        %7.1f us a job and sample, PSS %6.1f MiB (the sampler: %.1f us)\n", (e - e0) / 1000 / n / s, ep / 1024, (sa - sa0) / 1000 / n / s
	printf "a push and an upload per run (%d processes): %7.1f us a job and sample, PSS %6.1f MiB\n", an, (a - a0) / 1000 / n / s, ap / 1024
}'
