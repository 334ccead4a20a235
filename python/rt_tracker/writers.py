"""ProcessTracker and SystemTracker: the reference's CSV writers, sampled by rt.

The reference's two classes sample in Python and write one CSV row per
interval to stdout or output_file until they are stopped (Ctrl-C, a
signal). These run one `rt-recorder` (its CSV on a pipe, its run in a
temporary store) and write its process or system columns, with the
reference's names (rt's `process_`/`system_` prefix taken off). Python only
copies lines; nothing is sampled here.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

from .tracker import _HOW, RtMissingWarning, _die_with_parent, find_binary

__all__ = ["ProcessTracker", "SystemTracker"]


class _CsvWriter:
    _prefix = None  # "process_" or "system_"

    def __init__(self, start_time=None, interval=1, autostart=True, output_file=None):
        self.interval = float(interval)
        self.start_time = time.time() if start_time is None else start_time
        self.status = "running"
        self.cycle = 0
        if autostart:
            if self.start_time > time.time():
                time.sleep(self.start_time - time.time())
            self.start_tracking(output_file)

    def __call__(self):
        """Callable, as the reference's (does nothing)."""

    def _args(self):
        return []

    def _ended(self):
        return False

    def _columns(self, header):
        """Indexes and names of the columns written: timestamp, then this
        tracker's own, prefix taken off."""
        keep = [(i, c) for i, c in enumerate(header) if c == "timestamp"]
        keep += [(i, c[len(self._prefix):]) for i, c in enumerate(header)
                 if c.startswith(self._prefix)]
        return keep

    def start_tracking(self, output_file=None, print_header=True):
        """Write a CSV row per interval until interrupted (KeyboardInterrupt,
        or the tracked process ends). Without rt: one warning, no rows."""
        rec = find_binary("rt-recorder")
        if not rec:
            warnings.warn("rt_tracker: rt-recorder was not found (%s); nothing is written" % _HOW,
                          RtMissingWarning, stacklevel=2)
            return
        store = tempfile.mkdtemp(prefix="rt-writer-")
        out = open(output_file, "wb") if output_file else None
        sink = out if out is not None else _stdout_buffer()
        cmd = [rec, "-i", "%g" % self.interval, "-f", "csv", "-o", "/dev/stdout",
               "--store", store] + self._args()
        proc = None
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=_die_with_parent)
            keep = None
            for line in proc.stdout:
                fields = line.rstrip(b"\r\n").split(b",")
                if keep is None:
                    keep = self._columns([f.decode() for f in fields])
                    if print_header:
                        sink.write(b",".join(n.encode() for _, n in keep) + b"\n")
                else:
                    self.cycle += 1
                    sink.write(b",".join(fields[i] if i < len(fields) else b"" for i, _ in keep)
                               + b"\n")
                sink.flush()
                if self._ended():
                    self.status = "exited"
                    break
        except KeyboardInterrupt:
            pass
        except OSError as e:
            warnings.warn("rt_tracker: cannot run rt-recorder (%s)" % e, RtMissingWarning,
                          stacklevel=2)
        finally:
            if self.status == "running":
                self.status = "stopped"
            if proc is not None:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                proc.stdout.close()
            if out is not None:
                out.close()
            shutil.rmtree(store, True)


def _stdout_buffer():
    return sys.stdout.buffer


class ProcessTracker(_CsvWriter):
    """CSV rows of a process tree (rt tracks the whole tree: `children` is
    accepted and the tree is always followed): timestamp, pid, children,
    utime, stime, cpu_usage, memory_mib (PSS), disk_read_bytes,
    disk_write_bytes, gpu_usage, gpu_vram_mib, gpu_utilized. It ends when the
    process does."""

    _prefix = "process_"

    def __init__(self, pid=None, start_time=None, interval=1, children=True, autostart=True,
                 output_file=None):
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        super().__init__(start_time, interval, autostart, output_file)

    def _args(self):
        return ["--pid", str(self.pid)]

    def _ended(self):
        """The process is gone or a zombie (rt-recorder --pid runs on, as
        the reference CLI does: the writer stops)."""
        try:
            with open("/proc/%d/stat" % self.pid, "rb") as f:
                st = f.read()
            return st[st.rindex(b")") + 2:st.rindex(b")") + 3] in (b"Z", b"X")
        except (OSError, ValueError):
            return True


class SystemTracker(_CsvWriter):
    """CSV rows of the host: timestamp, processes, utime, stime, cpu_usage,
    memory_*_mib, disk bytes and space, net bytes, gpu_usage, gpu_vram_mib,
    gpu_utilized."""

    _prefix = "system_"
