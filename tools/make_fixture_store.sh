#!/bin/sh
# make_fixture_store.sh BUILD OUT - record the compatibility fixture: a
# store with one run of each kind, and what this rt prints for each run
# (runs, show, replay CSV and JSON). Committed once per released layout
# under tests/fixtures/stores/; tests/integration/it_compat.sh checks that
# every later rt lists, shows and replays them the same (CSV bytes, JSON
# values; new keys are welcome). Needs root (a tun device appears mid-run)
# and the fake NVML (built with the tests).
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$2
[ ! -e "$OUT" ] || { echo "make_fixture_store: $OUT exists" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export RT_STORE="$OUT/store"
RT_SHM_DIR=$(mktemp -d)
export RT_SHM_DIR
trap 'rm -rf "$RT_SHM_DIR"; ip tuntap del dev rtfix0 mode tun 2>/dev/null || true' EXIT

# 1. a wrapped job with a process tree (a busy child, a shell loop, a reaped child)
"$BUILD/resource-tracker" --quiet -i 0.1 --job-name fixture-wrapped --tag suite=compat -- \
	sh -c 'timeout 0.6 sha256sum /dev/zero > /dev/null & x=0; while [ $x -lt 3000 ]; do x=$((x+1)); done; true; wait; exit 3' || true
# 2. standalone: the whole system
"$BUILD/rt-recorder" --quiet -i 0.1 --count 8 --job-name fixture-standalone
# 3. two GPUs of the fake NVML, one process of the tree on GPU 0
sleep 5 &
gp=$!
RT_NVML_LIBRARY="$BUILD/libfake-nvml.so" FAKE_NVML_GPUS=2 FAKE_NVML_PIDS="$gp:0:2048:60" \
	"$BUILD/rt-recorder" --quiet --pid $gp -i 0.1 --count 8 --job-name fixture-gpu
kill $gp
# 4. a network interface appears during the run
"$BUILD/rt-recorder" --quiet -i 0.1 --count 12 --job-name fixture-nic &
r=$!
sleep 0.5
ip tuntap add dev rtfix0 mode tun
wait $r
ip tuntap del dev rtfix0 mode tun
# 5. a recorder killed mid-run (its ring goes with RT_SHM_DIR: crashed)
"$BUILD/rt-recorder" --quiet -i 0.1 --job-name fixture-crashed &
r=$!
sleep 0.75
kill -9 $r
wait $r 2>/dev/null || true

# 6. a long run: delta chains across full records, and (rt's store blocks)
# several blocks of one run
"$BUILD/rt-recorder" --quiet -i 0.02 --count 150 --job-name fixture-long

rm -f "$RT_STORE/lock.mdb"
EXP="$BUILD/rt-export"
"$EXP" runs > "$OUT/runs.txt"
for id in $("$EXP" runs | awk 'NR > 1 { print $1 }'); do
	# the store's path is this machine's: not part of what a later rt must repeat
	"$EXP" show "$id" | sed 's|^\t"store":\t".*"$|\t"store":\t"STORE"|' > "$OUT/show-$id.json"
	"$EXP" replay "$id" -f csv > "$OUT/replay-$id.csv"
	"$EXP" replay "$id" -f json > "$OUT/replay-$id.jsonl"
done
rm -f "$RT_STORE/lock.mdb"
git -C "$(dirname "$0")/.." rev-parse HEAD > "$OUT/recorded-by.txt" 2>/dev/null || true
"$BUILD/rt-recorder" --version >> "$OUT/recorded-by.txt"
ls -la "$RT_STORE"
