#!/bin/sh
# The node mode's sinks from one exporter process (issue 55): 20 live jobs
# under --jobs with a metrics sink (Debian's real Prometheus, its
# remote-write receiver) and an upload (the Sentinel test server and the
# S3 peer) set. The node is three processes whatever its jobs: its
# watcher, its sampler and one rt-export. Its sampler killed with SIGKILL
# mid-way: the exporter ends with it and the new sampler's one goes on.
# Then the node stopped with TERM and started again (a restart: its runs
# handed over, neither finished on Sentinel nor ended in Prometheus, and
# gone on with by the next node's exporter); S3 away for 6 s (one line
# when the upload fails, one when it is back); a job that ended while no
# node ran gets its run ended for good and finished by the next node.
# Afterwards every run is in Prometheus once (each line's point of a gauge
# and of a counter, its staleness marker after the last) and in the bucket
# once (every replayed line in exactly one object, finish called once).
# Needs root (cgroups), prometheus and the S3 peer; skips without.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (cgroups)"; exit 77; }
command -v prometheus > /dev/null 2>&1 || { echo "skip: no prometheus"; exit 77; }
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$HERE/tests/peers/node_modules/@20minutes/s3rver" ] || fail "S3 peer not installed (tools/setup.sh runs npm ci in tests/peers)"
CG="python3 $(dirname "$0")/cgjobs.py"
TOP=/rt-nodesinks-$$
$CG mk $TOP/probe 2> /dev/null || { echo "skip: cannot make cgroups here"; exit 77; }
$CG rm $TOP/probe
trap 'for f in $(find /sys/fs/cgroup/*$TOP /sys/fs/cgroup$TOP -name cgroup.procs 2> /dev/null); do
	for p in $(cat "$f" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done; done
	$CG rm $TOP; [ -z "${KEEP_T:-}" ] || cp -r "$T" "$KEEP_T"; cleanup' EXIT

PP=$(port) S3P=$(port) APIP=$(port)
cat > "$T/prom.yml" << 'EOF'
global:
  scrape_interval: 1h
storage:
  tsdb:
    out_of_order_time_window: 1d
EOF
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PP" --web.enable-remote-write-receiver > "$T/prom.log" 2>&1 &
track $!
wait_for curl -sf "http://127.0.0.1:$PP/-/ready" || fail "prometheus did not start: $(tail -5 "$T/prom.log")"
start_s3() { serve s3 node "$HERE/tests/peers/s3peer.js" $S3P "$T/s3" rt-test; S3PID=$SERVED; }
start_s3
serve api python3 "$HERE/tools/sentinel_server.py" $APIP "$T/api.log"
export RT_STORE="$T/st" RT_IMDS_ADDR=127.0.0.1:1
export TRACKER_REMOTE_WRITE_URL="http://127.0.0.1:$PP/api/v1/write"
export SENTINEL_API_TOKEN=test-token SENTINEL_API_URL=http://127.0.0.1:$APIP
export TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P TRACKER_UPLOAD_INTERVAL=2

N=20
$CG many $TOP $N 32 > /dev/null
"$REC" --jobs "$TOP/*" -i 0.5 2> "$T/node.err" &
W=$!
track $W
sampler_of() { pgrep -P "$1" -f -- "--jobs $TOP/" | head -1; }
exporters_of() { pgrep -P "$1" -f -- "sinks --store" | tr '\n' ' '; }
# the node's processes: the watcher and everything below it
family() {
	fam="$1" at="$1"
	while [ -n "$at" ]; do
		next=""
		for p in $at; do next="$next $(pgrep -P "$p" | tr '\n' ' ')"; done
		at=$(echo $next)
		fam="$fam $at"
	done
	echo $fam | wc -w
}
wait_for sh -c "[ \$(\"$EXP\" runs | grep -c running) -eq $N ]" || fail "runs at the start: $("$EXP" runs)"
S1=$(sampler_of $W)
wait_for sh -c "[ -n \"\$(pgrep -P $S1 -f -- 'sinks --store')\" ]" || fail "no exporter below the sampler $S1"
sleep 1
E1=$(exporters_of "$S1")
[ "$(echo $E1 | wc -w)" = 1 ] || fail "exporters below the sampler: '$E1'"
[ "$(family $W)" = 3 ] || fail "the node's processes: $(family $W) ($(pstree -p $W))"
ok "$N jobs with a metrics sink and an upload: 3 processes (watcher, sampler, one exporter)"

# the sampler killed: its exporter ends with it, the new sampler's goes on
sleep 2
kill -9 "$S1"
for _ in $(seq 40); do
	S2=$(sampler_of $W)
	[ -n "$S2" ] && [ "$S2" != "$S1" ] && [ -n "$(exporters_of "$S2")" ] && break
	sleep 0.1
done
[ -n "$S2" ] && [ "$S2" != "$S1" ] || fail "no new sampler within 4 s"
wait_pid $E1 5 || fail "the dead sampler's exporter $E1 lives on"
[ "$(echo $(exporters_of "$S2") | wc -w)" = 1 ] || fail "exporters below the new sampler: '$(exporters_of "$S2")'"
ok "the sampler killed with SIGKILL: its exporter ended with it, one new exporter below the new sampler"

# S3 away for 6 s (each run is looked at every 5 s): one line when the
# upload fails and one when it is back, for every run at once (nothing
# lost: the delivery check below)
kill $S3PID
wait $S3PID 2> /dev/null || true
sleep 6
start_s3
for _ in $(seq 150); do grep -q "the upload (Sentinel, S3) succeeded again" "$T/node.err" && break; sleep 0.1; done
[ "$(grep -c "the upload (Sentinel, S3) failed" "$T/node.err")" = 1 ] &&
	[ "$(grep -c "the upload (Sentinel, S3) succeeded again" "$T/node.err")" = 1 ] ||
	fail "S3 away: not one line each: $(cat "$T/node.err")"
ok "S3 away for 6 s: one line when it failed, one when it answered again"

# a restart: TERM, the runs handed over; a node started again goes on
sleep 1
kill -TERM $W
wait_pid $W 15 || fail "the node did not stop on TERM"
[ "$("$EXP" runs | grep -c finished)" -eq $N ] || fail "handed over: $("$EXP" runs)"
grep -c '"kind": *"finish"' "$T/api.log" > "$T/fin" || true
[ "$(cat "$T/fin")" = 0 ] || fail "runs handed over were finished on Sentinel: $(cat "$T/fin")"
# one job ends while no node runs: its run is ended for good by the next
for m in /sys/fs/cgroup/*$TOP/g0 /sys/fs/cgroup$TOP/g0; do
	if [ -f "$m/cgroup.procs" ]; then kill -9 $(cat "$m/cgroup.procs") 2> /dev/null || true; fi
done
sleep 0.3
$CG rm $TOP/g0
"$REC" --jobs "$TOP/*" -i 0.5 2>> "$T/node.err" &
W=$!
track $W
wait_for sh -c "[ \$(\"$EXP\" runs | grep -c running) -eq $((N - 1)) ]" || fail "runs after the restart: $("$EXP" runs)"
G0=$("$EXP" runs | awk '$NF == "g0" {print $1}')
[ -n "$G0" ] || fail "no run of g0: $("$EXP" runs)"
"$EXP" show "$G0" | python3 -c '
import json, sys
m = json.load(sys.stdin)
assert m["status"] == "finished" and "resume" in m and not m["resume"].get("handover"), m.get("resume")' ||
	fail "g0's run, ended while no node ran, is not ended for good"
"$EXP" show 1 | python3 -c 'import json, sys; assert "resume" in json.load(sys.stdin)' ||
	fail "show has no resume object: $("$EXP" show 1)"
ok "a restart (TERM, a new node): the runs handed over unfinished, gone on with; g0's, whose job ended meanwhile, ended for good"

# every job ends (each slept 32 s); then the node stops
wait_for sh -c "[ \$(\"$EXP\" runs | grep -c finished) -eq $N ]" ||
	{ sleep 10; [ "$("$EXP" runs | grep -c finished)" -eq $N ]; } || fail "runs at the end: $("$EXP" runs)"
sleep 3
kill -TERM $W
wait_pid $W 20 || fail "the node did not stop on TERM"
grep -v "^$" "$T/node.err" | grep -v "killed by SIGKILL; started again" |
	grep -v "the upload (Sentinel, S3) \(failed\|succeeded again\)" | grep -q . &&
	fail "the node said: $(cat "$T/node.err")"

# every run once in Prometheus and once in the bucket
for r in $("$EXP" runs | awk 'NR > 1 {print $1}'); do
	"$EXP" replay "$r" -f json > "$T/replay$r.jsonl" || fail "replay $r"
	"$EXP" replay "$r" -f csv > "$T/replay$r.csv" || fail "replay $r (csv)"
done
python3 - "$T" "$PP" << 'PY' || fail "delivery"
import glob, gzip, json, os, sys, urllib.parse, urllib.request
from collections import Counter
t, port = sys.argv[1], sys.argv[2]
def q(expr, at):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": at}))
    r = json.load(urllib.request.urlopen(u, timeout=10))
    assert r["status"] == "success", r
    return r["data"]["result"]
calls = [json.loads(l) for l in open(os.path.join(t, "api.log"))]
runs = sorted(int(os.path.basename(p)[6:-6]) for p in glob.glob(os.path.join(t, "replay*.jsonl")))
assert len(runs) == 20, runs
for run in runs:
    lines = [json.loads(l) for l in open(os.path.join(t, "replay%d.jsonl" % run))]
    end = max(float(l["timestamp"]) for l in lines) + 1
    for sel, extra in (('system_memory_usage_bytes{rt_run_id="%d",system_memory_state="used"}', 0),
                       ('process_cpu_time_seconds_total{rt_run_id="%d",cpu_mode="user"}', 1)):
        s = sel % run
        n = q("count_over_time(%s[1d])" % s, end)
        assert len(n) == 1 and int(n[0]["value"][1]) == len(lines) + extra, (s, n, len(lines))
        assert q(s, end) == [], (s, "still reads after the run's end")
    # the bucket: every replayed line once, finish once with every object
    cp = json.load(open(os.path.join(t, "st", "upload", "%d.json" % run)))
    sid = cp["sentinel_run"]
    fin = [c for c in calls if c["kind"] == "finish" and sid in c["path"]]
    assert len(fin) == 1, (run, "finish called %d times" % len(fin))
    replay = open(os.path.join(t, "replay%d.csv" % run)).read().splitlines()
    objs = sorted(glob.glob(os.path.join(t, "s3", "rt-test", "uploads", sid, "*.csv.gz._S3rver_object")))
    body = fin[0]["body"]
    got = []
    if body["data_source"] == "inline":
        got = body["data_csv"].splitlines()[1:]
    else:
        assert len(body["data_uris"]) == len(objs), (run, body["data_uris"], objs)
        for o in objs:
            got += gzip.decompress(open(o, "rb").read()).decode().splitlines()[1:]
    cw, cg = Counter(replay[1:]), Counter(got)
    assert cw == cg, (run, "duplicated", sum((cg - cw).values()), "missing", sum((cw - cg).values()))
print("%d runs: each line once in Prometheus (a gauge, a counter, the end's marker) and in S3" % len(runs))
PY
ok "every run of the node once in Prometheus and once in the bucket, across the sampler's SIGKILL"
