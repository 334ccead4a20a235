#!/usr/bin/env python3
"""fidelity.py - rt's process-tree figures against the kernel's own accounting.

    fidelity.py drive BUILD WORKDIR DATADIR [SHAPE...]   (root: cgroups)
    fidelity.py job SHAPE DATADIR                         (one job shape)

For each job shape the driver makes a cgroup of its own (v2, else v1's
cpuacct, memory and pids), runs `resource-tracker -i 0.2 -- JOB` with the
job entering that cgroup first, and compares what rt recorded for the tree
with an independent truth:

  CPU seconds     the cgroup's usage (cpu.stat usage_usec / cpuacct.usage)
  PSS peak        a watcher (this process, outside the job's tree) that
                  lists the cgroup's processes every 20 ms and sums their
                  smaps_rollup "Pss:"; also checked sample by sample: every
                  rt sample taken while the watcher saw a steady sum must
                  match it (the samples where a worker first appears too)
  RSS peak        the same watcher's sum of "Rss:" (the summary's peak)
  disk bytes      the loop device that holds DATADIR (its sectors read and
                  written), for the shapes that read or write it
  procs, threads  the watcher's largest count of processes and of threads
                  (shapes whose counts hold still for a while)

  cores/sample    every sample's CPU at most the host's CPUs times its
                  interval (killtree, poolstorm: 10 runs each, CPU only)
  memory peak     the job's own ru_maxrss, for peaks between samples
                  (spike: 1 GiB for 200 ms at -i 1; short: a job shorter
                  than one interval, asked for 64 MiB): the answer's peak,
                  the recommendation and the efficiency within 5 %

Where rt's definition differs from the kernel's on purpose, the table says
so: the cgroup's memory peak also counts page cache and kernel memory, so
it is shown beside PSS, never compared with it. rt prints memory in whole
MiB (the reference's JSON), so memory figures may differ by 1 MiB more than
the 2 % allowed. The summary's recommendation is checked against the rules
applied to the true peaks. Exit 1 on any figure out of bounds.
"""
import ctypes
import json
import mmap
import os
import subprocess
import sys
import threading
import time

MIB = 1 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- job shapes

def touch(buf, start, end, value=None):
    """Fault in every page of buf[start:end] (reading, or writing value)."""
    if value is None:
        s = 0
        for i in range(start, end, PAGE):
            s += buf[i]
        return s
    for i in range(start, end, PAGE):
        buf[i] = value
    return 0


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x


def shape_forkpool(data):
    """600-MiB-style parent (300 MiB here) that forks 3 workers, 3 rounds:
    the workers share every page, then each writes its own 40 MiB slice
    (copy-on-write breaks), then exit."""
    a = bytearray(b"\x01") * (300 * MIB)
    time.sleep(1.0)
    for rnd in range(3):
        pids = []
        for w in range(3):
            pid = os.fork()
            if pid == 0:
                time.sleep(1.0)  # every page shared with the parent
                touch(a, w * 40 * MIB, (w + 1) * 40 * MIB, 2 + rnd)
                time.sleep(1.0)  # 40 MiB of its own
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        time.sleep(0.6)


def shape_threads(data):
    """A pool of 8 threads, each with 20 MiB of its own, hashing in
    parallel (hashlib releases the GIL) for about 2 s."""
    import hashlib

    def work():
        buf = bytearray(b"\x03") * (20 * MIB)
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            hashlib.sha256(buf).digest()
        time.sleep(0.6)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    time.sleep(0.4)


def shape_execchain(data):
    """sh -c -> env -> python: the last one allocates 100 MiB and spins."""
    code = ("import time\n"
            "a = bytearray(b'\\x01') * (100 << 20)\n"
            "end = time.process_time() + 1.5\n"
            "while time.process_time() < end: pass\n"
            "time.sleep(0.6)\n")
    subprocess.run(["sh", "-c", 'env python3 -c "$0"; true', code], check=True)
    time.sleep(0.4)


def shape_storm(data):
    """Hundreds of short processes a second for 3 s."""
    end = time.monotonic() + 3.0
    n = 0
    while time.monotonic() < end:
        pid = os.posix_spawn("/bin/true", ["true"], os.environ)
        os.waitpid(pid, 0)
        n += 1
        if n % 10 == 0:
            time.sleep(0.01)
    time.sleep(0.4)


