#!/bin/sh
# The node mode's one process (issue 55, recorder/jobs/nodesampler.c)
# against a job's own recorder: one job recorded at once by `--cgroup` and
# by `--jobs` cannot be told apart (the same replay columns and metadata
# keys, the same summary lines and recommendation; the job's CPU, each
# within 2 % of its group's counter read by the test; its PSS peak within
# the two readings' timing), and the node keeps two jobs' runs apart while
# it reads the host once a tick. Needs root (cgroups; skips without).
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
RT_STORE="$T/core" "$REC" --jobs "$TOP/[ab]" -i 0.5 2> "$T/core.err" &
N=$!
track $N
sleep 0.6
$CG job $A 0.3 2.0 150 > /dev/null
$CG job $B 0.2 1.0 40 > /dev/null
wait_pid $R 20 || fail "the recorder did not end with its group"
for _ in $(seq 100); do
	[ "$(RT_STORE="$T/core" "$EXP" runs | awk 'NR > 1 && $6 == "finished"' | wc -l)" -eq 2 ] && break
	sleep 0.1
done
kill -TERM $N
wait_pid $N 15 || fail "the node did not stop: $(cat "$T/core.err")"
RT_STORE="$T/core" "$EXP" runs > "$T/core.out"
ra=$(awk 'NR > 1 && $NF == "a" {print $1}' "$T/core.out")
rb=$(awk 'NR > 1 && $NF == "b" {print $1}' "$T/core.out")
[ -n "$ra" ] && [ -n "$rb" ] && [ "$ra" != "$rb" ] || fail "the node's runs: $(cat "$T/core.out")"
[ ! -s "$T/core.err" ] || fail "the node said: $(cat "$T/core.err")"
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
# cannot be told apart: the replay's columns, the metadata's keys (all
# but the recorder's pid and times), the summary's lines, the answer
RT_STORE="$T/rec" "$EXP" replay latest --format csv | head -1 > "$T/rec.cols"
RT_STORE="$T/core" "$EXP" replay "$ra" --format csv | head -1 > "$T/core.cols"
cmp -s "$T/rec.cols" "$T/core.cols" || fail "replay columns differ: $(diff "$T/rec.cols" "$T/core.cols")"
keys() { RT_STORE="$1" "$EXP" show "$2" | python3 -c "
import json, sys
def walk(o, p=''):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from walk(v, p + '.' + k)
    else:
        yield p
# (written only when they happen, to either reading: a skipped or waited
# sample, a high-water mark from before the first sample)
when = ('.samples_skipped', '.samples_waited', '.samples_not_stored', '.peak_before_tracking_mib')
# (and the node's own: what a node started later needs to go on with the
# run, "resume", no reading of the job's; checked in it_noderestart)
m = json.load(sys.stdin)
assert sys.argv[1] != 'core' or 'group_ino' in m.get('resume', {}), 'no resume object'
m.pop('resume', None)
print('\n'.join(sorted(set(k for k in walk(m) if k not in when))))" "$3"; }
keys "$T/rec" latest rec > "$T/rec.keys"
keys "$T/core" "$ra" core > "$T/core.keys"
cmp -s "$T/rec.keys" "$T/core.keys" || fail "metadata keys differ: $(diff "$T/rec.keys" "$T/core.keys")"
heads() { RT_STORE="$1" "$EXP" summary "$2" | sed -n '2,$p' | cut -c1-27 | sed 's/ *$//'; }
heads "$T/rec" latest > "$T/rec.heads"
heads "$T/core" "$ra" > "$T/core.heads"
cmp -s "$T/rec.heads" "$T/core.heads" || fail "summary lines differ: $(diff "$T/rec.heads" "$T/core.heads")"
# (the answer's whole numbers the same; its decimals, a mean over each
# reading's own start and end, within their timing: masked, and the
# percentages made of that mean, rounded: 32 % beside 33 % once; and the
# PSS peak's MiB, each reading's own moments, compared above: 161 beside
# 160 once)
mask='1d; s/[0-9]*\.[0-9][0-9]*/N/g; s/[0-9][0-9]* %/P %/g; s/\(peak PSS\|peaked at\) [0-9][0-9]* MiB/\1 M MiB/g'
RT_STORE="$T/rec" "$EXP" recommend latest | sed "$mask" > "$T/rec.ans"
RT_STORE="$T/core" "$EXP" recommend "$ra" | sed "$mask" > "$T/core.ans"
cmp -s "$T/rec.ans" "$T/core.ans" || fail "the answers differ: $(diff "$T/rec.ans" "$T/core.ans")"
ok "one job recorded by its own recorder (--cgroup) and by the node mode's one process (--jobs): the same replay columns, metadata keys, summary lines and answer; CPU $core_a s (recorder $rec_a s, group $truth_a s), PSS peak $pc MiB (recorder $pr MiB); a second job's run apart ($core_b s, group $truth_b s)"

# 100 jobs beside one whose 3,000-process tree is slow to read (256 of its
# processes read a sample, its PSS every 5 s): every job's samples on time,
# none skipped, one an interval
M=$TOP/m
$CG sleepers $M 100 1 30
$CG sleepers $M/crowd 1 3000 30
RT_STORE="$T/many" "$REC" --jobs "$M/*" -i 1 2> "$T/many.err" &
N=$!
track $N
sleep 7
kill -TERM $N
wait_pid $N 30 || fail "the node of 101 jobs did not stop"
RT_STORE="$T/many" "$EXP" runs | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' > "$T/many.runs"
[ "$(wc -l < "$T/many.runs")" -eq 101 ] || fail "$(wc -l < "$T/many.runs") runs for 101 jobs: $(RT_STORE="$T/many" "$EXP" runs)"
RT_STORE="$T/many" python3 -c "
import json, subprocess, sys
late = []
for r in open('$T/many.runs').read().split():
    m = json.loads(subprocess.run(['$EXP', 'show', r], capture_output=True, check=True).stdout)
    n = m['last_seq'] + 1
    secs = (m['end_ns'] - m['start_ns']) / 1e9
    if m.get('samples_skipped', 0) or n < int(secs) + 1:
        late.append('%s: %d samples in %.1f s, %d skipped' % (m['cgroup']['path'], n, secs, m.get('samples_skipped', 0)))
    if m['cgroup']['path'].endswith('/crowd'):
        assert 'members' in (m['cgroup'].get('bounds_hit') or []), m['cgroup']
assert not late, late
print('101 runs, none late')" || fail "jobs beside the 3,000-process one: $(cat "$T/many.err")"
ok "100 jobs beside one of 3,000 processes, in one process at 1 Hz: every run's samples on time, none skipped (the big one's bound said)"

# 100 jobs beside one whose /proc read hangs (an LD_PRELOAD fixture makes
# each open of its process's stat file take 1.5 s from the 2nd second on,
# the node's own threads alike): the node's readers keep every other job's
# samples on time, none skipped; the stuck job misses its own ticks,
# counted in its own samples_skipped, and its run ends as any run does
S=$TOP/s
$CG sleepers $S 100 1 40
slow=$($CG many $S/stuck 1 40)
RT_STORE="$T/stuck" LD_PRELOAD="$BUILD/rt-slowproc.so" RT_TEST_SLOW="$slow 2 1.5" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$REC" --jobs "$S/*" -i 0.5 2> "$T/stuck.err" &
N=$!
track $N
sleep 9
kill -TERM $N
wait_pid $N 30 || fail "the node beside a stuck job did not stop"
RT_STORE="$T/stuck" "$EXP" runs | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}' > "$T/stuck.runs"
[ "$(wc -l < "$T/stuck.runs")" -eq 101 ] || fail "$(wc -l < "$T/stuck.runs") runs for 101 jobs: $(RT_STORE="$T/stuck" "$EXP" runs)"
RT_STORE="$T/stuck" python3 -c "
import json, subprocess
late, stuck = [], None
for r in open('$T/stuck.runs').read().split():
    m = json.loads(subprocess.run(['$EXP', 'show', r], capture_output=True, check=True).stdout)
    skipped = m.get('samples_skipped', 0)
    # (its replay's lines, from the first to the last: the stop's final
    # samples come after the stuck job's)
    ts = [json.loads(l)['timestamp'] for l in subprocess.run(['$EXP', 'replay', r],
          capture_output=True, check=True, text=True).stdout.splitlines()]
    n, secs = len(ts), ts[-1] - ts[0]
    assert m['status'] == 'finished', (m['cgroup']['path'], m['status'])
    if m['cgroup']['path'].endswith('/stuck'):
        stuck = (n, skipped, secs)
    elif skipped or n < int(secs / 0.5 + 0.5):
        late.append('%s: %d samples in %.1f s, %d skipped' % (m['cgroup']['path'], n, secs, skipped))
assert not late, late
n, skipped, secs = stuck
# (from the 2nd second each read takes 1.5 s: about one sample in three)
assert skipped >= 5 and n + skipped >= int(secs / 0.5) - 1 and n < int(secs / 0.5) - 4, stuck
print('100 runs on time; the stuck one: %d samples, %d skipped in %.1f s' % stuck)" > "$T/stuck.out" ||
	fail "jobs beside a stuck one: $(cat "$T/stuck.err")"
ok "100 jobs beside one whose /proc read hangs 1.5 s: every other run's samples on time, none skipped; $(cat "$T/stuck.out")"

# a container's 1,024 descriptors (ulimit -n, hard): 120 jobs and a
# busy one found last, all in one process (no recorder of their own):
# the jobs past half the limit keep no file open but their ring and
# wait, and read the same figures (the last one's CPU its group's)
L=$TOP/l
$CG sleepers $L 120 1 40
$CG mk $L/zburn
(ulimit -n 1024 && RT_STORE="$T/lean" exec "$REC" --jobs "$L/*" -i 0.5) 2> "$T/lean.err" &
N=$!
track $N
sleep 3
$CG job $L/zburn 0 2.5 50 > /dev/null
sleep 2
kids=$(echo $(cat /proc/$N/task/$N/children))
[ "$(echo $kids | wc -w)" -eq 1 ] || fail "the node under 1,024 descriptors is not one sampler: $kids"
fds=$(ls "/proc/$kids/fd" | wc -l)
[ "$fds" -gt 200 ] || fail "the sampler holds $fds descriptors for 121 jobs: not the sampler's"
[ "$fds" -lt 1000 ] || fail "the sampler holds $fds descriptors of 1,024"
sleep 2.5
kill -TERM $N
wait_pid $N 30 || fail "the node under 1,024 descriptors did not stop"
[ ! -s "$T/lean.err" ] || fail "the node under 1,024 descriptors said: $(cat "$T/lean.err")"
RT_STORE="$T/lean" "$EXP" runs | awk 'NR > 1 && $1 ~ /^[0-9]+$/ && $6 == "finished"' > "$T/lean.runs"
[ "$(wc -l < "$T/lean.runs")" -eq 121 ] || fail "$(wc -l < "$T/lean.runs") finished runs for 121 jobs: $(cat "$T/lean.runs")"
run=$(awk '$NF == "zburn" {print $1}' "$T/lean.runs")
cpu=$(cpu_of "$T/lean" "$run")
truth=$($CG cpu $L/zburn)
near "$cpu" "$truth" 0.02 0.01 || fail "the lean job's CPU: rt $cpu s, its group $truth s"
ok "121 jobs under a hard limit of 1,024 descriptors in one process ($fds open): each run finished, the last one's CPU $cpu s (its group $truth s)"
