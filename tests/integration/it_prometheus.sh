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
    ("system_memory_usage_bytes", ("system_memory_state", "used")): [(t, l["memory"]["used_mib"] * 1048576) for t, l in zip(times, lines)],
    ("process_thread_count", None): [(t, l["cpu"]["process_threads"]) for t, l in zip(times, lines) if l["cpu"]["process_threads"] is not None],
}
acc, series = 0.0, []
for t, l in zip(times, lines):
    acc += l["cpu"]["process_utime_secs"]
    series.append((t, acc))
want[("process_cpu_time_seconds_total", ("cpu_mode", "user"))] = series
acc, series = 0.0, []
for t, l in zip(times, lines):
    acc += l["cpu"]["process_disk_write_bytes"]
    series.append((t, acc))
want[("process_disk_io_bytes_total", ("disk_io_direction", "write"))] = series
job = lines[0]["job_name"] or "resource-tracker"
for (name, attr), exp in want.items():
    sel = '%s{rt_run_id="%s",job="%s"%s}' % (name, run, job, ',%s="%s"' % attr if attr else "")
    res = q(sel + "[1d]")
    assert len(res) == 1, (sel, len(res))
    m = res[0]["metric"]
    assert m.get("instance") and m.get("host_name"), m
    got = [(round(float(ts) * 1000), float(v)) for ts, v in res[0]["values"]]
    if name.endswith("_total"):
        # a counter starts with a 0 at the run's first record
        assert got and got[0][1] == 0.0 and got[0][0] < exp[0][0], (sel, got[:2])
        got = got[1:]
    assert len(got) == len(exp), (sel, "samples", len(got), "lines", len(exp))
    for (gt, gv), (et, ev) in zip(got, exp):
        assert gt == et, (sel, gt, et)
        assert abs(gv - ev) <= 1e-6 * max(1.0, abs(ev)), (sel, gt, gv, ev)
    # each sample once: count_over_time equals the lines
    n = q("count_over_time(%s[1d])" % sel)
    assert int(n[0]["value"][1]) == len(exp) + name.endswith("_total"), (sel, n)
    # the run ended: a staleness marker after its last sample, so the
    # series no longer reads (Prometheus would otherwise carry it 5 min)
    assert q(sel) == [], (sel, "still reads after the run's end")
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
vals = [float(v) for _, v in q('system_disk_io_bytes_total{rt_run_id="4",job="perdev",disk_io_direction="write",system_device="%s"}[1h]' % dev)[0]["values"]]
assert vals[0] == 0.0, vals[:2]  # the counter's 0 at the run's first record
vals = vals[1:]
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

# 6. a good citizen: a 20 s job (shorter than the 1 m windows dashboards
# use), pushed; the PromQL examples of docs/fleet.md give what rt-export
# summary says; every CPU mode adds up to the host's CPU time; the CPU
# count, memory total and allocation are there; instance is HOST:9100 (or
# TRACKER_PUSH_INSTANCE); every metric the Grafana dashboard of docs/ asks
# for reached Prometheus (GPU and cgroup-limit series only where they exist)
# (its idle half writes and syncs to the disk, so the host has iowait, which
# the summary counts as idle: the docs' host_busy must too)
"$RT" -i 1 -n citizen --quiet --request memory=512M -- python3 -c '
import os, sys, time
a = bytearray(60 << 20)
b = os.urandom(1 << 20)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
e = time.time() + 20
while time.time() < e:
    if int(time.time() * 2) % 2: pass
    else: os.pwrite(fd, b, 0); os.fsync(fd); time.sleep(0.05)' "$T/iowait" || fail "run 6"
R6=$("$EXP" runs | tail -1 | cut -d" " -f1)
TRACKER_PUSH_INSTANCE="node-a:9100" "$EXP" push "$R6" --to prometheus --url "$URL" || fail "push run 6"
"$EXP" summary "$R6" --json > "$T/sum6.json"
"$EXP" replay "$R6" -f json > "$T/replay6.jsonl"
python3 - "$PORT" "$R6" "$T/sum6.json" "$T/replay6.jsonl" "$(dirname "$0")/../../docs/fleet.md" "$(dirname "$0")/../../docs/grafana-dashboard.json" << 'PY' || fail "PromQL against the summary"
import json, re, sys, urllib.parse, urllib.request
port, run, sump, replay, doc, dash = sys.argv[1:7]
S = json.load(open(sump))
lines = [json.loads(l) for l in open(replay)]
end = max(float(l["timestamp"]) for l in lines) + 2
def q(expr, t=end):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr, "time": t}))
    r = json.load(urllib.request.urlopen(u, timeout=10))
    assert r["status"] == "success", (expr, r)
    return r["data"]["result"]
