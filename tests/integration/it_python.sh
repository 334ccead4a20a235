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
# (RT_BUILD: the wheel carries this build's programs; a copy of python/
# has no rt sources around it to build them from)
export RT_BUILD="$BUILD"
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
# pip gives the commands: resource-tracker, rt-recorder and rt-export on the
# venv's PATH with nothing else set, each the program itself (exec: the
# wrapped job's exit code is the command's), and python -m rt_tracker
V="$T/venv/bin"
(cd "$T" && env -i HOME="$T" PATH="$V:/usr/bin:/bin" RT_IMDS_ADDR=127.0.0.1:1 RT_STORE="$T/pipstore" \
	RT_SHM_DIR="$RT_SHM_DIR" sh -c '
set -eu
[ "$(command -v resource-tracker)" = "$0/resource-tracker" ] || { echo "not on PATH"; exit 1; }
resource-tracker --version | grep -q "^resource-tracker " || { echo "no version"; exit 1; }
set +e; resource-tracker --quiet -i 0.2 -- sh -c "sleep 0.5; exit 4"; rc=$?; set -e
[ $rc -eq 4 ] || { echo "the job exit 4 came back as $rc"; exit 1; }
rt-recorder --version > /dev/null
python -m rt_tracker --quiet -i 0.2 -- true
own=$(python -c "import os, rt_tracker; print(os.path.dirname(rt_tracker.__file__))")/bin
[ "$(python -m rt_tracker --prefix)" = "$own" ] || { echo "--prefix: $(python -m rt_tracker --prefix)"; exit 1; }
[ "$(rt-export runs | grep -cE " (failed|finished) ")" -eq 2 ] || { rt-export runs; exit 1; }
[ "$(python -m rt_tracker rt-export runs | grep -cE " (failed|finished) ")" -eq 2 ]' "$V") > "$T/cmds.out" 2>&1 ||
	fail "the commands pip installs: $(cat "$T/cmds.out")"
# an install without the programs (the editable one of a copy with no
# build beside it) says so in one line: its command never runs itself
set +e
env -i HOME="$T" PATH="$T/plain/bin:/usr/bin:/bin" "$T/plain/bin/resource-tracker" --version > "$T/none.out" 2>&1
rc=$?
set -e
[ $rc -eq 127 ] && [ "$(wc -l < "$T/none.out")" -eq 1 ] && grep -q "rt's programs are not in this install" "$T/none.out" ||
	fail "a command without rt's programs: exit $rc, $(cat "$T/none.out")"
ok "pip puts resource-tracker, rt-recorder and rt-export on the venv's PATH (the job's exit code passes), python -m rt_tracker runs and --prefix finds them; without the programs: one line, exit 127"
# pip install ./python from the clone itself just works (issue 46 item 3):
# it builds rt's programs into the package (./build, configured by the
# README's first command: an incremental build), the same as ./build's, and
# the tracker needs no PATH, RT_PREFIX or anything else
unset RT_BUILD
if [ -f "$HERE/build/CMakeCache.txt" ]; then
	"$PY" -m venv "$T/fresh" || fail "python3 -m venv"
	"$T/fresh/bin/python" -m pip install -q --no-index "$HERE/python" > "$T/fresh.log" 2>&1 ||
		fail "pip install ./python from the clone: $(tail -5 "$T/fresh.log")"
	own=$("$T/fresh/bin/python" -c 'import os, rt_tracker; print(os.path.dirname(rt_tracker.__file__))')/bin
	for p in rt-recorder rt-export rt-export-full; do
		cmp -s "$own/$p" "$HERE/build/$p" || fail "the package's $p is not ./build's"
	done
	# (it_ldd's rule: libpthread is part of libc since glibc 2.34)
	libs=$(ldd "$own/rt-recorder" | awk '{print $1}' | grep -v -e '^linux-vdso' -e 'ld-linux' -e '^libpthread' | sed 's/\.so.*//' | sort | tr '\n' ' ')
	[ "$libs" = "libc liblmdb " ] || fail "the package's rt-recorder links: $libs"
	(cd "$T" && env -i HOME="$T" PATH=/usr/bin:/bin RT_IMDS_ADDR=127.0.0.1:1 "$T/fresh/bin/python" -W error::RuntimeWarning -c '
import time, rt_tracker
t = rt_tracker.ResourceTracker(interval=0.2)
t.start(); block = bytearray(64 << 20); time.sleep(1.0); t.stop()
assert rt_tracker.find_binary("rt-recorder").startswith(rt_tracker.__file__.rsplit("/", 1)[0]), rt_tracker.find_binary("rt-recorder")
assert t.stats()["process_memory_mib"]["max"] >= 60, t.stats()') > "$T/fresh.out" 2>&1 ||
		fail "the pip-installed tracker with nothing set: $(tail -5 "$T/fresh.out")"
	ok "pip install ./python from the clone: rt's programs built into the package (./build's, recorder links libc and liblmdb only), a tracker with nothing set"
	# without the build packages the install stops with one line naming them
	mkdir "$T/nopath"
	if PATH="$T/nopath" "$T/fresh/bin/python" -m pip install -q --no-index --force-reinstall "$HERE/python" > "$T/nopkg.log" 2>&1; then
		fail "pip install without cmake or a compiler succeeded"
	fi
	grep -q "rt_tracker: cannot build rt's programs, these Debian packages are missing: cmake build-essential pkg-config protobuf-c-compiler (sudo apt-get install" "$T/nopkg.log" ||
		fail "no line naming the missing packages: $(tail -5 "$T/nopkg.log")"
	ok "pip install without the build packages: one line naming them"
fi
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
