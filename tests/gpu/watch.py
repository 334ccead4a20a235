"""The truth: NVML read every 100 ms (twice per NVML period, so no process
sample is missed) until SECS pass. usage: watch.py OUT SECS"""
import json
import sys
import time

from nvml import Nvml

nv = Nvml()
end = time.time() + float(sys.argv[2])
with open(sys.argv[1], "w") as out:
    while time.time() < end:
        t = time.time()
        for i in range(len(nv.handles)):
            out.write(json.dumps(dict(t=t, gpu=i, **nv.gauges(i), procs=nv.procs(i),
                                      samples=nv.putil(i))) + "\n")
        out.flush()
        time.sleep(max(0, 0.1 - (time.time() - t)))
