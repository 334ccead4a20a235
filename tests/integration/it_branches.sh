#!/bin/sh
# The branches of one step (a Metaflow foreach's tasks: the same job,
# --stage-name and --external-run-id), as any orchestrator records them:
# rt-export's --stage and --external-run-id select them, recommend gives the
# largest any one branch needs (resource by resource, never a mean), and a
# branch's report gives the step's line beside its own, with the branches
# by their tasks. A run of another external run id is none of them.
. "$(dirname "$0")/lib.sh"
HOLD='import sys, time
b = bytearray(int(sys.argv[1]) << 20)
b[::4096] = b"\x01" * len(b[::4096])
time.sleep(float(sys.argv[2]))'
branch() { # MIB SECONDS EXTERNAL_RUN TASK
	"$RT" --quiet -i 0.2 --job-name F --stage-name train --orchestrator metaflow \
		--external-run-id "$3" --task-name "F/$3/train/$4" -- python3 -c "$HOLD" "$1" "$2"
}
branch 60 0.8 7 2 &
branch 150 1.0 7 3 &
branch 400 1.2 7 4 &
wait
branch 800 0.8 8 9
own() { "$EXP" recommend "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["recommendation"]["memory_mib"])'; }
m1=$(own 1); m2=$(own 2); m3=$(own 3); m4=$(own 4)
largest=$(printf '%s\n%s\n%s\n' "$m1" "$m2" "$m3" | sort -n | tail -1)
[ "$(printf '%s\n%s\n%s\n' "$m1" "$m2" "$m3" | sort -u | wc -l)" -ge 2 ] ||
	fail "the branches' own lines should differ: $m1 $m2 $m3"
[ "$m4" -gt "$largest" ] || fail "the other run's need ($m4) should be above the branches' ($largest)"
"$EXP" recommend --job F --stage train --external-run-id 7 --json > "$T/step.json"
python3 - "$T/step.json" "$largest" <<'PY' || fail "the step's answer: $(cat "$T/step.json")"
import json, sys
d = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
assert d["job"]["runs"] == [1, 2, 3], d["job"]
b = d["branches"]
assert b["count"] == 3 and b["measured"] == 3 and b["running"] == 0, b
assert d["recommendation"]["memory_mib"] == want, (d["recommendation"], want)
assert b["memory_from_run"] in (1, 2, 3), b
assert d["scheduler"]["line"] == "@resources(cpu=1, memory=%d)" % want, d["scheduler"]
PY
"$EXP" recommend --job F --stage train --external-run-id 7 | grep -q "branches .*the largest any one of 3 branches needs (0 still running)" ||
	fail "the step's answer in text: $("$EXP" recommend --job F --stage train --external-run-id 7)"
ok "recommend --job F --stage train --external-run-id 7: the largest any of 3 branches needs ($m1, $m2, $m3 MiB alone: $largest), the 4th run of another run id left out"
# the report of a branch: its own line, the step's, the branches by task
"$EXP" report 1 --integration Metaflow --branches 3 -o "$T/b1.html" > /dev/null 2>&1
grep -q "<code id=scheduler-line>@resources(cpu=1, memory=$m1)</code>" "$T/b1.html" || fail "the branch's own line"
grep -q "<code id=step-line>@resources(cpu=1, memory=$largest)</code>" "$T/b1.html" || fail "the step's line"
grep -q "of all 3 branches, every one ended" "$T/b1.html" || fail "the branches counted"
for t in 7/train/2 7/train/3 7/train/4; do
	grep -q "<td>$t</td>" "$T/b1.html" || fail "branch $t not named by its task"
done
grep -q "7/train/9\|8/train/9" "$T/b1.html" && fail "the other run id's task is among the branches"
"$EXP" report 1 --branches 5 -o "$T/b5.html" > /dev/null 2>&1
grep -q "so far of 5 branches (3 recorded, 0 still running)" "$T/b5.html" || fail "3 of 5 branches: not said"
"$EXP" report 4 -o "$T/b4.html" > /dev/null 2>&1
grep -q "For the step, all its branches" "$T/b4.html" && fail "a run alone in its step got a branches section"
ok "a branch's report: its own line, the step's (the largest, all 3 ended or 3 of 5 so far), the branches by Metaflow run/step/task; a lone run: none"
# the selectors go with --job; an unknown stage says so
set +e
"$EXP" recommend latest --stage train > /dev/null 2> "$T/e1"; r1=$?
"$EXP" recommend --job F --stage nope > /dev/null 2> "$T/e2"; r2=$?
set -e
[ $r1 -eq 2 ] && grep -q "^rt-export: --stage NAME goes with --job NAME$" "$T/e1" || fail "--stage without --job: exit $r1, $(cat "$T/e1")"
[ $r2 -eq 1 ] && grep -q "no stored run of job 'F', stage 'nope'" "$T/e2" || fail "an unknown stage: exit $r2, $(cat "$T/e2")"
ok "--stage without --job: one line, exit 2; a stage with no run: one line naming it"
