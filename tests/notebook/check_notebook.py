"""%load_ext rt_tracker and %%track in a real IPython kernel: a notebook
made here, executed by jupyter nbconvert (Debian's python3-ipykernel), its
outputs read back. The tracked cell starts a multiprocessing pool and a
subprocess; the truth for their CPU is the kernel's own getrusage of its
reaped children, taken inside the cell. The kernel held 600 MiB before the
cell and freed it: the cell's answer must not carry that peak.

    python3 check_notebook.py WORKDIR [HTML_OUT]
"""
import json
import os
import subprocess
import sys

import nbformat

CELLS = [
    "%load_ext rt_tracker",
    # a peak of the kernel's before the tracked cell, freed
    "b = bytearray(600 << 20)\nb[::4096] = b'\\x01' * len(b[::4096])\ndel b",
    """%%track -i 0.2 --name notebook-cell
import multiprocessing as mp, resource, subprocess, time
def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return n
before = resource.getrusage(resource.RUSAGE_CHILDREN)
with mp.get_context("fork").Pool(2) as pool:
    done = pool.map(spin, [6000000, 6000000])
    pool.close()
    pool.join()
subprocess.run(["python3", "-c", "x = bytearray(100 << 20); x[::4096] = b'\\\\x01' * len(x[::4096]); import time; time.sleep(0.6)"], check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
children_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print("the cell's own output: spun", done)
"the cell's last value"
""",
    "s = rt_last.stats()\nrec = rt_last.recommend_resources()\n"
    "pm = rt_last.process_metrics\n"
    "rt_cpu = sum((r['utime'] or 0) + (r['stime'] or 0) for r in pm)\n"
    "print(json.dumps({'rt_cpu': rt_cpu, 'children_cpu': children_cpu, 'rec': dict(rec), "
    "'peak': s['process_memory_mib']['max']}))",
    "rt_last",
    "df = rt_last.process_metrics.to_pandas()\nstr(df['timestamp'].dtype), len(df)",
    "rt_last.process_metrics.head(3)",
]


def build(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.cells.insert(0, nbformat.v4.new_code_cell("import json"))
    nbformat.write(nb, path)


def outputs(cell, kind):
    """The text of every output of a cell of one MIME type (or stream)."""
    out = []
    for o in cell.get("outputs", []):
        if kind == "stream" and o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif kind in (o.get("data") or {}):
            v = o["data"][kind]
            out.append(v if isinstance(v, str) else "".join(v))
    return "\n".join(out)


def main():
    work = sys.argv[1]
    src, done = os.path.join(work, "track.ipynb"), os.path.join(work, "track.out.ipynb")
    build(src)
    p = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute",
                        "--ExecutePreprocessor.timeout=300", "--output", done, src],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    nb = nbformat.read(done, as_version=4)
    cells = nb.cells
    tracked = cells[3]
    text, page = outputs(tracked, "stream"), outputs(tracked, "text/html")
    assert "the cell's own output: spun [6000000, 6000000]" in text, text
    assert "the cell's last value" in outputs(tracked, "text/plain"), tracked["outputs"]
    assert "<b>rt</b>: used" in page and "recommended: <b>" in page and "<svg" in page, page
    figures = json.loads(outputs(cells[4], "stream").strip().splitlines()[-1])
    # the pool's and the subprocess's CPU counted: at least what the kernel
    # reaped from them, at most that and a second of the kernel's own
    assert figures["children_cpu"] >= 0.4, figures  # two workers' fixed work
    assert figures["children_cpu"] * 0.97 <= figures["rt_cpu"] <= figures["children_cpu"] + 1.0, \
        figures
    # the 600 MiB the kernel held before the cell is not the cell's peak
    assert figures["rec"]["memory"] <= 512 and figures["peak"] < 400, figures
    assert "<b>ResourceTracker</b> (rt): stopped" in outputs(cells[5], "text/html"), cells[5]
    assert "datetime64[ns, UTC]" in outputs(cells[6], "text/plain"), cells[6]["outputs"]
    assert "Table with 3 rows" in outputs(cells[7], "text/html"), cells[7]["outputs"]
    if len(sys.argv) > 2:
        subprocess.run(["jupyter", "nbconvert", "--to", "html", "--output", sys.argv[2], done],
                       capture_output=True, check=True, timeout=120)
    print("%%%%track: pool and subprocess CPU %.2f s by rt, %.2f s reaped by the kernel; "
          "recommended %s; peak %.0f MiB after a 600 MiB pre-peak"
          % (figures["rt_cpu"], figures["children_cpu"], figures["rec"], figures["peak"]))


if __name__ == "__main__":
    main()
