#!/bin/sh
# @track_resources in real Metaflow flows (tools/metaflow-tests.sh): a
# minimal step, a fork pool, a failing step, a foreach, a step with the
# user's own @card, three runs for the history. Metaflow is not in the
# registries CI reaches: this runs where `import metaflow` works, or where
# RT_METAFLOW names a checkout of Netflix/metaflow (and RT_REFERENCE one of
# SpareCores/resource-tracker, for its own example flows); else it says so
# and is skipped.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
MF=${RT_METAFLOW:-}
if [ -z "$MF" ]; then
	if "$PY" -c 'import metaflow' 2> /dev/null; then
		MF=-
	else
		echo "skip: metaflow is not installed here (set RT_METAFLOW to a checkout of Netflix/metaflow)"
		exit 77
	fi
fi
"$PY" -c 'import pytest' 2> /dev/null || fail "python3-pytest is needed (tools/setup.sh installs it)"
sh "$HERE/tools/metaflow-tests.sh" "$MF" "$BUILD" ${RT_REFERENCE:+"$RT_REFERENCE"} > "$T/mf.log" 2>&1 ||
	fail "the Metaflow flows: $(tail -30 "$T/mf.log")"
tail -3 "$T/mf.log"
ok "@track_resources: artifact, run, card, history, fork pool, failed step, foreach, the user's card"
