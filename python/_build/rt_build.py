"""rt_build - the build backend of rt_tracker (PEP 517, with PEP 660's
editable wheels), kept in the tree (pyproject.toml's backend-path) and
written with the standard library alone.

So `pip install ./python` works offline, in any venv of a Python >= 3.9
that has pip: there is nothing to fetch to build it (setuptools' backend
needs the `wheel` package, which a plain venv lacks: "invalid command
'bdist_wheel'"). It builds what rt_tracker is: pure-Python modules in one
package, no extensions, no generated files.
"""
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


def _write_wheel(wheel_directory, files):
    """files: [(name in the wheel, bytes)]; adds the dist-info and RECORD."""
    p = _project()
    dist = "%s-%s" % (_dist_name(p), p["version"])
    info = dist + ".dist-info"
    files = list(files) + [
        (info + "/METADATA", _metadata(p).encode()),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: rt_build\nRoot-Is-Purelib: true\n"
         b"Tag: py3-none-any\n"),
        (info + "/top_level.txt", ("\n".join(PACKAGES) + "\n").encode()),
    ]
    record = [_record_line(n, d) for n, d in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    name = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            z.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)), d)
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


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth puts the source tree on the path."""
    return _write_wheel(wheel_directory, [("_rt_tracker_editable.pth", (HERE + "\n").encode())])


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
