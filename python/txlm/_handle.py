"""C handles owned from Python: freed once, children before parents.

A ``Handle`` holds one C pointer, the function that frees it, and a strong
reference to its parent's Handle (a session's to its model's, a model's to
its context's). A parent is freed only once every child is: its count of
children still holding a C pointer must be 0, else the free waits for the
last child's. By reference counting children go first anyway; the count
matters when the Python objects end in a reference cycle (a model and its
vocabulary are one), whose finalizers the garbage collector calls in any
order. An explicit ``close()`` closes the children still open first.

``use()`` guards every call: a closed handle raises ClosedError; ``claim()``
(sessions, detokenizers, batches) also refuses a second thread while one is
inside a call, as the C library refuses a session used from two threads.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator, Optional, TypeVar

from .errors import ClosedError, InvalidArgumentError


_count_lock = threading.Lock()
_live_total = 0


def live_handles() -> int:
    """C handles created from Python and not yet freed, in this process (for leak checks)."""
    return _live_total


def _counted(delta: int) -> None:
    global _live_total
    with _count_lock:
        _live_total += delta


class Handle:
    __slots__ = ("ptr", "what", "_free", "parent", "_children", "_live", "_want_free", "_lock", "_busy", "_claimed",
                 "__weakref__")

    def __init__(self, ptr: int, free: Callable[[int], None], what: str, parent: Optional["Handle"] = None):
        self.ptr: Optional[int] = ptr
        self.what = what
        self._free = free
        self.parent = parent
        self._children: "weakref.WeakSet[Handle]" = weakref.WeakSet()
        self._lock = threading.Lock()
        self._busy = 0          # calls in progress (any thread)
        self._claimed = False   # one thread holds it exclusively
        self._live = 0          # children not yet freed
        self._want_free = False  # released, waiting for its children
        if parent is not None:
            with parent._lock:
                parent._children.add(self)
                parent._live += 1
        _counted(1)

    def _check_open(self) -> int:
        if self.ptr is None:
            raise ClosedError(f"the {self.what} is closed")
        return self.ptr

    @contextmanager
    def _held(self, exclusive: bool) -> Iterator[int]:
        with self._lock:
            ptr = self._check_open()
            if exclusive and self._claimed:
                raise InvalidArgumentError(f"the {self.what} is inside another call (a {self.what} is used by one "
                                           "thread at a time)")
            self._claimed = self._claimed or exclusive
            self._busy += 1
        try:
            yield ptr
        finally:
            with self._lock:
                self._busy -= 1
                self._claimed = self._claimed and not exclusive

    def use(self) -> ContextManager[int]:
        """The pointer, kept from being closed while the caller uses it (shared use: models, contexts)."""
        return self._held(False)

    def claim(self) -> ContextManager[int]:
        """The pointer, held by this call alone: a second caller meanwhile is refused."""
        return self._held(True)

    @property
    def closed(self) -> bool:
        return self.ptr is None

    def close(self) -> None:
        """Frees the children still open, then this handle; refused while a call is using it
        (before any child is closed: a model inside a call keeps its sessions)."""
        with self._lock:
            self._refuse_if_busy()
        for child in list(self._children):
            child.close()
        self._release(refuse_busy=True)

    def _refuse_if_busy(self) -> None:
        if self.ptr is not None and self._busy:
            raise InvalidArgumentError(f"the {self.what} is inside a call: close it once the call returns")

    def _release(self, refuse_busy: bool = False) -> None:
        """Frees the pointer now, or once the last child is freed. refuse_busy: a call inside
        raises instead, checked in the same step that takes the pointer, so no call can start
        between the check and the free."""
        with self._lock:
            if refuse_busy:
                self._refuse_if_busy()
            self._want_free = True
            if self._live or self.ptr is None:
                return
            ptr, self.ptr = self.ptr, None
        self._free(ptr)
        _counted(-1)
        parent, self.parent = self.parent, None
        if parent is not None:
            with parent._lock:
                parent._live -= 1
                ready = parent._live == 0 and parent._want_free
            if ready:
                parent._release()

    def __del__(self) -> None:
        self._release()


class Closable:
    """What every object owning a Handle offers: ``close()``, ``closed`` and ``with`` blocks.
    Closing an object closes what was made from it first (a model's sessions, a context's models)."""

    _h: Handle

    @property
    def closed(self) -> bool:
        return self._h.closed

    def close(self) -> None:
        self._h.close()

    def __enter__(self: "_C") -> "_C":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_C = TypeVar("_C", bound=Closable)
