"""C handles owned from Python: each freed once, children before parents, never under a call.

A ``Handle`` holds one C pointer, the function that frees it, its parent
(a session's is its model's handle, a model's its context's) and its
children. Every object owning one (a ``Closable``: Model, Session, ...)
makes it with ``Handle.make``.

A handle's state, and the only ways it moves::

    OPEN ----------------> CLOSING ----------------> FREED
       close(), or its owner    no child left and no call
       was garbage collected    inside: the pointer is freed

- OPEN: calls start (``use()``, ``claim()``) and children are made.
- CLOSING: no call starts (ClosedError); the pointer waits for the last
  child to be freed (and for a call still inside, which happens only when
  the owner's finalizer ran at interpreter exit). Whoever removes the last
  child or ends the last call frees it (``_free_unused``).
- FREED: ``ptr`` is None.

What holds, and why a reader can rely on it:

1. A parent is freed only after every child's free has returned: a child
   leaves its parent's ``_children`` after its own free, and a handle with
   children is never freed. So the C library never sees a model freed
   under a live session, whatever order the garbage collector runs the
   finalizers of a reference cycle in.
2. A child is registered with its parent while its maker is still inside
   the parent's ``use()`` (``Handle.make``): until then ``close()`` of the
   parent is refused like any close during a call, and after it the
   parent's close finds and closes the child. There is no moment when a
   live C child exists that its parent's close cannot see.
3. ``close()`` locks the handle and everything made from it, parents
   first, and in that one step either refuses (something is inside a
   call; nothing changes) or moves every open one to CLOSING. Freeing
   follows, children first. No other code holds two handle locks at once,
   so the parents-first order is the only nesting, and there is no
   deadlock between handles.
4. A finalizer never waits for a lock. It runs when its owner goes: at
   the drop of the last reference or inside the cycle collector, which can
   start at any allocation, so on any thread and at any point, also on a
   thread that holds a handle's lock; waiting for that lock would wait for
   ever (a ``threading.Lock`` is not reentrant). So the owner's finalizer
   only queues the handle (``_collected``, a SimpleQueue, safe to put into
   from a finalizer) and releases the queue itself when its thread holds
   no handle lock; otherwise that thread releases it as it lets go of its
   last handle lock (``_HandleLock.__exit__``). Freeing stays as prompt as
   reference counting makes it: the thread that dropped the last reference
   frees, before its next statement.
"""
from __future__ import annotations

import enum
import itertools
import queue
import threading
import weakref
from contextlib import ExitStack, contextmanager
from typing import Callable, ContextManager, Dict, Iterator, List, Optional, TypeVar

from .errors import ClosedError, InvalidArgumentError


class State(enum.Enum):
    OPEN = "open"
    CLOSING = "closing"
    FREED = "freed"


_NEXT = {State.OPEN: State.CLOSING, State.CLOSING: State.FREED}  # the only moves (the diagram above)

_serials = itertools.count(1)
# handles not yet freed, serial -> what ("session"): one dict operation each, atomic under the GIL,
# so counting needs no lock a finalizer could wait for
_unfreed: Dict[int, str] = {}


def live_handles() -> int:
    """C handles created from Python and not yet freed, in this process (for leak checks)."""
    return len(_unfreed)


class _ThisThread(threading.local):
    # handle locks this thread holds, plus 1 while it releases collected handles:
    # a finalizer on this thread queues and returns when it is not 0
    inside = 0


_this_thread = _ThisThread()
_collected: "queue.SimpleQueue[Handle]" = queue.SimpleQueue()


class _HandleLock:
    """A handle's lock, counted per thread (invariant 4): letting go of the last one releases
    the handles collected meanwhile."""
    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        _this_thread.inside += 1     # first: a finalizer from here on only queues
        try:
            self._lock.acquire()
        except BaseException:        # a KeyboardInterrupt while waiting
            _this_thread.inside -= 1
            raise

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
        _this_thread.inside -= 1
        _release_collected()


def _owner_collected(handle: "Handle") -> None:
    """The owner's finalizer (weakref.finalize): may run at any point of any thread (invariant 4)."""
    _collected.put(handle)
    _release_collected()


def _release_collected() -> None:
    """Releases the queued handles of collected owners, unless this thread is inside a handle lock
    or already releasing (its __exit__, or the loop below, comes back to them)."""
    while not _this_thread.inside and not _collected.empty():
        _this_thread.inside += 1
        try:
            _collected.get_nowait()._release()
        except queue.Empty:   # another thread took it
            pass
        finally:
            _this_thread.inside -= 1


