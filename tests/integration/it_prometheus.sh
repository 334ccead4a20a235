#!/bin/sh
# rt-export push --to prometheus against Debian's real Prometheus server
# (its remote-write receiver on 127.0.0.1, an out-of-order window): after a
# wrapped run, PromQL finds every line's sample once per series, with the
# run's labels and the replay's values (gauges as they are, counters the
# running sum). Then a push killed mid-way while Prometheus restarts: the
# next push resumes and still every sample is there once. A run older than
# the window: one line, exit 1, nothing half-sent. Skips without prometheus.
. "$(dirname "$0")/lib.sh"
command -v prometheus > /dev/null 2>&1 || {
	echo "skip: no prometheus (apt-get install prometheus)"
	exit 0
}
PORT=$(port)
URL="http://127.0.0.1:$PORT/api/v1/write"
cat > "$T/prom.yml" << 'EOF'
global:
  scrape_interval: 1h
storage:
  tsdb:
    out_of_order_time_window: 1d
EOF
start_prom() {
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$PORT" --web.enable-remote-write-receiver \
		> "$T/prom.log" 2>&1 &
	PROM=$!
	track $PROM
	wait_for curl -sf "http://127.0.0.1:$PORT/-/ready" || fail "prometheus did not start: $(tail -5 "$T/prom.log")"
}
stop_prom() {
	kill -TERM "$PROM" 2> /dev/null || true
	i=0
	while kill -0 "$PROM" 2> /dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
start_prom

# check RUN: every line's samples, once, equal to the replay's
check() {
	"$EXP" replay "$1" -f json > "$T/replay$1.jsonl"
	python3 - "$PORT" "$1" "$T/replay$1.jsonl" << 'PY'
import json, sys, urllib.parse, urllib.request
port, run, path = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(l) for l in open(path)]
end = max(float(l["timestamp"]) for l in lines) + 1
def q(expr):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": end}))
    r = json.load(urllib.request.urlopen(u, timeout=10))
    assert r["status"] == "success", r
    return r["data"]["result"]
# the raw text keeps the 6 decimals of "timestamp"
raw = [l.split('"timestamp":', 1)[1].split(",", 1)[0] for l in open(path)]
times = [int(r.split(".")[0]) * 1000 + int(r.split(".")[1][:3]) for r in raw]
want = {
    ("process_memory_usage_bytes", None): [(t, l["cpu"]["process_pss_mib"] * 1048576) for t, l in zip(times, lines)],
    ("system_memory_usage_bytes", ("state", "used")): [(t, l["memory"]["used_mib"] * 1048576) for t, l in zip(times, lines)],
    ("process_thread_count", None): [(t, l["cpu"]["process_threads"]) for t, l in zip(times, lines) if l["cpu"]["process_threads"] is not None],
}
acc, series = 0.0, []
for t, l in zip(times, lines):
    acc += l["cpu"]["process_utime_secs"]
    series.append((t, acc))
want[("process_cpu_time_seconds_total", ("state", "user"))] = series
acc, series = 0.0, []
for t, l in zip(times, lines):
    acc += l["cpu"]["process_disk_write_bytes"]
    series.append((t, acc))
want[("process_disk_io_bytes_total", ("direction", "write"))] = series
job = lines[0]["job_name"] or "resource-tracker"
for (name, attr), exp in want.items():
    sel = '%s{rt_run_id="%s",job="%s"%s}' % (name, run, job, ',%s="%s"' % attr if attr else "")
    res = q(sel + "[1d]")
    assert len(res) == 1, (sel, len(res))
    m = res[0]["metric"]
    assert m.get("instance") and m.get("host_name"), m
    got = [(round(float(ts) * 1000), float(v)) for ts, v in res[0]["values"]]
    assert len(got) == len(exp), (sel, "samples", len(got), "lines", len(exp))
    for (gt, gv), (et, ev) in zip(got, exp):
        assert gt == et, (sel, gt, et)
        assert abs(gv - ev) <= 1e-6 * max(1.0, abs(ev)), (sel, gt, gv, ev)
    # each sample once: count_over_time equals the lines
    n = q("count_over_time(%s[1d])" % sel)
    assert int(n[0]["value"][1]) == len(exp), (sel, n)
print("run %s: %d lines, %d series checked" % (run, len(lines), len(want)))
PY
}

