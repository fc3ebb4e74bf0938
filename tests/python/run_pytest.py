"""Runs the Python package's tests (python/tests) with pytest against this build's libtxlm.so
(TXLM_LIBRARY and the tools' paths come from tests/python/meson.build).

    run_pytest.py [test_FILE.py ...] [PYTEST_OPTION ...]

runs the files named (all of python/tests when none is), with the options given.

Exits 77, which meson counts as skipped, only when a Python module the tests need is
missing, naming it and its Debian package; pandas and Dask are needed only by the tests
of scoring frames and of txlm.dask, which pytest then reports as skipped."""
import importlib.util
import os
import sys

NEEDED = {"numpy": "python3-numpy", "pytest": "python3-pytest"}
OPTIONAL = {"pandas": "python3-pandas", "distributed": "python3-distributed"}


def main() -> int:
    missing = [f"{m} (Debian: {p})" for m, p in NEEDED.items() if importlib.util.find_spec(m) is None]
    if missing:
        print(f"skipped: {sys.executable} has no " + ", ".join(missing), file=sys.stderr)
        return 77
    absent = [f"{m} (Debian: {p})" for m, p in OPTIONAL.items() if importlib.util.find_spec(m) is None]
    if absent:
        print("the tests that need " + ", ".join(absent) + " are skipped", file=sys.stderr)
    import pytest
    tests = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))
    files = [os.path.join(tests, a) for a in sys.argv[1:] if a.startswith("test_")]
    options = [a for a in sys.argv[1:] if not a.startswith("test_")]
    # no cache or bytecode written into the source tree
    # tornado, under distributed, warns of its own API at every cluster start
    quiet = ["-W", "ignore:make_current is deprecated:DeprecationWarning"]
    return pytest.main(["-p", "no:cacheprovider", "-q", "-rs"] + quiet + (files or [tests]) + options)


if __name__ == "__main__":
    sys.exit(main())
