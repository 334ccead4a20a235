"""ResourceTracker: the reference package's API, measured by rt.

One `rt-recorder --pid PID` per tracker samples the process tree and the
system into its own store (a temporary directory unless store= is given);
`rt-export` reads the rows (CSV replay, live from the ring while the run
goes on), the summary, the recommendation and the report. Nothing is
sampled in Python.

It never breaks the program it tracks: when rt is missing or its recorder
dies, one warning is issued and the calls return empty tables (misuse still
raises RuntimeError, as the reference does).
"""

import atexit
import collections
import ctypes
import fcntl
import gzip
import html
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
import webbrowser
import weakref

from .table import StatSpec, Table, from_csv

__all__ = ["ResourceTracker", "Report", "RtMissingWarning", "RtBudgetWarning", "find_binary",
           "DEFAULT_STORE"]

#: values in MiB or GB sent as bytes by get_combined_metrics(bytes=True)
BYTE_COLUMNS = {
    "memory_mib": 1 << 20, "memory_free_mib": 1 << 20, "memory_used_mib": 1 << 20,
    "memory_buffers_mib": 1 << 20, "memory_cached_mib": 1 << 20,
    "memory_active_mib": 1 << 20, "memory_inactive_mib": 1 << 20, "gpu_vram_mib": 1 << 20,
    "disk_space_total_gb": 10**9, "disk_space_used_gb": 10**9, "disk_space_free_gb": 10**9,
}

#: the reference's human-friendly names
HUMAN_NAMES = {
    "timestamp": "Timestamp", "processes": "processes", "utime": "CPU time (user)",
    "stime": "CPU time (system)", "cpu_usage": "CPU usage", "memory_free_mib": "free memory",
    "memory_used_mib": "used memory", "memory_buffers_mib": "memory buffers",
    "memory_cached_mib": "memory page/file cached", "memory_active_mib": "active memory",
    "memory_inactive_mib": "inactive memory", "disk_read_bytes": "disk read",
    "disk_write_bytes": "disk write", "disk_space_total_gb": "disk space total",
    "disk_space_used_gb": "disk space used", "disk_space_free_gb": "disk space free",
    "net_recv_bytes": "inbound network traffic", "net_sent_bytes": "outbound network traffic",
    "gpu_usage": "GPU usage", "gpu_vram_mib": "VRAM used", "gpu_utilized": "GPUs in use",
    "pid": "PID", "children": "children", "memory_mib": "memory usage",
}


class RtBudgetWarning(UserWarning):
    """The tracked job went over its budget (max_memory, max_cpu)."""


class RtMissingWarning(RuntimeWarning):
    """rt's binaries are missing, or its recorder stopped: the program runs on."""


_HERE = os.path.dirname(os.path.abspath(__file__))
#: where the package's own programs are: the wheel's (pip install built
#: them), else a source tree's build beside python/ (an editable install)
_OWN = [os.path.join(_HERE, "bin")] + [
    os.path.join(os.path.dirname(os.path.dirname(_HERE)), b) for b in ("build", "build-python")]


def find_binary(name):
    """The path of rt's binary name: under $RT_PREFIX/bin (or in RT_PREFIX,
    a build directory) when set; else
    the package's own (built by pip install); else on PATH; None."""
    prefix = os.environ.get("RT_PREFIX")
    if prefix:  # an install prefix, or a build directory
        for p in (os.path.join(prefix, "bin", name), os.path.join(prefix, name)):
            if os.access(p, os.X_OK):
                return p
        return None
    for d in _OWN:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK) and os.access(os.path.join(d, "rt-export-full"), os.X_OK):
            return p
    return shutil.which(name)


_HOW = ("pip install ./python from a clone of rt builds them into the package; or "
        "install rt (cmake --install puts rt-recorder and rt-export on PATH), or set "
        "RT_PREFIX to its install prefix")


class Recommendation(collections.OrderedDict):
    """recommend_resources()'s dict, the reference's keys, and rt's word on
    it: `raised_because`, why a value is above the use measured (a peak
    between samples, CPU the job waited for, an OOM kill...), None when
    nothing raised one. An OrderedDict, shown as a dict: reticulate hands
    R a named list for it (a plain dict's subclass stays a Python object)."""

    def __init__(self, values=(), raised_because=None):  # (pickle and copy call it bare)
        super().__init__(values)
        self.raised_because = raised_because

    def __repr__(self):
        return dict.__repr__(self)


class Report(str):
    """The HTML report: text, with save() and browse(). An empty one says
    why in `error` (rt-export's own line), None otherwise."""

    error = None

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self)
        return path

    def _repr_html_(self):
        """Jupyter's view: the page in a frame of its own (its styles and
        scripts stay in it), or the error when there is none."""
        if not self:
            return "<p>rt_tracker: no report: %s</p>" % html.escape(str(self.error or ""))
        return ("<iframe srcdoc=\"%s\" style='width:100%%;height:720px;border:1px solid #ccc'>"
                "</iframe>" % html.escape(str(self), quote=True))

    def browse(self):
        fd, path = tempfile.mkstemp(prefix="rt-report-", suffix=".html")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self)
        webbrowser.open("file://" + path)
        return path


# trackers of this process: stopped at interpreter exit; a forked child
# owns none of them (it must not stop its parent's recorder)
_live = weakref.WeakSet()


def _stop_all():
    for t in list(_live):
        if t._owner == os.getpid():
            try:
                t.stop()
            except Exception:  # exit must go on
                pass


