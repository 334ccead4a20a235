#!/bin/sh
# bench_push.sh [SECONDS] [INTERVAL] [prometheus|otlp] - CPU per sample of
# the live push to a metrics engine (rt-export push, started by the recorder
# when TRACKER_REMOTE_WRITE_URL or OTEL_EXPORTER_OTLP_ENDPOINT is set; a
# request every 10 s of samples), beside the recorder's and the live
# printer's, against Debian's Prometheus or tools/otlp_receiver.py on
# 127.0.0.1. Reads each process's on-CPU time (/proc/PID/schedstat) two
# seconds before the job ends. Defaults: 120 s at 1 Hz; e.g. 60 0.01 for
# 100 Hz.
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-120}
IV=${2:-1}
SINK=${3:-prometheus}
B=$(pwd)/build
command -v prometheus > /dev/null || { echo "needs prometheus (apt-get install prometheus)"; exit 1; }
T=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'storage:\n  tsdb:\n    out_of_order_time_window: 1d\n' > "$T/prom.yml"
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PORT" --web.enable-remote-write-receiver > "$T/prom.log" 2>&1 &
prom=$!
trap 'kill $prom 2>/dev/null; sleep 1; rm -rf "$T"' EXIT
for i in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/-/ready" > /dev/null && break; sleep 0.1; done
export RT_STORE="$T/store" RT_SHM_DIR="$T" RT_IMDS_ADDR=127.0.0.1:1
if [ "$SINK" = otlp ]; then
	OP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 tools/otlp_receiver.py "$OP" "$T/otlp" > "$T/otlp.out" 2>&1 &
	otlp=$!
	trap 'kill $prom $otlp 2>/dev/null; sleep 1; rm -rf "$T"' EXIT
	sleep 1
	export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$OP"
else
	export TRACKER_REMOTE_WRITE_URL="http://127.0.0.1:$PORT/api/v1/write"
fi
"$B/resource-tracker" -i "$IV" -- sleep "$SECS" 2> /dev/null &
rec=$!
sleep $((SECS - 2))
ns() { awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null || echo 0; }
r=$(ns $rec)
p=0; u=0
for pid in $(pgrep -P $rec); do
	case "$(tr '\0' ' ' < /proc/$pid/cmdline)" in
	*" push "*) u=$(ns $pid) ;;
	*" live "*) p=$(ns $pid) ;;
	esac
done
wait $rec
n=$(awk -v s=$((SECS - 2)) -v i="$IV" 'BEGIN { printf "%d", s / i }')
got=$(curl -s -G "http://127.0.0.1:$PORT/api/v1/query" \
	--data-urlencode 'query=count_over_time(process_memory_usage_bytes[1d])' |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(r[0]["value"][1]) if r else 0)')
[ "$SINK" = otlp ] && got="$(ls "$T/otlp/accepted" | wc -l) requests"
echo "CPU per sample at interval ${IV} s over $((SECS - 2)) s, push to $SINK ($n samples; the engine holds $got at the end):"
awk -v r=$r -v p=$p -v u=$u -v n=$n 'BEGIN {
	printf "  recorder        %7.1f us\n  live printer    %7.1f us\n  family          %7.1f us\n  push            %7.1f us  (%.1f %% of the family)\n",
	r/n/1e3, p/n/1e3, (r+p)/n/1e3, u/n/1e3, u*100/(r+p) }'
