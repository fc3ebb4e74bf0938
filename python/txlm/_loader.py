"""Finding and opening libtxlm.so.

The library is looked for, in order: the file named by ``$TXLM_LIBRARY``;
``libtxlm.so.0`` in the ``libdir`` that pkg-config gives for ``txlm`` (a
txlm installed under a prefix the dynamic loader may not search, such as
``$HOME/.local``); ``libtxlm.so.0`` by the dynamic loader's own search
(``ldconfig``'s cache, which holds ``/usr/lib/<arch>/libtxlm.so.0`` of
Debian's libtxlm0 package, and ``$LD_LIBRARY_PATH``).

Only the SONAME is ever looked for, never ``libtxlm.so`` (the development
link, which may point at a later, incompatible ABI) nor
``ctypes.util.find_library`` (which answers with whichever
``libtxlm.so.N`` the cache lists first, by running ``ldconfig`` and a
compiler): these bindings declare ABI 0's functions.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import List, Optional

from .errors import LibraryNotFoundError

# The soname the library is installed under (meson.build: soversion 0;
# docs/packaging.md, "ABI and SONAME").
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
        found.append(os.path.join(libdir, SONAME))
    found.append(SONAME)
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
            "install txlm (its Debian package libtxlm0, or meson install -C build) "
            "or set TXLM_LIBRARY=/path/to/build/libtxlm.so")
    raise LibraryNotFoundError(f"libtxlm not found ({'; '.join(tried)}): {hint}")
