#!/bin/sh
# Stored runs are forever: every committed fixture store (tests/fixtures/
# stores/*, recorded by a released rt with tools/make_fixture_store.sh) is
# listed, shown and replayed by this rt as it was then: `runs` and the CSV
# byte for byte, `show` and the JSON with the same values (new keys are
# welcome). Run on a copy: readers must not need to write the fixture.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
n=0
for fx in "$HERE"/tests/fixtures/stores/*/; do
	name=$(basename "$fx")
	S="$T/$name"
	mkdir -p "$S"
	cp -r "$fx/store" "$S/store"
	chmod -R a-w "$S/store/data.mdb"
	E() { "$EXP" --store "$S/store" "$@"; }
	E runs > "$S/runs.txt" || fail "$name: runs: exit $?"
	cmp -s "$S/runs.txt" "$fx/runs.txt" || fail "$name: runs differ: $(diff "$fx/runs.txt" "$S/runs.txt" | head -5)"
	for id in $(awk 'NR > 1 { print $1 }' "$fx/runs.txt"); do
		E replay "$id" -f csv > "$S/replay-$id.csv" || fail "$name run $id: replay csv"
		cmp -s "$S/replay-$id.csv" "$fx/replay-$id.csv" ||
			fail "$name run $id: CSV differs: $(diff "$fx/replay-$id.csv" "$S/replay-$id.csv" | head -4)"
		E replay "$id" -f json > "$S/replay-$id.jsonl" || fail "$name run $id: replay json"
		E show "$id" > "$S/show-$id.json" || fail "$name run $id: show"
		python3 - "$fx" "$S" "$id" <<'PY' || fail "$name run $id: JSON values differ"
import json, os, sys
old, new, run = sys.argv[1:4]
def same(a, b, path):
    """every key and value of a is in b (b may have more keys)"""
    if isinstance(a, dict):
        assert isinstance(b, dict), path
        for k, v in a.items():
            assert k in b, "%s.%s missing" % (path, k)
            same(v, b[k], path + "." + k)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), "%s: %r vs %r" % (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, "%s[%d]" % (path, i))
    else:
        assert a == b and type(a) == type(b), "%s: %r vs %r" % (path, a, b)
want = [json.loads(l) for l in open(os.path.join(old, "replay-%s.jsonl" % run))]
got = [json.loads(l) for l in open(os.path.join(new, "replay-%s.jsonl" % run))]
assert len(want) == len(got), (len(want), len(got))
for i, (a, b) in enumerate(zip(want, got)):
    same(a, b, "line %d" % (i + 1))
a = json.load(open(os.path.join(old, "show-%s.json" % run)))
b = json.load(open(os.path.join(new, "show-%s.json" % run)))
a.pop("store"), b.pop("store")
same(a, b, "show")
PY
		n=$((n + 1))
	done
	# what this rt adds on top of old runs works on them too
	E summary --job fixture-wrapped --json > /dev/null || fail "$name: summary of an old run"
done
[ $n -ge 5 ] || fail "only $n fixture runs checked"
ok "$n runs of $(ls -d "$HERE"/tests/fixtures/stores/*/ | wc -l) fixture store(s): runs, show, CSV bytes and JSON values as recorded"
exit 0
