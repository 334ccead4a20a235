#!/bin/sh
# rt in Jupyter (issue 53 item 5): a notebook executed by jupyter nbconvert
# in a real IPython kernel (Debian's python3-ipykernel): %load_ext
# rt_tracker, %%track over a cell that starts a multiprocessing pool and a
# subprocess (their CPU against what the kernel reaped from them), the
# answer and chart under the cell, after a 600 MiB peak of the kernel's
# freed before it; the tracker's, a table's HTML views, to_pandas().
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
command -v jupyter > /dev/null 2>&1 && "$PY" -c 'import ipykernel, nbformat, pandas' 2> /dev/null ||
	fail "jupyter-nbconvert, python3-ipykernel and python3-pandas are needed (tools/test.sh installs them)"
mkdir "$T/nb"
(cd "$T/nb" && PATH="$BUILD:$PATH" PYTHONPATH="$HERE/python" RT_STORE="$T/nbstore" \
	"$PY" "$HERE/tests/notebook/check_notebook.py" "$T/nb" > "$T/nb.out" 2>&1) ||
	fail "the notebook: $(tail -15 "$T/nb.out")"
ok "$(tail -1 "$T/nb.out")"