atexit.register(_stop_all)


def _die_with_parent():
    """In the recorder's child before exec: SIGTERM when the tracked
    program dies without stopping it (killed: no atexit runs)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class ResourceTracker:
    """Track the resource usage of a process tree and of the system with rt.

    The parameters are the reference's (resource-tracker 0.5.0); `method`
    is accepted and ignored (nothing is forked in Python). Beyond them:
    `store` (a directory to keep the run in; default a temporary one,
    removed when the tracker is; `DEFAULT_STORE`: rt's own default store,
    where `rt-export runs` finds it and a job's history builds up),
    `request` (what the job asked for, as rt's --request:
    "cpu=4,memory=16GiB,gpu=1"), `job_name`, `run_metadata` (the run's
    other metadata fields, as rt's flags name them: stage_name, task_name,
    orchestrator, external_run_id, project_name, ...) and `extended` (rows
    with rt's extended CSV columns).
    """

    def __init__(self, pid=None, children=True, interval=1, method=None, autostart=False,
                 track_processes=True, track_system=True, discover_server=True,
                 discover_cloud=True, sentinel_token=None, upload_interval=60,
                 streaming_metadata=None, *, store=None, request=None, job_name=None,
                 extended=False, run_metadata=None, max_memory=None, max_cpu=None):
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        self.interval = float(interval)
        self.method = method
        self.autostart = autostart
        self.track_processes = track_processes
        self.track_system = track_system
        self.discover_server = discover_server
        self.discover_cloud = discover_cloud
        self.upload_interval = upload_interval
        self.streaming_metadata = streaming_metadata
        self._token = sentinel_token or os.environ.get("SENTINEL_API_TOKEN")
        self.request = request
        self.job_name = job_name
        self.run_metadata = dict(run_metadata or {})
        # the job's budget (rt's --max-memory SIZE, --max-cpu CORES): over
        # it, stop() warns (RtBudgetWarning) and over_budget says how
        self.max_memory, self.max_cpu, self.over_budget = max_memory, max_cpu, None
        for key in self.run_metadata:
            if key not in _RUN_METADATA:
                raise ValueError("run_metadata: %r is not one of rt's metadata fields (%s)"
                                 % (key, ", ".join(_RUN_METADATA)))
        self.extended = extended
        self._own_store = store is None
        self.store = _default_store() if store is DEFAULT_STORE else store
        # names this tracker's run in a store others record into too
        self._tag = "rt_tracker=%d-%s" % (os.getpid(), uuid.uuid4().hex[:12])
        self._proc = None
        self._run = None
        self._before = None  # the store's runs before this tracker's started
        self._owner = os.getpid()
        self._warned = False
        self._lost_said = False
        self._frozen = None  # rows of a tracker made from a snapshot
        self._frozen_stats = None  # ... and rt's figures of them
        self._frozen_reco = None  # ... and rt's answer when it was taken
        self._server_info = None
        self._cloud_info = None
        self._stderr = None
        if autostart:
            self.start()

    # ---- lifecycle ------------------------------------------------------

    def _warn(self, what):
        if not self._warned:
            self._warned = True
            warnings.warn("rt_tracker: %s; the program runs on untracked" % what,
                          RtMissingWarning, stacklevel=3)

    def start(self):
        """Start the recorder (RuntimeError when running or already stopped)."""
        if self.running:
            raise RuntimeError("Resource tracker already running, cannot start again.")
        if hasattr(self, "stop_time"):
            raise RuntimeError("Resource tracker already stopped. Create a new instance "
                               "instead of trying to restart it.")
        self.start_time = time.time()
        self.stop_time = None
        _live.add(self)
        rec = find_binary("rt-recorder")
        if not rec or not find_binary("rt-export"):
            self._warn("rt's rt-recorder and rt-export were not found (%s)" % _HOW)
            return
        _reset_peak_if_alone(self)
        if self._own_store:
            _clean_stale_stores()
            self.store = tempfile.mkdtemp(prefix="rt-tracker-")
            self._store_done = weakref.finalize(self, _release_store, self.store,
                                                _claim_store(self.store))
        before = self._run_ids()
        cmd = [rec, "--pid", str(self.pid), "-i", "%g" % self.interval, "--store", self.store,
               "--quiet"]
        if self.job_name:
            cmd += ["--job-name", self.job_name]
        for key, value in sorted(self.run_metadata.items()):
            if value is not None:
                cmd += ["--" + key.replace("_", "-"), str(value)]
        cmd += ["--tag", self._tag]
        if self.max_memory is not None:
            cmd += ["--max-memory", str(self.max_memory)]
        if self.max_cpu is not None:
            cmd += ["--max-cpu", "%g" % float(self.max_cpu)]
        if self.request:
            cmd += ["--request", self.request]
        env = dict(os.environ)
        if self._token:
            env["SENTINEL_API_TOKEN"] = self._token
            env["TRACKER_UPLOAD_INTERVAL"] = str(int(self.upload_interval))
        self._stderr = tempfile.TemporaryFile()
        weakref.finalize(self, self._stderr.close)
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=self._stderr,
                                          env=env, start_new_session=True,
                                          preexec_fn=_die_with_parent)
        except OSError as e:
            self._warn("cannot start rt-recorder (%s)" % e)
            return
        # the run it records is the new one in the store, looked up when
        # first needed: an rt-export run now would be a child of this
        # process in the first samples, and counted in its tree. Here only
        # the recorder's start is awaited, on the store's files.
        self._before = before
        data = os.path.join(self.store, "data.mdb")
        deadline = time.monotonic() + 5
        while (self._own_store and time.monotonic() < deadline and
               self._proc.poll() is None and not os.path.exists(data)):
            time.sleep(0.01)
        if self._proc.poll() is not None:
            self._recorder_died()

    def _resolve_run(self):
        """The run this tracker records (None: none)."""
        if self._run is None and self._before is not None and self._proc is not None:
            deadline = time.monotonic() + 5
            while True:
                new = [r for r in self._run_ids() if r not in self._before]
                mine = self._own_run(new)
                if mine is not None:
                    self._run = mine
                    break
                if time.monotonic() >= deadline or self._proc.poll() is not None:
                    break
                time.sleep(0.02)
        return self._run

    def _own_run(self, new):
        """Of the runs new in the store, the one this tracker's recorder
        records (its tag): others may record into the same store."""
        if self._own_store and len(new) == 1:
            return new[0]
        for run in sorted(new, reverse=True):
            js = self._export("show", str(run))
            try:
                if js and self._tag in (json.loads(js).get("tags") or []):
                    return run
            except ValueError:
                continue
        return None

    def _last_stderr_line(self):
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    def _recorder_died(self):
        why = self._last_stderr_line()
        code = self._proc.poll() if self._proc else None
        self._warn("rt-recorder stopped%s%s" % (
            " (exit %s)" % code if code is not None else "", ": " + why if why else ""))

    def stop(self, exit_code=0, run_status=None):
        """Stop the recorder; the run stays readable (its rows, stats,
        report). A forked child's copy of a tracker stops nothing."""
        if os.getpid() != self._owner:
            return
        if not self.running:
            return
        self.stop_time = time.time()
        self.exit_code = exit_code
        p = self._proc
        if p is not None:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            if p.returncode == 3:  # its budget: rt-export budget said it in one line
                line = self._last_stderr_line()  # (in the recorder's name: the user ran Python)
                self.over_budget = re.sub(r"^(rt-recorder|resource-tracker|rt-export): ", "", line)
                warnings.warn("rt_tracker: %s" % self.over_budget, RtBudgetWarning, stacklevel=2)
            elif p.returncode not in (0, -signal.SIGTERM):
                self._recorder_died()
        _live.discard(self)

    def cleanup(self):
        """Stop the recorder and remove what the tracker made (its own
        temporary store, the file of the recorder's messages), as the
        reference's cleanup(): the garbage collector does it too, later.
        Its figures are gone with the store; a snapshot() keeps them."""
        try:
            self.stop()
        except Exception:
            pass
        done = getattr(self, "_store_done", None)
        if done is not None:
            self._lost_said = True  # (gone on purpose: not said as lost)
            done()
        if getattr(self, "_stderr", None) is not None:
            self._stderr.close()

    def __enter__(self):
        if not self.running:
            self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop(exit_code=1 if exc_type else 0)
        return False

    def __del__(self):
        try:
            if getattr(self, "_owner", None) == os.getpid() and self.running:
                self.stop()
        except Exception:
            pass

    @property
    def running(self):
        return hasattr(self, "stop_time") and self.stop_time is None

    # ---- reading -------------------------------------------------------

    def _export(self, *args, timeout=60):
        return self._export_with_error(*args, timeout=timeout)[0]

    def _store_lost(self):
        """Whether this tracker's own store is gone (said once): another
        program removed it while it was in use."""
        if not self._own_store or not self.store or os.path.isdir(self.store):
            return False
        if not self._lost_said:
            self._lost_said = True
            warnings.warn("rt_tracker: its store %s was removed while in use (by another "
                          "program cleaning the temporary directory?); the metrics recorded "
                          "there are lost" % self.store, RtMissingWarning, stacklevel=4)
        return True

    def _export_with_error(self, *args, timeout=60):
        """rt-export's output (None when it failed) and its last stderr line."""
        exe = find_binary("rt-export")
        if not exe or not self.store:
            return None, "rt-export was not found (%s)" % _HOW
        if self._store_lost():
            return None, "the store %s was removed" % self.store
        try:
            r = subprocess.run([exe, "--store", self.store] + list(args), capture_output=True,
                               timeout=timeout, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, str(e)
        lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
        err = lines[-1] if lines else ""
        return (r.stdout.decode("utf-8", "replace") if r.returncode == 0 else None), err

    def _run_ids(self):
        out = self._export("runs") or ""
        ids = []
        for line in out.splitlines()[1:]:
            f = line.split()
            if f and f[0].isdigit():
                ids.append(int(f[0]))
        return ids

    def _rows(self):
        if self._frozen is not None:
            return self._frozen
        if self._resolve_run() is None:
            return Table()
        args = ["replay", str(self._run), "-f", "csv", "--csv-ms"]  # timestamps as the reference's
        if self.extended:
            args += ["--csv-columns", "extended"]
        text = self._export(*args)
        if text is None:
            if self.running and self._proc is not None and self._proc.poll() is not None:
                self._recorder_died()
            return Table()
        return _as_reference_types(from_csv(text))

    def _part(self, prefix):
        t = self._rows()
        cols = [c for c in t.columns if c == "timestamp" or c.startswith(prefix)]
        return t[cols].rename({c: c[len(prefix):] for c in cols if c != "timestamp"})

    @property
    def n_samples(self):
        return len(self._rows())

    @property
    def process_metrics(self):
        """timestamp, pid, children, utime, stime, cpu_usage, memory_mib (PSS),
        disk_read_bytes, disk_write_bytes, gpu_usage, gpu_vram_mib, gpu_utilized."""
        return self._part("process_") if self.track_processes else Table()

    @property
    def system_metrics(self):
        """timestamp, processes, utime, stime, cpu_usage, memory_*_mib, disk
        bytes and space, net bytes, gpu_usage, gpu_vram_mib, gpu_utilized."""
        return self._part("system_") if self.track_system else Table()

    def get_combined_metrics(self, bytes=False, human_names=False, system_prefix=None,
                             process_prefix=None, offset=None):
        """Both, by timestamp: system_* and process_* columns (rt's CSV)."""
        t = self._rows()
        if offset:
            t = t[offset:]
        if not len(t):
            return Table()
        if bytes:
            for c in t.columns:
                base = c.split("_", 1)[1] if c.startswith(("system_", "process_")) else c
                if base in BYTE_COLUMNS:
                    t[c] = [None if v is None else v * BYTE_COLUMNS[base] for v in t[c]]
        sp = system_prefix if system_prefix is not None else ("System " if human_names else "system_")
        pp = process_prefix if process_prefix is not None else ("Process " if human_names else "process_")
        names = {}
        for c in t.columns:
            for pre, new in (("system_", sp), ("process_", pp)):
                if c.startswith(pre):
                    base = c[len(pre):]
                    names[c] = new + (HUMAN_NAMES.get(base, base) if human_names else base)
            if c == "timestamp" and human_names:
                names[c] = "Timestamp"
        return t.rename(names)

    def wait_for_samples(self, n=1, timeout=5):
        """Wait until n samples are recorded (RuntimeError past timeout)."""
        deadline = time.time() + timeout
        while self.n_samples < n:
            if not self.running:
                raise RuntimeError("Resource tracker has been already stopped with %d sample(s), "
                                   "cannot wait to collect the requested %d sample(s)."
                                   % (self.n_samples, n))
            if self._proc is None or self._proc.poll() is not None:
                return  # rt missing or stopped: said once, nothing to wait for
            if time.time() > deadline:
                raise RuntimeError("Timed out waiting for resource tracker to collect %d samples" % n)
            time.sleep(min(0.05, self.interval / 10))

    # ---- answers ---------------------------------------------------------

    def _rt_stats(self):
        """rt's own figures of the run (summary --json's stats per CSV
        column, and its duration), which the summary and the report show;
        a snapshot's, for a tracker made from one. None: none."""
        if self._frozen is not None:
            return self._frozen_stats
        js = self.summary()[1]
        if not js.get("stats"):
            return None
        return {"stats": js["stats"], "duration": (js.get("run") or {}).get("duration_secs")}

    def stats(self, specs=None):
        """{column: {agg_name: value}} over the run for each spec: the
        reference's StatSpec (column, agg, agg_name, round), a (column,
        agg) tuple with agg a function or "mean", "max", "sum",
        "duration"; by default the reference's specs. Where agg is the
        mean, max or sum (or the timestamp's duration), the figure is rt's,
        the one the summary and the report show (means over the job's
        life, weighted by each sample's interval); any other function runs
        on the rows."""
        t = self.get_combined_metrics()
        if not len(t):
            raise RuntimeError("No metrics collected (yet)")
        rt = self._rt_stats()
        out = {}
        for spec in specs or _DEFAULT_SPECS:
            col, agg, name, digits = _spec_parts(spec)
            if col not in t:
                continue
            v = _rt_figure(rt, col, agg)
            if v is None:
                vals = [x for x in t[col] if x is not None]
                if not vals:
                    continue
                v = _apply(agg, vals, self.interval)
            if digits is not None:
                v = round(v, digits)
            if isinstance(v, int) and _float_column(col) and agg is not len:
                v = float(v)  # the reference's type
            out.setdefault(col, {})[name] = v
        if not specs and out.get("process_gpu_utilized", {}).get("max", 0) > 0:
            # rt's own: the job's VRAM on the one GPU where it held the most
            # (what a GPU of the next server must hold), from its summary
            per_gpu = [g.get("job_vram_peak_mib") for g in self.summary()[1].get("gpus") or []]
            per_gpu = [v for v in per_gpu if v is not None]
            if per_gpu:
                out["process_gpu_vram_mib_per_gpu"] = {"max": round(max(per_gpu), 2)}
        return out

    def _repr_html_(self):
        """Jupyter's view: the tracker's state, and rt's answer with a small
        chart once it has samples (rt_tracker.notebook lays it out)."""
        from .notebook import answer_html

        state = ("running" if self.running else "stopped" if hasattr(self, "stop_time")
                 else "not started")
        head = "<p><b>ResourceTracker</b> (rt): %s, %d samples every %g s</p>" % (
            state, self.n_samples, self.interval)
        return head + (answer_html(self) if self.n_samples else "")

    def summary(self):
        """rt's summary of the run: (text, dict of summary --json)."""
        if self._resolve_run() is None:
            return "", {}
        text = self._export("summary", str(self._run)) or ""
        js = self._export("summary", str(self._run), "--json")
        return text, json.loads(js) if js else {}

    def recommend_resources(self, historical_stats=[]):
        """{'cpu', 'memory' (MiB), 'gpu', 'vram' (MiB)} by rt's rules (the
        reference's: mean CPU, peak memory + 20 %, rounded to a server
        size; rt raises them for peaks between samples and CPU the job
        waited for). With historical_stats (stats() dicts), by the
        reference's rules over all of them."""
        if historical_stats:
            stats = [self.stats()] + list(historical_stats)
            cpu = sum(s["process_cpu_usage"]["mean"] for s in stats) / len(stats)
            mem = max(s["process_memory_mib"]["max"] for s in stats)
            return {"cpu": max(1, round(cpu)), "memory": _round_memory(mem * 1.2),
                    **_recommend_gpu(stats)}
        if self._frozen is not None:
            return self._frozen_recommendation()
        if self._resolve_run() is None or self.n_samples == 0:
            raise RuntimeError("No metrics collected yet: start() the tracker and let it take "
                               "a sample (wait_for_samples()) before asking for a "
                               "recommendation.")
        js = self._export("recommend", str(self._run), "--json")
        if not js:
            return {}
        r = json.loads(js).get("recommendation") or {}
        return Recommendation({"cpu": r.get("cpu"), "memory": r.get("memory_mib"),
                               "gpu": r.get("gpu"), "vram": r.get("vram_mib")},
                              r.get("raised_because"))

    def _recommendation_now(self):
        """rt's answer for this run (recommend --json's), None: none."""
        if self._resolve_run() is None:
            return None
        js = self._export("recommend", str(self._run), "--json")
        return (json.loads(js).get("recommendation") or None) if js else None

    def _frozen_recommendation(self):
        """A snapshot's answer: the one rt gave when the snapshot was taken;
        a snapshot without one (an older rt_tracker's, the reference's) by
        the reference's rules over its stats, said once."""
        r = self._frozen_reco
        if r:
            return Recommendation({"cpu": r.get("cpu"), "memory": r.get("memory_mib"),
                                   "gpu": r.get("gpu"), "vram": r.get("vram_mib")},
                                  r.get("raised_because"))
        if not len(self._frozen):
            raise RuntimeError("No metrics collected (yet): the snapshot holds no sample")
        warnings.warn("rt_tracker: this snapshot holds no answer of rt's (an older rt_tracker's "
                      "or the reference's): recommended by the reference's rules over its "
                      "samples", RtMissingWarning, stacklevel=3)
        st = self.stats()
        return {"cpu": max(1, round(st["process_cpu_usage"]["mean"])),
                "memory": _round_memory(st["process_memory_mib"]["max"] * 1.2),
                **_recommend_gpu([st])}

    def recommend_server(self, **kwargs):
        """The cheapest cloud server that fits (Spare Cores Keeper, through
        rt-export recommend --servers 1): a dict, {} when none answered,
        with a warning saying why. Keeper filters (vendor_id, ...) and
        historical_stats are not used by rt's search yet: a warning names
        them."""
        historical = kwargs.pop("historical_stats", [])
        if kwargs:
            warnings.warn("rt_tracker: recommend_server() does not pass %s on to Keeper yet; "
                          "the cheapest server of any vendor is returned" % ", ".join(sorted(kwargs)),
                          RtMissingWarning, stacklevel=2)
        if self._resolve_run() is None:
            warnings.warn("rt_tracker: no run recorded: no server to recommend", RtMissingWarning,
                          stacklevel=2)
            return {}
        if historical:
            warnings.warn("rt_tracker: recommend_server() fits this run's recommendation; "
                          "historical_stats are not used for the server search yet",
                          RtMissingWarning, stacklevel=2)
        out, err = self._export_with_error("recommend", str(self._run), "--servers", "1", "--json",
                                           timeout=120)
        servers = (json.loads(out).get("servers") or []) if out else []
        if not servers:
            warnings.warn("rt_tracker: no server recommended: %s" %
                          (err or "Keeper (the Spare Cores API) did not answer"),
                          RtMissingWarning, stacklevel=2)
            return {}
        return servers[0]

    def report(self, integration="standalone", historical_stats=[], status_failed=False,
               integration_version=None, servers=0, branches=0):
        """rt's HTML report of the run: text with save() and browse().
        servers=N adds the N cheapest cloud servers that fit (Keeper), or
        one line saying Keeper did not answer; an integration other than
        "standalone" (Metaflow, R) is named in its footer; branches=N says
        the run is one of N branches of its step (a foreach's), whose
        largest need the page then gives for the step."""
        if self._resolve_run() is None:
            page = Report("")
            page.error = ("a tracker made from a snapshot has no run to report (the report is "
                          "made while the run is at hand)" if self._frozen is not None
                          else "no run recorded")
            warnings.warn("rt_tracker: no report: %s" % page.error, RtMissingWarning,
                          stacklevel=2)
            return page
        fd, path = tempfile.mkstemp(prefix="rt-report-", suffix=".html")
        os.close(fd)
        try:
            out, err = self._export_with_error(
                "report", str(self._run), "-o", path,
                *(["--failed"] if status_failed else []),
                *(["--servers", str(int(servers))] if servers else []),
                *(["--branches", str(int(branches))] if branches else []),
                *(["--integration", integration]
                  if integration and integration != "standalone" else []),
                timeout=120)
            with open(path, encoding="utf-8") as f:
                page = Report(f.read()) if out is not None else Report("")
        finally:
            os.unlink(path)
        if out is None or not page:
            # never an empty page with no word: rt-export's own line
            page = Report("")
            page.error = err or "rt-export report wrote no page"
            warnings.warn("rt_tracker: no report: %s" % page.error, RtMissingWarning,
                          stacklevel=2)
        return page

    def _meta(self):
        if self._resolve_run() is None:
            return {}
        js = self._export("show", str(self._run))
        try:
            return json.loads(js) if js else {}
        except ValueError:
            return {}

    @property
    def server_info(self):
        """The host as the reference names it (vcpus, memory_mib, gpu_count, ...)."""
        if self._server_info is None:
            info = _host_dict(self._meta().get("host") or {})
            # shared or dedicated: how the host was used beside the job
            info["allocation"] = self.summary()[1].get("allocation")
            self._server_info = info
        return self._server_info

    @property
    def cloud_info(self):
        """The cloud (vendor, instance_type, region, discovery_time: the
        reference's keys), None where rt-export discover found nothing."""
        if self._cloud_info is None:
            if not self.discover_cloud:
                self._cloud_info = {}
            else:
                t0 = time.time()
                js = self._export("discover", timeout=30)
                try:
                    found = json.loads(js) if js else {}
                except ValueError:
                    found = {}
                self._cloud_info = _cloud_dict(found, time.time() - t0)
        return self._cloud_info

    @property
    def sentinel_result(self):
        """What the Sentinel API answered (rt's uploader streams the run
        when a token is set): the run's upload metadata, or None."""
        if not self._token:
            return None
        return self._meta().get("upload")

    # ---- snapshots -----------------------------------------------------

    def snapshot(self):
        return {
            "metadata": {
                "version": 1,
                "resource_tracker": {"version": "rt_tracker", "implementation": "rt"},
                "pid": self.pid, "children": self.children, "interval": self.interval,
                "method": self.method, "autostart": self.autostart,
                "track_processes": self.track_processes, "track_system": self.track_system,
                "discover_server": self.discover_server, "discover_cloud": self.discover_cloud,
                "start_time": getattr(self, "start_time", None),
                "stop_time": self.stop_time if getattr(self, "stop_time", None) else time.time(),
                "duration": round((getattr(self, "stop_time", None) or time.time())
                                  - getattr(self, "start_time", time.time()) + self.interval, 2),
            },
            "server_info": self._server_info,
            "cloud_info": self._cloud_info,
            "combined_metrics": self.get_combined_metrics().to_dict(),
            "rt_stats": self._rt_stats(),
            # rt's answer when the snapshot was taken: what a tracker made
            # from it recommends (not a copy of rt's rules in Python)
            "rt_recommendation": (self._frozen_reco if self._frozen is not None
                                  else self._recommendation_now()),
            "process_metrics": self.process_metrics.to_dict(),
            "system_metrics": self.system_metrics.to_dict(),
        }

    @classmethod
    def from_snapshot(cls, snapshot):
        m = snapshot["metadata"]
        t = cls(pid=m["pid"], children=m["children"], interval=m["interval"],
                method=m.get("method"), autostart=False, track_processes=m["track_processes"],
                track_system=m["track_system"], discover_server=m["discover_server"],
                discover_cloud=m["discover_cloud"])
        t.start_time = m["start_time"]
        t.stop_time = m["stop_time"]
        t._server_info = snapshot.get("server_info")
        t._cloud_info = snapshot.get("cloud_info")
        combined = snapshot.get("combined_metrics")
        if combined is None:  # the reference's snapshot: its two tables, bound
            combined = _bind_parts(snapshot.get("process_metrics") or [],
                                   snapshot.get("system_metrics") or [])
        t._frozen = Table(combined or {})
        t._frozen_stats = snapshot.get("rt_stats")
        t._frozen_reco = snapshot.get("rt_recommendation")
        return t

    def dumps(self):
        return json.dumps(self.snapshot())

    @classmethod
    def loads(cls, s):
        return cls.from_snapshot(json.loads(s))

    def dump(self, file):
        """The snapshot as gzipped JSON, as the reference writes it."""
        with gzip.open(file, "wb") as f:
            f.write(self.dumps().encode())
        return file

    @classmethod
    def load(cls, file):
        """A snapshot from a file: gzipped JSON (the reference's and this
        one's dump()), or plain JSON (an older rt_tracker's)."""
        with open(file, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return cls.loads(data.decode())


#: store=DEFAULT_STORE: rt's own default store (where rt-export looks)
DEFAULT_STORE = object()
#: the run metadata rt's recorder takes as flags (run_metadata=)
_RUN_METADATA = ("project_name", "stage_name", "task_name", "team", "env", "language",
                 "orchestrator", "executor", "external_run_id", "container_image")


def _default_store():
    """rt's default store, as rt-recorder and rt-export find it: RT_STORE,
    else $XDG_DATA_HOME/resource-tracker, else ~/.local/share/resource-tracker."""
    if os.environ.get("RT_STORE"):
        return os.environ["RT_STORE"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                           "share")
    return os.path.join(base, "resource-tracker")


def _start_time(pid):
    """A process's start time (clock ticks after boot), None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


#: columns the reference gives as floats (its samplers divide: PSS / 1024,
#: ticks / CLK_TCK): rt's CSV prints a whole number without a point
_FLOAT_COLUMNS = {"timestamp", "utime", "stime", "cpu_usage", "memory_mib", "gpu_usage",
                  "gpu_vram_mib", "memory_free_mib", "memory_used_mib", "memory_buffers_mib",
                  "memory_cached_mib", "memory_active_mib", "memory_inactive_mib",
                  "disk_space_total_gb", "disk_space_used_gb", "disk_space_free_gb"}


def _float_column(c):
    base = c.split("_", 1)[1] if c.startswith(("system_", "process_")) else c
    return base in _FLOAT_COLUMNS


def _as_reference_types(t):
    """The table with the reference's types: floats where it has floats."""
    for c in t.columns:
        if _float_column(c):
            t[c] = [float(v) if isinstance(v, int) else v for v in t[c]]
    return t


def _rows_of(part):
    """A snapshot's table: a list of row dicts (the reference's to_dict()),
    or a dict of column lists."""
    if isinstance(part, dict):
        n = max((len(v) for v in part.values()), default=0)
        return [{k: v[i] if i < len(v) else None for k, v in part.items()} for i in range(n)]
    return list(part or [])


def _bind_parts(process, system):
    """The reference's get_combined_metrics() of a snapshot's two tables:
    the system's columns prefixed system_, then the process's process_,
    row by row (the shorter's length), on the system's timestamps."""
    proc, sys_rows = _rows_of(process), _rows_of(system)
    out = []
    for p, s in zip(proc, sys_rows):
        row = {("system_" + k if k != "timestamp" else k): v for k, v in s.items()}
        row.update({"process_" + k: v for k, v in p.items() if k != "timestamp"})
        out.append(row)
    return out


def _duration(values):
    return max(values) - min(values)


#: the reference's default stats() specs, field for field
_DEFAULT_SPECS = [StatSpec(c, a, round=2) for c in (
    "process_cpu_usage", "process_memory_mib", "process_gpu_usage", "process_gpu_vram_mib",
    "process_gpu_utilized") for a in (statistics.mean, max)] + [
    StatSpec("system_disk_space_used_gb", max, round=2),
    StatSpec("system_net_recv_bytes", sum), StatSpec("system_net_sent_bytes", sum),
    StatSpec("timestamp", _duration, agg_name="duration")]
_NAMED = {"mean": statistics.mean, "max": max, "sum": sum, "duration": _duration}


def _spec_parts(spec):
    """(column, agg function, agg name, round digits) of a StatSpec or a
    (column, agg) tuple; an agg given by name rounds means and maxima to
    2 digits, as rt_tracker always did."""
    if isinstance(spec, StatSpec):
        name = spec.agg_name or getattr(spec.agg, "__name__", "agg")
        return spec.column, spec.agg, name, spec.round
    col, agg = spec[0], spec[1]
    if isinstance(agg, str):
        if agg not in _NAMED:
            raise ValueError("unknown aggregation %r (mean, max, sum, duration, or a "
                             "function)" % agg)
        return col, _NAMED[agg], agg, 2 if agg in ("mean", "max") else None
    return _spec_parts(StatSpec(*spec))


def _rt_figure(rt, col, agg):
    """rt's own figure for a well-known aggregation, else None."""
    if not rt:
        return None
    if agg is _duration and col == "timestamp" and rt.get("duration") is not None:
        return rt["duration"]
    which = {statistics.mean: "mean", statistics.fmean: "mean", max: "max", sum: "sum"}.get(agg)
    return rt.get("stats", {}).get(col, {}).get(which) if which else None


def _apply(agg, values, interval):
    v = agg(values)
    return v + interval if agg is _duration else v  # (the reference's duration)


def _reset_peak_if_alone(tracker):
    """A peak counts only when it happened while tracked: a tracker of this
    very process (a notebook's kernel that once held 1 GiB) resets the
    process's high-water mark (VmHWM, and so getrusage's ru_maxrss) as it
    starts, unless another tracker of this process runs (nested: the outer
    one's peak must stay). Where it cannot, rt leaves a mark reached before
    tracking out of the answer and says so."""
    if tracker.pid != os.getpid():
        return
    if any(t is not tracker and t.running and t.pid == tracker.pid and t._owner == os.getpid()
           for t in list(_live)):
        return
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # (not Linux, or not allowed: the mark before is left out instead)


def _claim_store(store):
    """Hold a lock on this tracker's temporary store for its life, then
    mark the store as a tracker's (its "owner" file). A lock, not a pid,
    tells a live owner: two containers sharing /tmp (or unshare -p) see the
    same file lock, where a pid read in one pid namespace names nothing, or
    another process, in the other. The descriptor (None: no lock)."""
    try:
        fd = os.open(os.path.join(store, "owner.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(os.path.join(store, "owner"), "w") as f:
            f.write("%d %s\n" % (os.getpid(), _start_time(os.getpid())))
    except OSError:
        pass
    return fd


def _release_store(store, fd):
    """The tracker is gone: its store, then its lock."""
    shutil.rmtree(store, True)
    if fd is not None:
        os.close(fd)


def _owner_gone(path):
    """Whether the tracker owning the store at path is gone: its lock can
    be taken (and is then held, returned as a descriptor, while the store
    is removed); None while the owner lives or cannot be told."""
    try:
        fd = os.open(os.path.join(path, "owner.lock"), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return _legacy_owner_gone(path)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _legacy_owner_gone(path):
    """A store of an rt_tracker before the lock (its pid alone): taken as
    gone only when its pid is dead here and nothing was written to it for a
    day (a pid read in another namespace tells nothing)."""
    try:
        with open(os.path.join(path, "owner")) as f:
            pid, start = f.read().split()
        quiet = time.time() - os.stat(os.path.join(path, "data.mdb")).st_mtime
    except (OSError, ValueError):
        return None
    return -1 if _start_time(int(pid)) != start and quiet > 86400 else None


def _clean_stale_stores():
    """Remove the temporary stores of this user's programs that died without
    removing theirs (SIGKILL runs no finalizer): those whose owner's lock is
    free."""
    tmp = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(tmp) if n.startswith("rt-tracker-")]
    except OSError:
        return
    for n in names:
        path = os.path.join(tmp, n)
        try:
            st = os.lstat(path)
            if (st.st_uid != os.getuid() or not os.path.isdir(path) or os.path.islink(path) or
                    not os.path.exists(os.path.join(path, "owner"))):
                continue  # not ours, or still being made (marked once locked)
        except OSError:
            continue
        fd = _owner_gone(path)
        if fd is not None:
            shutil.rmtree(path, ignore_errors=True)
            if fd >= 0:
                os.close(fd)


def _host_dict(h):
    """A run's host metadata under the reference's names."""
    names = [h["gpu_model"]] * (h.get("gpu_count") or 1) if h.get("gpu_model") else []
    return {
        "os": platform.system(), "vcpus": h.get("vcpus"), "cpu_name": h.get("cpu_model"),
        "memory_mib": h.get("memory_mib"), "gpu_count": h.get("gpu_count") or 0,
        "gpu_names": names, "gpu_name": names[0] if names else "",
        "gpu_memory_mib": h.get("gpu_memory_mib") or 0,
        "disk_space_total_gb": h.get("storage_gb"), "hostname": h.get("hostname"),
    }


def get_server_info():
    """This server as the reference's get_server_info() names it (os,
    vcpus, memory_mib, gpu_count, gpu_names, gpu_name, gpu_memory_mib),
    from what rt's recorder sees in one sample (cgroup-aware, NVML for
    GPUs). Without rt's binaries: what the standard library knows, no GPU."""
    rec, exe = find_binary("rt-recorder"), find_binary("rt-export")
    store = tempfile.mkdtemp(prefix="rt-tracker-info-")
    try:
        if rec and exe and subprocess.run(
                [rec, "--count", "1", "-i", "0.1", "--quiet", "--store", store],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=30).returncode == 0:
            out = subprocess.run([exe, "--store", store, "show", "latest"], capture_output=True,
                                 stdin=subprocess.DEVNULL, timeout=30).stdout
            host = json.loads(out or b"{}").get("host") or {}
            if host:
                return _host_dict(host)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    finally:
        shutil.rmtree(store, ignore_errors=True)
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    return _host_dict({"vcpus": os.cpu_count(), "memory_mib": mem})


def get_cloud_info():
    """The cloud this runs in, under the reference's keys (vendor,
    instance_type, region, discovery_time; rt's zone and account beside
    them), None where unknown: rt-export discover, which asks the metadata
    services briefly (2 s at most)."""
    exe = find_binary("rt-export")
    t0 = time.time()
    found = {}
    try:
        out = subprocess.run([exe, "discover"], capture_output=True,
                             stdin=subprocess.DEVNULL, timeout=30).stdout if exe else b""
        found = json.loads(out) if out else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return _cloud_dict(found, time.time() - t0)


def _cloud_dict(found, took):
    """rt-export discover's fields under the reference's names."""
    return {"vendor": found.get("cloud_vendor_id"),
            "instance_type": found.get("cloud_instance_type"),
            "region": found.get("cloud_region_id"), "zone": found.get("cloud_zone_id"),
            "account": found.get("cloud_account_id"), "discovery_time": round(took, 3)}


def _round_memory(mib):
    for step in (128, 256, 512, 1024, 2048):
        if mib <= step:
            return step
    return int(-(-mib // 1024) * 1024)


def _recommend_gpu(stats):
    """rt's GPU rule over stats() dicts: a job that held VRAM or kept a GPU
    busy gets as many GPUs as it held at once (at least one), each with its
    peak VRAM on one GPU + 20 % (the total where a dict does not say per
    GPU: never less than the job needed)."""
    def top(col):
        return max(s.get(col, {}).get("max", 0) or 0 for s in stats)
    held, vram, busy = top("process_gpu_utilized"), top("process_gpu_vram_mib"), top("process_gpu_usage")
    if not (held > 0 or vram > 0 or busy > 0):
        return {"gpu": 0, "vram": 0}
    if all("process_gpu_vram_mib_per_gpu" in s for s in stats):
        vram = top("process_gpu_vram_mib_per_gpu")
    return {"gpu": max(1, int(round(held))), "vram": _round_memory(vram * 1.2) if vram > 0 else 0}


def _after_fork_in_child():
    # a forked child's trackers are its parent's: it must not stop them
    for t in list(_live):
        _live.discard(t)


os.register_at_fork(after_in_child=_after_fork_in_child)


class track:
    """A tracker as a context manager or a function decorator, its summary
    printed at the end (to stderr; print_summary=False keeps it, in
    .summary_text and .summary_json)."""

    def __init__(self, interval=1, print_summary=True, **kwargs):
        self.kwargs = dict(kwargs, interval=interval)
        self.print_summary = print_summary
        self.tracker = None
        self.summary_text, self.summary_json = "", {}

    def __enter__(self):
        self.tracker = ResourceTracker(**self.kwargs)
        self.tracker.start()
        return self.tracker

    def __exit__(self, exc_type, exc, tb):
        self.tracker.stop(exit_code=1 if exc_type else 0)
        self.summary_text, self.summary_json = self.tracker.summary()
        if self.print_summary and self.summary_text:
            sys.stderr.write(self.summary_text)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*a, **k):
            with track(print_summary=self.print_summary, **self.kwargs):
                return fn(*a, **k)
        return wrapped
