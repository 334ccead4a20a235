#!/bin/sh
# @track_resources with real Metaflow flows (tests/metaflow), and, with a
# checkout of the reference, its own example flows unchanged.
#
#   sh tools/metaflow-tests.sh METAFLOW [BUILD] [REFERENCE]
#
# METAFLOW: a checkout (or a bare git directory) of Netflix/metaflow: its
# local runtime and datastore need only Debian's python3-requests and
# python3-boto3; "-" uses an installed metaflow. BUILD: where rt's programs
# are (default: build). REFERENCE: a checkout of SpareCores/resource-tracker:
# its examples/metaflow/1-minimal.py and 1-minimal-failed.py are then run as
# they are, with rt's extension in place of the reference's, and their
# artifacts and cards checked. Nothing of either is kept here: checkouts
# of bare directories go to a temporary directory. Needs pytest.
set -eu
[ $# -ge 1 ] || { echo "usage: sh tools/metaflow-tests.sh METAFLOW [BUILD] [REFERENCE]" >&2; exit 2; }
MF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${2:-$HERE/build}" && pwd)
REF=${3:-}
[ -x "$BUILD/rt-recorder" ] && [ -x "$BUILD/rt-export" ] ||
	{ echo "metaflow-tests: no rt-recorder and rt-export in $BUILD: build first" >&2; exit 2; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a work tree of a checkout or of a bare git directory
tree() { # DIR NAME: echo a directory holding DIR's files
	if [ -d "$1/.git" ] || [ ! -f "$1/HEAD" ]; then
		echo "$1"
	else
		git clone -q "$1" "$T/$2" && echo "$T/$2"
	fi
}
MFP=""
[ "$MF" = - ] || MFP=$(tree "$MF" metaflow)
export PYTHONPATH="${MFP:+$MFP:}$HERE/python${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$BUILD:$PATH" USERNAME=${USERNAME:-rt-test}
# cloud discovery probes a closed local port: tests touch only 127.0.0.1
export RT_IMDS_ADDR=${RT_IMDS_ADDR:-127.0.0.1:1}
"$PY" -c 'import metaflow' 2> /dev/null ||
	{ echo "metaflow-tests: metaflow cannot be imported from $MF (python3-requests and python3-boto3 installed?)" >&2; exit 2; }
"$PY" -m pytest -q -p no:cacheprovider "$HERE/tests/metaflow/test_flows.py"
[ -n "$REF" ] || exit 0
# the reference's own example flows, unchanged
R=$(tree "$REF" reference)
mkdir "$T/ex" && cp "$R/examples/metaflow/1-minimal.py" "$R/examples/metaflow/1-minimal-failed.py" "$T/ex/"
cd "$T/ex"
export RT_STORE="$T/ex/store"
"$PY" 1-minimal.py --no-pylint run > run.log 2>&1 || { tail -20 run.log; exit 1; }
"$PY" 1-minimal-failed.py --no-pylint run > failed.log 2>&1 && { echo "1-minimal-failed.py did not fail"; exit 1; }
"$PY" - <<'PY'
from metaflow import Flow
from metaflow.cards import get_cards
for flow, failed in (("MinimalFlow", False), ("MinimalFailedFlow", True)):
    task = next(iter(Flow(flow).latest_run["do_heavy_computation"].tasks()))
    data = task.data.resource_tracker_data
    assert data["step_failed"] is failed, (flow, data.get("error"))
    pm = data["tracker"]["process_metrics"]
    peak = max(pm["memory_mib"]) if isinstance(pm, dict) else max(r["memory_mib"] for r in pm)
    cards = [c for c in get_cards(task) if c.type == "tracked_resources"]
    assert cards and "rt report: run" in cards[0].get(), flow
    print("%s: artifact %s, peak memory %.0f MiB (500 MiB allocated), card %d bytes%s"
          % (flow, sorted(data), peak, len(cards[0].get()), " (failed step)" if failed else ""))
PY
# a flow first run with the reference's extension alone, then with rt's:
# the reference's snapshot is read into rt's historical_stats
mkdir "$T/mixed" && cp "$R/examples/metaflow/1-minimal.py" "$T/mixed/"
cd "$T/mixed"
export RT_STORE="$T/mixed/store"
PYTHONPATH="${MFP:+$MFP:}$R/src" "$PY" 1-minimal.py --no-pylint run > ref.log 2>&1 || { tail -20 ref.log; exit 1; }
"$PY" 1-minimal.py --no-pylint run > rt.log 2>&1 || { tail -20 rt.log; exit 1; }
"$PY" - <<'PY'
from metaflow import Flow
runs = list(Flow("MinimalFlow").runs())
newest = next(iter(runs[0]["do_heavy_computation"].tasks())).data.resource_tracker_data
oldest = next(iter(runs[-1]["do_heavy_computation"].tasks())).data.resource_tracker_data
assert "rt" in newest and "rt" not in oldest, "the first run was the reference's, the second rt's"
hist = newest["historical_stats"]
assert len(hist) == 1 and hist[0]["process_memory_mib"]["max"] >= 400, hist
print("the reference's run read into rt's history: peak %.0f MiB" % hist[0]["process_memory_mib"]["max"])
PY
# both extensions installed: rt's says which @track_resources runs
PYTHONPATH="$PYTHONPATH:$R/src" "$PY" 1-minimal.py --no-pylint run > both.log 2>&1 || { tail -20 both.log; exit 1; }
[ "$(grep -c '^rt: @track_resources is' both.log)" -eq 1 ] || { echo "which decorator runs: not said once"; tail -20 both.log; exit 1; }
grep '^rt: @track_resources is' both.log
