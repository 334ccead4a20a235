#!/bin/sh
# A real single-node Slurm (Debian's slurm-wlm: slurmctld, slurmd, munge;
# its cgroup plugin makes each job's group) running two batch jobs under
# the node mode (--jobs slurm): each job its own run, named by Slurm's job
# id and name, the group's limits (--cpus-per-task, --mem) as what it was
# given, its CPU against its group's cpuacct counter read by the test, and
# the answer as sbatch options. Everything of this Slurm lives in the
# test's directory (its config, state, munge socket and ports); nothing
# in /etc is touched. Needs root and slurm-wlm (skips without).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (Slurm's cgroups)"
	exit 0
fi
CG="python3 $(cd "$(dirname "$0")" && pwd)/cgjobs.py"
. "$(dirname "$0")/slurm_lib.sh"
slurm_need slurmctld slurmd sbatch squeue munged
slurm_start
# learn: the run's "scheduler" object, added after its end (bounded by
# learn's own wait: it asks Slurm for up to 120 s while the job is still
# completing)
wait_learned() {
	for _ in $(seq 250); do
		"$EXP" show "$1" | python3 -c "import json, sys; sys.exit('scheduler' not in json.load(sys.stdin))" && return 0
		sleep 0.5
	done
	fail "run $1: how its job ended was never learned: $(cat "$T/node.err")"
}
"$REC" --jobs slurm -i 0.5 2> "$T/node.err" &
NODEPID=$!
track $NODEPID
# the job reads its own group's CPU counter as its last act (the test's
# truth: the job level of /proc/self/cgroup, v1 cpuacct or v2 cpu.stat;
# its memory freed before, only a sleep and its exit after)
cat > "$T/job.sh" << 'EOF'
#!/bin/sh
exec python3 -c "
import re, time
x = bytearray(200 << 20)
for i in range(0, len(x), 4096): x[i] = 1
e = time.time() + 2.5
while time.time() < e: pass
del x
for line in open('/proc/self/cgroup'):
    n, ctl, path = line.rstrip().split(':', 2)
    job = re.sub(r'(/job_[^/]+).*', r'\1', path)
    if 'cpuacct' in ctl.split(','):
        print('truth', int(open('/sys/fs/cgroup/cpuacct' + job + '/cpuacct.usage').read()) / 1e9)
        break
    if n == '0' and ctl == '' and 'job_' in path:
        for l in open('/sys/fs/cgroup' + job + '/cpu.stat'):
            if l.startswith('usage_usec '):
                print('truth', int(l.split()[1]) / 1e6)
time.sleep(0.5)
"
EOF
chmod +x "$T/job.sh"
cd "$T"
j1=$(sbatch --parsable -J rt-burn-a --cpus-per-task=1 --mem=1G -o "$T/a.out" "$T/job.sh")
j2=$(sbatch --parsable -J rt-burn-b --cpus-per-task=1 --mem=2G -o "$T/b.out" "$T/job.sh")
for _ in $(seq 200); do
	[ -z "$(squeue -h 2> /dev/null)" ] && break
	sleep 0.1
