"""`pip install ./python` builds and installs the package offline (the build backend is
Debian's setuptools), and the installed copy works from anywhere."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest
from conftest import DEMO, ROOT


@pytest.mark.skipif(importlib.util.find_spec("pip") is None, reason="pip is not installed (Debian: python3-pip)")
def test_pip_install(tmp_path):
    src = tmp_path / "src"
    # a copy: pip builds in the source folder, which must stay clean
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                        "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "txlm" / "py.typed").exists() and (target / "txlm" / "dask.py").exists()
    code = ("import txlm, sys; assert txlm.__file__.startswith(sys.argv[1]), txlm.__file__\n"
            "m = txlm.Model(sys.argv[2]); s = m.session()\n"
            "print(s.feed(m.tokenize('Hello')).shape, m.eval('Hello, world').unit)")
    env = dict(os.environ, PYTHONPATH=str(target))
    r = subprocess.run([sys.executable, "-c", code, str(target), DEMO], env=env, capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["(5,", "97)", "bpc"]
