"""Finding and opening libtxlm.so.

The library is looked for, in order: the file named by ``$TXLM_LIBRARY``;
the ``libdir`` that pkg-config gives for ``txlm`` (an installed txlm); the
dynamic loader's own search (``ldconfig``'s cache, ``$LD_LIBRARY_PATH``).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from typing import List, Optional

from .errors import LibraryNotFoundError

# The soname the library is installed under (meson.build: soversion 0).
SONAME = "libtxlm.so.0"


def _pkg_config_libdir() -> Optional[str]:
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--variable=libdir", "txlm"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = out.stdout.strip()
    return libdir if out.returncode == 0 and libdir else None


def candidates() -> List[str]:
    """The paths or names tried, in order (for error messages and tests)."""
    explicit = os.environ.get("TXLM_LIBRARY")
    if explicit:
        return [explicit]
    found = []
    libdir = _pkg_config_libdir()
    if libdir:
        found += [os.path.join(libdir, SONAME), os.path.join(libdir, "libtxlm.so")]
    name = ctypes.util.find_library("txlm")
    found.append(name or SONAME)
    return found


def open_library() -> ctypes.CDLL:
    """Opens the first library that loads; LibraryNotFoundError naming every try when none does."""
    tried = []
    explicit = os.environ.get("TXLM_LIBRARY")
    for path in candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(f"{path}: no such file")
            continue
        try:
            # CDLL (not PyDLL): every call releases the GIL, so other Python
            # threads run while the device works
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
    hint = ("check $TXLM_LIBRARY" if explicit else
            "install txlm (meson install -C build) or set TXLM_LIBRARY=/path/to/build/libtxlm.so")
    raise LibraryNotFoundError(f"libtxlm not found ({'; '.join(tried)}): {hint}")