class Handle:
    __slots__ = ("ptr", "what", "serial", "state", "parent", "_free", "_children", "_busy", "_claimed", "_lock")

    def __init__(self, ptr: int, free: Callable[[int], None], what: str, parent: Optional["Handle"] = None):
        """Owns ptr, registered with parent. Use Handle.make, which registers a child inside its
        parent's use() (invariant 2)."""
        self.ptr: Optional[int] = ptr
        self.what = what
        self.serial = next(_serials)
        self.state = State.OPEN
        self.parent = parent
        self._free = free
        self._children: Dict[int, Handle] = {}   # made from this one and not yet freed, by serial
        self._busy = 0             # calls inside (any thread)
        self._claimed = False      # one of them holds it alone (claim())
        self._lock = _HandleLock()  # guards the fields above
        _unfreed[self.serial] = what
        if parent is not None:
            with parent._lock:
                parent._children[self.serial] = self

    @classmethod
    def make(cls, owner: object, what: str, free: Callable[[int], None], create: Callable[[Optional[int]], int],
             parent: Optional["Handle"] = None) -> "Handle":
        """The handle of a new C object: create(parent's pointer, or None) returns its pointer (or
        raises). With a parent, create runs inside the parent's use() and the child is registered
        before that use ends (invariant 2). The owner's garbage collection releases the handle."""
        if parent is None:
            h = cls(create(None), free, what)
        else:
            with parent.use() as parent_ptr:
                h = cls(create(parent_ptr), free, what, parent)
        weakref.finalize(owner, _owner_collected, h)
        return h

    # ---- calls -------------------------------------------------------------

    @contextmanager
    def _held(self, exclusive: bool) -> Iterator[int]:
        with self._lock:
            if self.state is not State.OPEN:
                raise ClosedError(f"the {self.what} is closed")
            if exclusive and self._claimed:
                raise InvalidArgumentError(f"the {self.what} is inside another call (a {self.what} is used by one "
                                           "thread at a time)")
            self._claimed = self._claimed or exclusive
            self._busy += 1
            ptr = self.ptr
        try:
            yield ptr
        finally:
            with self._lock:
                self._busy -= 1
                self._claimed = self._claimed and not exclusive
                last_call_of_closing = self.state is State.CLOSING and not self._busy
            if last_call_of_closing:
                _free_unused(self)

    def use(self) -> ContextManager[int]:
        """The pointer, kept from being closed while the caller uses it (shared use: models, contexts)."""
        return self._held(False)

    def claim(self) -> ContextManager[int]:
        """The pointer, held by this call alone: a second caller meanwhile is refused."""
        return self._held(True)

    # ---- closing -----------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.state is not State.OPEN

    def _move(self, to: State) -> None:
        """The one place a state changes (under self._lock)."""
        assert _NEXT.get(self.state) is to, f"{self.what}: {self.state} -> {to}"
        self.state = to

    def _locked_tree(self, locks: ExitStack) -> List["Handle"]:
        """This handle and everything made from it, each locked, parents before children (invariant 3)."""
        locks.enter_context(self._lock)
        tree = [self]
        for child in list(self._children.values()):
            tree += child._locked_tree(locks)
        return tree

    def close(self) -> None:
        """Closes this handle and everything made from it, freeing children first; refused, with
        nothing changed, while any of them is inside a call (a model inside a call keeps its sessions)."""
        with ExitStack() as locks:
            tree = self._locked_tree(locks)
            if self.state is not State.OPEN:
                return
            inside = next((h for h in tree if h._busy), None)
            if inside is self:
                raise InvalidArgumentError(f"the {self.what} is inside a call: close it once the call returns")
            if inside is not None:
                raise InvalidArgumentError(f"the {self.what}'s {inside.what} is inside a call: close the {self.what} "
                                           "once the call returns")
            for h in tree:
                if h.state is State.OPEN:
                    h._move(State.CLOSING)
        for h in reversed(tree):   # children first; a parent freed by its last child's free is skipped
            _free_unused(h)

    def _release(self) -> None:
        """The owner was garbage collected (or the interpreter exits): no one can call through it any more."""
        with self._lock:
            if self.state is State.OPEN:
                self._move(State.CLOSING)
        _free_unused(self)


def _free_unused(h: Optional[Handle]) -> None:
    """Frees h if it is CLOSING with no child and no call inside, then its parent if that made
    the parent so, and so on up. The pointer is taken under the lock, so exactly one caller frees it."""
    while h is not None:
        with h._lock:
            if h.state is not State.CLOSING or h._children or h._busy:
                return
            ptr, h.ptr = h.ptr, None
            h._move(State.FREED)
        h._free(ptr)
        del _unfreed[h.serial]
        parent, h.parent = h.parent, None
        if parent is not None:
            with parent._lock:   # after the free returned (invariant 1)
                del parent._children[h.serial]
        h = parent


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
