"""The tree's GPU busy per interval, from the fake NVML's schedule (the truth
it_gpu.sh checks rt against), beside what rt recorded.

usage: gpu_truth.py RUN.jsonl PIDS_FILE [PHASE_MS]

PIDS_FILE holds the fake's processes, "pid:dev:vram_mib:sm:on_ms:period_ms:who"
with who "tree" or "other". NVML's samples fall every 200 ms at PHASE_MS past
(default 37); a sample's SM % is sm, or sm during the first on_ms of every
period_ms (of epoch ms) and 0 else. The truth of an interval (prev, cur] is,
per GPU, the mean over the samples that fall in it of the tree's processes'
SM % (at most 100); intervals with no sample, the first (processes starting)
and the last (processes ending) are not judged. A line without GPU figures
(the driver did not answer in time) leaves its samples to the next line. Prints one line per judged
interval and per GPU, and exits 1 when rt is off by more than 0.05 GPUs.
"""
import json
import sys


def procs(path):
    out = []
    for line in open(path):
        f = line.strip().split(":")
        if len(f) >= 7:
            out.append(dict(pid=int(f[0]), dev=int(f[1]), sm=int(f[3]), on=int(f[4]),
                            period=int(f[5]), tree=f[6] == "tree"))
    return out


def sm_at(p, t_us):
    if not p["period"]:
        return p["sm"]
    return p["sm"] if (t_us // 1000) % p["period"] < p["on"] else 0


def grid(a_us, b_us, phase_us):
    """NVML's sample times in (a, b]."""
    t = b_us - ((b_us - phase_us) % 200000)
    out = []
    while t > a_us:
        out.append(t)
        t -= 200000
    return out


def truth(ps, dev, a_us, b_us, phase_us):
    ts = grid(a_us, b_us, phase_us)
    if not ts:
        return None
    vals = [min(100, sum(sm_at(p, t) for p in ps if p["tree"] and p["dev"] == dev)) for t in ts]
    return sum(vals) / len(vals) / 100.0


def main():
    lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    ps = procs(sys.argv[2])
    phase = int(sys.argv[3]) * 1000 if len(sys.argv) > 3 else 37000
    devs = sorted({p["dev"] for p in ps if p["tree"]})
    bad = judged = 0
    worst = 0.0
    # a line with no GPU figures (a driver call that did not answer in time)
    # leaves its samples to the next line with them
    since = {dev: lines[1]["timestamp"] for dev in devs}
    for cur in lines[2:-1]:
        total_t = total_rt = 0.0
        complete = True
        for dev in devs:
            a, b = round(since[dev] * 1e6), round(cur["timestamp"] * 1e6)
            t = truth(ps, dev, a, b, phase)
            g = cur["gpu"][dev] if dev < len(cur["gpu"]) else {}
            got = g.get("process_usage")
            if got is not None:
                since[dev] = cur["timestamp"]
            if t is None or got is None:
                complete = False
                continue
            judged += 1
            err = abs(got - t)
            worst = max(worst, err)
            total_t += t
            total_rt += got
            flag = "" if err <= 0.05 else "  <-- off"
            bad += err > 0.05
            print(f"{cur['timestamp']:.3f} gpu{dev} rt {got:.3f} truth {t:.3f}{flag}")
        if complete and abs(cur["cpu"]["process_gpu_usage"] - total_t) > 0.05 + 1e-9:
            print(f"{cur['timestamp']:.3f} process_gpu_usage {cur['cpu']['process_gpu_usage']} "
                  f"truth {total_t:.3f}  <-- off")
            bad += 1
    print(f"judged {judged} interval-GPUs, worst error {worst:.3f} GPUs, {bad} off by > 0.05")
    sys.exit(1 if bad or not judged else 0)


main()