done
sleep 1 # (the node stays up for the second part)
last1=$(awk '$1 == "truth" {print $2}' "$T/a.out")
last2=$(awk '$1 == "truth" {print $2}' "$T/b.out")
for j in "$j1:rt-burn-a:1073741824:$last1" "$j2:rt-burn-b:2147483648:$last2"; do
	id=${j%%:*} rest=${j#*:}
	name=${rest%%:*} rest=${rest#*:}
	mem=${rest%%:*} cpu=${rest#*:}
	run=$("$EXP" runs --job-id "$id" | awk -v n="$name" '$NF == n {print $1}')
	[ -n "$run" ] || fail "no run for Slurm job $id ($name): $(cat "$T/node.err")"
	"$EXP" show "$run" | python3 -c "
import json, sys
m = json.load(sys.stdin); c = m['cgroup']; a = m['allocation']
assert c['scheduler'] == 'slurm' and c['job_id'] == '$id' and c['name'] == '$name', c
assert a['slurm_job_id'] == '$id' and a['memory_bytes'] == $mem and a['memory_from'] == 'cgroup', a
assert a['cpu'] == 1 and a['cpu_from'] == 'cgroup', a" || fail "job $id's run: $("$EXP" show "$run")"
	# the intervals' sum, and what its group had before the first sample
	# (said beside the sum from 0.005 s on: the summary's own rule)
	before=$("$EXP" show "$run" | python3 -c "import json, sys; print(json.load(sys.stdin)['cgroup']['cpu_before_secs'] or 0)")
	insum=$("$EXP" replay "$run" | python3 -c "
import json, sys
print(sum(json.loads(l)['cpu']['process_utime_secs'] + json.loads(l)['cpu']['process_stime_secs'] for l in sys.stdin))")
	rcpu=$(python3 -c "print($before + $insum)")
	line=$("$EXP" summary "$run" | grep 'CPU cores, job')
	case "$line" in *"CPU time $(printf %.2f "$insum") s"*) ;; *) fail "job $id: the summary's CPU time is not $insum s: $line" ;; esac
	if python3 -c "import sys; sys.exit(not $before >= 0.005)"; then
		case "$line" in *"before the first sample: $(printf %.2f "$rcpu") s in all"*) ;; *) fail "job $id: the summary's CPU in all is not $rcpu s: $line" ;; esac
	fi
	echo "Slurm job $id ($name): run $run, CPU rt $rcpu s, its group's counter at its end $cpu s"
	python3 -c "import sys; r, c = $rcpu, float('$cpu' or 0); sys.exit(not (c > 0 and abs(r - c) <= 0.02 * c))" ||
		fail "job $id's CPU: rt $rcpu s against its group's $cpu s"
	# seff's CPU efficiency, by its formula from Slurm's own figures and the
	# group's counter: TotalCPU / (NumCPUs x RunTime) (no slurmdbd here:
	# scontrol's RunTime and NumCPUs, the counter as TotalCPU); its memory
	# efficiency over scontrol's MinMemoryNode
	wait_learned "$run"
	scontrol show job "$id" > "$T/sc$id.txt"
	"$EXP" summary "$run" --format json | python3 -c "
import json, re, sys
sc = open('$T/sc$id.txt').read()
secs = lambda t: sum(int(x) * m for x, m in zip(reversed(t.split(':')), (1, 60, 3600)))
ncpu = int(re.search(r' NumCPUs=(\d+)', sc).group(1)); rt_ = secs(re.search(r' RunTime=(\S+)', sc).group(1))
seff = json.load(sys.stdin)['seff']
want = $cpu / (ncpu * rt_) * 100
assert seff['elapsed_from'] == 'slurm' and seff['elapsed_secs'] == rt_ and seff['alloc_cpus'] == ncpu, (seff, rt_, ncpu)
assert abs(seff['cpu_efficiency_pct'] - want) <= 0.02 * want, (seff, want)
assert seff['req_mem_mib'] == $mem / 1048576, seff
print('seff %s: CPU efficiency rt %.2f %%, by its formula %.2f %%' % ('$id', seff['cpu_efficiency_pct'], want))" ||
		fail "job $id's seff figures: $("$EXP" summary "$run" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("seff"))')"
	"$EXP" recommend "$run" > "$T/rec$id.txt"
	grep -q "as sbatch options *--cpus-per-task=1 --mem=" "$T/rec$id.txt" || fail "job $id: $(cat "$T/rec$id.txt")"
	# (what Slurm allocated, once learned, outranks the group's limits)
	grep -q "given [0-9.]* GiB (Slurm), peaked at" "$T/rec$id.txt" || fail "job $id: $(cat "$T/rec$id.txt")"
done
ok "a real Slurm ($(sbatch --version)): two batch jobs under --jobs slurm, each its own run named by its job id and name, given its --mem and --cpus-per-task, its CPU against its group's counter, its answer as sbatch options"

