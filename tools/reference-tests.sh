#!/bin/sh
# The Python reference's own ResourceTracker tests, run against rt_tracker.
#
#   sh tools/reference-tests.sh REFERENCE [BUILD]
#
# REFERENCE: a checkout, or a bare git directory, of
# SpareCores/resource-tracker (the Python package rt_tracker stands in for).
# Its tests/test_tracker.py is taken as it is, with two imports changed:
# `from resource_tracker import ResourceTracker` becomes rt_tracker's, and its
# dummy_workloads module (the CPU burner the tests wait with) is imported from
# beside the file. Only the five test_resource_tracker_* tests run: the others
# compare the reference's own procfs and psutil samplers with each other.
# Then its tests/test_tiny_dataframe.py, whole (the reference's TinyDataFrame
# and StatSpec, from rt_tracker.tiny_data_frame).
# Nothing of the reference is kept in this repository: the files are copied
# into a temporary directory and removed. BUILD: where rt-recorder and
# rt-export are (default: build). Needs pytest (Debian's python3-pytest).
set -eu
[ $# -ge 1 ] || { echo "usage: sh tools/reference-tests.sh REFERENCE [BUILD]" >&2; exit 2; }
REF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${2:-$HERE/build}" && pwd)
[ -x "$BUILD/rt-recorder" ] && [ -x "$BUILD/rt-export" ] ||
	{ echo "reference-tests: no rt-recorder and rt-export in $BUILD: build first (cmake --build build)" >&2; exit 2; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
"$PY" -c 'import pytest' 2> /dev/null ||
	{ echo "reference-tests: pytest is needed (apt-get install python3-pytest)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# one file of the reference, from a work tree or from git
ref_file() {
	for p in "$@"; do
		[ -f "$REF/$p" ] && { cat "$REF/$p"; return 0; }
		git --git-dir="$REF" show "HEAD:$p" 2> /dev/null && return 0
		git -C "$REF" show "HEAD:$p" 2> /dev/null && return 0
	done
	echo "reference-tests: $REF has none of: $*" >&2
	return 1
}
ref_file tests/test_tracker.py > "$T/test_tracker.py"
ref_file src/resource_tracker/dummy_workloads.py resource_tracker/dummy_workloads.py > "$T/dummy_workloads.py"
sed -i 's/^from resource_tracker\.dummy_workloads import/from dummy_workloads import/;
	s/from resource_tracker import ResourceTracker/from rt_tracker import ResourceTracker/' "$T/test_tracker.py"
grep -q 'from rt_tracker import ResourceTracker' "$T/test_tracker.py" ||
	{ echo "reference-tests: the reference's tests no longer import ResourceTracker as expected" >&2; exit 1; }
mkdir "$T/bin"
ln -s "$BUILD/rt-recorder" "$BUILD/rt-export" "$T/bin/"
cd "$T"
PATH="$T/bin:$PATH" PYTHONPATH="$HERE/python:$T" "$PY" -m pytest -v -p no:cacheprovider \
	-k test_resource_tracker_ test_tracker.py
# its tests/test_tiny_dataframe.py, whole, against rt_tracker.tiny_data_frame
# (the module path and the names it patches there rewritten)
ref_file tests/test_tiny_dataframe.py > "$T/test_tiny_dataframe.py"
sed -i 's/resource_tracker\.tiny_data_frame/rt_tracker.tiny_data_frame/g' "$T/test_tiny_dataframe.py"
PYTHONPATH="$HERE/python" "$PY" -m pytest -v -p no:cacheprovider test_tiny_dataframe.py
