#!/bin/sh
# run.sh BUILD - the real-GPU check: rt wraps a phased PyTorch job (idle,
# steady, bursty, two children) beside a GPU process outside the tree,
# while an NVML watcher reads the truth every 100 ms (tests/gpu/watch.py),
# at -i 1 and -i 0.1; check.py holds rt's figures against it. Skipped
# (exit 77, said in one line) without an NVIDIA GPU or without PyTorch.
set -u
BUILD=$(cd "${1:-${BUILD:?BUILD}}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
n=$(cd "$HERE" && "$PY" -c 'import nvml; print(nvml.gpu_count())' 2>/dev/null || echo 0)
if [ "${n:-0}" -lt 1 ]; then
	echo "skipped: no NVIDIA GPU (NVML found none)"; exit 77
fi
if ! "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "skipped: the phased job needs PyTorch with CUDA ($PY)"; exit 77
fi
T=$(mktemp -d)
trap 'kill $NOISE 2>/dev/null; rm -rf "$T"' EXIT
export RT_STORE="$T/store" RT_SHM_DIR="$T"
"$PY" "$HERE/noise.py" & NOISE=$!
sleep 3
rc=0
for i in 1 0.1; do
	d="$T/i$i"; mkdir -p "$d"
	echo $NOISE > "$d/noise.pid"
	(cd "$HERE" && "$PY" watch.py "$d/watch.jsonl" 45) & W=$!
	sleep 1
	GPU_JOB_LOG="$d/job.log" "$BUILD/resource-tracker" -i "$i" -o "$d/rt.jsonl" -- "$PY" "$HERE/job.py" ||
		{ echo "FAIL: the job failed under rt"; rc=1; }
	wait $W
	"$BUILD/rt-export" recommend latest --json > "$d/reco.json"
	"$BUILD/rt-export" summary latest --json > "$d/summary.json"
	"$BUILD/rt-export" summary latest
	"$PY" "$HERE/check.py" "$d" "$i" || rc=1
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
exit $rc
