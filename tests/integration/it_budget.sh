#!/bin/sh
# A job held to a budget (issue 46 item 5): resource-tracker --max-memory
# SIZE --max-cpu CORES (TRACKER_MAX_MEMORY, TRACKER_MAX_CPU, TOML [budget])
# exits 3 after a job that succeeded but went over, with one line saying
# what and by how much; a failed job keeps its own code; the job itself is
# never stopped or changed; the step summary shows the budget beside the
# use. The peak named is checked against what the job touched (160 MiB
# and its interpreter); the figures themselves are the summary's, which
# it_fidelity checks against the kernel.
. "$(dirname "$0")/lib.sh"
HOG='import sys, time
b = bytearray(int(sys.argv[1]) << 20)
b[::4096] = b"\x01" * len(b[::4096])
t = time.time()
while time.time() - t < float(sys.argv[2]):
    pass
open(sys.argv[3], "w").write("done")'
set +e
"$RT" -i 0.1 --quiet --max-memory 64MiB -- python3 -c "$HOG" 160 0.8 "$T/done1" 2> "$T/b1.err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "over its memory budget: exit $rc ($(cat "$T/b1.err"))"
[ -f "$T/done1" ] || fail "the job was stopped"
[ "$(wc -l < "$T/b1.err")" -eq 1 ] || fail "not one line: $(cat "$T/b1.err")"
# the line names the program the user ran, not the exporter it started
grep -q "^resource-tracker: over budget: memory 64 MiB: peak [0-9.]* MiB, over by [0-9.]* MiB$" "$T/b1.err" || fail "the line: $(cat "$T/b1.err")"
# the peak it names is the job's: PSS as the kernel tells it, within 10 %
peak=$(sed -n 's/.*peak \([0-9.]*\) MiB.*/\1/p' "$T/b1.err")
python3 - "$peak" <<'PY' || fail "the peak named is not the job's PSS"
import sys
peak = float(sys.argv[1])
assert 160 * 0.9 <= peak <= 160 * 1.5, peak  # 160 MiB touched, and the interpreter
PY
ok "over its memory budget: exit 3, the job ran to its end, one line: $(cat "$T/b1.err")"

set +e
"$RT" -i 0.1 --quiet --max-memory 1GiB --max-cpu 2 -- python3 -c "$HOG" 32 0.3 "$T/done2" 2> "$T/b2.err"; rc=$?
set -e
[ $rc -eq 0 ] && [ ! -s "$T/b2.err" ] || fail "within its budget: exit $rc, said: $(cat "$T/b2.err")"
set +e
"$RT" -i 0.1 --quiet --max-memory 64MiB -- sh -c "python3 -c '$HOG' 160 0.5 $T/done3; exit 5" 2> "$T/b3.err"; rc=$?
set -e
[ $rc -eq 5 ] || fail "a failed job over its budget: exit $rc, not its own 5"
grep -q "over budget" "$T/b3.err" || fail "a failed job over its budget: not said: $(cat "$T/b3.err")"
set +e
TRACKER_MAX_CPU=0.3 "$RT" -i 0.1 --quiet -- python3 -c "$HOG" 8 1.0 "$T/done4" 2> "$T/b4.err"; rc=$?
set -e
[ $rc -eq 3 ] && grep -q "over budget: CPU 0.3 cores: mean [0-9.]*, over by" "$T/b4.err" ||
	fail "TRACKER_MAX_CPU: exit $rc, said: $(cat "$T/b4.err")"
ok "within: exit 0, nothing said; a failed job keeps its code (5) and is said over; TRACKER_MAX_CPU: $(cat "$T/b4.err")"

# TOML [budget], and a bad value there refuses the file in one line
mkdir "$T/cfg"
printf '[budget]\nmemory = "48MiB"\n' > "$T/cfg/resource-tracker.toml"
set +e
(cd "$T/cfg" && "$RT" -i 0.1 --quiet -- python3 -c "$HOG" 128 0.5 "$T/done5") 2> "$T/b5.err"; rc=$?
set -e
[ $rc -eq 3 ] && grep -q "over budget: memory 48 MiB" "$T/b5.err" || fail "TOML [budget]: exit $rc, $(cat "$T/b5.err")"
printf '[budget]\ncpu = "lots"\n' > "$T/cfg/resource-tracker.toml"
set +e
(cd "$T/cfg" && "$RT" -i 0.1 --quiet -- true) 2> "$T/b6.err"; rc=$?
set -e
[ $rc -eq 0 ] && grep -q "\[budget\]: max-cpu must be a number of cores" "$T/b6.err" || fail "a bad [budget]: exit $rc, $(cat "$T/b6.err")"
set +e
"$RT" --max-memory lots -- true 2> "$T/b7.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "max-memory must be a size" "$T/b7.err" || fail "--max-memory lots: exit $rc, $(cat "$T/b7.err")"
ok "TOML [budget] is honoured; a bad value there refuses the file, a bad flag is a usage error (2)"

# the step summary and the summary show the budget beside the use
set +e
GITHUB_STEP_SUMMARY="$T/step.md" "$RT" -i 0.1 --quiet --summary --max-memory 64MiB -- python3 -c "$HOG" 128 0.5 "$T/done6" 2> "$T/b8.err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "with --summary: exit $rc"
grep -qF '**budget**: memory 64 MiB\: peak' "$T/step.md" || fail "the step summary: $(grep -i budget "$T/step.md")"
"$EXP" summary latest | grep -q "^  budget  *memory 64 MiB: peak .*over by" || fail "summary: $("$EXP" summary latest | grep budget)"
"$EXP" show latest | grep -q '"memory_bytes":	67108864' || fail "the budget is not in the run's metadata"
ok "the step summary and the summary show the budget beside the use; the run's metadata keeps it"
