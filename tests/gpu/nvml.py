"""NVML through ctypes (no nvidia-ml-py needed): what the real-GPU check's
watcher reads, sized as NVML asks. The watcher's own code, independent of
rt's."""
import ctypes
import os

NOT_FOUND, INSUFFICIENT_SIZE = 6, 7


class Util(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


class PUtil(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("ts", ctypes.c_ulonglong), ("sm", ctypes.c_uint),
                ("mem", ctypes.c_uint), ("enc", ctypes.c_uint), ("dec", ctypes.c_uint)]


class Nvml:
    def __init__(self):
        # RT_NVML_LIBRARY: the same testing aid as rt's (the fake NVML)
        self.lib = ctypes.CDLL(os.environ.get("RT_NVML_LIBRARY") or "libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit failed")
        n = ctypes.c_uint(0)
        self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n))
        self.handles = []
        for i in range(n.value):
            h = ctypes.c_void_p()
            if self.lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0:
                self.handles.append(h)
        self.last = [0] * len(self.handles)

    def name(self, i):
        b = ctypes.create_string_buffer(96)
        self.lib.nvmlDeviceGetName(self.handles[i], b, 96)
        return b.value.decode()

    def gauges(self, i):
        h, u, m, v = self.handles[i], Util(), Mem(), ctypes.c_uint()
        out = {}
        if self.lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)) == 0:
            out["util"] = u.gpu
        if self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)) == 0:
            out["mem_used"] = m.used
        if self.lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(v)) == 0:
            out["power_mw"] = v.value
        if self.lib.nvmlDeviceGetTemperature(h, 0, ctypes.byref(v)) == 0:
            out["temp"] = v.value
        if self.lib.nvmlDeviceGetClockInfo(h, 0, ctypes.byref(v)) == 0:
            out["clock"] = v.value
        return out

    def procs(self, i):
        """{pid: VRAM bytes} of the compute list."""
        n = ctypes.c_uint(0)
        rc = self.lib.nvmlDeviceGetComputeRunningProcesses_v3(self.handles[i], ctypes.byref(n), None)
        if rc not in (0, INSUFFICIENT_SIZE):
            return {}
        n = ctypes.c_uint(n.value + 16)
        buf = (Proc * n.value)()
        if self.lib.nvmlDeviceGetComputeRunningProcesses_v3(self.handles[i], ctypes.byref(n), buf):
            return {}
        return {p.pid: p.used for p in buf[:n.value]}

    def putil(self, i):
        """Each process's samples newer than the last taken: [(pid, ts_us, sm)]."""
        n = ctypes.c_uint(0)
        self.lib.nvmlDeviceGetProcessUtilization(self.handles[i], None, ctypes.byref(n),
                                                 ctypes.c_ulonglong(self.last[i]))
        n = ctypes.c_uint(max(n.value, 72) + 16)
        buf = (PUtil * n.value)()
        rc = self.lib.nvmlDeviceGetProcessUtilization(self.handles[i], buf, ctypes.byref(n),
                                                      ctypes.c_ulonglong(self.last[i]))
        if rc != 0:
            return []
        out = [(s.pid, s.ts, s.sm) for s in buf[:n.value] if s.ts > self.last[i]]
        if out:
            self.last[i] = max(s[1] for s in out)
        return out


def gpu_count():
    try:
        return len(Nvml().handles)
    except OSError:
        return 0
