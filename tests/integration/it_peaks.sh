#!/bin/sh
# A peak counts only when it happened while tracked (issue 53, item 1),
# for --pid of another process, which rt may not reset: a Python process
# that once held 1 GiB and freed it, then tracked while idle, is not told
# it needs that GiB; the answer says its peak between samples is unknown
# (the high-water mark predates tracking). A spike inside the tracked
# stretch is still the job's.
. "$(dirname "$0")/lib.sh"
PY=$(command -v python3)
# a process that holds 1 GiB, frees it, says so, then spikes on SIGUSR1
cat > "$T/job.py" <<'PY'
import signal, sys, time
x = b"\x01" * (1 << 30)
del x
def spike(*_):
    y = b"\x01" * (1200 << 20)
    del y
signal.signal(signal.SIGUSR1, spike)
open(sys.argv[1], "w").write("freed")
time.sleep(30)
PY
"$PY" "$T/job.py" "$T/ready" &
J=$!
track $J
wait_for test -s "$T/ready" || fail "the job did not free its GiB"
"$RT" --pid $J -i 0.5 --count 4 --quiet 2> "$T/a.err" || fail "rt --pid: $(cat "$T/a.err")"
"$EXP" recommend latest --json > "$T/a.json"
python3 - "$T/a.json" <<'PYC' || fail "the idle stretch's answer: $(cat "$T/a.json")"
import json, sys
r = json.load(open(sys.argv[1]))["recommendation"]
assert r["memory_mib"] <= 512, r
assert "predates tracking" in r["memory_note"], r
PYC
"$EXP" show latest | python3 -c "import json,sys; m=json.load(sys.stdin); assert m['peak_before_tracking_mib'] > 1000, m" ||
	fail "peak_before_tracking_mib not in the metadata"
"$EXP" recommend latest | grep -q "peak between samples unknown: the high-water mark predates tracking" ||
	fail "the text does not say it: $("$EXP" recommend latest)"
ok "--pid of a process that held 1 GiB before: $(python3 -c "import json; print(json.load(open('$T/a.json'))['recommendation']['memory_mib'])") MiB recommended, the mark of before left out and said"
# a spike above the mark of before, inside the stretch, between samples
# (it starts 1.3 s in; the stretch lasts 4 s: touching 1.2 GB took up to
# 1.5 s on a loaded 2-vCPU VM, and a spike still growing at the last
# sample is rightly told as far as it got)
("$RT" --pid $J -i 1 --count 5 --quiet 2> "$T/b.err") &
R=$!
sleep 1.3
kill -USR1 $J
wait $R || fail "rt --pid (spike): $(cat "$T/b.err")"
mem=$("$EXP" recommend latest --json | python3 -c "import json,sys; print(json.load(sys.stdin)['recommendation']['memory_mib'])")
[ "$mem" -ge 1440 ] || fail "a 1200 MiB spike between samples: $mem MiB recommended"
ok "a 1200 MiB spike between samples, above the mark of before: $mem MiB recommended"
