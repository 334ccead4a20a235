#!/bin/sh
# rt_tracker, the Python package (python/): installed with pip into a venv
# offline (Debian's python3-pip, python3-setuptools, python3-venv), then its
# pytest suite (python/tests) against this build's binaries on PATH: the API
# round trip, numbers equal to the CLI's, a fork pool's PSS against
# smaps_rollup, a missing binary, a killed recorder, no orphan left.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -c 'import pytest, venv' 2> /dev/null || fail "python3-pytest and python3-venv are needed (tools/setup.sh installs them)"
# pip install ./python into a venv, offline (the build backend is Debian's setuptools)
"$PY" -m venv --system-site-packages "$T/venv" || fail "python3 -m venv"
cp -r "$HERE/python" "$T/src"
"$T/venv/bin/python" -m pip install -q --no-index --no-build-isolation "$T/src" > "$T/pip.log" 2>&1 ||
	fail "pip install ./python: $(tail -3 "$T/pip.log")"
(cd "$T" && "$T/venv/bin/python" -c 'import rt_tracker, sys; assert rt_tracker.__file__.startswith(sys.prefix), rt_tracker.__file__') ||
	fail "rt_tracker is not importable from the venv"
ok "pip install ./python into a venv, offline: rt_tracker imports from it"
# the suite, with the venv's package and this build's binaries
(cd "$T" && PATH="$BUILD:$PATH" "$T/venv/bin/python" -m pytest -q -p no:cacheprovider "$HERE/python/tests") ||
	fail "python/tests"
ok "rt_tracker: API round trip, numbers equal the CLI's, fork pool PSS, missing binary, killed recorder, no orphan"