def shape_daemon(data):
    """A child that daemonizes a grandchild (setsid, double fork) and exits
    at once; the grandchild allocates 60 MiB and spins 1 s."""
    done = os.path.join(data, "daemon.done")
    if os.path.exists(done):
        os.unlink(done)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            a = bytearray(b"\x01") * (60 * MIB)
            burn(1.0)
            time.sleep(0.6)
            del a
            open(done, "w").close()
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
    for _ in range(500):  # bounded: 10 s
        if os.path.exists(done):
            break
        time.sleep(0.02)
    time.sleep(0.5)


def shape_mapfile(data):
    """Map a 200 MiB file (not cached) and read every page: its mapped
    pages are the job's PSS while mapped; then read() it again, which only
    fills the page cache (the cgroup counts that, PSS does not)."""
    path = os.path.join(data, "big")
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        touch(m, 0, len(m))
        time.sleep(1.0)
        m.close()
        time.sleep(0.6)
        while f.read(MIB):
            pass
    time.sleep(0.6)


def shape_shm(data):
    """100 MiB in a /dev/shm file and 50 MiB of SysV shared memory, mapped
    by the parent and two children that touch every page: PSS counts each
    page once across the tree, RSS three times."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    path = "/dev/shm/rt-fidelity-%d" % os.getpid()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.unlink(path)  # the mapping keeps it
    os.ftruncate(fd, 100 * MIB)
    m = mmap.mmap(fd, 100 * MIB, mmap.MAP_SHARED)
    touch(m, 0, len(m), 1)
    sid = libc.shmget(0, 50 * MIB, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if sid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    addr = libc.shmat(sid, None, 0)
    libc.shmctl(sid, 0, None)  # IPC_RMID: gone once detached everywhere
    ctypes.memset(addr, 1, 50 * MIB)
    seg = (ctypes.c_char * (50 * MIB)).from_address(addr)
    time.sleep(0.8)
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            touch(m, 0, len(m))
            s = 0
            for i in range(0, 50 * MIB, PAGE):
                s += seg[i][0]
            time.sleep(1.5)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    time.sleep(0.6)


def shape_fsync(data):
    """Write 200 MiB to a file and fsync it."""
    path = os.path.join(data, "out")
    chunk = b"\x05" * MIB
    with open(path, "wb") as f:
        for _ in range(200):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    time.sleep(0.6)
    os.unlink(path)


def spin_forever():
    os.execv("/bin/sh", ["sh", "-c", "while :; do :; done"])


def shape_killtree(data):
    """1000 processes spinning, killed at once with killpg: 10 leaders
    (reaped by the job) with 99 children each (orphaned by the kill: reaped
    by the tracker's guardian)."""
    r, w = os.pipe()
    go_r, go_w = os.pipe()  # everyone spins once every one is started
    pgid = 0
    leaders = []
    for _ in range(10):
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, pgid)
            os.close(r)
            os.close(go_w)
            for _ in range(99):
                if os.fork() == 0:
                    os.close(w)
                    os.read(go_r, 1)
                    spin_forever()
            os.write(w, b"x")
            os.close(w)
            os.read(go_r, 1)
            spin_forever()
        try:
            os.setpgid(pid, pgid)
        except OSError:
            pass  # the child did it first (or exec'd)
        pgid = pgid or pid
        leaders.append(pid)
    os.close(w)
    started = 0
    while started < 10:
        got = os.read(r, 16)
        if not got:
            break
        started += len(got)
    os.close(go_w)
    time.sleep(1.5)
    os.killpg(pgid, 9)
    for pid in leaders:
        os.waitpid(pid, 0)
    time.sleep(0.6)


def shape_poolstorm(data):
    """A pool of 200 forked workers that burn CPU and all exit in the same
    moment, reaped by their parent as fast as it can."""
    deadline = time.monotonic() + 2.0
    pids = []
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            x = 0
            while time.monotonic() < deadline:
                x += 1
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    time.sleep(0.6)


def write_maxrss(data, name):
    """The kernel's own peak RSS of this process and of its reaped children
    (getrusage: ru_maxrss, KiB), the truth for peaks between samples."""
    import resource
    kib = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
              resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    with open(os.path.join(data, name + ".maxrss"), "w") as f:
        f.write(str(kib))


def shape_spike(data):
    """1 GiB for 200 ms, between two samples of a 1 s interval."""
    time.sleep(1.3)
    a = bytearray(b"\x01") * (1 << 30)
    time.sleep(0.2)
    del a
    time.sleep(1.5)
    write_maxrss(data, "spike")


