"""A GPU job with known phases (PyTorch): an idle context, steady busy, a
bursty phase (busy 300 ms of each second), two spawned children on the
GPU. Writes its events and pids as JSON lines to $GPU_JOB_LOG."""
import json
import os
import sys
import time

import torch
import torch.multiprocessing as mp


def log(ev, **kw):
    kw.update(ev=ev, t=time.time(), pid=os.getpid())
    with open(os.environ["GPU_JOB_LOG"], "a") as f:
        f.write(json.dumps(kw) + "\n")


def busy_for(a, secs):
    end = time.time() + secs
    while time.time() < end:
        for _ in range(4):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()
    return a


def child(secs):
    x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    log("child_start")
    busy_for(a, secs)
    log("child_end")
    del x


def main():
    torch.cuda.init()
    x = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    log("idle_start")
    time.sleep(5)
    log("steady_start")
    a = busy_for(a, 8)
    log("bursty_start")
    for _ in range(8):
        t = time.time()
        a = busy_for(a, 0.3)
        time.sleep(max(0, 1 - (time.time() - t)))
    log("children_start")
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=child, args=(6,)) for _ in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    log("end")
    del x
    return 0


if __name__ == "__main__":
    sys.exit(main())
