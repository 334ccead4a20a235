#!/usr/bin/env python3
"""ptyjob.py KEYS CMD...: run CMD as an interactive shell runs a foreground
job (its own process group, the terminal's foreground, on a pty), type
KEYS into the terminal, and print what the shell saw, one line each:
"stopped SIG" (the job is then continued, as fg does), "exit CODE" or
"signal SIG". KEYS: comma-separated SECONDS:HEXBYTE ("1.0:03" is Ctrl-C at
1.0 s, "1.0:1a" Ctrl-Z). The terminal itself (the tty driver) sends the
signals, as it does for a user (issue 45 items 3 and 4)."""
import fcntl
import os
import signal
import sys
import termios
import threading
import time


def shell(cmd, out):
    """The session leader: start cmd as a foreground job, wait for it."""
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpid())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execvp(cmd[0], cmd)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    os.tcsetpgrp(0, pid)
    while True:
        _, st = os.waitpid(pid, os.WUNTRACED)
        if os.WIFSTOPPED(st):
            os.tcsetpgrp(0, os.getpgrp())
            out.write("stopped %d\n" % os.WSTOPSIG(st))
            out.flush()
            time.sleep(0.3)
            os.tcsetpgrp(0, pid)
            os.killpg(pid, signal.SIGCONT)
            continue
        if os.WIFEXITED(st):
            out.write("exit %d\n" % os.WEXITSTATUS(st))
        else:
            out.write("signal %d\n" % os.WTERMSIG(st))
        out.flush()
        return


def main():
    keys = [(float(t), int(b, 16)) for t, b in (k.split(":") for k in sys.argv[1].split(",") if k)]
    cmd = sys.argv[2:]
    master, slave = os.openpty()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.close(r)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        shell(cmd, os.fdopen(w, "w"))
        os._exit(0)
    os.close(slave)
    os.close(w)

    def drain():
        try:
            while os.read(master, 4096):
                pass
        except OSError:
            pass
    threading.Thread(target=drain, daemon=True).start()
    start = time.monotonic()
    for t, b in keys:
        time.sleep(max(0.0, start + t - time.monotonic()))
        os.write(master, bytes([b]))
    with os.fdopen(r) as f:
        sys.stdout.write(f.read())
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
