"""rt's commands from the package: `python -m rt_tracker ARGS` is
`resource-tracker ARGS`; `python -m rt_tracker rt-export ARGS` (or
rt-recorder) runs that program; `python -m rt_tracker --prefix` prints the
directory that holds rt's programs (what RT_PREFIX may be set to: the R
package asks it when rt is not on PATH).

pip puts `resource-tracker`, `rt-recorder` and `rt-export` on the venv's
PATH as console scripts: each becomes rt's program itself (exec, same
pid), so signals, exit codes and the wrapped job are the program's own.
"""
import os
import sys

from .tracker import find_binary

PROGRAMS = ("resource-tracker", "rt-recorder", "rt-export")


def _is_program(path):
    """Whether path is one of rt's built programs, not a script (this
    console script itself, found on PATH, would run itself forever)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _program(name):
    """The path of rt's program name (resource-tracker is rt-recorder
    under its drop-in name), or None."""
    path = find_binary("rt-recorder" if name == "resource-tracker" else name)
    return path if path and _is_program(path) else None


def _run(name, args):
    path = _program(name)
    if path is None:
        sys.stderr.write("%s: rt's programs are not in this install (pip install ./python from "
                         "a clone of rt builds them into it; or set RT_PREFIX to where "
                         "rt-recorder and rt-export are)\n" % name)
        return 127
    os.execv(path, [name] + list(args))
    return 127  # (not reached)


def resource_tracker():
    return _run("resource-tracker", sys.argv[1:])


def rt_recorder():
    return _run("rt-recorder", sys.argv[1:])


def rt_export():
    return _run("rt-export", sys.argv[1:])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--prefix"]:
        path = _program("rt-recorder")
        if path is None or not _program("rt-export"):
            sys.stderr.write("rt_tracker: rt's programs are not in this install\n")
            return 1
        print(os.path.dirname(path))
        return 0
    if argv[:1] and argv[0] in PROGRAMS:
        return _run(argv[0], argv[1:])
    return _run("resource-tracker", argv)


if __name__ == "__main__":
    sys.exit(main())
