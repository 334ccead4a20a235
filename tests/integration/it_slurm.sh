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
for p in slurmctld slurmd sbatch squeue munged; do
	command -v $p > /dev/null 2>&1 || {
		echo "skip: no $p (Debian's slurm-wlm)"
		exit 0
	}
done
KEY=/etc/munge/munge.key
[ -r $KEY ] || { echo "skip: no munge key ($KEY)"; exit 0; }
CG="python3 $(cd "$(dirname "$0")" && pwd)/cgjobs.py"
S="$T/slurm"
mkdir -p "$S/ctld" "$S/d"
NODE=$(hostname)
MEM=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
CPUS=$(nproc)
munged --force --socket="$S/munge.sock" --pid-file="$S/munged.pid" --log-file="$S/munged.log" \
	--seed-file="$S/munged.seed" --key-file=$KEY 2> "$S/munged.err" || fail "munged: $(cat "$S/munged.err")"
track "$(cat "$S/munged.pid")"
cat > "$S/slurm.conf" << EOF
ClusterName=rtit
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmUser=root
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/d
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d.pid
SlurmctldLogFile=$S/ctld.log
SlurmdLogFile=$S/d.log
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/cgroup
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=rtit Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
printf 'CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainRAMSpace=yes\n' > "$S/cgroup.conf"
export SLURM_CONF="$S/slurm.conf"
stop_slurm() {
	for f in ctld.pid d.pid munged.pid; do [ -f "$S/$f" ] && kill "$(cat "$S/$f")" 2> /dev/null; done
	sleep 0.5
}
trap "stop_slurm; [ -n \"${KEEP:-}\" ] || cleanup" EXIT
slurmctld -f "$SLURM_CONF" 2> "$S/ctld.err" || fail "slurmctld: $(cat "$S/ctld.err")"
slurmd -f "$SLURM_CONF" 2> "$S/d.err" || fail "slurmd: $(cat "$S/d.err")"
wait_for sh -c "sinfo -h -o %t 2> /dev/null | grep -q idle" ||
	{ echo "skip: this Slurm did not come up here: $(tail -3 "$S/d.log" "$S/ctld.log" 2> /dev/null)"; exit 0; }
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
last1=$(awk '$1 == "truth" {print $2}' "$T/a.out")
last2=$(awk '$1 == "truth" {print $2}' "$T/b.out")
sleep 1.5
kill -TERM $NODEPID
wait_pid $NODEPID 15 || fail "the node mode did not stop"
"$EXP" runs
for j in "$j1:rt-burn-a:1073741824:$last1" "$j2:rt-burn-b:2147483648:$last2"; do
	id=${j%%:*} rest=${j#*:}
	name=${rest%%:*} rest=${rest#*:}
	mem=${rest%%:*} cpu=${rest#*:}
	run=$("$EXP" runs | awk -v n="$name" '$NF == n {print $1}')
	[ -n "$run" ] || fail "no run for Slurm job $id ($name): $(cat "$T/node.err")"
	"$EXP" show "$run" | python3 -c "
import json, sys
m = json.load(sys.stdin); c = m['cgroup']; a = m['allocation']
assert c['scheduler'] == 'slurm' and c['job_id'] == '$id' and c['name'] == '$name', c
assert a['slurm_job_id'] == '$id' and a['memory_bytes'] == $mem and a['memory_from'] == 'cgroup', a
assert a['cpu'] == 1 and a['cpu_from'] == 'cgroup', a" || fail "job $id's run: $("$EXP" show "$run")"
	# the intervals' sum, and what its group had before the first sample
	before=$("$EXP" show "$run" | python3 -c "import json, sys; print(json.load(sys.stdin)['cgroup']['cpu_before_secs'] or 0)")
	rcpu=$("$EXP" replay "$run" | python3 -c "
import json, sys
print($before + sum(json.loads(l)['cpu']['process_utime_secs'] + json.loads(l)['cpu']['process_stime_secs'] for l in sys.stdin))")
	"$EXP" summary "$run" | grep -q "s more in its cgroup before the first sample: $(printf %.2f "$rcpu") s in all" ||
		"$EXP" summary "$run" | grep -q "CPU time $(printf %.2f "$rcpu") s" ||
		fail "job $id: the summary's CPU time is not $rcpu s: $("$EXP" summary "$run" | grep 'CPU cores, job')"
	echo "Slurm job $id ($name): run $run, CPU rt $rcpu s, its group's counter at its end $cpu s"
	python3 -c "import sys; r, c = $rcpu, float('$cpu' or 0); sys.exit(not (c > 0 and abs(r - c) <= 0.02 * c))" ||
		fail "job $id's CPU: rt $rcpu s against its group's $cpu s"
	"$EXP" recommend "$run" > "$T/rec$id.txt"
	grep -q "as sbatch options *--cpus-per-task=1 --mem=" "$T/rec$id.txt" || fail "job $id: $(cat "$T/rec$id.txt")"
	grep -q "given .*(its cgroup's limit), peaked at" "$T/rec$id.txt" || fail "job $id: $(cat "$T/rec$id.txt")"
done
ok "a real Slurm ($(sbatch --version)): two batch jobs under --jobs slurm, each its own run named by its job id and name, given its --mem and --cpus-per-task, its CPU against its group's counter, its answer as sbatch options"
