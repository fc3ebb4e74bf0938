"""Long calls: a progress callback for the C library, and Ctrl-C as its cancel.

The C library calls a progress function after each segment (or tensor, or
token) of a long call; returning non-zero stops the call at that safe point
with TXLM_ERR_CANCELLED, leaving the session usable (the memory holds
exactly what was fed). ``LongCall`` builds that function from the user's
callback and, on the main thread, catches SIGINT for the duration of the
call: Ctrl-C sets a flag the next progress call returns, and the call then
raises txlm.Interrupted, a KeyboardInterrupt, as Python code interrupted
elsewhere would.
"""
from __future__ import annotations

import signal
import threading
from typing import Any, Callable, Optional

from . import _capi
from .errors import CancelledError, Interrupted, error_for

Progress = Optional[Callable[[float], Any]]


class LongCall:
    """``with LongCall(progress) as call: status = c_fn(..., call.fn, None, ...)``; then ``call.check(status)``."""

    def __init__(self, progress: Progress, what: str):
        self.progress = progress
        self.what = what
        self.interrupted = False
        self.stopped = False          # the user's callback returned a true value
        self.error: Optional[BaseException] = None
        self.fn = _capi.PROGRESS_FN(self._on_progress)
        self._old_handler: Any = None

    def _on_progress(self, user: Any, fraction: float) -> int:
        try:
            if self.interrupted:
                return 1
            if self.progress is not None and self.progress(fraction):
                self.stopped = True
            return 1 if self.stopped or self.interrupted else 0
        except BaseException as e:  # raised again after the call: ctypes would only print it
            self.error = e
            return 1

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.interrupted = True

    def __enter__(self) -> "LongCall":
        # only where Ctrl-C would raise KeyboardInterrupt: a program's own handler, or SIGINT
        # ignored (a background job), stays as it is
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            try:
                self._old_handler = signal.signal(signal.SIGINT, self._on_sigint)
            except ValueError:  # not the main interpreter
                self._old_handler = None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._old_handler is not None:
            signal.signal(signal.SIGINT, self._old_handler)
            self._old_handler = None

    def check(self, status: int, done: Optional[int] = None) -> None:
        """Raises what stopped the call: the callback's own exception, KeyboardInterrupt for
        Ctrl-C, CancelledError when the callback asked to stop, or the library's error."""
        if self.error is not None:
            raise self.error
        if self.interrupted:  # also when the call ended before a progress call could stop it
            raise Interrupted(f"{self.what} interrupted" + (f" after {done}" if done is not None else ""), done)
        if status:
            msg = _capi.last_error()
            err = error_for(status, f"{self.what}: {msg}" if msg else self.what)
            if isinstance(err, CancelledError):
                err.done = done
            raise err