# 1. a wrapped run, pushed
"$RT" -i 0.1 -n fleet --quiet -- python3 -c '
import time
a = bytearray(40 << 20)
e = time.time() + 1.5
while time.time() < e: pass
open("'"$T"'/w", "wb").write(b"x" * (1 << 20))' || fail "the wrapped run"
"$EXP" push latest --to prometheus --url "$URL" -v 2> "$T/push.err" || fail "push: $(cat "$T/push.err")"
grep -q "the engine has every sample" "$T/push.err" || fail "push -v: $(cat "$T/push.err")"
check 1 || fail "run 1 in Prometheus"
# pushed again: nothing new, still once each
"$EXP" push 1 --to prometheus --url "$URL" || fail "push again"
check 1 || fail "run 1 after a second push"
ok "a wrapped run in Prometheus: every line once per series, labels, values equal to the replay (gauges and running sums)"

# 2. a push stopped mid-way (Prometheus frozen, the pusher killed), Prometheus
# restarted, a push killed while it is down: the last push resumes at the
# checkpoint and every sample is there once
"$RT" -i 0.02 -n fleet --quiet -- sh -c 'sleep 4' || fail "run 2"
TRACKER_PUSH_BATCH_LINES=1 "$EXP" push 2 --to prometheus --url "$URL" > /dev/null 2>&1 &
P=$!
track $P
seen=0
i=0
while [ $i -lt 500 ]; do # up to 5 s for 10 confirmed samples
	seen=$(cat "$RT_STORE"/push/prometheus-2-* 2> /dev/null | sed -n 's/^next_seq //p')
	[ "${seen:-0}" -ge 10 ] && break
	sleep 0.01
	i=$((i + 1))
done
kill -STOP "$PROM"
sleep 0.3
kill -9 $P 2> /dev/null || true
wait $P 2> /dev/null || true
kill -CONT "$PROM"
stop_prom
TRACKER_PUSH_BATCH_LINES=7 "$EXP" push 2 --to prometheus --url "$URL" > /dev/null 2>&1 &
P=$!
track $P
sleep 1
kill -9 $P 2> /dev/null || true
wait $P 2> /dev/null || true
start_prom
TRACKER_PUSH_BATCH_LINES=7 "$EXP" push 2 --to prometheus --url "$URL" -v 2> "$T/push2.err" ||
	fail "resumed push: $(cat "$T/push2.err")"
at=$(sed -n 's/.*resumes at sample \([0-9]*\).*/\1/p' "$T/push2.err")
lines=$("$EXP" replay 2 -f csv | tail -n +2 | wc -l)
[ -n "$at" ] && [ "$at" -gt 10 ] && [ "$at" -le "$lines" ] ||
	fail "the last push should resume mid-run (checkpoint ${seen:-none}): $(cat "$T/push2.err")"
check 2 || fail "run 2 after kills and a restart"
check 1 || fail "run 1 after the restart"
ok "a push killed mid-way and again with Prometheus down, Prometheus restarted: resumed at sample $at of $lines, every sample once"

# 3. streamed as it is recorded: TRACKER_REMOTE_WRITE_URL makes the recorder
# start the push, which follows the run (a request every 10 s of samples)
TRACKER_REMOTE_WRITE_URL="$URL" "$RT" -i 0.5 -n live --quiet -- sleep 13 &
J=$!
track $J
sleep 12
mid=$(curl -s -G "http://127.0.0.1:$PORT/api/v1/query" \
	--data-urlencode 'query=count_over_time(process_memory_usage_bytes{job="live"}[1h])' |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(r[0]["value"][1]) if r else 0)')
wait $J || fail "the streamed run"
[ "$mid" -ge 15 ] || fail "only $mid samples in Prometheus 12 s into a 13 s run at 2 Hz (a batch is due every 10 s)"
check 3 || fail "the streamed run, once it ended"
ok "TRACKER_REMOTE_WRITE_URL: the run streamed while it ran ($mid samples in Prometheus before it ended), every sample once at the end"

# 4. per-device series when asked: a CPU utilization series per CPU, disk
# and NIC bytes per device; the NICs' counters add up to the host's total
"$RT" -i 0.2 -n perdev --quiet -- sh -c 'dd if=/dev/zero of="$1/f" bs=1M count=8 conv=fsync 2>/dev/null; sleep 1' sh "$T" ||
	fail "run 4"
