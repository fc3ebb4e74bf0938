"""Where the package looks for libtxlm (txlm/_loader.py): $TXLM_LIBRARY alone when set;
else libtxlm.so.0 in pkg-config's libdir for txlm, then libtxlm.so.0 by the dynamic
loader's search, which is how Debian's python3-txlm finds the system's libtxlm0."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import DEMO, ROOT
from txlm import _loader


def no_pkg_config(monkeypatch, tmp_path):
    """A PATH holding no pkg-config."""
    monkeypatch.setenv("PATH", str(tmp_path))


def test_explicit_library_only(monkeypatch):
    monkeypatch.setenv("TXLM_LIBRARY", "/some/where/libtxlm.so")
    assert _loader.candidates() == ["/some/where/libtxlm.so"]


def test_soname_without_pkg_config(monkeypatch, tmp_path):
    monkeypatch.delenv("TXLM_LIBRARY")
    no_pkg_config(monkeypatch, tmp_path)
    assert _loader.candidates() == ["libtxlm.so.0"]


def test_pkg_config_libdir_first(monkeypatch, tmp_path):
    monkeypatch.delenv("TXLM_LIBRARY")
    fake = tmp_path / "pkg-config"
    fake.write_text('#!/bin/sh\n[ "$1 $2" = "--variable=libdir txlm" ] && echo /opt/txlm/lib\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert _loader.candidates() == ["/opt/txlm/lib/libtxlm.so.0", "libtxlm.so.0"]


def test_loader_search_finds_the_soname(tmp_path):
    """No $TXLM_LIBRARY, no pkg-config: the dynamic loader's search (here $LD_LIBRARY_PATH,
    on a Debian system ldconfig's cache) finds libtxlm.so.0, and the package runs on it."""
    lib = Path(os.environ["TXLM_LIBRARY"]).resolve()
    soname = tmp_path / "lib" / "libtxlm.so.0"
    soname.parent.mkdir()
    soname.symlink_to(lib)
    # a libtxlm.so of another ABI beside it, which must not be taken
    (tmp_path / "lib" / "libtxlm.so").write_text("not a library")
    env = {k: v for k, v in os.environ.items() if k not in ("TXLM_LIBRARY", "PKG_CONFIG_PATH")}
    env.update(PATH=str(tmp_path), LD_LIBRARY_PATH=str(soname.parent) + os.pathsep + env.get("LD_LIBRARY_PATH", ""),
               PYTHONPATH=str(ROOT / "python"))
    code = ("import sys, txlm\n"
            "m = txlm.Model(sys.argv[1])\n"
            "print(m.eval('The secret of life is').unit)\n"
            "print([l.split()[-1] for l in open('/proc/self/maps') if 'libtxlm' in l][0])\n")
    r = subprocess.run([sys.executable, "-c", code, DEMO], env=env, capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    unit, mapped = r.stdout.split()
    assert unit == "bpc" and Path(mapped).resolve() == lib, r.stdout
