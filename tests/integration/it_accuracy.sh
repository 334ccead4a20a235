#!/bin/sh
# Wrapper mode: the tree's CPU seconds summed over all intervals equal the
# kernel's own total for the tree within 2 %, and no interval shows more
# process cores than the whole host used (+ 0.1).
. "$(dirname "$0")/lib.sh"
W="$BUILD/rt-workload"

check() { # NAME WORKLOAD...
	name=$1; shift
	"$RT" -i 0.5 -o "$T/$name.jsonl" -- "$W" "$T/$name.k" "$@" || fail "$name: exit $?"
	python3 - "$T/$name.jsonl" "$T/$name.k" "$name" <<'PY' || fail "$name"
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kernel = float(open(sys.argv[2]).read())
if os.path.exists(sys.argv[2] + ".daemon"):
    kernel += float(open(sys.argv[2] + ".daemon").read())
rec = sum(r["cpu"]["process_utime_secs"] + r["cpu"]["process_stime_secs"] for r in rows)
err = (rec - kernel) / kernel * 100
worst = max(r["cpu"]["process_cores_used"] - r["cpu"]["utilization_pct"] for r in rows)
print("%-7s kernel %.3f s, recorded %.3f s (%+.2f %%), %d samples, worst cores over host %+.3f"
      % (sys.argv[3], kernel, rec, err, len(rows), worst))
assert abs(err) <= 2.0, "off by %.2f %%" % err
assert worst <= 0.1, "an interval shows %.3f cores more than the host used" % worst
PY
}
check busy busy 2
check loop loop 1500 # long enough that the last partial interval is a small part
check parent parent 5
check pool pool 4 1
check daemon daemon 1
ok "tree CPU matches the kernel's totals"
