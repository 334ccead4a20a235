#!/usr/bin/env python3
"""cgjobs.py - job cgroups made the way schedulers make them, from outside rt.

    cgjobs.py mk PATH [MEM_BYTES]     the group in every hierarchy (v1 and v2)
    cgjobs.py mk2 PATH                the group in the v2 hierarchy alone
    cgjobs.py job PATH IDLE BURN MB [K=V...]
                                      a process in the group: sleeps IDLE s,
                                      touches MB MiB, spins BURN s; prints its pid
    cgjobs.py many PATH N SECS        N groups PATH/g0.. each with a process
                                      asleep SECS s; prints their pids
    cgjobs.py sleepers PATH N K SECS  N groups PATH/g0.. each with K `sleep SECS`
                                      processes (N 1, K 3000: a crowd)
    cgjobs.py rm PATH                 the group and those below it, everywhere
    cgjobs.py cpu PATH                the group's CPU seconds (cpuacct.usage,
                                      else v2 cpu.stat usage_usec)
    cgjobs.py peak PATH               its memory high-water mark, bytes
                                      (memory.max_usage_in_bytes / memory.peak)
    cgjobs.py find NAME               the path of a group named NAME (6 deep)
    cgjobs.py v2                      prints the v2 mount, or nothing
    cgjobs.py hasmem PATH             exit 0 when the group has a memory
                                      controller (a limit and a peak), else 1

The truth a test holds rt against is these counters, read by this script.
"""
import os
import sys
import time

ROOT = "/sys/fs/cgroup"


ONLY = None  # the hierarchies to use (mk2: v2 alone)


def mounts():
    if ONLY:
        return ONLY
    if os.path.exists(ROOT + "/cgroup.procs"):
        return [ROOT]
    return [m for m in (os.path.join(ROOT, d) for d in sorted(os.listdir(ROOT)))
            if os.path.exists(m + "/cgroup.procs")]


def v2_mount():
    for m in mounts():
        if os.path.exists(m + "/cgroup.controllers"):
            return m
    return None


def mk(path, mem=None):
    for m in mounts():
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = os.path.join(m, *parts[:i])
            if not os.path.isdir(d):
                os.mkdir(d)
                if m.endswith("cpuset"):  # a cpuset group takes no task until set
                    for f in ("cpuset.cpus", "cpuset.mems"):
                        with open(os.path.join(os.path.dirname(d), f)) as src:
                            val = src.read()
                        with open(os.path.join(d, f), "w") as dst:
                            dst.write(val)
        if mem and m.endswith("/memory"):
            with open(os.path.join(m, path.strip("/"), "memory.limit_in_bytes"), "w") as f:
                f.write(str(mem))
            sw = os.path.join(m, path.strip("/"), "memory.memsw.limit_in_bytes")
            if os.path.exists(sw):  # no swapping past the limit: an OOM kill
                with open(sw, "w") as f:
                    f.write(str(mem))
        if mem and m == v2_mount() and os.path.exists(os.path.join(m, path.strip("/"), "memory.max")):
            with open(os.path.join(m, path.strip("/"), "memory.max"), "w") as f:
                f.write(str(mem))


def join(path, pid):
    for m in mounts():
        d = os.path.join(m, path.strip("/"))
        if os.path.isdir(d):
            with open(d + "/cgroup.procs", "w") as f:
                f.write(str(pid))


def job(path, idle, burn, mb, env):
    """A process in the group; AS=USER in env: it runs as that user, put in
    the group by this (root) process, as a scheduler's daemon does."""
    who = [kv[3:] for kv in env if kv.startswith("AS=")]
    env = [kv for kv in env if not kv.startswith("AS=")]
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(go_w)
        os.setsid()
        if who:
            os.read(go_r, 1)  # joined by the parent
            import pwd
            pw = pwd.getpwnam(who[0])
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
        else:
            join(path, os.getpid())
        os.write(w, b"x")
        os.close(w)
        for kv in env:
            k, _, v = kv.partition("=")
            os.environ[k] = v
        code = ("import time\ntime.sleep(%s)\nx = bytearray(%d << 20)\n"
                "for i in range(0, len(x), 4096): x[i] = 1\n"
                "e = time.time() + %s\nwhile time.time() < e: pass\n" % (idle, int(mb), burn))
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execvp("python3", ["python3", "-c", code])
    os.close(w)
    os.close(go_r)
    if who:  # (it waits for this before it execs: the pipe has its reader)
        join(path, pid)
        os.write(go_w, b"x")
    os.close(go_w)
    os.read(r, 1)  # in its group before it runs a line of the job
    print(pid)


def rm(path):
    for m in mounts():
        top = os.path.join(m, path.strip("/"))
        if not os.path.isdir(top):
            continue
        for dirpath, dirs, _ in sorted(os.walk(top), key=lambda t: -t[0].count("/")):
            for _ in range(50):
                try:
                    os.rmdir(dirpath)
                    break
                except OSError:
                    time.sleep(0.02)  # its last task is still leaving


def read(m, path, name):
    with open(os.path.join(m, path.strip("/"), name)) as f:
        return f.read()


def cpu(path):
    for m in mounts():
        if os.path.exists(os.path.join(m, path.strip("/"), "cpuacct.usage")):
            return int(read(m, path, "cpuacct.usage")) / 1e9
    v2 = v2_mount()
    for line in read(v2, path, "cpu.stat").splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    raise SystemExit("no CPU counter for " + path)


def peak(path):
    for m in mounts():
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            if os.path.exists(os.path.join(m, path.strip("/"), name)):
                return int(read(m, path, name))
    raise SystemExit("no memory peak for " + path)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "mk":
        mk(args[0], int(args[1]) if len(args) > 1 else None)
    elif cmd == "mk2":
        global ONLY
        ONLY = [v2_mount()]
        mk(args[0])
    elif cmd == "job":
        job(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "many":
        for i in range(int(args[1])):
            mk("%s/g%d" % (args[0], i))
            job("%s/g%d" % (args[0], i), args[2], 0, 1, [])
    elif cmd == "sleepers":
        for i in range(int(args[1])):
            mk("%s/g%d" % (args[0], i))
            for _ in range(int(args[2])):
                pid = os.fork()
                if pid == 0:
                    join("%s/g%d" % (args[0], i), os.getpid())
                    devnull = os.open(os.devnull, os.O_RDWR)
                    for fd in (0, 1, 2):
                        os.dup2(devnull, fd)
                    os.setsid()
                    os.execvp("sleep", ["sleep", args[3]])
    elif cmd == "run":  # run PATH CMD...: CMD in the group, its pid printed
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            join(args[0], os.getpid())
            os.write(w, b"x")
            os.close(w)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execvp(args[1], args[1:])
        os.close(w)
        os.read(r, 1)
        print(pid)
    elif cmd == "rm":
        rm(args[0])
    elif cmd == "cpu":
        print("%.6f" % cpu(args[0]))
    elif cmd == "peak":
        print(peak(args[0]))
    elif cmd == "find":
        for m in mounts():
            for dirpath, dirs, _ in os.walk(m):
                if dirpath[len(m):].count("/") >= 6:
                    dirs[:] = []
                if os.path.basename(dirpath) == args[0]:
                    print(dirpath[len(m):])
                    return
        raise SystemExit(1)
    elif cmd == "hasmem":
        for m in mounts():
            d = os.path.join(m, args[0].strip("/"))
            if any(os.path.exists(os.path.join(d, f)) for f in
                   ("memory.max_usage_in_bytes", "memory.peak")):
                return
        raise SystemExit(1)
    elif cmd == "v2":
        print(v2_mount() or "")
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