def one(expr):
    r = q(expr)
    assert len(r) == 1, (expr, r)
    return float(r[0]["value"][1])
st = S["stats"]
ncpu = len(lines[-1]["cpu"]["per_core_pct"])
iowait = sum(l["cpu"]["iowait_secs"] for l in lines)
print("  (the host's iowait in the run: %.2f s)" % iowait)
truth = {
    "cpu_seconds": st["process_utime"]["sum"] + st["process_stime"]["sum"],
    "mean_cores": S["table"][0]["mean"],
    "host_busy": st["system_cpu_usage"]["mean"] / ncpu,
    "peak_memory": st["process_memory_mib"]["max"] * 1048576,
    "memory_of_allocation": st["process_memory_mib"]["max"] / 512,
}
text = open(doc).read().split("<!-- promql-examples -->", 1)[1].split("```promql", 1)[1].split("```", 1)[0]
ex = re.findall(r"# (\w+): [^\n]*\n\s*([^\n]+)", text)
assert {k for k, _ in ex} == set(truth), [k for k, _ in ex]
for k, expr in ex:
    got = one(expr.replace('rt_run_id="7"', 'rt_run_id="%s",job="citizen"' % run))
    want = truth[k]
    assert abs(got - want) <= 0.02 * abs(want) + 1e-9, (k, got, want)
    print("  %-22s PromQL %.4g, rt-export summary %.4g" % (k, got, want))
# what rate() over a window longer than the run says, for the record
naive = one('sum(rate(process_cpu_time_seconds_total{rt_run_id="%s",job="citizen"}[1m]))' % run)
print("  (rate over [1m]: %.3f cores, the run's %.3f)" % (naive, truth["mean_cores"]))
sel = 'rt_run_id="%s",job="citizen"' % run
# every mode: they add up to the host's CPU time (ncpu x the run's span)
modes = {r["metric"]["cpu_mode"] for r in q('max_over_time(system_cpu_time_seconds_total{%s}[1h])' % sel)}
assert modes == {"user", "system", "idle", "iowait", "interrupt", "steal"}, modes
span = one('sum(max_over_time(system_cpu_time_seconds_total{%s}[1h]))' % sel)
assert abs(span - ncpu * S["run"]["duration_secs"]) <= 0.05 * ncpu * S["run"]["duration_secs"], (span, ncpu, S["run"]["duration_secs"])
assert one('max(max_over_time(system_cpu_logical_count{%s}[1h]))' % sel) == ncpu
mem = one('max(max_over_time(system_memory_limit_bytes{%s}[1h]))' % sel)
assert mem == lines[-1]["memory"]["total_mib"] * 1048576, (mem, lines[-1]["memory"]["total_mib"])
al = q('max_over_time(rt_allocation_memory_bytes{%s}[1h])' % sel)
assert len(al) == 1 and float(al[0]["value"][1]) == 512 * 1048576 and al[0]["metric"]["rt_allocation_source"] == "request", al
assert len(q('max_over_time(rt_allocation_cpu{%s}[1h])' % sel)) == 1
# instance: TRACKER_PUSH_INSTANCE; the other runs: HOST:9100
insts = {r["metric"]["instance"] for r in q('max_over_time(process_memory_usage_bytes{%s}[1h])' % sel)}
assert insts == {"node-a:9100"}, insts
other = q('max_over_time(process_memory_usage_bytes{rt_run_id="1",job="fleet"}[1d])')
assert other and other[0]["metric"]["instance"] == other[0]["metric"]["host_name"] + ":9100", other[0]["metric"]
# the dashboard's metrics reached Prometheus (GPU, cgroup-limit and
# per-device series exist only where the host has them)
got = {x for x in json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/v1/label/__name__/values" % port, timeout=10))["data"]}
d = json.load(open(dash))
asked = set()
for p in d["panels"]:
    for t in p["targets"]:
        asked |= set(re.findall(r"([a-z_:][a-z0-9_:]*)\{", t["expr"]))
optional = {m for m in asked if "gpu" in m or m.startswith("rt_cgroup_") or m == "rt_system_oom_kills_total"}
missing = asked - got - optional
assert not missing, missing
print("  dashboard: %d metrics asked, %d received here, %d only on hosts that have them (%s)"
      % (len(asked), len(asked & got), len(optional - got), ", ".join(sorted(optional - got))))
PY
ok "a 20 s run: the docs' PromQL gives the summary's figures, every CPU mode, CPU count, memory, allocation, instance HOST:9100 or TRACKER_PUSH_INSTANCE, the dashboard's metrics all sent"

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
