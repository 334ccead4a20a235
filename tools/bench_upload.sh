#!/bin/sh
# bench_upload.sh [SECONDS] - CPU per sample of the uploader at 1 Hz with
# 60 s batches, beside the recorder's and the live printer's, against the
# test peers on 127.0.0.1 (tools/sentinel_server.py and the S3 peer that
# tools/test.sh installs in tests/peers). Reads each process's on-CPU time
# (/proc/PID/schedstat) two seconds before the job ends.
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-180}
B=$(pwd)/build
[ -d tests/peers/node_modules/@20minutes/s3rver ] || { echo "run tools/test.sh once (installs the S3 peer)"; exit 1; }
T=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
S3P=$(port); APIP=$(port)
node tests/peers/s3peer.js "$S3P" "$T/s3" rt-test > "$T/s3.out" 2>&1 & s3=$!
python3 tools/sentinel_server.py "$APIP" "$T/api.log" > "$T/api.out" 2>&1 & api=$!
trap 'kill $s3 $api 2>/dev/null; rm -rf "$T"' EXIT
sleep 2
export RT_STORE="$T/store" RT_SHM_DIR="$T" SENTINEL_API_TOKEN=test-token \
	SENTINEL_API_URL=http://127.0.0.1:$APIP TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P \
	RT_IMDS_ADDR=127.0.0.1:1 TRACKER_UPLOAD_INTERVAL=60
"$B/resource-tracker" -i 1 -- sleep "$SECS" 2> /dev/null &
rec=$!
sleep $((SECS - 2))
ns() { awk '{print $1}' "/proc/$1/schedstat" 2>/dev/null || echo 0; }
r=$(ns $rec)
p=0; u=0
for pid in $(pgrep -P $rec); do
	case "$(tr '\0' ' ' < /proc/$pid/cmdline)" in
	*" upload "*) u=$(ns $pid) ;;
	*" live "*) p=$(ns $pid) ;;
	esac
done
wait $rec
n=$((SECS - 2))
echo "CPU per sample at 1 Hz over ${n} s (60 s batches, $(ls "$T/s3/rt-test/uploads"/*/ 2>/dev/null | grep -c 'csv.gz._S3rver_object$') objects by the end):"
awk -v r=$r -v p=$p -v u=$u -v n=$n 'BEGIN {
	printf "  recorder        %7.1f us\n  live printer    %7.1f us\n  family          %7.1f us\n  uploader        %7.1f us  (%.1f %% of the family)\n",
	r/n/1e3, p/n/1e3, (r+p)/n/1e3, u/n/1e3, u*100/(r+p) }'