TRACKER_PUSH_PER_DEVICE=1 "$EXP" push 4 --to prometheus --url "$URL" || fail "push per device"
"$EXP" replay 4 -f json > "$T/replay4.jsonl"
python3 - "$PORT" "$T/replay4.jsonl" << 'PY' || fail "per-device series"
import json, sys, urllib.parse, urllib.request
port, path = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(path)]
end = max(float(l["timestamp"]) for l in lines) + 1
def q(expr):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": end}))
    return json.load(urllib.request.urlopen(u, timeout=10))["data"]["result"]
cores = q('count_over_time(system_cpu_utilization_ratio{rt_run_id="4",job="perdev"}[1h])')
ncpu = len(lines[-1]["cpu"]["per_core_pct"])
assert len(cores) == ncpu, (len(cores), ncpu)
assert all(int(c["value"][1]) == len(lines) for c in cores), cores
# the last per-core value is the replay's last per_core_pct / 100
last = {c["metric"]["cpu_logical_number"]: float(c["value"][1]) for c in
        q('last_over_time(system_cpu_utilization_ratio{rt_run_id="4",job="perdev"}[1h])')}
assert len(last) == ncpu
for i, pct in enumerate(lines[-1]["cpu"]["per_core_pct"]):
    assert abs(last[str(i)] - pct / 100) < 1e-9, (i, last, pct)
# a disk's counter moves by what the disk's own total moved, line to line
dev = lines[-1]["disk"][0]["device"]
tot = [[x for x in l["disk"] if x["device"] == dev][0]["write_bytes_total"] for l in lines]
vals = [float(v) for _, v in q('system_disk_io_bytes_total{rt_run_id="4",job="perdev",direction="write",system_device="%s"}[1h]' % dev)[0]["values"]]
assert len(vals) == len(lines), (len(vals), len(lines))
for i in range(1, len(lines)):
    assert vals[i] - vals[i - 1] == tot[i] - tot[i - 1], (dev, i, vals[i] - vals[i - 1], tot[i] - tot[i - 1])
assert vals[-1] >= 8 << 20, ("the 8 MiB written", dev, vals[-1])
# an interface that is down carries nothing: no series for it
names = {n["interface"] for l in lines for n in l["network"] if n.get("operstate") != "down"}
devs = {r["metric"]["system_device"] for r in q('count by (system_device) (count_over_time(system_network_io_bytes_total{rt_run_id="4",job="perdev",system_device!=""}[1h]))')}
assert devs == names, (devs, names)
disks = {r["metric"]["system_device"] for r in q('count by (system_device) (count_over_time(system_disk_io_bytes_total{rt_run_id="4",job="perdev",system_device!=""}[1h]))')}
assert disks == {d["device"] for l in lines for d in l["disk"]}, disks
print("per device: %d CPUs, NICs %s, disks %s" % (ncpu, sorted(devs), sorted(disks)))
PY
ok "TRACKER_PUSH_PER_DEVICE=1: a series per CPU, disk and NIC, named by the device"

# 5. older than the window: one line, exit 1, the checkpoint stays
cp -r "$(dirname "$0")/../fixtures/stores/v0.1.0/store" "$T/old"
set +e
"$EXP" --store "$T/old" push 2 --to prometheus --url "$URL" > "$T/out" 2> "$T/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "an old run: exit $rc ($(cat "$T/err"))"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "an old run: not one line: $(cat "$T/err")"
grep -q "refused samples 1\.\." "$T/err" || fail "an old run: $(cat "$T/err")"
ls "$T/old/push/" | grep -q '^prometheus-2-[0-9a-f]*$' && fail "a checkpoint moved for refused samples"
# bad input: no URL, a bad sink, a URL that is not http(s)
set +e
env -u TRACKER_REMOTE_WRITE_URL "$EXP" push 1 --to prometheus > /dev/null 2> "$T/e1"; r1=$?
"$EXP" push 1 --to graphite --url "$URL" > /dev/null 2> "$T/e2"; r2=$?
"$EXP" push 1 --to prometheus --url "ftp://x" > /dev/null 2> "$T/e3"; r3=$?
set -e
[ $r1 -eq 2 ] && grep -q "TRACKER_REMOTE_WRITE_URL" "$T/e1" || fail "no URL: $r1 $(cat "$T/e1")"
[ $r2 -eq 2 ] && grep -q "must be prometheus" "$T/e2" || fail "bad sink: $r2 $(cat "$T/e2")"
[ $r3 -eq 2 ] && grep -q "http:// or https://" "$T/e3" || fail "bad URL: $r3 $(cat "$T/e3")"
stop_prom
ok "a run older than Prometheus takes: one line, exit 1, no checkpoint; bad sink, URL or none: one line, exit 2"