def shape_short(data):
    """A job shorter than one interval: 100 MiB for 0.3 s, asked for 64 MiB."""
    a = bytearray(b"\x01") * (100 * MIB)
    time.sleep(0.3)
    del a
    write_maxrss(data, "short")


def shape_starved(data):
    """4 workers busy for 4 s each on a host kept busy by 2 other spinners
    (the driver's, outside the job): they want 4 cores and get fewer."""
    end = time.monotonic() + 4.0
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            while time.monotonic() < end:
                pass
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


SHAPES = {
    "forkpool": shape_forkpool,
    "threads": shape_threads,
    "execchain": shape_execchain,
    "storm": shape_storm,
    "daemon": shape_daemon,
    "mapfile": shape_mapfile,
    "shm": shape_shm,
    "fsync": shape_fsync,
    "killtree": shape_killtree,
    "poolstorm": shape_poolstorm,
    "spike": shape_spike,
    "short": shape_short,
    "starved": shape_starved,
}
# CPU the job wanted: run beside spinners outside it, truth by construction
DEMAND_SHAPES = {"starved": (2, 4 * 4.0)}  # spinners beside it, CPU seconds wanted
# shapes whose memory peak falls between samples: their own interval and
# options, the truth being the job's ru_maxrss (memory figures only)
PEAK_SHAPES = {"spike": ["-i", "1"], "short": ["-i", "1", "--request", "memory=64M"]}
# shapes about the tree's CPU when many members end at once: run RUNS
# times each, memory figures not compared (a watcher cannot read 1000
# processes' smaps_rollup every 20 ms)
CPU_SHAPES = {"killtree", "poolstorm"}
# (3 under the sanitizers: the same paths, at a fifth of the speed)
RUNS = 10 if os.environ.get("RT_SANITIZE", "OFF") in ("", "OFF") else 3
# shapes whose process and thread counts hold still long enough to compare
STEADY_COUNTS = {"forkpool", "threads", "execchain", "shm", "fsync", "mapfile", "daemon"}


# ---------------------------------------------------------------- cgroups

def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Cgroup:
    """A cgroup of the test's own: v2 (cpu.stat, memory.peak, pids.peak)
    or v1 (cpuacct, memory, pids)."""

    def __init__(self, name):
        self.dirs = []
        root = "/sys/fs/cgroup"
        if os.path.exists(root + "/cgroup.controllers"):
            self.v2 = True
            ctl = read(root + "/cgroup.subtree_control").split()
            for c in ("memory", "pids"):
                if c not in ctl:
                    try:
                        write(root + "/cgroup.subtree_control", "+" + c)
                    except OSError:
                        pass
            d = root + "/" + name
            os.mkdir(d)
            self.dirs = [d]
            self.procs = [d + "/cgroup.procs"]
        else:
            self.v2 = False
            for c in ("cpuacct", "memory", "pids"):
                d = "%s/%s/%s" % (root, c, name)
                if not os.path.isdir(os.path.dirname(d)):
                    raise OSError("no %s controller" % c)
                os.mkdir(d)
                self.dirs.append(d)
            self.procs = [d + "/cgroup.procs" for d in self.dirs]

    def pids(self):
        try:
            return [int(x) for x in read(self.procs[0]).split()]
        except OSError:
            return []

    def cpu_secs(self):
        if self.v2:
            for line in read(self.dirs[0] + "/cpu.stat").splitlines():
                k, v = line.split()
                if k == "usage_usec":
                    return int(v) / 1e6
            return None
        return int(read(self.dirs[0] + "/cpuacct.usage")) / 1e9

    def memory_peak_mib(self):
        f = self.dirs[0] + "/memory.peak" if self.v2 else self.dirs[1] + "/memory.max_usage_in_bytes"
        try:
            return int(read(f)) / MIB
        except (OSError, ValueError):
            return None

    def pids_peak(self):
        try:
            return int(read(self.dirs[-1] + "/pids.peak"))
        except (OSError, ValueError):
            return None

    def remove(self):
        for d in reversed(self.dirs):
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.05)


# ---------------------------------------------------------------- the watcher

def kb_fields(path, keys):
    out = dict.fromkeys(keys, 0)
    with open(path) as f:
        for line in f:
            k = line.split(":", 1)[0]
            if k in out:
                out[k] = int(line.split()[1])
    return out


PF_EXITING = 0x4


