"""rt's GPU figures against the watcher's NVML readings (the truth).

usage: check.py DIR INTERVAL
DIR holds rt.jsonl (rt's lines), watch.jsonl (watch.py), job.log (job.py's
events and pids), noise.pid, reco.json (rt-export recommend --json) and
summary.json (rt-export summary --json). Prints a table per phase and
exits 1 when a check fails:
  - the job's busy per interval within 0.05 GPUs of the truth: the job's
    processes' NVML samples that fall in the interval, summed over the
    number of NVML periods sampled (judged only for intervals inside one
    phase, where every process of the job was there all along);
  - the job's VRAM equal to the sum of its processes' (never the outside
    process's) at the watcher's reading nearest in time;
  - the device gauges against the watcher's reading nearest in time;
  - the answer: at least one GPU, its peak VRAM on one GPU + 20 %,
    the model named.
"""
import json
import os
import sys


def load(d, name):
    return [json.loads(l) for l in open(os.path.join(d, name)) if l.strip()]


def round_memory(mib):
    for step in (128, 256, 512, 1024, 2048):
        if mib <= step:
            return step
    return int(-(-mib // 1024) * 1024)


def phases(events):
    order = [(e["ev"], e["t"]) for e in events if e["ev"] in
             ("idle_start", "steady_start", "bursty_start", "children_start", "end")]
    order.sort(key=lambda x: x[1])
    return order


def phase_of(a, b, order):
    """The phase holding the whole of (a, b], else None (a boundary)."""
    for (name, t0), (_, t1) in zip(order, order[1:]):
        if t0 + 0.3 <= a and b <= t1 - 0.3:
            return name
    return None


def truth_busy(watch, pids, dev, a, b):
    per = {}
    for w in watch:
        if w["gpu"] != dev:
            continue
        for pid, ts, sm in w["samples"]:
            if a * 1e6 < ts <= b * 1e6:
                per.setdefault(pid, set()).add((ts, sm))
    if not per:
        return None
    periods = max(len(v) for v in per.values())
    # one GPU is at most 1 busy: processes' SM % can add up past 100 (two
    # time-slicing children read 165 on an H200)
    return min(1.0, sum(sm for pid, v in per.items() if pid in pids for _, sm in v) / periods / 100)


def nearest(watch, dev, t):
    ws = [w for w in watch if w["gpu"] == dev]
    return min(ws, key=lambda w: abs(w["t"] - t)) if ws else None


def around(watch, dev, t, key, dt=0.25):
    """The watcher's readings of key within dt of t: (lowest, highest)."""
    vs = [w[key] for w in watch if w["gpu"] == dev and abs(w["t"] - t) <= dt and key in w]
    return (min(vs), max(vs)) if vs else None


def main():
    d, interval = sys.argv[1], sys.argv[2]
    rt, watch, job = load(d, "rt.jsonl"), load(d, "watch.jsonl"), load(d, "job.log")
    noise = int(open(os.path.join(d, "noise.pid")).read())
    pids = {e["pid"] for e in job}
    order = phases(job)
    bad, rows = [], {}
    last = rt[-1]["timestamp"] if rt else 0
    for prev, cur in zip(rt, rt[1:]):
        a, b = prev["timestamp"], cur["timestamp"]
        for dev, g in enumerate(cur["gpu"]):
            if g.get("process_usage") is None:
                continue
            ph = phase_of(a, b, order)
            t = truth_busy(watch, pids, dev, a, b)
            if ph and t is not None:
                err = abs(g["process_usage"] - t)
                rows.setdefault(ph, []).append((g["process_usage"], t, err))
                if err > 0.05:
                    bad.append("busy %s at %.1f: rt %.3f, truth %.3f" % (ph, b, g["process_usage"], t))
            w = nearest(watch, dev, b)
            # the last line is taken as the job's processes tear down
            if w and abs(w["t"] - b) < 0.06 and b < last:
                # the job's VRAM within what its processes held around that
                # moment (an allocation changes between two readings 60 ms apart)
                near = [sum(v for p, v in x["procs"].items() if int(p) in pids) for x in watch
                        if x["gpu"] == dev and abs(x["t"] - b) <= 0.1]
                mine = g["process_vram_mib"] * 2**20
                if near and max(near) and not min(near) * 0.98 <= mine <= max(near) * 1.02:
                    bad.append("VRAM at %.1f: rt %.0f MiB, the job's processes %.0f-%.0f MiB"
                               % (b, g["process_vram_mib"], min(near) / 2**20, max(near) / 2**20))
                mr = around(watch, dev, b, "mem_used", 0.1)
                if mr and not mr[0] * 0.98 <= g["vram_used_bytes"] <= mr[1] * 1.02:
                    bad.append("device VRAM at %.1f: rt %d, watcher %d-%d within 0.1 s"
                               % (b, g["vram_used_bytes"], mr[0], mr[1]))
                tr = around(watch, dev, b, "temp")
                tc = g["temperature_celsius"]
                if tc is not None and tr and not tr[0] - 1 <= tc <= tr[1] + 1:
                    bad.append("temperature at %.1f: rt %s, watcher %s-%s within 0.25 s" % (b, tc, tr[0], tr[1]))
    summary = json.load(open(os.path.join(d, "summary.json")))
    model = (summary.get("gpus") or [{}])[0].get("name", "?")
    print("%s, -i %s: the job's busy against the truth, per phase" % (model, interval))
    print("%-16s %6s %10s %10s %10s" % ("phase", "lines", "rt mean", "truth", "worst err"))
    for ph, r in rows.items():
        print("%-16s %6d %10.3f %10.3f %10.3f" % (ph, len(r), sum(x[0] for x in r) / len(r),
                                                  sum(x[1] for x in r) / len(r), max(x[2] for x in r)))
    reco = json.load(open(os.path.join(d, "reco.json")))["recommendation"]
    peak = max((sum(v for p, v in w["procs"].items() if int(p) in pids) for w in watch), default=0)
    want_vram = round_memory(peak / 2**20 * 1.2)
    print("recommended: %d GPU(s), %d MiB VRAM (the watcher's peak on one GPU %.0f MiB + 20 %%: %d)"
          % (reco["gpu"], reco["vram_mib"], peak / 2**20, want_vram))
    if reco["gpu"] < 1:
        bad.append("a job that saturated a GPU was recommended no GPU")
    if reco["vram_mib"] not in (want_vram, round_memory(peak / 2**20 * 1.2 * 0.98)):
        bad.append("VRAM recommended %d MiB, want %d" % (reco["vram_mib"], want_vram))
    names = [g["name"] for g in summary.get("gpus", []) if g.get("job_used")]
    if not names:
        bad.append("the summary names no GPU the job ran on")
    if noise in pids:
        bad.append("the outside process is in the job's log")
    for b in bad[:20]:
        print("FAIL:", b)
    sys.exit(1 if bad or not rows else 0)


main()
