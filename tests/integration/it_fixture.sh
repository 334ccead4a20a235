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

# NVML through the fake library: a failing call gives a null field, a
# failing init no GPUs, and sampling goes on either way
FAKE="$BUILD/libfake-nvml.so"
RT_PROC_ROOT="$T/root/proc" RT_SYS_ROOT="$T/root/sys" RT_TEST_CLOCK=1767225600 \
	RT_NVML_LIBRARY="$FAKE" FAKE_NVML_GPUS=2 FAKE_NVML_FAIL=temp "$REC" --count 2 --quiet
"$EXP" replay latest > "$T/gpu.jsonl"
python3 - "$T/gpu.jsonl" <<'PY' || fail "failing NVML call"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert len(d) == 2 and len(d[0]["gpu"]) == 2
assert all(g["temperature_celsius"] is None and g["power_watts"] == 100.0 + i
           for i, g in enumerate(d[0]["gpu"]))
PY
RT_PROC_ROOT="$T/root/proc" RT_SYS_ROOT="$T/root/sys" RT_TEST_CLOCK=1767225600 \
	RT_NVML_LIBRARY="$FAKE" FAKE_NVML_GPUS=2 FAKE_NVML_FAIL=init "$REC" --count 2 --quiet
"$EXP" replay latest | python3 -c '
import json, sys
d = [json.loads(l) for l in sys.stdin]
assert len(d) == 2 and all(x["gpu"] == [] for x in d)' || fail "failing NVML init"
RT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$REC" --count 1 -i 0.01 --quiet || fail "missing NVML"
ok "NVML: failing call -> null field, failing init or missing library -> no GPUs"

# per-process GPU use through NVML: the tracked tree's process on GPU 1
# (listed twice: compute and graphics) and someone else's on GPU 0
sleep 30 &
target=$!; track $target
# (every interval longer than NVML's 200 ms period holds a sample of it)
RT_NVML_LIBRARY="$FAKE" FAKE_NVML_GPUS=2 FAKE_NVML_PIDS="$target:1:512:40,1:0:999:90" \
	"$REC" --pid $target -i 0.25 --count 4 --quiet
kill $target
"$EXP" replay latest > "$T/pgpu.jsonl"
python3 - "$T/pgpu.jsonl" <<'PY' || fail "per-process GPU"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
for x in d:
    c = x["cpu"]
    assert c["process_gpu_vram_mib"] == 512.0, c["process_gpu_vram_mib"]   # counted once
    assert c["process_gpu_usage"] == 0.4, c["process_gpu_usage"]           # fresh samples only
    assert c["process_gpu_utilized"] == 1
PY
ok "per-process GPU: duplicate pid counted once, other users' GPU work not counted"

# a hung driver call never stops CPU sampling: GPU fields go null while it
# hangs, samples keep their schedule
t0=$(date +%s%N)
RT_NVML_LIBRARY="$FAKE" FAKE_NVML_GPUS=1 FAKE_NVML_HANG=3 "$REC" -i 0.05 --count 30 --quiet
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
"$EXP" replay latest > "$T/hang.jsonl"
python3 - "$T/hang.jsonl" "$ms" <<'PY' || fail "hung NVML call"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert len(d) == 30, len(d)
worst = max(x.get("actual_interval_ms", 50) for x in d)
nulls = sum(1 for x in d if x["gpu"] and x["gpu"][0]["utilization_pct"] is None)
print("30 samples in %s ms, longest interval %d ms, %d samples with GPU fields null" % (sys.argv[2], worst, nulls))
assert worst < 250, worst          # bounded: 100 ms wait at most
assert nulls >= 10                 # the hang was noticed, not waited out
PY
ok "hung NVML call bounded"