def exiting(pid):
    """Whether pid is gone or on its way out (its pages being unmapped)."""
    try:
        st = read("/proc/%d/stat" % pid)
        return st[st.rindex(")") + 2] in "ZX" or int(st[st.rindex(")") + 2:].split()[6]) & PF_EXITING
    except (OSError, ValueError, IndexError):
        return True


class Watcher(threading.Thread):
    """Every 20 ms: the cgroup's processes, their smaps_rollup Pss and Rss
    and their threads, summed. A sum is only as true as its moment: a pass
    during which a member started exiting (its shared pages changing hands
    while the others are read) or the membership changed is not kept, and
    a process that shares its parent's whole address space (a vfork child
    before its exec, CLONE_VM) counts once, as the kernel charges it."""

    def __init__(self, cg):
        super().__init__(daemon=True)
        self.cg = cg
        self.stop = threading.Event()
        self.reads = []  # (time, seconds, procs, threads, pss_kib, rss_kib, {pid: pss_kib})

    def run(self):
        while not self.stop.is_set():
            t0 = time.time()
            pids = self.cg.pids()
            procs = threads = pss = rss = 0
            each = {}
            steady = True
            for pid in pids:
                try:
                    m = kb_fields("/proc/%d/smaps_rollup" % pid, ("Pss", "Rss"))
                    th = kb_fields("/proc/%d/status" % pid, ("Threads",))["Threads"]
                except (OSError, ValueError, IndexError):
                    steady = False  # gone meanwhile
                    continue
                procs += 1
                threads += th
                if not same_vm_as_parent(pid):
                    pss += m["Pss"]
                    rss += m["Rss"]
                    each[pid] = m["Pss"]
            steady = steady and self.cg.pids() == pids and not any(exiting(p) for p in pids)
            t1 = time.time()
            if procs and steady:
                self.reads.append(((t0 + t1) / 2, t1 - t0, procs, threads, pss, rss, each))
            self.stop.wait(max(0.0, 0.02 - (t1 - t0)))


_libc = ctypes.CDLL(None, use_errno=True)
_SYS_KCMP = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)


