"""rt_tracker against the real rt binaries (RT_PREFIX or PATH: tests/python.sh
puts the build on PATH), a real store, real child processes."""
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings

import pytest

import rt_tracker
from rt_tracker import ResourceTracker, RtMissingWarning, track


def spin(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1
    return x


def recorders_of(pid):
    """rt-recorder processes tracking pid (from ps, as a person would look)."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if "rt-recorder" in l and "--pid %d " % pid in l + " "]


def test_api_round_trip(tmp_path):
    t = ResourceTracker(interval=0.2, job_name="pytest")
    assert not t.running
    t.start()
    assert t.running
    with pytest.raises(RuntimeError):
        t.start()
    buf = bytearray(64 << 20)
    spin(1.2)  # (no read while it runs: rt-export is a child of this process, and counted)
    time.sleep(0.4)
    del buf
    t.stop()
    assert not t.running
    with pytest.raises(RuntimeError):
        t.start()
    pm, sm = t.process_metrics, t.system_metrics
    assert pm.columns == ["timestamp", "pid", "children", "utime", "stime", "cpu_usage",
                          "memory_mib", "disk_read_bytes", "disk_write_bytes", "gpu_usage",
                          "gpu_vram_mib", "gpu_utilized"]
    assert sm.columns[:5] == ["timestamp", "processes", "utime", "stime", "cpu_usage"]
    assert len(pm) == len(sm) == t.n_samples >= 6
    assert pm[0]["pid"] == os.getpid()
    assert max(pm["children"]) == 0, "the recorder (this process's child) is not the job's"
    t3 = ResourceTracker(interval=0.2)
    t3.start()
    t3.wait_for_samples(2, timeout=20)  # polls: rt-export runs meanwhile
    t3.stop()
    assert t3.n_samples >= 2
    assert max(pm["memory_mib"]) >= 64  # the 64 MiB it held (PSS)
    assert isinstance(pm["cpu_usage"], list) and pm[-1].keys() == set(pm.columns)
    c = t.get_combined_metrics()
    assert "system_cpu_usage" in c and "process_memory_mib" in c
    cb = t.get_combined_metrics(bytes=True, human_names=True)
    assert "Process memory usage" in cb.columns
    assert cb["Process memory usage"] == [v * 1048576 for v in c["process_memory_mib"]]
    csv = tmp_path / "p.csv"
    pm.to_csv(str(csv))
    assert csv.read_text().splitlines()[0].startswith('"timestamp","pid"')
    st = t.stats()
    assert st["process_memory_mib"]["max"] == max(pm["memory_mib"])
    assert st["timestamp"]["duration"] > 1
    rec = t.recommend_resources()
    assert set(rec) == {"cpu", "memory", "gpu", "vram"} and rec["cpu"] >= 1 and rec["memory"] >= 128
    rep = t.report()
    assert rep.startswith("<!DOCTYPE html>") and "rt report" in rep
    assert rep.save(str(tmp_path / "r.html")) and (tmp_path / "r.html").stat().st_size > 1000
    assert t.server_info["vcpus"] == os.cpu_count()
    text, js = t.summary()
    assert "recommended" in text and js["run"]["job_name"] == "pytest"
    # snapshots: the same rows, stopped
    t2 = ResourceTracker.loads(t.dumps())
    assert not t2.running and t2.process_metrics.to_dict() == pm.to_dict()
    t.dump(str(tmp_path / "s.json"))
    assert ResourceTracker.load(str(tmp_path / "s.json")).n_samples == t.n_samples


def test_numbers_equal_the_cli(tmp_path):
    """The rows are rt-export's replay of the same run, the recommendation
    rt-export recommend's."""
    store = str(tmp_path / "store")
    with ResourceTracker(interval=0.25, store=store) as t:
        p0 = time.process_time()
        spin(1.0)
        used = time.process_time() - p0  # this process's own CPU (the host may be busy)
        t.wait_for_samples(2, timeout=10)
    exe = rt_tracker.find_binary("rt-export")
    csv = subprocess.run([exe, "--store", store, "replay", "latest", "-f", "csv"],
                         capture_output=True, text=True, check=True).stdout
    rows = [l.split(",") for l in csv.splitlines()]
    c = t.get_combined_metrics()
    assert c.columns == rows[0] and len(c) == len(rows) - 1
    col = rows[0].index("process_utime")
    assert [float(r[col]) for r in rows[1:]] == c["process_utime"]
    rec = json.loads(subprocess.run([exe, "--store", store, "recommend", "latest", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    assert t.recommend_resources()["memory"] == rec["recommendation"]["memory_mib"]
    # CPU seconds: the tree's (this process, no child), at least what it
    # used spinning, as the kernel counted it
    cpu = sum(c["process_utime"]) + sum(c["process_stime"])
    assert cpu >= used * 0.97 - 0.02, (cpu, used)


def _pool_work(n):
    buf = bytearray(40 << 20)  # each worker's own 40 MiB
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    time.sleep(1.5)
    return n


def smaps_pss_kib(pids):
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def tree_of(pid):
    out = [pid]
    for p in out:
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def is_rt(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"rt-recorder" in f.read() or False
    except OSError:
        return False


def test_fork_pool_pss_against_smaps_rollup():
    """A multiprocessing fork pool: the tree's PSS in rt's rows against a
    watcher summing smaps_rollup over the same tree (this process and its
    workers, never the recorder)."""
    t = ResourceTracker(interval=0.2)
    t.start()
    truth = []
    with multiprocessing.get_context("fork").Pool(3) as pool:
        res = pool.map_async(_pool_work, range(3))
        end = time.time() + 1.2
        while time.time() < end:
            members = [p for p in tree_of(os.getpid()) if not is_rt(p)]
            truth.append(smaps_pss_kib(members) / 1024)
            time.sleep(0.05)
        res.get(timeout=30)
    t.stop()
    rt_peak = max(t.process_metrics["memory_mib"])
    true_peak = max(truth)
    assert abs(rt_peak - true_peak) <= true_peak * 0.05 + 2, (rt_peak, true_peak)
    assert max(t.process_metrics["children"]) >= 3  # the workers, not the recorder


def test_fork_child_cannot_stop_its_parents_tracker():
    t = ResourceTracker(interval=0.2)
    t.start()
    pid = os.fork()
    if pid == 0:
        t.stop()  # a copy: stops nothing
        os._exit(0)
    os.waitpid(pid, 0)
    assert t.running and t._proc.poll() is None
    t.stop()
    assert not recorders_of(os.getpid())


def test_missing_binaries_warn_once_and_return_empty(monkeypatch, tmp_path):
    monkeypatch.setenv("RT_PREFIX", str(tmp_path / "nowhere"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = ResourceTracker(autostart=True)
        spin(0.1)
        t.stop()
        assert len(t.process_metrics) == 0 and t.n_samples == 0
        with pytest.raises(RuntimeError):  # no samples: as the reference's
            t.recommend_resources()
    ws = [x for x in w if issubclass(x.category, RtMissingWarning)]
    assert len(ws) == 1 and "RT_PREFIX" in str(ws[0].message)


def test_killed_recorder_keeps_the_program_running():
    t = ResourceTracker(interval=0.2)
    t.start()
    t.wait_for_samples(2, timeout=10)
    os.kill(t._proc.pid, signal.SIGKILL)
    t._proc.wait()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        n = t.n_samples  # what was stored stays readable
        t.stop()
    assert n >= 2
    assert any(issubclass(x.category, RtMissingWarning) for x in w)
    assert not recorders_of(os.getpid())


def test_interpreter_exit_stops_the_recorder_and_leaves_no_orphan(tmp_path):
    code = ("import time, rt_tracker\n"
            "t = rt_tracker.ResourceTracker(interval=0.2, store=%r)\n"
            "t.start(); t.wait_for_samples(2, timeout=10)\n"
            "print(t._proc.pid, flush=True)\n" % str(tmp_path / "s"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=os.environ)
    assert r.returncode == 0, r.stderr
    rec = int(r.stdout.split()[0])
    time.sleep(0.2)
    assert not os.path.exists("/proc/%d" % rec), "the recorder outlived the interpreter"
    # and a program killed outright: the recorder follows it (parent-death signal)
    code2 = code + "import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n"
    r = subprocess.run([sys.executable, "-c", code2], capture_output=True, text=True, timeout=60)
    rec = int(r.stdout.split()[0])
    for _ in range(100):
        if not os.path.exists("/proc/%d" % rec):
            break
        time.sleep(0.05)
    assert not os.path.exists("/proc/%d" % rec), "an orphaned recorder after SIGKILL"


def test_track_as_context_manager_and_decorator(capsys):
    with track(interval=0.2) as t:
        spin(0.6)
    assert t.n_samples >= 2
    assert "recommended" in capsys.readouterr().err

    @track(interval=0.2, print_summary=False)
    def work():
        spin(0.4)
        return 42
    assert work() == 42


REF_PROCESS_COLUMNS = ["timestamp", "pid", "children", "utime", "stime", "cpu_usage", "memory_mib",
                       "disk_read_bytes", "disk_write_bytes", "gpu_usage", "gpu_vram_mib",
                       "gpu_utilized"]
REF_SYSTEM_COLUMNS = ["timestamp", "processes", "utime", "stime", "cpu_usage", "memory_free_mib",
                      "memory_used_mib", "memory_buffers_mib", "memory_cached_mib",
                      "memory_active_mib", "memory_inactive_mib", "disk_read_bytes",
                      "disk_write_bytes", "disk_space_total_gb", "disk_space_used_gb",
                      "disk_space_free_gb", "net_recv_bytes", "net_sent_bytes", "gpu_usage",
                      "gpu_vram_mib", "gpu_utilized"]


def test_system_tracker_writes_the_references_csv_until_interrupted(tmp_path):
    out = tmp_path / "system.csv"
    code = ("import rt_tracker\n"
            "rt_tracker.SystemTracker(interval=0.2, output_file=%r)\n"
            "print('returned', flush=True)\n" % str(out))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    for _ in range(200):  # a header and 3 rows
        if out.exists() and len(out.read_text().splitlines()) >= 4:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # Ctrl-C: the writer returns, its recorder ends
    stdout, _ = p.communicate(timeout=30)
    assert p.returncode == 0 and "returned" in stdout
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == REF_SYSTEM_COLUMNS
    assert len(lines) >= 4
    for line in lines[1:]:
        f = line.split(",")
        assert len(f) == len(REF_SYSTEM_COLUMNS) and int(f[1]) > 0  # processes
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "rt-writer-" not in ps, "a writer's recorder outlived it"


def test_process_tracker_follows_a_process_until_it_ends(tmp_path):
    # a process not this one's child (reaped by init when it ends): it
    # spins 2 s, then ends, and so does the writer
    pid = int(subprocess.run(["sh", "-c", "(end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ];"
                              " do :; done) >/dev/null 2>&1 & echo $!"],
                             capture_output=True, text=True).stdout)
    out = tmp_path / "process.csv"
    code = "import rt_tracker\nrt_tracker.ProcessTracker(pid=%d, interval=0.2, output_file=%r)\n" % (
        pid, str(out))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == REF_PROCESS_COLUMNS
    rows = [dict(zip(REF_PROCESS_COLUMNS, l.split(","))) for l in lines[1:]]
    assert len(rows) >= 3 and all(int(r["pid"]) == pid for r in rows)
    assert sum(float(r["utime"]) + float(r["stime"]) for r in rows) > 0.2  # it spun


def test_writers_without_rt_warn_and_write_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("RT_PREFIX", str(tmp_path / "nowhere"))
    out = tmp_path / "x.csv"
    with pytest.warns(RtMissingWarning):
        rt_tracker.SystemTracker(interval=0.2, output_file=str(out))
    assert not out.exists()


def test_gpu_job_is_recommended_its_gpu(tmp_path, monkeypatch):
    """A job on a GPU (the build's fake NVML, which keeps the real driver's
    contract) gets its busy in gpu_usage and at least one GPU, with its
    peak VRAM on one GPU + 20 %; the historical rule says the same."""
    import shutil
    rec = shutil.which("rt-recorder")
    fake = os.path.join(os.path.dirname(rec), "libfake-nvml.so") if rec else ""
    if not os.path.exists(fake):
        pytest.skip("no fake NVML beside rt-recorder")
    pids = tmp_path / "pids"
    pids.write_text("%d:0:2048:80\n" % os.getpid())
    monkeypatch.setenv("RT_NVML_LIBRARY", fake)
    monkeypatch.setenv("FAKE_NVML_GPUS", "1")
    monkeypatch.setenv("FAKE_NVML_PIDS_FILE", str(pids))
    t = ResourceTracker(interval=0.5)
    t.start()
    time.sleep(2.6)
    t.stop()
    busy = t.process_metrics["gpu_usage"][1:-1]
    assert busy and all(abs(b - 0.8) < 0.05 for b in busy), busy
    assert t.recommend_resources()["gpu"] == 1
    assert t.recommend_resources()["vram"] == 3072  # 2048 MiB + 20 %, rounded up
    st = t.stats()
    assert st["process_gpu_vram_mib_per_gpu"]["max"] == 2048
    assert t.recommend_resources(historical_stats=[st])["gpu"] == 1
    assert t.recommend_resources(historical_stats=[st])["vram"] == 3072


def test_reference_api_corners(tmp_path, monkeypatch):
    """Where rt_tracker met the reference's API only in part (issue 39):
    head/tail and a printed table, the module's get_server_info and
    get_cloud_info, recommend_resources without samples, recommend_server
    saying why it has nothing, the report's words for the run's state."""
    from rt_tracker import get_cloud_info, get_server_info
    info = get_server_info()
    assert info["vcpus"] == os.cpu_count() and info["memory_mib"] > 0, info
    assert isinstance(info["gpu_names"], list) and "gpu_name" in info and info["os"] == "Linux"
    monkeypatch.setenv("RT_IMDS_ADDR", "127.0.0.1:1")  # no metadata service: unknown, quickly
    ci = get_cloud_info()  # the reference's keys, None where unknown (issue 46 item 4)
    assert ci["vendor"] is None and ci["instance_type"] is None and ci["region"] is None, ci
    with pytest.raises(RuntimeError):
        ResourceTracker(interval=0.2).recommend_resources()
    t = ResourceTracker(interval=0.2)
    t.start()
    t.wait_for_samples(3, timeout=10)
    report = t.report()
    assert "Process CPU usage" in report and "System CPU usage" in report
    assert "Pending" in report
    spin(0.5)
    t.stop()
    assert "Finished" in t.report()
    assert "Failed" in t.report(status_failed=True)
    pm = t.process_metrics
    ts = pm["timestamp"]  # milliseconds, as the reference's: no repeats at 0.2 s
    assert len(set(ts)) == len(ts) and any(x != int(x) for x in ts), ts
    assert len(pm.tail(2)) == 2 and pm.tail(2)[-1] == pm[-1]
    assert len(pm.head()) == min(5, len(pm)) and pm.head(1)[0] == pm[0]
    text = str(pm)
    assert text.splitlines()[0].startswith("Table with %d rows" % len(pm))
    assert "utime" in text.splitlines()[1] and "|" in text.splitlines()[2 + 1]
    monkeypatch.setenv("TRACKER_KEEPER_URL", "http://127.0.0.1:1")  # Keeper unreachable
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert t.recommend_server(vendor_id="aws") == {}
    said = " ".join(str(x.message) for x in w)
    assert "vendor_id" in said and "no server recommended" in said, said


def test_system_only_tracker_has_no_process_rows():
    """track_processes=False: the system's rows are sampled, the process
    table stays empty (the reference's test_resource_tracker_subprocess)."""
    t = ResourceTracker(interval=0.2, track_processes=False)
    t.start()
    t.wait_for_samples(2, timeout=20)
    t.stop()
    assert len(t.process_metrics) == 0
    sm = t.system_metrics
    assert len(sm) >= 2
    assert sm[0]["utime"] >= 0 and sm[0]["memory_used_mib"] > 0 and sm[0]["processes"] > 0


def test_a_killed_programs_temporary_store_is_removed_at_the_next_start(tmp_path):
    """SIGKILL runs no finalizer: the next ResourceTracker removes the
    temporary store of a dead owner (and never a live one's)."""
    code = ("import os, signal, time, rt_tracker\n"
            "t = rt_tracker.ResourceTracker(interval=0.2)\n"
            "t.start(); time.sleep(0.3); print(t.store, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    stale = out.stdout.strip()
    assert stale and os.path.isdir(stale), out
    live = ResourceTracker(interval=0.2)
    live.start()
    try:
        assert not os.path.exists(stale)
        assert os.path.isdir(live.store)
    finally:
        live.stop()


def test_a_live_trackers_store_is_kept_whatever_its_pid_says_here():
    """Liveness holds across pid namespaces: a live tracker's store whose
    owner pid means nothing in this namespace (another container's, sharing
    /tmp) is not removed by the next tracker (issue 45 item 2)."""
    other = ResourceTracker(interval=0.2)
    other.start()
    try:
        with open(os.path.join(other.store, "owner"), "w") as f:
            f.write("999999 12345\n")  # as read in another pid namespace
        mine = ResourceTracker(interval=0.2)
        mine.start()
        mine.stop()
        assert os.path.isdir(other.store)
        assert os.path.exists(os.path.join(other.store, "data.mdb"))
    finally:
        other.stop()


def test_a_tracker_in_another_pid_namespace_keeps_its_store(tmp_path):
    """The same with a real pid namespace (unshare -p, root): its tracker's
    pid is 1-ish there, and names another process here."""
    code = ("import time, rt_tracker\n"
            "t = rt_tracker.ResourceTracker(interval=0.2)\n"
            "t.start(); print(t.store, flush=True); time.sleep(4)\n"
            "print(len(t.process_metrics) > 0, flush=True); t.stop()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    try:
        p = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                              "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    except OSError:
        pytest.skip("no unshare here")
    store = p.stdout.readline().strip()
    if not store:
        p.wait(timeout=30)
        pytest.skip("unshare -p is not permitted here: %s" % p.stderr.read()[-200:])
    try:
        mine = ResourceTracker(interval=0.2)
        mine.start()
        mine.stop()
        assert os.path.isdir(store), "another namespace's live store was removed"
        out, err = p.communicate(timeout=60)
        assert out.strip() == "True", (out, err)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_store_removed_under_a_tracker_is_said_once():
    """Any loss of a tracker's store is said in one line."""
    t = ResourceTracker(interval=0.2)
    t.start()
    time.sleep(0.5)
    shutil.rmtree(t.store)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert len(t.process_metrics) == 0
        with pytest.raises(RuntimeError):
            t.stats()
        t.stop()
    lost = [x for x in w if "was removed while in use" in str(x.message)]
    assert len(lost) == 1, [str(x.message) for x in w]


def test_trackers_sharing_a_store_each_find_their_own_run(tmp_path, monkeypatch):
    """DEFAULT_STORE: rt's own store, shared; run_metadata names the run.
    Two trackers started together (a Metaflow foreach) each read their own
    run, not the newest."""
    monkeypatch.setenv("RT_STORE", str(tmp_path / "store"))
    a = ResourceTracker(interval=0.2, store=rt_tracker.DEFAULT_STORE, job_name="shared",
                        run_metadata={"stage_name": "a", "orchestrator": "metaflow"})
    b = ResourceTracker(interval=0.2, store=rt_tracker.DEFAULT_STORE, job_name="shared",
                        run_metadata={"stage_name": "b"})
    a.start()
    b.start()
    time.sleep(0.8)
    a.stop()
    b.stop()
    assert a.store == b.store == str(tmp_path / "store")
    assert a._resolve_run() != b._resolve_run()
    for t, stage in ((a, "a"), (b, "b")):
        meta = json.loads(t._export("show", str(t._resolve_run())))["metadata"]
        assert meta["stage_name"] == stage and meta["job_name"] == "shared", meta
    with pytest.raises(ValueError):
        ResourceTracker(run_metadata={"nonsense": 1})


def _keeper(tmp_path):
    """tools/keeper_server.py on a free port of 127.0.0.1: (process, URL)."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    server = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "keeper_server.py")
    p = subprocess.Popen([sys.executable, server, str(port), str(tmp_path / "keeper.log")],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p, "http://127.0.0.1:%d" % port


def test_the_answers_agree_with_the_report_and_speak_the_references_keys(tmp_path,
                                                                         monkeypatch):
    """Issue 46 item 4: stats() says what the summary and the report say;
    server_info has allocation, cloud_info the reference's keys (None where
    unknown), recommend_server() Keeper's record (server_id, status, ...),
    recommend_resources() why a value was raised."""
    keeper, url = _keeper(tmp_path)
    monkeypatch.setenv("TRACKER_KEEPER_URL", url)
    try:
        t = ResourceTracker(interval=0.2)
        t.start()
        block = bytearray(80 << 20)
        block[::4096] = b"\x01" * len(block[::4096])
        spin(1.2)
        t.stop()
        st = t.stats()
        js = t.summary()[1]["stats"]
        assert st["process_cpu_usage"]["mean"] == round(js["process_cpu_usage"]["mean"], 2)
        assert st["process_memory_mib"]["mean"] == round(js["process_memory_mib"]["mean"], 2)
        page = str(t.report())
        row = page.split("memory MiB, job (PSS)", 1)[1].split("</tr>", 1)[0]
        assert ">%.0f<" % st["process_memory_mib"]["mean"] in row, (st, row)
        row = page.split("CPU cores, job", 1)[1].split("</tr>", 1)[0]
        assert ">%.2f<" % st["process_cpu_usage"]["mean"] in row, (st, row)
        # a snapshot's stats are the same figures
        assert ResourceTracker.from_snapshot(t.snapshot()).stats() == st
        assert t.server_info["allocation"] in ("shared", "dedicated")
        ci = t.cloud_info
        assert {"vendor", "instance_type", "region", "discovery_time"} <= set(ci), ci
        assert ci["vendor"] is None and ci["instance_type"] is None, ci
        srv = t.recommend_server()
        assert {"server_id", "gpu_memory_total", "status", "vendor_id",
                "min_price_ondemand"} <= set(srv), srv
        reco = t.recommend_resources()
        assert set(reco) == {"cpu", "memory", "gpu", "vram"} and hasattr(reco, "raised_because")
    finally:
        keeper.kill()
        keeper.wait()


def test_recommend_resources_says_why_a_value_was_raised():
    """A 300 MiB spike between two samples raises the memory: the
    recommendation says so (a sample landing on the spike sees it, and
    nothing is raised: tried again, at most 4 times)."""
    for _ in range(4):
        t = ResourceTracker(interval=1)
        t.start()
        time.sleep(1.2)
        block = bytearray(b"\x01") * (300 << 20)
        del block
        time.sleep(1.0)
        t.stop()
        reco = t.recommend_resources()
        if reco.raised_because:
            break
    assert "memory" in reco.raised_because and reco["memory"] >= 256, (dict(reco),
                                                                        reco.raised_because)


def test_tables_speak_the_references_shape():
    """to_dict() is a list of rows (reticulate makes R data.frames of it);
    stats(specs) aggregates as the reference's TinyDataFrame does."""
    from rt_tracker import StatSpec, Table
    t = Table({"a": [1, 2, 3], "b": [4.0, None, 6.0]})
    assert t.to_dict() == [{"a": 1, "b": 4.0}, {"a": 2, "b": None}, {"a": 3, "b": 6.0}]
    assert Table(t.to_dict()).to_columns() == {"a": [1, 2, 3], "b": [4.0, None, 6.0]}
    assert t.stats([StatSpec("a", max), StatSpec("b", lambda v: sum(v) / len(v), round=1,
                                                 agg_name="mean"), ("a", min)]) == \
        {"a": {"max": 3, "min": 1}, "b": {"mean": 5.0}}


def test_a_budget_gone_over_is_said_once(tmp_path):
    """max_memory / max_cpu: rt's budget (issue 46 item 5); the program is
    never stopped, stop() warns with rt's line."""
    t = ResourceTracker(interval=0.2, max_memory="32MiB", max_cpu=4)
    t.start()
    block = bytearray(96 << 20)
    block[::4096] = b"\x01" * len(block[::4096])
    spin(0.8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t.stop()
    over = [x for x in w if issubclass(x.category, rt_tracker.RtBudgetWarning)]
    assert len(over) == 1 and "over budget: memory 32 MiB: peak" in str(over[0].message), \
        [str(x.message) for x in w]
    # rt's line without a program's name: the user ran Python
    assert t.over_budget.startswith("over budget: memory"), t.over_budget
    assert t.over_budget.endswith("CPU 4 cores: mean %s, within" % t.over_budget.split(
        "mean ")[-1].split(",")[0]), t.over_budget  # within its 4 cores
    ok = ResourceTracker(interval=0.2, max_memory="4GiB")
    ok.start()
    spin(0.5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ok.stop()
    assert ok.over_budget is None and not w, [str(x.message) for x in w]


def test_a_report_that_fails_says_rt_exports_line(tmp_path, monkeypatch):
    """An empty page never comes without a word: rt-export's own line in a
    warning and in the page's `error` (issue 52: the Metaflow card read 'no
    report was stored')."""
    real = shutil.which("rt-export")
    assert real, "rt-export on PATH (tests/python.sh puts the build there)"
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    for name in ("rt-recorder", "rt-export-full"):
        os.symlink(os.path.join(os.path.dirname(real), name), prefix / name)
    wrapper = prefix / "rt-export"
    wrapper.write_text("#!/bin/sh\n"
                       "for a in \"$@\"; do [ \"$a\" = report ] && "
                       "{ echo 'rt-export: the report failed on purpose (test)' >&2; exit 1; }; done\n"
                       "exec %s \"$@\"\n" % real)
    wrapper.chmod(0o755)
    monkeypatch.setenv("RT_PREFIX", str(prefix))
    t = ResourceTracker(interval=0.1, autostart=True)
    time.sleep(0.5)
    t.stop()
    with pytest.warns(RtMissingWarning, match="no report: rt-export: the report failed on purpose"):
        page = t.report()
    assert page == "" and page.error == "rt-export: the report failed on purpose (test)"
    monkeypatch.setenv("RT_PREFIX", os.path.dirname(real))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        good = t.report()
    assert good.startswith("<!DOCTYPE html>") and good.error is None


def _touch(mib):
    return b"\x01" * (mib << 20)  # (bytes: every page written)


def test_a_peak_counts_only_when_it_happened_while_tracked():
    """A notebook's kernel that once held 1 GiB, then tracks an idle
    stretch, is not told it needs that GiB (issue 53); a spike inside the
    stretch, between two samples, still is."""
    x = _touch(1024)
    del x
    t = ResourceTracker(interval=0.5, autostart=True)
    time.sleep(1.6)
    t.stop()
    idle = t.recommend_resources()
    assert idle["memory"] <= 512, idle
    x = _touch(1024)
    del x
    t = ResourceTracker(interval=1, autostart=True)
    time.sleep(1.3)
    y = _touch(600)  # between two samples (a sample every 1 s, the mark read at the end)
    del y
    time.sleep(0.8)
    t.stop()
    spike = t.recommend_resources()
    assert spike["memory"] >= 720, spike  # 600 MiB + 20 %


def test_nested_trackers_both_stay_right():
    """An inner tracker in the same process does not reset the mark the
    outer one holds: the outer keeps its peak, the inner leaves the mark of
    before out and says so."""
    outer = ResourceTracker(interval=0.5, autostart=True)
    time.sleep(0.6)
    x = _touch(900)
    del x
    inner = ResourceTracker(interval=0.5, autostart=True)
    time.sleep(1.6)
    inner.stop()
    outer.stop()
    a, b = inner.recommend_resources(), outer.recommend_resources()
    assert a["memory"] <= 512, a
    assert b["memory"] >= 1024, b
    js = json.loads(inner._export("recommend", str(inner._resolve_run()), "--json"))
    assert "predates tracking" in js["recommendation"]["memory_note"], js["recommendation"]


def test_a_snapshot_answers_as_the_tracker_did(tmp_path):
    """from_snapshot(...).recommend_resources() and stats() are rt's answer
    when the snapshot was taken (issue 53: it raised 'No metrics collected
    yet'); the reference's dump() format (gzipped JSON) round-trips, and an
    older plain-JSON dump still loads."""
    t = ResourceTracker(interval=0.2, autostart=True)
    spin(0.8)
    t.stop()
    live_reco, live_stats = t.recommend_resources(), t.stats()
    snap = t.snapshot()
    assert snap["rt_recommendation"]["memory_mib"] == live_reco["memory"]
    back = ResourceTracker.from_snapshot(json.loads(json.dumps(snap)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert back.recommend_resources() == live_reco
        assert back.stats() == live_stats
    assert back.n_samples == t.n_samples >= 3
    path = back.dump(str(tmp_path / "snap.json.gz"))
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "gzipped, as the reference writes it"
    assert ResourceTracker.load(path).recommend_resources() == live_reco
    (tmp_path / "old.json").write_text(json.dumps(snap))
    assert ResourceTracker.load(str(tmp_path / "old.json")).n_samples == t.n_samples
    # the second snapshot of a snapshot keeps rt's answer
    assert ResourceTracker.from_snapshot(back.snapshot()).recommend_resources() == live_reco


def test_a_snapshot_of_the_reference_is_read():
    """The reference's snapshot (its process and system tables as rows, no
    answer of rt's): read, not 0 samples; recommended by the reference's
    rules, said once."""
    rows = 4
    snap = {
        "metadata": {"pid": 1, "children": True, "interval": 1, "method": None,
                     "track_processes": True, "track_system": True, "discover_server": True,
                     "discover_cloud": False, "start_time": 100.0, "stop_time": 104.0},
        "server_info": {"vcpus": 2}, "cloud_info": {},
        "process_metrics": [{"timestamp": 100.0 + i, "pid": 1, "children": 0, "utime": 0.5,
                             "stime": 0.1, "cpu_usage": 0.6, "memory_mib": 300.0 + i,
                             "disk_read_bytes": 0, "disk_write_bytes": 0, "gpu_usage": 0.0,
                             "gpu_vram_mib": 0.0, "gpu_utilized": 0} for i in range(rows)],
        "system_metrics": [{"timestamp": 100.0 + i, "processes": 90, "utime": 1.0, "stime": 0.2,
                            "cpu_usage": 1.2, "memory_used_mib": 2000.0, "gpu_usage": 0.0,
                            "gpu_vram_mib": 0.0, "gpu_utilized": 0} for i in range(rows)],
    }
    t = ResourceTracker.from_snapshot(snap)
    assert t.n_samples == rows
    assert t.stats()["process_memory_mib"]["max"] == 303.0
    with pytest.warns(RtMissingWarning, match="reference's rules"):
        r = t.recommend_resources()
    assert r["memory"] == 512 and r["cpu"] == 1, r


def test_stats_take_the_references_statspec_and_cleanup_removes_the_store():
    from statistics import mean

    from rt_tracker import StatSpec
    from rt_tracker.tiny_data_frame import StatSpec as RefStatSpec, TinyDataFrame

    assert RefStatSpec is StatSpec and issubclass(TinyDataFrame, rt_tracker.Table)
    t = ResourceTracker(interval=0.2, autostart=True)
    spin(0.8)
    t.stop()
    st = t.stats(specs=[StatSpec(column="process_cpu_usage", agg=mean, round=2),
                        StatSpec("process_memory_mib", max),
                        StatSpec("process_memory_mib", len, agg_name="count"),
                        ("process_cpu_usage", "max")])
    assert st["process_cpu_usage"]["mean"] == t.stats()["process_cpu_usage"]["mean"]
    assert st["process_memory_mib"]["count"] == t.n_samples
    assert isinstance(st["process_memory_mib"]["max"], float)
    assert all(isinstance(v, float) for v in t.process_metrics["memory_mib"]), "floats, as the reference's"
    store = t.store
    assert os.path.isdir(store)
    t.cleanup()
    assert not os.path.exists(store)


def test_views_for_jupyter_and_to_pandas_without_pandas(monkeypatch):
    """Tables, reports and trackers render as HTML in Jupyter (escaped);
    to_pandas() without pandas says what to do in one line."""
    from rt_tracker.table import Table
    from rt_tracker.tracker import Report
    t = Table([{"timestamp": 1.5, "name": "<b>x</b>"}] * 12)
    page = t._repr_html_()
    assert "Table with 12 rows and 2 columns" in page and "... 2 more rows" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page.replace("<b>Table", "")
    rep = Report("<html><body>\"quoted\" & more</body></html>")
    frame = rep._repr_html_()
    assert frame.startswith("<iframe srcdoc=\"") and "&quot;quoted&quot; &amp; more" in frame
    empty = Report("")
    empty.error = "rt-export: <nothing>"
    assert "rt-export: &lt;nothing&gt;" in empty._repr_html_()
    tracker = ResourceTracker(interval=0.2)
    assert "not started, 0 samples" in tracker._repr_html_()
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas: ImportError
    with pytest.raises(ImportError, match="to_pandas\\(\\) needs pandas, which is not installed"):
        t.to_pandas()
