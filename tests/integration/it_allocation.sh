#!/bin/sh
# What the job was given against what it used: a job in a cgroup the test
# makes (2 cores of CPU quota, 512 MiB of memory), Slurm's variables, a
# --request that wins, GITHUB_STEP_SUMMARY (a Markdown table and Mermaid
# charts of at most 100 points), a run recorded by rt 0.1 (no allocation),
# and bad requests. The efficiency is checked against the test's own
# computation from the replay.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
spin='import time
a = bytearray(100 << 20)
e = time.time() + 1.5
while time.time() < e: pass'

# check_eff RUN CPU MEM_MIB FROM: allocation_given and efficiency of RUN
check_eff() {
	"$EXP" summary "$1" --json > "$T/s$1.json"
	"$EXP" replay "$1" -f json > "$T/r$1.jsonl"
	python3 - "$T/s$1.json" "$T/r$1.jsonl" "$2" "$3" "$4" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
cpu, mem, frm = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
g, e = s["allocation_given"], s["efficiency"]
assert g["cpu"] == cpu and g["cpu_from"] == frm, g
assert abs(g["memory_mib"] - mem) < 0.01 and g["memory_from"] == frm, g
secs = sum(l["cpu"]["process_utime_secs"] + l["cpu"]["process_stime_secs"] for l in lines)
# CPU over the job's own life: a sample taken after the tree ended (a
# late final sample on a loaded host) is the run's, not the job's
dur = s["run"]["job_duration_secs"]
assert 0 < dur <= s["run"]["duration_secs"] + 1e-9, s["run"]
want_cpu = secs / (cpu * dur) * 100
# the answer's peak: the largest PSS of a sample, or a process's own
# high-water mark when it peaked between samples, less the pages the
# samples saw shared (RSS - PSS of a live tree)
live = [l["cpu"] for l in lines if l["cpu"].get("process_threads")]
shared = min((c["process_rss_mib"] - c["process_pss_mib"] for c in live), default=0)
peak = max(max(l["cpu"]["process_pss_mib"] for l in lines),
           max(l["cpu"].get("process_peak_rss_mib") or 0 for l in lines) - max(shared, 0))
assert abs(e["cpu_pct"] - want_cpu) < 0.01, (e["cpu_pct"], want_cpu)
assert abs(e["memory_pct"] - peak / mem * 100) < 0.01, (e["memory_pct"], peak, mem)
assert s["answer"].startswith("used "), s["answer"]
print("%s: given %g cores and %g MiB (%s); CPU %.1f %%, memory %.1f %%" % (sys.argv[1], cpu, mem, frm, e["cpu_pct"], e["memory_pct"]))
PY
}