# --- the endings: out of memory, out of time, cancelled, an array, steps ---
# (the time-limited job holds one of the node's cores while the others run
# one after another on the other; Slurm ends it within about 90 s)
cat > "$T/grow.sh" << 'X'
#!/bin/sh
exec python3 -c "
import time
x = []
while True:
    b = bytearray(20 << 20); b[::4096] = b'\x01' * (len(b) // 4096); x.append(b); time.sleep(0.1)
"
X
cat > "$T/steps.sh" << 'X'
#!/bin/sh
srun -n1 sh -c 'python3 -c "
import time
e = time.time() + 1.5
while time.time() < e: pass"; sleep 0.7'
srun -n1 sleep 1
X
chmod +x "$T/grow.sh" "$T/steps.sh"
jt=$(sbatch --parsable -J rt-late --time=1 --mem=100M --wrap "sleep 300")
jo=$(sbatch --parsable -J rt-grow --mem=300M -o "$T/grow.out" "$T/grow.sh")
# the kernel's count, read by the test in the killed task's own group
python3 - "$jo" > "$T/oomtruth" << 'PY' &
import glob, re, sys, time
seen, end = 0, time.time() + 60
while time.time() < end:
    for f in glob.glob('/sys/fs/cgroup/memory/slurm*/uid_*/job_%s/step_*/task_*/memory.oom_control' % sys.argv[1]):
        try:
            seen = max(seen, int(re.search(r'oom_kill (\d+)', open(f).read()).group(1)))
        except (OSError, AttributeError):
            pass
    if seen:
        break
    time.sleep(0.02)
print(seen)
PY
WATCH=$!
js=$(sbatch --parsable -J rt-steps --mem=300M -o /dev/null "$T/steps.sh")
# each step's CPU, read by the test in its own group until it goes (no
# slurmdbd here for sacct's per-step TotalCPU)
python3 - "$js" > "$T/steps.truth" << 'PY' &
import glob, json, os, sys, time
cpu, end = {}, time.time() + 60
while time.time() < end:
    for f in glob.glob('/sys/fs/cgroup/cpuacct/slurm*/uid_*/job_%s/step_*/cpuacct.usage' % sys.argv[1]):
        try:
            cpu[f.split('/')[-2][5:]] = int(open(f).read()) / 1e9
        except (OSError, ValueError):
            pass
    if not glob.glob('/sys/fs/cgroup/cpuacct/slurm*/uid_*/job_%s' % sys.argv[1]) and cpu:
        break
    time.sleep(0.02)
print(json.dumps(cpu))
PY
STEPW=$!
ja=$(sbatch --parsable -J rt-array --array=1-3 --mem=100M -o /dev/null --wrap "sleep 1")
jc=$(sbatch --parsable -J rt-cancel --mem=100M -o /dev/null --wrap "sleep 60")
for _ in $(seq 300); do
	squeue -h -j "$jc" -o %T 2> /dev/null | grep -q RUNNING && break
	sleep 0.2
done
sleep 1.5
scancel "$jc"
wait $WATCH $STEPW
oomk=$(cat "$T/oomtruth")
[ "${oomk:-0}" -ge 1 ] || fail "the growing job was not OOM-killed here: $(cat "$T/grow.out")"
for _ in $(seq 600); do
	[ -z "$(squeue -h 2> /dev/null)" ] && break
	sleep 0.25
done
[ -z "$(squeue -h 2> /dev/null)" ] || fail "jobs still queued: $(squeue)"
sleep 1
"$EXP" runs
run_of() { "$EXP" runs --job-id "$1" | awk 'NR == 2 {print $1}'; }
state_of() { scontrol show job "$1" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^JobState=/) {sub(/JobState=/, "", $i); print $i; exit}}'; }
for j in "$jo:OUT_OF_MEMORY" "$jt:TIMEOUT" "$jc:CANCELLED" "$js:COMPLETED"; do
	id=${j%%:*} want=${j#*:}
	[ "$(state_of "$id")" = "$want" ] || fail "Slurm job $id is $(state_of "$id"), not $want, here"
	run=$(run_of "$id")
	[ -n "$run" ] || fail "no run of Slurm job $id"
	wait_learned "$run"
	"$EXP" show "$run" | python3 -c "
import json, sys
s = json.load(sys.stdin)['scheduler']
assert s['state'] == '$want' and s['from'] in ('scontrol', 'sacct'), s" || fail "job $id: $("$EXP" show "$run")"
	"$EXP" summary "$run" | grep -q "Slurm says *$want, exit code" || fail "job $id's summary: $("$EXP" summary "$run")"
done
# out of memory: killed, said at its limit, asked for more than it
ro=$(run_of "$jo")
"$EXP" show "$ro" | python3 -c "
import json, sys
m = json.load(sys.stdin); c = m['cgroup']
assert m['status'] == 'killed' and c['oom_kills'] == $oomk and c['mem_limit_bytes'] == 300 << 20, c
assert c['mem_peak_bytes'] >= 290 << 20, c" || fail "the OOM-killed job's run: $("$EXP" show "$ro")"
"$EXP" summary "$ro" > "$T/oom.sum"
# when: the first sample whose group or host counted the kill. A kill
# after the last sample (the group emptied and removed by Slurm before
# the next tick, no final sample: 1 in 2 runs here) is in no sample, and
# the summary then says no time rather than a wrong one.
seen=$("$EXP" replay "$ro" | python3 -c "
import json, sys
print(any((r.get('cgroup') or {}).get('oom_kills') or (r.get('memory') or {}).get('oom_kills') for r in map(json.loads, sys.stdin)))")
when="at [0-9:]*"
[ "$seen" = True ] || when=""
grep -q "OOM-killed in its cgroup${when:+ $when}: its 300 MiB limit was too small ($oomk kill" "$T/oom.sum" ||
	fail "the OOM line (a sample saw the kill: $seen): $(cat "$T/oom.sum")"
"$EXP" recommend "$ro" > "$T/oom.rec"
grep -q "as sbatch options *--cpus-per-task=1 --mem=512M --time=0:01:00" "$T/oom.rec" ||
	fail "the OOM-killed job's sbatch options: $(cat "$T/oom.rec")"
# out of time: --time at least 1.5x its one minute
"$EXP" recommend "$(run_of "$jt")" | grep -q "as sbatch options .* --time=0:02:00" ||
	fail "the timed-out job: $("$EXP" recommend "$(run_of "$jt")")"
# the array: its tasks as Slurm names them, one answer for them all
[ "$("$EXP" runs --job-id "$ja" | awk 'NR > 1 {print $7}' | sort | tr '\n' ' ')" = "${ja}_1 ${ja}_2 ${ja}_3 " ] ||
	fail "the array's tasks: $("$EXP" runs --job-id "$ja")"
"$EXP" recommend --job-id "$ja" | grep -q "job $ja (3 runs)" || fail "recommend --job-id $ja: $("$EXP" recommend --job-id "$ja")"
# the steps: each its own CPU against its group's counter as the test
# read it (the first step's group outlives its busy task by a read: see
# cgparts.h); the one-second second step is listed too (seen as its
# group was made)
rs=$(run_of "$js")
"$EXP" summary "$rs" --format json | python3 -c "
import json, sys
truth = json.load(open('$T/steps.truth'))
j = json.load(sys.stdin)
p = {x['name']: x for x in j['parts']}
assert set(p) >= {'batch', '0', '1'}, p
assert truth.get('0', 0) >= 0.5, truth
assert abs(p['0']['cpu_secs'] - truth['0']) <= 0.02, (p, truth)
assert p['1']['cpu_secs'] < 0.2, p
print('steps:', ', '.join('%s %.3f s (its group %.3f s)' % (k, v['cpu_secs'], truth.get(k, -1)) for k, v in sorted(p.items())))" ||
	fail "the two-step job's steps: $("$EXP" summary "$rs")"
"$EXP" report "$rs" -o "$T/steps.html" > /dev/null 2>&1 || fail "the two-step job's report"
grep -q "The job as its scheduler ran it.*Slurm says.*COMPLETED.*seff&#39;s way\|The job as its scheduler ran it.*Slurm says.*COMPLETED.*seff's way" "$T/steps.html" &&
	grep -q "<b>steps</b> batch: CPU" "$T/steps.html" || fail "the two-step job's report has no steps or Slurm's word"
kill -TERM $NODEPID
wait_pid $NODEPID 15 || fail "the node mode did not stop"
ok "the endings on a real Slurm: OUT_OF_MEMORY (the task group's oom_kill $oomk, read by the test) is a killed run, said at its 300 MiB limit, --mem=512M; TIMEOUT asks --time=0:02:00; CANCELLED and COMPLETED as scontrol says; array $ja as ${ja}_1..3 with one answer; the steps' own CPU"
