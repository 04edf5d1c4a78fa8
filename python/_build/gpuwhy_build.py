"""PEP 517 build backend of the gpuwhy Python companion, standard library only.

pip builds a project in an isolated environment and installs the build requirements
there from an index; this backend has none, so `pip install ./python` works without
network access (CI, air-gapped clusters, Debian without PyPI). It builds a pure-Python
wheel (py3-none-any) of the gpuwhy/ package, an editable wheel (a .pth file pointing at
this source tree) and an sdist."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "gpuwhy"
VERSION = "0.1.0"
SUMMARY = "Run gpuwhy on PyTorch profiler traces as they are written"
REQUIRES_PYTHON = ">=3.8"
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(SOURCE, NAME)
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
WHEEL_NAME = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
# Fixed timestamps keep the archives byte-identical from one build to the next.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _metadata():
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: %s\n"
            "Requires-Python: %s\n"
            "License: see the gpuwhy repository\n"
            "\n"
            "Optional: torch (for gpuwhy.profile). The gpuwhy binary is found through the\n"
            "gpuwhy= argument, $GPUWHY_BIN or PATH.\n" % (NAME, VERSION, SUMMARY, REQUIRES_PYTHON))


def _wheel_file(tag="py3-none-any"):
    return ("Wheel-Version: 1.0\n"
            "Generator: gpuwhy_build %s\n"
            "Root-Is-Purelib: true\n"
            "Tag: %s\n" % (VERSION, tag))


def _package_files():
    """(archive path, bytes) of every .py file of the package, sorted."""
    out = []
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    out.append((os.path.relpath(path, SOURCE).replace(os.sep, "/"), f.read()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, entries):
    """Writes the wheel from (path, bytes) entries plus dist-info; returns its file name."""
    entries = list(entries) + [(DIST_INFO + "/METADATA", _metadata().encode()),
                               (DIST_INFO + "/WHEEL", _wheel_file().encode())]
    record = "\n".join([_record_line(p, d) for p, d in entries] + [DIST_INFO + "/RECORD,,", ""])
    entries.append((DIST_INFO + "/RECORD", record.encode()))
    os.makedirs(wheel_directory, exist_ok=True)
    target = os.path.join(wheel_directory, WHEEL_NAME)
    partial = target + ".part"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in entries:
            info = zipfile.ZipInfo(path, ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(partial, target)  # never a half-written wheel under the final name
    return WHEEL_NAME


def _prepare_metadata(metadata_directory):
    path = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(path, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    return DIST_INFO


# ---- PEP 517 hooks -------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    files = [(p, d) for p, d in _package_files()]
    for extra in ("pyproject.toml", "_build/gpuwhy_build.py"):
        with open(os.path.join(SOURCE, extra), "rb") as f:
            files.append((extra, f.read()))
    files.append(("PKG-INFO", _metadata().encode()))
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    target = os.path.join(sdist_directory, name)
    with tarfile.open(target + ".part", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, data in sorted(files):
            info = tarfile.TarInfo(base + "/" + path)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    os.replace(target + ".part", target)
    return name


# ---- PEP 660 (pip install -e ./python) ---------------------------------------------------

def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth line puts this source tree on sys.path: edits show without reinstalling.
    return _write_wheel(wheel_directory, [("_gpuwhy_editable.pth", (SOURCE + "\n").encode())])
