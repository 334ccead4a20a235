#!/usr/bin/env python3
"""bench_python.py - what tracking costs a Python program, side by side:
rt_tracker (this repository's python/) against the reference package
resource-tracker run from its public source, in one run on one host.

    PATH=build:$PATH python3 tools/bench_python.py REFERENCE_SRC [SECONDS]

REFERENCE_SRC is the reference's `src` directory (a checkout of
SpareCores/resource-tracker; nothing of it is kept here). For each, a
program tracked at 1 Hz for SECONDS (default 30) while it idles: the CPU
the tracker's own processes used per sample (their /proc stat, utime +
stime, over the samples taken), their PSS at the end (smaps_rollup), and
how long start() and stop() took in the program.
"""
import os
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_secs(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    f = s[s.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / HZ


def sched_secs(pid):
    """Time on a CPU, ns-exact (schedstat), of every thread of pid."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
            total += int(f.read().split()[0])
    return total / 1e9


def pss_kib(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


CHILD = r'''
import os, sys, time, json
which, secs = sys.argv[1], float(sys.argv[2])
if which == "rt":
    sys.path.insert(0, sys.argv[3])
    from rt_tracker import ResourceTracker
else:
    sys.path.insert(0, sys.argv[3])
    from resource_tracker import ResourceTracker
t0 = time.perf_counter()
t = ResourceTracker(interval=1, discover_server=False, discover_cloud=False)
t.start()
t_start = time.perf_counter() - t0
if which == "rt":
    pids = [t._proc.pid]
else:
    pids = [p.pid for p in (getattr(t, "process_tracker_process", None),
                            getattr(t, "system_tracker_process", None)) if p is not None]
print(json.dumps({"pids": pids}), flush=True)
time.sleep(secs)
sys.stdin.readline()          # the bench has read the trackers' figures
t0 = time.perf_counter()
n = t.n_samples
t.stop()
t_stop = time.perf_counter() - t0
print(json.dumps({"start_s": t_start, "stop_s": t_stop, "samples": n}), flush=True)
'''


def measure(which, path, secs):
    p = subprocess.Popen([sys.executable, "-c", CHILD, which, str(secs), path],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    import json
    pids = json.loads(p.stdout.readline())["pids"]
    time.sleep(secs - 0.5)
    cpu = sum(sched_secs(x) for x in pids)
    pss = sum(pss_kib(x) for x in pids)
    p.stdin.write("\n")
    p.stdin.flush()
    end = json.loads(p.stdout.readline())
    p.wait()
    n = max(1, end["samples"])
    return {"cpu_us_per_sample": cpu / n * 1e6, "pss_kib": pss, "samples": end["samples"],
            "start_ms": end["start_s"] * 1e3, "stop_ms": end["stop_s"] * 1e3,
            "processes": len(pids)}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    ref = os.path.abspath(sys.argv[1])
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    rt = measure("rt", os.path.join(HERE, "..", "python"), secs)
    rf = measure("ref", ref, secs)
    print("tracking an idle Python program at 1 Hz for %.0f s (%s)" % (secs, os.uname().release))
    print("%-34s %14s %14s %8s" % ("", "rt_tracker", "reference 0.5", "ref/rt"))
    for k, label, fmt in (("cpu_us_per_sample", "tracker CPU per sample (us)", "%14.0f"),
                          ("pss_kib", "tracker PSS (KiB)", "%14.0f"),
                          ("processes", "tracker processes", "%14d"),
                          ("samples", "samples", "%14d"),
                          ("start_ms", "start() (ms)", "%14.1f"),
                          ("stop_ms", "stop() (ms)", "%14.1f")):
        a, b = rt[k], rf[k]
        print("%-34s " % label + fmt % a + " " + fmt % b + "  %7s" % ("%.2fx" % (b / a) if a else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
