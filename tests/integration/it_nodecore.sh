#!/bin/sh
# The node's one sampler's core (issue 55, recorder/jobs/nodesampler.c)
# against a job's own recorder: one job recorded at once by `--cgroup` and
# by the core gives the same figures (the job's CPU, each within 2 % of
# its group's counter read by the test; its PSS peak within the two
# readings' timing), and the core keeps two jobs' runs apart while it
# reads the host once a tick. Needs root (cgroups; skips without).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (cgroups)"
	exit 0
fi
CG="python3 $(dirname "$0")/cgjobs.py"
TOP=/rt-nodecore-$$
$CG mk $TOP/probe 2> /dev/null || { echo "skip: cannot make cgroups here"; exit 0; }
trap '$CG rm $TOP; cleanup' EXIT
near() { python3 -c "import sys; a, b, tol, abs_ = map(float, sys.argv[1:]); sys.exit(abs(a - b) > tol * b + abs_)" "$@"; }
cpu_of() { RT_STORE="$1" "$EXP" replay "$2" | python3 -c "
import json, sys
print(sum(json.loads(l)['cpu']['process_utime_secs'] + json.loads(l)['cpu']['process_stime_secs'] for l in sys.stdin))"; }
pss_of() { RT_STORE="$1" "$EXP" replay "$2" | python3 -c "
import json, sys
print(max(json.loads(l)['cpu']['process_pss_mib'] or 0 for l in sys.stdin))"; }
A=$TOP/a
B=$TOP/b
$CG mk $A 1073741824
$CG mk $B 1073741824
RT_STORE="$T/rec" "$REC" --cgroup $A -i 0.5 --quiet 2> "$T/rec.err" &
R=$!
track $R
"$BUILD/nodecore" "$T/core" 0.5 30 $A $B > "$T/core.out" 2> "$T/core.err" &
N=$!
track $N
sleep 0.6
$CG job $A 0.3 2.0 150 > /dev/null
$CG job $B 0.2 1.0 40 > /dev/null
wait_pid $R 20 || fail "the recorder did not end with its group"
wait_pid $N 30 || fail "the core did not end its jobs: $(cat "$T/core.err")"
ra=$(awk -v g=$A '$1 == "run" && $3 == g {print $2}' "$T/core.out")
rb=$(awk -v g=$B '$1 == "run" && $3 == g {print $2}' "$T/core.out")
[ -n "$ra" ] && [ -n "$rb" ] && [ "$ra" != "$rb" ] || fail "the core's runs: $(cat "$T/core.out")"
truth_a=$($CG cpu $A)
truth_b=$($CG cpu $B)
rec_a=$(cpu_of "$T/rec" latest)
core_a=$(cpu_of "$T/core" "$ra")
core_b=$(cpu_of "$T/core" "$rb")
echo "job a: CPU group $truth_a s, its recorder $rec_a s, the core $core_a s; job b: group $truth_b s, the core $core_b s"
near "$rec_a" "$truth_a" 0.02 0 || fail "the recorder's CPU $rec_a s against the group's $truth_a s"
near "$core_a" "$truth_a" 0.02 0 || fail "the core's CPU $core_a s against the group's $truth_a s"
near "$core_b" "$truth_b" 0.02 0 || fail "the core's CPU of job b $core_b s against its group's $truth_b s"
pr=$(pss_of "$T/rec" latest)
pc=$(pss_of "$T/core" "$ra")
echo "job a: PSS peak its recorder $pr MiB, the core $pc MiB"
near "$pc" "$pr" 0.05 2 || fail "PSS peaks: the core $pc MiB, the recorder $pr MiB"
ok "one job recorded by its own recorder and by the one sampler's core: CPU $core_a s (recorder $rec_a s, group $truth_a s), PSS peak $pc MiB (recorder $pr MiB); a second job's run apart ($core_b s, group $truth_b s)"
