#!/bin/sh
# bench_lean.sh [JOBS] [SECONDS] - what a node job that keeps no file open
# costs (as root): JOBS job groups (default 100), one sleeping process
# each, followed by `rt-recorder --jobs` at 1 Hz with the descriptor limit
# high (every job keeps its files) and at `ulimit -n 1024` (past half of
# it a job keeps only its ring and wait), twice each; the sampler's CPU
# (every thread's schedstat) per job and sample over SECONDS (default 30)
# after a 12 s warm-up, and the descriptors it holds.
set -e
cd "$(dirname "$0")/.."
N=${1:-100} SECS=${2:-30}
REC=${REC:-build/rt-recorder}
CG="python3 tests/integration/cgjobs.py"
TOP=/rt-bench-lean-$$
D=$(mktemp -d)
trap '$CG rm $TOP; rm -rf "$D"' EXIT
$CG sleepers $TOP "$N" 1 $((SECS * 4 + 120))
cpu() {
	s=0
	for f in /proc/$1/task/*/schedstat; do
		read -r a _ < "$f"
		s=$((s + a))
	done
	echo $s
}
for lim in 20000 1024 20000 1024; do
	rm -rf "$D/store"
	(ulimit -n $lim && RT_STORE="$D/store" exec "$REC" --jobs "$TOP/*" -i 1 --quiet) 2> /dev/null &
	node=$!
	sleep 12
	s=$(echo $(cat /proc/$node/task/$node/children))
	a=$(cpu "$s") t0=$(date +%s.%N)
	sleep "$SECS"
	b=$(cpu "$s") t1=$(date +%s.%N)
	echo "ulimit -n $lim: $(ls "/proc/$s/fd" | wc -l) descriptors, $(python3 -c "print('%.1f' % (($b - $a) / 1e3 / (($t1 - $t0) * $N)))") us a job and sample"
	kill "$node"
	wait "$node" || true
done
