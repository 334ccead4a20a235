#!/bin/sh
# rt_tracker, the Python package (python/): installed with pip into a venv
# offline (its own build backend: nothing to fetch), then its
# pytest suite (python/tests) against this build's binaries on PATH: the API
# round trip, numbers equal to the CLI's, a fork pool's PSS against
# smaps_rollup, a missing binary, a killed recorder, no orphan left.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -c 'import pytest, venv' 2> /dev/null || fail "python3-pytest and python3-venv are needed (tools/setup.sh installs them)"
cp -r "$HERE/python" "$T/src"
# pip install ./python offline into a plain venv: no system packages, no
# setuptools or wheel, build isolation on, no index: the build backend is
# the package's own (python/_build, standard library only). With
# setuptools' backend this failed: "invalid command 'bdist_wheel'"
"$PY" -m venv "$T/plain" || fail "python3 -m venv"
"$T/plain/bin/python" -m pip uninstall -q -y setuptools wheel > /dev/null 2>&1 || true
"$T/plain/bin/python" -m pip install -q --no-index "$T/src" > "$T/plain.log" 2>&1 ||
	fail "pip install ./python in a plain venv: $(tail -3 "$T/plain.log")"
(cd "$T" && "$T/plain/bin/python" -c 'import rt_tracker, sys; assert rt_tracker.__file__.startswith(sys.prefix), rt_tracker.__file__') ||
	fail "rt_tracker is not importable from the plain venv"
"$T/plain/bin/python" -m pip install -q --no-index -e "$T/src" > "$T/plain.log" 2>&1 ||
	fail "pip install -e ./python: $(tail -3 "$T/plain.log")"
(cd "$T" && "$T/plain/bin/python" -c 'import rt_tracker; assert rt_tracker.__file__.startswith("'"$T/src"'"), rt_tracker.__file__') ||
	fail "the editable install does not import from the source"
ok "pip install ./python (and -e) offline into a plain venv without setuptools or wheel"
# a venv that sees the system's pytest, for the suite
"$PY" -m venv --system-site-packages "$T/venv" || fail "python3 -m venv"
"$T/venv/bin/python" -m pip install -q --no-index "$T/src" > "$T/pip.log" 2>&1 ||
	fail "pip install ./python: $(tail -3 "$T/pip.log")"
(cd "$T" && "$T/venv/bin/python" -c 'import rt_tracker, sys; assert rt_tracker.__file__.startswith(sys.prefix), rt_tracker.__file__') ||
	fail "rt_tracker is not importable from the venv"
ok "pip install ./python into a venv, offline: rt_tracker imports from it"
# the suite, with the venv's package and this build's binaries
(cd "$T" && PATH="$BUILD:$PATH" "$T/venv/bin/python" -m pytest -q -p no:cacheprovider "$HERE/python/tests") ||
	fail "python/tests"
ok "rt_tracker: API round trip, numbers equal the CLI's, fork pool PSS, missing binary, killed recorder, no orphan"
# the reference's own ResourceTracker tests, where a checkout of it is given
# (CI reaches no GitHub: tools/reference-tests.sh says how to run them)
if [ -n "${RT_REFERENCE:-}" ]; then
	sh "$HERE/tools/reference-tests.sh" "$RT_REFERENCE" "$BUILD" > "$T/ref.log" 2>&1 ||
		fail "the reference's test_resource_tracker_* tests: $(tail -5 "$T/ref.log")"
	ok "the reference's five test_resource_tracker_* tests pass against rt_tracker"
else
	echo "note: the reference's own tests were not run (set RT_REFERENCE to a checkout of SpareCores/resource-tracker)"
fi
