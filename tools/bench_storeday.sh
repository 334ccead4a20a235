#!/bin/sh
# bench_storeday.sh BUILD [JOBS] [SECONDS]: the store bytes of the node
# mode, as a day of it would grow. JOBS one-process job groups (default
# 100) tracked by `rt-recorder --jobs` at 1 Hz for SECONDS (default 600:
# long enough that most of each run's samples sit in closed blocks), then
# the store read page by page with liblmdb's own mdb_stat and mdb_dump:
# the bytes a sample costs in closed blocks (what a day adds), what each
# run costs once (metadata, inventory, its open block) and the free pages
# the last commits left (a constant), and a day's figure from them. Needs
# root (cgroups) and lmdb-utils. Real clock: the node's own schedule.
set -eu
BUILD=$(cd "$1" && pwd)
N=${2:-100}
S=${3:-600}
HERE=$(cd "$(dirname "$0")/.." && pwd)
CG="$HERE/tests/integration/cgjobs.py"
T=$(mktemp -d)
trap 'kill $P 2>/dev/null || true; python3 "$CG" rm /rtstoreday 2>/dev/null || true; rm -rf "$T"' EXIT
P=
mkdir "$T/shm"
python3 "$CG" many /rtstoreday "$N" $((S + 30)) > /dev/null
RT_SHM_DIR="$T/shm" "$BUILD/rt-recorder" --jobs '/rtstoreday/*' -i 1 --quiet --store "$T/store" &
P=$!
sleep "$S"
kill -TERM $P
wait $P || true
P=
python3 "$CG" rm /rtstoreday
"$BUILD/rt-export" --store "$T/store" runs > "$T/runs"
mdb_stat -ea "$T/store" > "$T/stat"
mdb_dump -s samples "$T/store" > "$T/dump"
python3 - "$T" "$N" "$S" <<'PY'
import re, sys
t, jobs, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
samples = sum(int(l.split()[4]) for l in open(t + "/runs").readlines()[1:])
stat = open(t + "/stat").read()
def pages(db):
    m = re.search(r"Status of %s\n(.*?)(?=Status of|\Z)" % db, stat, re.S).group(1)
    return sum(int(x) for x in re.findall(r"(?:Branch|Leaf|Overflow) pages: (\d+)", m))
used = int(re.search(r"Number of pages used: (\d+)", stat).group(1))
def varint(b, i):
    x = s = 0
    while True:
        c = b[i]; i += 1; x |= (c & 0x7f) << s; s += 7
        if c < 0x80: return x, i
lines = [l.strip() for l in open(t + "/dump") if l.startswith(" ")]
vals = [(bytes.fromhex(lines[i]), bytes.fromhex(lines[i + 1])) for i in range(0, len(lines), 2)]
closed = n_closed = 0
for i, (k, v) in enumerate(vals):
    last = i + 1 == len(vals) or vals[i + 1][0][:8] != k[:8]
    if v[:1] != b"B" or last:
        continue  # a run's last value: its open block (or one sample alone)
    _, j = varint(v, 2); _, j = varint(v, j); c, j = varint(v, j)
    closed += 1; n_closed += c
per = 4096 * closed / n_closed if n_closed else float("nan")
fixed = (used * 4096 - per * samples) / jobs
print("store of %d jobs at 1 Hz after %d s: %d samples, %d pages used (%.0f bytes a job and sample)"
      % (jobs, secs, samples, used, used * 4096 / samples))
print("  samples %d pages, runs %d, inventory %d, free and meta %d"
      % (pages("samples"), pages("runs"), pages("inventory"),
         used - pages("samples") - pages("runs") - pages("inventory") - pages("Main DB") - pages("info")))
print("  closed blocks: %d holding %d samples, %.1f a block: %.1f bytes a sample (one page each)"
      % (closed, n_closed, n_closed / max(closed, 1), per))
print("  what each run costs once (metadata, inventory, open block, its share of free pages): %.0f KiB"
      % (fixed / 1024))
day = per * 86400 + fixed
print("  a day of one job at 1 Hz: %.1f MiB; of %d jobs: %.2f GiB" % (day / 2**20, jobs, day * jobs / 2**30))
PY
