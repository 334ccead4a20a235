#!/bin/sh
# The real recorder honours RT_PROC_ROOT, RT_SYS_ROOT and RT_TEST_CLOCK.
. "$(dirname "$0")/lib.sh"
FX="$(cd "$(dirname "$0")/../fixtures/host-a" && pwd)"
cp -a "$FX/step0/." "$T/root/" 2>/dev/null || { mkdir -p "$T/root"; cp -a "$FX/step0/." "$T/root/"; }
RT_PROC_ROOT="$T/root/proc" RT_SYS_ROOT="$T/root/sys" RT_TEST_CLOCK=1767225600 \
	"$REC" --count 2 --quiet
"$EXP" replay latest > "$T/out.jsonl"
python3 - "$T/out.jsonl" <<'PY' || fail "fixture recording"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert [x["timestamp_secs"] for x in d] == [1767225601, 1767225602], d
assert [x["device"] for x in d[0]["disk"]] == ["dm-0", "nvme0n1", "sda"]
assert len(d[0]["cpu"]["per_core_pct"]) == 2
assert d[0]["memory"]["total_mib"] == 8000
PY
ok "recorder reads fixture roots on the test clock"
