#!/bin/sh
# it_gpu.sh - the job's GPU busy against the truth, without a GPU: the fake
# NVML keeps the real driver's contract (72-entry minimum, one sample per
# process per call, NOT_FOUND when nothing is new, a 200 ms grid) and a
# schedule of busy per process that gpu_truth.py turns into the truth of
# every interval. Shapes: steady and bursty, alone on the GPU and sharing it
# with a process outside the tree, one GPU and two; at -i 1 and -i 0.1.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
FAKE="$BUILD/libfake-nvml.so"
[ -f "$FAKE" ] || fail "no fake NVML at $FAKE"

# an outside GPU process: alive through every run, never the tree's
sleep 60 &
OUT=$!; track $OUT

# shape NAME: the job's lines for its pids file (sh code, $$ and $! known)
job_of() {
	case $1 in
	alone_steady) echo 'echo "$$:0:1024:80:0:0:tree" >> "$F"; exec sleep $S' ;;
	alone_bursty) echo 'echo "$$:0:1024:100:300:1000:tree" >> "$F"; exec sleep $S' ;;
	shared_steady) echo 'echo "$$:0:1024:60:0:0:tree" >> "$F"; exec sleep $S' ;;
	shared_bursty) echo 'echo "$$:0:1024:100:300:1000:tree" >> "$F"; exec sleep $S' ;;
	two_gpus) echo 'echo "$$:0:1024:70:0:0:tree" >> "$F"; sleep $S & echo "$!:1:2048:100:400:1000:tree" >> "$F"; wait' ;;
	esac
}
others_of() {
	case $1 in
	shared_steady) echo "$OUT:0:3072:30:0:0:other" ;;
	shared_bursty) echo "$OUT:0:3072:50:0:0:other" ;;
	two_gpus) echo "$OUT:1:3072:20:0:0:other" ;;
	esac
}

# run NAME INTERVAL SECONDS: the shape tracked in its own store
run() {
	d="$T/$1-$2"
	mkdir -p "$d/shm"
	others_of "$1" > "$d/pids"
	F="$d/pids" S=$3 RT_STORE="$d/store" RT_SHM_DIR="$d/shm" RT_NVML_LIBRARY="$FAKE" \
		FAKE_NVML_GPUS=2 FAKE_NVML_PIDS_FILE="$d/pids" \
		"$RT" --quiet -i "$2" -- sh -c "$(job_of "$1")" || return 1
	RT_STORE="$d/store" "$EXP" replay latest > "$d/run.jsonl"
}

pids=""
for shape in alone_steady alone_bursty shared_steady shared_bursty two_gpus; do
	run $shape 1 7 & pids="$pids $!"
	run $shape 0.1 4 & pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a tracked shape failed"; done

for shape in alone_steady alone_bursty shared_steady shared_bursty two_gpus; do
	for i in 1 0.1; do
		d="$T/$shape-$i"
		python3 "$HERE/tests/integration/gpu_truth.py" "$d/run.jsonl" "$d/pids" > "$d/truth.txt" ||
			fail "$shape at -i $i: GPU busy off the truth:
$(cat "$d/truth.txt")"
		ok "$shape -i $i: $(tail -1 "$d/truth.txt")"
	done
done

# the answer for each shape: as many GPUs as it held at once, its peak VRAM
# on one GPU + 20 % (1024 MiB -> 2048; two GPUs, 2048 MiB on one -> 3072
# each), the model it ran on, the same in every form
for shape in alone_steady alone_bursty shared_steady shared_bursty two_gpus; do
	d="$T/$shape-1"
	RT_STORE="$d/store" "$EXP" recommend latest --json > "$d/reco.json"
	RT_STORE="$d/store" "$EXP" summary latest --json > "$d/summary.json"
	RT_STORE="$d/store" "$EXP" summary latest > "$d/summary.txt"
	python3 - "$d" "$shape" <<'PY' || fail "$shape: the GPU answer: $(cat "$d/reco.json")"
import json, sys
d, shape = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/reco.json"))["recommendation"]
want = (2, 3072) if shape == "two_gpus" else (1, 2048)
assert (r["gpu"], r["vram_mib"]) == want, (r, want)
s = json.load(open(d + "/summary.json"))
assert s["recommendation"]["gpu"] == r["gpu"] and s["recommendation"]["vram_mib"] == r["vram_mib"]
used = [g["name"] for g in s["gpus"] if g["job_used"]]
assert used == (["Fake GPU H0", "Fake GPU H1"] if shape == "two_gpus" else ["Fake GPU H0"]), used
text = open(d + "/summary.txt").read()
words = "%d GPU%s with %d MiB VRAM" % (want[0], "s" if want[0] > 1 else "", want[1])
assert words in text, text
assert "GPU 0                    Fake GPU H0: the job kept it" in text, text
assert "ran at its power cap" in text, text
# the energy counter read at the first and the last sample only (the fake's
# grows 150 J a read): the run's total from those two
assert s["gpus"][0]["energy_joules"] == 150.0, s["gpus"][0]
PY
	ok "$shape: $(grep '^  recommended' "$d/summary.txt" | sed 's/  */ /g')"
done