def same_vm_as_parent(pid):
    """kcmp(KCMP_VM): pid runs in its parent's address space."""
    if _SYS_KCMP is None:
        return False
    try:
        st = read("/proc/%d/stat" % pid)
        ppid = int(st[st.rindex(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return _libc.syscall(_SYS_KCMP, pid, ppid, 1, 0, 0) == 0


# ---------------------------------------------------------------- the driver

def blockdev_of(path):
    """The block device (sysfs name) of the filesystem holding path."""
    st = os.stat(path)
    name = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    for dev in os.listdir("/sys/block"):
        try:
            if read("/sys/block/%s/dev" % dev).strip() == name:
                return dev
        except OSError:
            pass
    return None


def sectors(dev):
    f = read("/sys/block/%s/stat" % dev).split()
    return int(f[2]) * 512, int(f[6]) * 512  # bytes read, written


def round_memory(mib):
    for step in (128, 256, 512, 1024, 2048):
        if mib <= step:
            return step
    return -(-mib // 1024) * 1024


def within(rt, truth, pct=2.0, abs_mib=0.0):
    return abs(rt - truth) <= truth * pct / 100.0 + abs_mib


def in_flux(rows, k):
    """Whether rt's sample k was read while the tree's pages moved: the
    next sample's PSS differs by over 2 % + 1 MiB, or its member count
    differs (a member on its way in or out)."""
    if k + 1 >= len(rows):
        return False
    a, b = rows[k]["cpu"], rows[k + 1]["cpu"]
    if not b["process_threads"]:
        return True
    return (abs(b["process_pss_mib"] - a["process_pss_mib"]) > 0.02 * a["process_pss_mib"] + 1
            or b["process_child_count"] != a["process_child_count"])


def say_stderr(shape, text):
    """The tracker's own lines, the slow-sample warnings counted in one (a
    loaded host prints dozens, which would push the table out of a log's
    head)."""
    slow = [l for l in text.splitlines() if "cannot keep up" in l]
    for l in text.splitlines():
        if "cannot keep up" not in l:
            print("  %s: %s" % (shape, l))
    if slow:
        print("  %s: %d warnings that sampling could not keep up, the last: %s"
              % (shape, len(slow), slow[-1]))


def read_in_flux(reads, q):
    """Whether the watcher's read q was taken while the tree's pages moved:
    its next read holds another RSS (over 1 %) or another process count."""
    i = reads.index(q)
    if i + 1 >= len(reads):
        return False
    n = reads[i + 1]
    return n[2] != q[2] or abs(n[5] - q[5]) > 0.01 * max(n[5], q[5])


def prepare(shape, data):
    if shape == "mapfile":
        path = os.path.join(data, "big")
        with open(path, "wb") as f:
            chunk = os.urandom(MIB)
            for _ in range(200):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)  # the file alone leaves the page cache


def drive_one(build, work, data, shape, table):
    prepare(shape, data)
    cg = Cgroup("rt-fidelity-%d-%s" % (os.getpid(), shape))
    out = os.path.join(work, shape + ".jsonl")
    me = os.path.abspath(__file__)
    enter = 'for f in "$@"; do echo $$ > "$f" || exit 99; done; '
    opts = PEAK_SHAPES.get(shape, ["-i", "0.2"])
    cmd = [build + "/resource-tracker"] + opts + ["-o", out, "--job-name", "fid-" + shape, "--",
           "sh", "-c", enter + 'exec python3 "$0" job ' + shape + ' "' + data + '"', me] + cg.procs
    dev = blockdev_of(data)
    io0 = sectors(dev) if dev else None
    w = Watcher(cg)
    watched = shape not in CPU_SHAPES and shape not in PEAK_SHAPES and shape not in DEMAND_SHAPES
    spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(DEMAND_SHAPES.get(shape, (0, 0))[0])]
    if watched:
        w.start()
    try:
        run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             timeout=300)
        rc = run.returncode
        say_stderr(shape, run.stderr)
    finally:
        w.stop.set()
        if watched:
            w.join()
        for p in spinners:
            p.kill()
            p.wait()
    io1 = sectors(dev) if dev else None
    truth_cpu = cg.cpu_secs()
    cg_mem = cg.memory_peak_mib()
    cg_pids = cg.pids_peak()
    cg.remove()
    if rc != 0:
        print("FAIL: %s: the tracker exited %d" % (shape, rc))
        return False
    rows = [json.loads(l) for l in open(out)]
    c = [r["cpu"] for r in rows]
    if os.environ.get("RT_FIDELITY_DUMP"):
        for q in w.reads:
            print("  watch %.3f procs %d pss %.1f rss %.1f" % (q[0], q[2], q[4] / 1024, q[5] / 1024))
        for r in rows:
            print("  rt    %.3f procs %d pss %d" % (r["timestamp"], r["cpu"]["process_child_count"] + 1,
                                                  r["cpu"]["process_pss_mib"]))
    ok = True
    res = []

    def check(figure, rtv, truth, good, note=""):
        nonlocal ok
        err = (rtv - truth) / truth * 100 if truth else 0.0
        res.append((shape, figure, rtv, truth, err, "ok" if good else "FAIL", note))
        ok = ok and good

    reads = w.reads
    # a peak is a moment the next read confirms (within 1 %): a sum read
    # while pages change hands between the members it reads is no moment's
    # truth (children mapping shared pages read 5 % above the cgroup's own
    # charged peak for one 20 ms pass)
    # For PSS, each member's own share must hold too: while a child maps
    # the parent's shared pages, a pass reads the parent before its share
    # halves and the child after, and the sum runs high for as long as the
    # touching lasts (two passes seen: +5 %, the cgroup's charged peak
    # agreeing with rt). Shapes with no such moment keep the sum's rule.
    def same_members(a, b):
        return a[6].keys() == b[6].keys() and all(
            abs(a[6][p] - b[6][p]) <= max(a[6][p], b[6][p]) * 0.01 + 64 for p in a[6])

    def peak(k, members=False):
        best = 0
        for a, b in zip(reads, reads[1:]):
            if abs(a[k] - b[k]) <= max(a[k], b[k]) * 0.01 and (not members or same_members(a, b)):
                best = max(best, min(a[k], b[k]))
        return best / 1024
    t_pss, t_rss = peak(4, True) or peak(4), peak(5)
    raw_pss = max(r[4] for r in reads) / 1024 if reads else 0
    rt_cpu = sum(x["process_utime_secs"] + x["process_stime_secs"] for x in c)
    check("CPU seconds", rt_cpu, truth_cpu, within(rt_cpu, truth_cpu, 2.0, 0.02),
          "cgroup cpu usage")
    # sample by sample: no interval holds more CPU than the host's CPUs
    # could give in it (a member counted live and again in its reaper's
    # figures would)
    ncpu = os.cpu_count()
    worst, over = 0.0, 0
    for a, b in zip(rows, rows[1:]):
        dt = b["timestamp"] - a["timestamp"]
        used = b["cpu"]["process_utime_secs"] + b["cpu"]["process_stime_secs"]
        if dt > 0:
            worst = max(worst, used / dt)
            over += used > dt * ncpu + 0.001
    check("cores, worst sample", worst, ncpu, over == 0,
          "bound: the host's %d CPUs (%d samples above)" % (ncpu, over))
    if shape in CPU_SHAPES:
        table.extend(res)
        return ok
    if shape in DEMAND_SHAPES:
        # what the job wanted: used + waited for a CPU, against the CPU
        # seconds its busy workers wanted by construction; the
        # recommendation goes by it
        wait = sum((x.get("process_cpu_wait_secs") or 0) for x in c)
        want = DEMAND_SHAPES[shape][1]
        check("CPU wanted s", rt_cpu + wait, want, abs(rt_cpu + wait - want) <= want * 0.1,
              "4 workers busy 4 s each (used + waited, schedstat)")
        rec = json.loads(subprocess.run([build + "/rt-export", "recommend", "latest", "--json"],
                                        capture_output=True, text=True, check=True).stdout)
        got = rec["recommendation"]["cpu"]
        check("recommended vCPUs", got, 4, got == 4, "the 4 cores it wanted, not what it got")
        table.extend(res)
        return ok
    if shape in PEAK_SHAPES:
        # the peak between samples (or in a run with no full interval):
        # the answer's memory peak, the recommendation and the efficiency
        # against the kernel's ru_maxrss of the job
        truth = int(open(os.path.join(data, shape + ".maxrss")).read()) / 1024
        summ = json.loads(subprocess.run([build + "/rt-export", "summary", "latest", "--json"],
                                         capture_output=True, text=True, check=True).stdout)
        peak = summ.get("process_memory_peak_mib") or 0
        check("memory peak MiB", peak, truth, abs(peak - truth) <= truth * 0.05,
              "the job's ru_maxrss")
        rec = json.loads(subprocess.run([build + "/rt-export", "recommend", "latest", "--json"],
                                        capture_output=True, text=True, check=True).stdout)
        want = {round_memory(truth * 1.2 * k) for k in (0.95, 1.0, 1.05)}
        got = rec["recommendation"]["memory_mib"]
        check("recommended MiB", got, round_memory(truth * 1.2), got in want,
              "ru_maxrss x 1.2, rounded to a server size")
        if shape == "short":
            eff = (summ.get("efficiency") or {}).get("memory_peak_mib") or 0
            check("peak vs request", eff, truth, abs(eff - truth) <= truth * 0.05,
                  "--request memory=64M: the efficiency's peak")
        table.extend(res)
        return ok
    rt_pss = max(x["process_pss_mib"] for x in c)
    # a sample read while the members' pages changed hands (children
    # faulting in a shared segment: every reader's sum, the watcher's too,
    # runs high for those ~40 ms) is no moment's truth: the peak of the
    # samples read while the tree held still must match; one read in flux
    # may top it, by no more than the watcher's own reads in flux did
    settled = [x["process_pss_mib"] for k, x in enumerate(c) if not in_flux(rows, k)]
    rt_settled = max(settled, default=rt_pss)
    flux_peak = rt_pss > rt_settled
    check("PSS peak MiB", rt_pss, t_pss,
          within(rt_settled, t_pss, 2.0, 1.0) and rt_pss <= raw_pss * (1.05 if flux_peak else 1.02) + 1,
          "watcher: sum of smaps_rollup Pss" +
          ("; cgroup memory peak %.0f MiB (+ page cache, kernel)" % cg_mem if cg_mem else "") +
          ("; peak of settled samples %d MiB, the top one read in flux (watcher's highest %.1f)"
           % (rt_settled, raw_pss) if flux_peak else ""))
    summ = json.loads(subprocess.run([build + "/rt-export", "summary", "latest", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    rt_rss = summ["process_rss_peak_mib"]
    if shape in STEADY_COUNTS:
        check("RSS peak MiB", rt_rss, t_rss, within(rt_rss, t_rss, 2.0, 1.0),
              "watcher: sum of smaps_rollup Rss")
    else:
        # members that live a few ms (a storm): each counts its whole RSS
        # (libraries and all) while it lives, and a sample meets it or not:
        # rt's peak lies between the watcher's peak over the member counts
        # rt's samples saw and its peak over all
        seen = max((x["process_child_count"] + 1 for x in c if x["process_threads"]), default=0)
        low = max((min(a[5], b[5]) for a, b in zip(reads, reads[1:])
                   if a[2] <= seen and b[2] <= seen), default=0) / 1024
        check("RSS peak MiB", rt_rss, t_rss,
              low * 0.98 - 1 <= rt_rss <= t_rss * 1.02 + 1,
              "watcher: sum of smaps_rollup Rss, %.1f MiB over the member counts rt saw "
              "(up to %d)" % (low, seen))
    if shape in ("mapfile", "fsync") and io0:
        rd = sum(x["process_disk_read_bytes"] for x in c) / MIB
        wr = sum(x["process_disk_write_bytes"] for x in c) / MIB
        if shape == "mapfile":
            check("read MiB", rd, (io1[0] - io0[0]) / MIB,
                  within(rd, (io1[0] - io0[0]) / MIB, 2.0), dev + " sectors read")
        else:
            check("written MiB", wr, (io1[1] - io0[1]) / MIB,
                  within(wr, (io1[1] - io0[1]) / MIB, 2.0), dev + " sectors written")
    rt_procs = max(x["process_child_count"] + 1 for x in c)
    rt_threads = max(x["process_threads"] for x in c)
    t_procs = max(r[2] for r in reads) if reads else 0
    t_threads = max(r[3] for r in reads) if reads else 0
    if shape in STEADY_COUNTS:
        # a count that held across two watcher passes (20 ms) is one rt's
        # samples must see; one the watcher caught once may be a process
        # that lived a few ms (daemon's middle child), which a sample may
        # or may not meet: rt's peak lies between the two
        def held(k):
            return max((min(a[k], b[k]) for a, b in zip(reads, reads[1:])), default=0)
        for name, got, k, top in (("processes peak", rt_procs, 2, t_procs),
                                  ("threads peak", rt_threads, 3, t_threads)):
            low = held(k)
            check(name, got, low, low <= got <= top,
                  "watcher: %d held across two passes%s" %
                  (low, ", %d for one pass" % top if top != low else ""))
    elif cg_pids:
        # counts of processes that live a millisecond are instantaneous:
        # rt's largest cannot exceed the kernel's own peak of tasks
        check("threads peak", rt_threads, cg_pids, rt_threads <= cg_pids,
              "bound: cgroup pids.peak (momentary processes)")
    # sample by sample, at the same moment: the watcher's reads nearest
    # before and after each rt sample (within 50 ms, same process count)
    # bracket the truth at that moment; rt must be inside the bracket
    # (+- 2 % + 1 MiB). The samples where a member first appears included.
    # A sample the recorder itself flagged as late (its interval, or the
    # next one, over 1.5x the usual: a host so loaded that one sample took
    # seconds) was not read at its timestamp: it is skipped, and counted.
    checked = bad = newcomers = transient = late = 0
    prev_procs = 0
    pss_series = [x["cpu"]["process_pss_mib"] for x in rows]
    gaps = sorted(r.get("actual_interval_ms") or 0 for r in rows if r.get("actual_interval_ms"))
    usual = gaps[len(gaps) // 2] if gaps else 0
    for k, r in enumerate(rows):
        ts = r["timestamp"]
        x = r["cpu"]
        procs = x["process_child_count"] + 1 if x["process_threads"] else 0
        nxt_gap = rows[k + 1].get("actual_interval_ms") or 0 if k + 1 < len(rows) else 0
        if usual and max(r.get("actual_interval_ms") or 0, nxt_gap) > 1.5 * usual:
            late += 1
            prev_procs = procs
            continue
        before = [q for q in reads if ts - 0.05 <= q[0] <= ts and q[2] == procs]
        after = [q for q in reads if ts < q[0] <= ts + 0.05 and q[2] == procs]
        near = before[-1:] + after[:1]
        if procs and near:
            checked += 1
            newcomers += procs > prev_procs
            lo, hi = min(q[4] for q in near) / 1024, max(q[4] for q in near) / 1024
            if not (lo * 0.98 - 1 <= x["process_pss_mib"] <= hi * 1.02 + 1):
                # no reader has an atomic snapshot of a tree's pages: a
                # sample read while pages changed hands (rt's own next
                # sample differs) may be off for that one sample
                # (or a member was on its way out: the next sample has
                # another process count)
                nxt = pss_series[k + 1] if k + 1 < len(rows) else None
                nproc = (rows[k + 1]["cpu"]["process_child_count"] + 1
                         if k + 1 < len(rows) and rows[k + 1]["cpu"]["process_threads"] else 0)
                # (or the watcher's own reads around it, 50 ms apart, moved
                # by more than the tolerance: the truth itself was moving)
                # (or a watcher read of the bracket was itself taken in
                # flux: its next read, 20 ms on, holds another RSS)
                moving = (nxt is not None and (abs(nxt - x["process_pss_mib"]) > 0.02 * hi + 1
                                               or nproc != procs)) or hi - lo > 0.02 * hi + 1 \
                    or any(read_in_flux(reads, q) for q in near)
                if moving:
                    transient += 1
                else:
                    bad += 1
                print("  %s: sample at %.2f: rt %d MiB, smaps_rollup %.1f..%.1f MiB (%d procs)%s"
                      % (shape, ts, x["process_pss_mib"], lo, hi, procs,
                         " (read mid-change: next sample %s MiB, %d procs)" % (nxt, nproc)
                         if moving else ""))
        prev_procs = procs
    live = sum(1 for r in rows if r["cpu"]["process_threads"])
    # a storm changes its process count every few ms: fewer samples have
    # a same-count read on both sides
    need = (live - late) // 3 if shape == "storm" else (live - late) * 2 // 3
    # samples read mid-change: at most one in ten of those checked (two in
    # a short run: the watcher saw the truth itself moving around them)
    good = (bad == 0 and transient <= max(2, checked // 10) and checked >= need
            and (shape != "forkpool" or newcomers >= 3))
    res.append((shape, "PSS each sample", checked - bad, checked, 0.0, "ok" if good else "FAIL",
                "samples within their moment's bracket / checked (of %d with a live tree; "
                "%d where a member first appears; %d read mid-change; %d late, skipped)"
                % (live, newcomers, transient, late)))
    ok = ok and good
    # the recommendation follows from the true peaks by the rules
    rec = json.loads(subprocess.run([build + "/rt-export", "recommend", "latest", "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    r = rec["recommendation"]
    if not r.get("raised_because"):
        want = {round_memory(t_pss * 1.2 * k) for k in (0.98, 1.0, 1.02)}
        check("recommended MiB", r["memory_mib"], round_memory(t_pss * 1.2),
              r["memory_mib"] in want, "peak PSS (truth) x 1.2, rounded to a server size")
        dur = summ["run"]["duration_secs"]
        cores = truth_cpu / dur if dur else 0
        want = {max(1, round(cores * k)) for k in (0.95, 1.0, 1.05)}
        check("recommended vCPUs", r["cpu"], max(1, round(cores)), r["cpu"] in want,
              "cgroup CPU / duration, rounded, at least 1")
    table.extend(res)
    return ok


def main():
    if sys.argv[1] == "job":
        SHAPES[sys.argv[2]](sys.argv[3])
        return 0
    build, work, data = sys.argv[2:5]
    shapes = sys.argv[5:] or list(SHAPES)
    table = []
    ok = True
    try:
        Cgroup("rt-fidelity-probe-%d" % os.getpid()).remove()
    except OSError as e:
        print("skip: cannot make a cgroup here (%s)" % e)
        return 0
    for s in shapes:
        for _ in range(RUNS if s in CPU_SHAPES else 1):
            try:
                ok = drive_one(build, work, data, s, table) and ok
            except Exception:  # one shape's trouble must not hide the others' table
                import traceback
                traceback.print_exc()
                table.append((s, "the run itself", 0, 0, 0.0, "FAIL", "an exception (above)"))
                ok = False
    # the rows that failed first too: a log cut after its head keeps them
    for shape, fig, rtv, truth, err, verdict, note in table:
        if verdict != "ok":
            print("FAILED: %s %s: rt %.2f, truth %.2f (%+.2f%%), %s" % (shape, fig, rtv, truth, err, note))
    print("%-10s %-17s %10s %10s %8s  %-4s %s" % ("shape", "figure", "rt", "truth", "error", "", "truth from"))
    for shape, fig, rtv, truth, err, verdict, note in table:
        print("%-10s %-17s %10.2f %10.2f %+7.2f%%  %-4s %s" % (shape, fig, rtv, truth, err, verdict, note))
    # the rows that failed again, last: a log cut in the middle keeps them
    for shape, fig, rtv, truth, err, verdict, note in table:
        if verdict != "ok":
            print("FAILED: %s %s: rt %.2f, truth %.2f (%+.2f%%), %s" % (shape, fig, rtv, truth, err, note))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
