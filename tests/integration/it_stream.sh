#!/bin/sh
# Streaming keeps its schedule: batches follow TRACKER_UPLOAD_INTERVAL
# whatever the store's commit cadence (a live run's samples come from its
# ring), and delivery stays exactly once when the uploader is killed
# (SIGKILL) every ~2 s and restarted with `rt-export upload latest` while
# S3 is down for 4 s. RT_STREAM_SECONDS=600 makes it the 10-minute soak (a
# separate command, not in CI).
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$HERE/tests/peers/node_modules/@20minutes/s3rver" ] || fail "S3 peer not installed (tools/setup.sh runs npm ci in tests/peers)"
S3P=$(port); APIP=$(port)
start_s3() { serve s3 node "$HERE/tests/peers/s3peer.js" $S3P "$T/s3" rt-test; S3PID=$SERVED; }
start_s3
serve api python3 "$HERE/tools/sentinel_server.py" $APIP "$T/api.log"
export SENTINEL_API_TOKEN=test-token SENTINEL_API_URL=http://127.0.0.1:$APIP
export TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P RT_IMDS_ADDR=127.0.0.1:1

# check RUN MIN_OBJECTS: every replayed line in the run's objects exactly
# once, finish called once listing every object, and every object but the
# last put while the run was still going (its end: the run's metadata)
check() {
	"$EXP" replay "$1" -f csv > "$T/replay.csv"
	"$EXP" show "$1" > "$T/show.json"
	python3 - "$T" "$1" "$2" "${3:-0}" <<'PY'
import glob, gzip, json, os, sys
from collections import Counter
t, run, min_objects, kills = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sid = json.load(open(os.path.join(t, "store", "upload", run + ".json")))["sentinel_run"]
calls = [json.loads(l) for l in open(os.path.join(t, "api.log"))]
fin = [c for c in calls if c["kind"] == "finish" and sid in c["path"]]
assert len(fin) == 1, "finish called %d times" % len(fin)
body = fin[0]["body"]
assert body["data_source"] == "s3", "the run finished inline: %d rows" % (
    len(body.get("data_csv", "").splitlines()) - 1)
want = open(os.path.join(t, "replay.csv")).read().splitlines()[1:]
objs = sorted(glob.glob(os.path.join(t, "s3", "rt-test", "uploads", sid, "*.csv.gz._S3rver_object")))
keys = sorted("s3://rt-test/uploads/%s/%s" % (sid, os.path.basename(o)[:-len("._S3rver_object")])
              for o in objs)
assert sorted(body["data_uris"]) == keys, "finish lists %d objects, S3 holds %d" % (
    len(body["data_uris"]), len(keys))
got = []
for o in objs:
    got += gzip.decompress(open(o, "rb").read()).decode().splitlines()[1:]
cw, cg = Counter(want), Counter(got)
lost, dup = sum((cw - cg).values()), sum((cg - cw).values())
show = json.load(open(os.path.join(t, "show.json")))
end = show.get("end") or show.get("end_time")
import datetime
end_s = datetime.datetime.fromisoformat(end.replace("Z", "+00:00")).timestamp()
puts = sorted(os.path.getmtime(o) for o in objs)
during = sum(1 for p in puts if p <= end_s)
print("run %s: %d samples, %d objects (%d put during the run), %d uploader kills, "
      "%d lost, %d duplicated" % (run, len(want), len(objs), during, kills, lost, dup))
assert lost == 0 and dup == 0
assert len(objs) >= min_objects, "only %d objects" % len(objs)
# only what the last sample brought may follow the run's end (+1 s of slack)
late = [p for p in puts[:-1] if p > end_s + 1]
assert not late, "%d objects put after the run ended" % len(late)
PY
}

# 1. the issue's example: 2 s batches of a 7 s job at 1 Hz reach S3 during
#    the run (the store commits every 30 s), and finish lists them; the
#    token under the name the peers' READMEs use
env -u SENTINEL_API_TOKEN SENTINEL_API_KEY=test-token TRACKER_UPLOAD_INTERVAL=2 \
	"$RT" --quiet -i 1 -- sleep 7 || fail "tracker"
# the recorder's uploader finishes the run after it: up to 60 s on a loaded
# machine (a PUT that times out is retried with backoff)
i=0
until grep -q '"kind": *"finish"' "$T/api.log" || [ $i -ge 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
check 1 3 || fail "7 s job, 2 s batches"
ok "batches every 2 s during a 7 s run, not inline at the end"

# 2. 5 Hz, 1 s batches; the uploader killed every ~2 s and restarted by
#    hand; S3 down for 4 s in the middle
secs=${RT_STREAM_SECONDS:-25}
TRACKER_UPLOAD_INTERVAL=1 "$RT" --quiet -i 0.2 -- sleep "$secs" &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
sleep 1
kills=0
elapsed=0
down_at=$((secs / 2 - 2))
up=""
while kill -0 $rec 2>/dev/null && [ $elapsed -lt $((secs + 5)) ]; do
	# the recorder's own uploader first, then the ones started here (only
	# this test's: other tests may upload at the same time)
	for p in $(pgrep -f 'rt-export[^ ]* upload' || true); do
		tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" | grep -qx "RT_STORE=$RT_STORE" || continue
		kill -9 "$p" 2>/dev/null && kills=$((kills + 1))
	done
	[ -n "$up" ] && wait $up 2>/dev/null || true
	if [ $elapsed -eq $down_at ]; then
		kill $S3PID; wait $S3PID 2>/dev/null || true
		TRACKER_UPLOAD_INTERVAL=1 "$EXP" upload latest 2>/dev/null &
		up=$!; track $up
		sleep 4
		start_s3
		elapsed=$((elapsed + 4))
	else
		TRACKER_UPLOAD_INTERVAL=1 "$EXP" upload latest 2>/dev/null &
		up=$!; track $up
	fi
	sleep 2
	elapsed=$((elapsed + 2))
done
wait_pid $rec 30 || fail "recorder"
# the last one started here finishes the run
wait_pid $up 60 || fail "uploader did not finish"
"$EXP" upload latest 2>/dev/null || fail "a last upload latest"
check 2 $((secs / 2)) $kills || fail "kills and an S3 outage"
[ $kills -ge $((secs / 4)) ] || fail "only $kills kills"
ok "$kills uploader kills and a 4 s S3 outage over ${secs} s at 5 Hz: every sample once, in objects put during the run"
