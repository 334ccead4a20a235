"""rt_build - the build backend of rt_tracker (PEP 517, with PEP 660's
editable wheels), kept in the tree (pyproject.toml's backend-path) and
written with the standard library alone.

So `pip install ./python` works offline, in any venv of a Python >= 3.9
that has pip: there is nothing to fetch to build it (setuptools' backend
needs the `wheel` package, which a plain venv lacks: "invalid command
'bdist_wheel'").

The wheel carries rt's programs too (rt_tracker/bin: rt-recorder, its
resource-tracker name, rt-export, rt-export-full), built from the
repository around python/ with CMake as the README's first command builds
them: in ./build when that is configured already (an incremental build:
nothing to do after the README's setup), else in ./build-python. So a
pip-installed tracker works with nothing else to set. The build packages
are tools/setup.sh's; when they are missing the install stops with one line
naming them. RT_BUILD=DIR takes the programs from a build made already. The
wheel is then tagged for this platform.
"""
import shutil
import subprocess
import sys
import sysconfig
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "rt_tracker"
# rt's Metaflow extension (a namespace package Metaflow finds by its name):
# `from metaflow import track_resources` once Metaflow is installed too
PACKAGES = (PACKAGE, "metaflow_extensions")


def _project():
    """name, version, summary and requires-python from pyproject.toml's
    [project] table (simple "key = string" lines: tomllib is 3.11+)."""
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()
    body = text.split("[project]", 1)[1].split("\n[", 1)[0]
    fields = {}
    for key in ("name", "version", "description", "requires-python"):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), body, re.M)
        fields[key] = m.group(1) if m else ""
    return fields


# rt's commands on the venv's PATH: each execs the package's program
ENTRY_POINTS = """[console_scripts]
resource-tracker = rt_tracker.__main__:resource_tracker
rt-recorder = rt_tracker.__main__:rt_recorder
rt-export = rt_tracker.__main__:rt_export
"""


def _dist_name(p):
    return re.sub(r"[-_.]+", "_", p["name"]).lower()


def _metadata(p):
    readme = os.path.join(HERE, "README.md")
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p["description"],
        "License: MIT",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: Python :: 3",
    ]
    if p["requires-python"]:
        lines.append("Requires-Python: %s" % p["requires-python"])
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + open(readme, encoding="utf-8").read()
    return "\n".join(lines) + "\n" + body


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (name, digest.decode(), len(data))


def _write_wheel(wheel_directory, files, platform=None):
    """files: [(name in the wheel, bytes[, executable])]; adds the
    dist-info and RECORD. platform: the wheel carries programs built for
    it (None: pure Python)."""
    p = _project()
    dist = "%s-%s" % (_dist_name(p), p["version"])
    info = dist + ".dist-info"
    tag = "py3-none-%s" % (platform or "any")
    files = [f if len(f) == 3 else (f[0], f[1], False) for f in files] + [
        (info + "/METADATA", _metadata(p).encode(), False),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: rt_build\nRoot-Is-Purelib: %s\n"
                           "Tag: %s\n" % ("false" if platform else "true", tag)).encode(),
         False),
        (info + "/top_level.txt", ("\n".join(PACKAGES) + "\n").encode(), False),
        (info + "/entry_points.txt", ENTRY_POINTS.encode(), False),
    ]
    record = [_record_line(n, d) for n, d, _ in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode(), False))
    name = "%s-%s.whl" % (dist, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d, exe in files:
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100755 if exe else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return name


def _package_files():
    out = []
    for package in PACKAGES:
        out += _files_of(package)
    return out


def _files_of(package):
    out = []
    root = os.path.join(HERE, package)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, HERE).replace(os.sep, "/")
                out.append((rel, open(path, "rb").read()))
    return out


ROOT = os.path.dirname(HERE)
PROGRAMS = ("rt-recorder", "rt-export", "rt-export-full")
# what CMake needs (CMakeLists.txt's pkg_check_modules), and Debian's names
NEEDS = (("cmake", "cmake"), ("cc", "build-essential"), ("pkg-config", "pkg-config"),
         ("protoc-c", "protobuf-c-compiler"))
MODULES = (("lmdb", "liblmdb-dev"), ("libcjson", "libcjson-dev"), ("libcrypto", "libssl-dev"),
           ("zlib", "zlib1g-dev"), ("libcurl", "libcurl4-openssl-dev"),
           ("libprotobuf-c", "libprotobuf-c-dev"), ("snappy", "libsnappy-dev"))


def _stop(line):
    """The install cannot go on: one line saying why and what to do."""
    sys.stderr.write("rt_tracker: %s\n" % line)
    raise SystemExit(1)


def _missing_packages():
    missing = [pkg for tool, pkg in NEEDS if not shutil.which(tool)]
    if shutil.which("pkg-config"):
        missing += [pkg for mod, pkg in MODULES
                    if subprocess.run(["pkg-config", "--exists", mod]).returncode != 0]
    return missing


def _build_programs():
    """Build rt's programs; [(name in the wheel, bytes, executable)].
    RT_BUILD=DIR takes them from DIR, built already (a packager's build,
    the tests' sanitizer build)."""
    given = os.environ.get("RT_BUILD")
    if given:
        return _programs_in(given)
    if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
        _stop("rt's sources are not around %s: pip install ./python from a clone of rt" % HERE)
    missing = _missing_packages()
    if missing:
        _stop("cannot build rt's programs, these Debian packages are missing: %s "
              "(sudo apt-get install %s, or sh tools/setup.sh)"
              % (" ".join(missing), " ".join(missing)))
    build = os.path.join(ROOT, "build")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        build = os.path.join(ROOT, "build-python")
        _run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
              "-DBUILD_TESTING=OFF"])
    _run(["cmake", "--build", build, "-j", str(os.cpu_count() or 1), "--target"] +
         list(PROGRAMS))
    return _programs_in(build)


def _programs_in(build):
    out = []
    for name in PROGRAMS:
        path = os.path.join(build, name)
        if not os.access(path, os.X_OK):
            _stop("%s is not there: build rt first (cmake --build build)" % path)
        with open(path, "rb") as f:
            out.append(("%s/bin/%s" % (PACKAGE, name), f.read(), True))
    return out


def _run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode("utf-8", "replace")[-4000:])
        _stop("building rt's programs failed: %s" % " ".join(cmd))


def _platform_tag():
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files() + _build_programs(), _platform_tag())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth puts the source tree on the path; rt's programs
    are built where the source tree's rt_tracker finds them (./build or
    ./build-python, beside python/)."""
    _build_programs()
    return _write_wheel(wheel_directory, [("_rt_tracker_editable.pth", (HERE + "\n").encode())],
                        _platform_tag())


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (_dist_name(p), p["version"])
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md"] + [n for n, _ in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
        for f in sorted(os.listdir(os.path.join(HERE, "_build"))):
            if f.endswith(".py"):
                t.add(os.path.join(HERE, "_build", f), arcname=base + "/_build/" + f)
        data = _metadata(p).encode()
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