# 1. a cgroup with 2 cores and 512 MiB (root; v2, else v1's cpu and memory)
if [ "$(id -u)" = 0 ]; then
	CGS=""
	if [ -e /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo "+cpu +memory" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		CG=/sys/fs/cgroup/rt-alloc-$$
		mkdir "$CG" && echo "200000 100000" > "$CG/cpu.max" && echo $((512 << 20)) > "$CG/memory.max" && CGS=$CG
	elif [ -w /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/memory ]; then
		C1=/sys/fs/cgroup/cpu/rt-alloc-$$ M1=/sys/fs/cgroup/memory/rt-alloc-$$
		mkdir "$C1" "$M1" && echo 200000 > "$C1/cpu.cfs_quota_us" && echo 100000 > "$C1/cpu.cfs_period_us" &&
			echo $((512 << 20)) > "$M1/memory.limit_in_bytes" && CGS="$C1 $M1"
	fi
	trap 'for c in $CGS; do rmdir "$c" 2>/dev/null || true; done; cleanup' EXIT
	if [ -n "$CGS" ]; then
		CGS="$CGS" SLURM_JOB_ID=9 SLURM_CPUS_PER_TASK=8 \
			sh -c 'for c in $CGS; do echo $$ > "$c/cgroup.procs"; done; exec "$@"' sh \
			"$RT" -i 0.1 -n alloc --quiet -- python3 -c "$spin" || fail "the run in the cgroup"
		check_eff 1 2 512 cgroup || fail "the cgroup's allocation"
		grep -q '"note":"Slurm allocated 8 CPUs, the cgroup allows 2: the cgroup' "$T/s1.json" ||
			fail "Slurm against the cgroup: $(cat "$T/s1.json" | head -c 300)"
		"$EXP" summary 1 > "$T/text1"
		head -1 "$T/text1" | grep -q "^used [0-9.]* of 2 cores and [0-9.]* MiB of 512 MiB: " || fail "first line: $(head -1 "$T/text1")"
		grep -q "given 2 cores (its cgroup's limit), used" "$T/text1" || fail "sentence: $(cat "$T/text1")"
		grep -q "given 512 MiB (its cgroup's limit), peaked at" "$T/text1" || fail "sentence: $(cat "$T/text1")"
		ok "a job in a cgroup of 2 cores and 512 MiB: given and used, as the test computes them from the replay"
	else
		echo "skip: no writable cpu and memory cgroup here"
		"$RT" --quiet -- true # keep the run ids below
	fi
else
	echo "skip (cgroup part): needs root"
	"$RT" --quiet -- true
fi

# 2. Slurm's variables (no Slurm needed), then --request over them
SLURM_JOB_ID=4242 SLURM_CPUS_PER_TASK=3 SLURM_MEM_PER_NODE=2048 SLURM_JOB_GPUS="" \
	"$RT" -i 0.1 -n alloc --quiet -- python3 -c "$spin" || fail "the Slurm run"
check_eff 2 3 2048 slurm || fail "Slurm's allocation"
"$EXP" show 2 | grep -q '"slurm_job_id":.*"4242"' || fail "show: no Slurm job id"
# a Slurm job's answer in Slurm's terms: the recommendation as sbatch options
# (the numbers are the recommendation's), in recommend, its JSON and the report
"$EXP" recommend 2 > "$T/reco2" || fail "recommend 2"
cpu=$(sed -n 's/^  vCPUs  *\([0-9]*\) .*/\1/p' "$T/reco2")
mem=$(sed -n 's/^  memory  *\([0-9]*\) MiB .*/\1/p' "$T/reco2")
want="--cpus-per-task=$cpu --mem=$([ $((mem % 1024)) -eq 0 ] && echo "$((mem / 1024))G" || echo "${mem}M")"
grep -qF -- "as sbatch options   $want" "$T/reco2" || fail "recommend: no '$want': $(cat "$T/reco2")"
"$EXP" recommend 2 --json | python3 -c 'import json, sys; s = json.load(sys.stdin)["scheduler"]; assert s == {"name": "slurm", "line": sys.argv[1]}, s' "$want" ||
	fail "recommend --json: no Slurm line"
"$EXP" report 2 -o "$T/r2.html" 2> /dev/null && grep -qF -- "<code id=scheduler-line>$want</code>" "$T/r2.html" ||
	fail "the report has no sbatch line"
"$EXP" recommend 3 | grep -q "as sbatch" && fail "a run outside Slurm got sbatch options" || true
ok "a Slurm job's recommendation as sbatch options: $want (recommend, --json, report)"
SLURM_JOB_ID=4242 SLURM_CPUS_PER_TASK=3 SLURM_MEM_PER_NODE=2048 \
	"$RT" -i 0.1 -n alloc --quiet --request cpu=4,memory=1GiB,gpu=0 -- python3 -c "$spin" || fail "the request run"
check_eff 3 4 1024 request || fail "the request"
"$EXP" recommend 3 > "$T/reco3" || fail "recommend"
grep -q "given against used  *given 4 cores (asked)" "$T/reco3" || fail "recommend: $(cat "$T/reco3")"
"$EXP" report 3 -o "$T/r3.html" 2> /dev/null || fail "report"
grep -q "<h2>Given against used</h2>" "$T/r3.html" && grep -q "given 4 cores (asked), used" "$T/r3.html" ||
	fail "the report has no given-against-used card"
# the allocation drawn on the CPU (4 cores) and memory (1024 MiB) charts, dashed
python3 - "$T/r3.html" << 'PY' || fail "the report's allocation lines"
import json, re, sys
d = json.loads(re.search(r'<script type="application/json" id=rt-data>(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
c = {x["id"]: x for x in d["charts"]}
for cid, want in (("cpu", 4), ("memory", 1024)):
    x = c[cid]
    assert x.get("dashed") == ["given (request)"] and x["labels"][-1] == "given (request)", x["labels"]
    assert all(r[-1] == [want, want, want] for r in x["data"]), (cid, x["data"][:2])
PY
"$EXP" summary --job alloc --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
runs = s["runs"]
assert all("efficiency" in r and "allocation_given" in r for r in runs), runs[0].keys()
assert runs[-1]["allocation_given"]["cpu_from"] == "request", runs[-1]["allocation_given"]
assert s["allocation_given"]["cpu"] == 4 and s["efficiency"]["cpu_pct"] > 0, s["efficiency"]
' || fail "summary --job: efficiency per run and aggregate"
"$EXP" summary --job alloc | grep -q "given (newest run)" || fail "summary --job text"
ok "Slurm's variables are the allocation; --request wins over them; recommend, report and summary --job say it"

# 3. GITHUB_STEP_SUMMARY: a Markdown table and Mermaid charts of <= 100 points
GITHUB_STEP_SUMMARY="$T/step.md" "$RT" -i 0.01 -n alloc --quiet --summary -- python3 -c "$spin" 2> /dev/null ||
	fail "the step summary run"
python3 - "$T/step.md" << 'PY' || fail "step summary: $(head -20 "$T/step.md")"
import re, sys
t = open(sys.argv[1]).read()
assert t.startswith("### rt: run "), t[:80]
assert "| | mean | p95 | max | |" in t and "|---|---:|---:|---:|---|" in t
rows = [l for l in t.splitlines() if l.startswith("| CPU cores, job |")]
assert rows and len(rows[0].split("|")) == 7, rows
charts = re.findall(r"```mermaid\n%%\{init: (.*?)\}%%\nxychart-beta\n(.*?)```", t, re.S)
assert len(charts) == 2, len(charts)
for init, c in charts:
    # an explicit line colour (the default theme's #ECECFF is nearly white)
    assert "plotColorPalette" in init, init
    # a numeric x axis (Mermaid picks its ticks: no label per point), y from 0
    x = re.search(r'x-axis "(seconds|minutes|hours)" ([0-9.]+) --> ([0-9.]+)\n', c)
    y = re.search(r'y-axis "[^"]+" 0 --> ([0-9.]+)\n', c)
    assert x and y, c[:200]
    ys = [float(v) for v in re.search(r"line \[(.*)\]", c).group(1).split(",")]
    assert 1 < len(ys) <= 100, len(ys)
    assert max(ys) <= float(y.group(1)), (max(ys), y.group(1))
print("step summary: table and %d charts of %s points" % (len(charts), [len(re.search(r"line \[(.*)\]", c).group(1).split(",")) for _, c in charts]))
PY
: > "$T/step2.md"
TRACKER_STEP_SUMMARY=0 GITHUB_STEP_SUMMARY="$T/step2.md" "$RT" --quiet --summary -- true 2> /dev/null
[ ! -s "$T/step2.md" ] || fail "TRACKER_STEP_SUMMARY=0 wrote the step summary"
# rendered as GitHub would, with Mermaid's own renderer (mermaid-cli, in
# the Debian chromium), and measured: at most 12 x labels, none overlapping,
# y from 0, the line in its colour, not the default theme's text
PEERS="$(dirname "$0")/../peers/node_modules"
[ -x "$PEERS/.bin/mmdc" ] || fail "no mermaid-cli in tests/peers (tools/test.sh installs it: npm ci there)"
command -v chromium > /dev/null 2>&1 || fail "chromium is not installed (tools/test.sh installs it)"
node "$(dirname "$0")/../browser/check_mermaid.js" "$T/step.md" || fail "the step summary's charts as rendered"
ok "GITHUB_STEP_SUMMARY: the Markdown summary and two Mermaid charts (<= 100 points, rendered by mermaid-cli: <= 12 x labels, none overlapping); TRACKER_STEP_SUMMARY=0 keeps it off"

# 4. a run recorded by rt 0.1: no allocation, said once, no crash
cp -r "$HERE/tests/fixtures/stores/v0.1.0/store" "$T/old"
"$EXP" --store "$T/old" summary 1 > "$T/old.txt" || fail "old run: summary"
[ "$(grep -c 'not recorded' "$T/old.txt")" -eq 1 ] || fail "old run: $(cat "$T/old.txt")"
"$EXP" --store "$T/old" summary 1 --format markdown | grep -q "not recorded" || fail "old run: markdown"
"$EXP" --store "$T/old" summary 1 --json | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["allocation_given"] is None and s["efficiency"] is None, s' ||
	fail "old run: JSON"
ok "a run of rt 0.1: the summary says once that nothing was recorded (text, Markdown, JSON null)"

# 5. bad requests: the flag stops before the job (exit 2); the variable warns
set +e
"$RT" --request cpu=4,disk=1 -- touch "$T/ran" 2> "$T/b1"; r1=$?
set -e
[ $r1 -eq 2 ] && [ ! -e "$T/ran" ] && grep -q "disk" "$T/b1" && [ "$(wc -l < "$T/b1")" -eq 1 ] ||
	fail "a bad --request: exit $r1, $(cat "$T/b1")"
TRACKER_REQUEST="memory=lots" "$RT" --quiet -- touch "$T/ran" 2> "$T/b2" || fail "a bad TRACKER_REQUEST stopped the job"
[ -e "$T/ran" ] && grep -q "TRACKER_REQUEST has memory='lots'" "$T/b2" || fail "bad TRACKER_REQUEST: $(cat "$T/b2")"
"$EXP" show latest | grep -q '"cpu_from":.*"request"' && fail "a bad TRACKER_REQUEST was recorded"
ok "a bad --request: one line naming the part, exit 2, the job not started; a bad TRACKER_REQUEST: a warning, no request"

# a single-threaded job throttled by a quota of half a core: the quota
# raises the recommendation, but never past what the tree could run at
# once (one thread: 1 vCPU; it was "2, one vCPU above it": issue 39)
if [ "$(id -u)" = 0 ]; then
	Q=""
	if [ -e /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo "+cpu" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		Q=/sys/fs/cgroup/rt-quota-$$
		mkdir "$Q" && echo "50000 100000" > "$Q/cpu.max" || Q=""
	elif [ -w /sys/fs/cgroup/cpu ]; then
		Q=/sys/fs/cgroup/cpu/rt-quota-$$
		mkdir "$Q" && echo 50000 > "$Q/cpu.cfs_quota_us" && echo 100000 > "$Q/cpu.cfs_period_us" || Q=""
	fi
	if [ -n "$Q" ]; then
		trap 'rmdir "$Q" 2>/dev/null || true; for c in $CGS; do rmdir "$c" 2>/dev/null || true; done; cleanup' EXIT
		# the interpreter itself: a python3 on PATH may be a shim (pyenv's
		# is a bash script that runs a few processes before it execs
		# python, and under load a sample sees them: 6 threads at once)
		PY1=$(python3 -c 'import sys; print(sys.executable)')
		sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$Q" \
			"$RT" -i 0.2 -n quota1 --quiet -- "$PY1" -c 'import time
e = time.time() + 2.5
while time.time() < e: pass' || fail "the run under a quota"
		"$EXP" recommend latest --json > "$T/q.json"
		"$EXP" recommend latest > "$T/q.txt"
		"$EXP" replay latest | python3 -c "import json, sys; print('threads at once:', [json.loads(l)['cpu']['process_threads'] for l in sys.stdin])" >> "$T/q.txt"
		python3 - "$T/q.json" <<'PY' || fail "a single thread under half a core: $(cat "$T/q.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("recommendation", d)
assert r["cpu"] == 1, r
PY
		grep -q "one vCPU above it" "$T/q.txt" && fail "a single thread was raised above its quota: $(cat "$T/q.txt")"
		rmdir "$Q"
		ok "a single thread throttled under half a core: 1 vCPU recommended, not 2"
	else
		echo "skip: no writable cpu cgroup here"
	fi
fi
