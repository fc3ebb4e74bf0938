"""Exceptions: one class per txlm_status, each carrying the library's message.

Every failing call of the C library returns a status and leaves a one-line
reason in ``txlm_last_error()``; the wrapper raises the class of that status
with that message. The classes also derive from the built-in exception a
Python user would catch (``ValueError`` for bad arguments, ``OSError`` for
files, ``MemoryError`` for memory), so ``except ValueError`` works too.
"""
from __future__ import annotations

from typing import Dict, Type


class TxlmError(RuntimeError):
    """A txlm call failed. ``status`` is the C status code, ``message`` the library's reason."""

    status = -1

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(TxlmError, ValueError):
    """A value out of range, a token outside the vocabulary, a state of another model,
    or a session used by two threads at once."""
    status = 1


class FileError(TxlmError, OSError):
    """A file could not be read or written."""
    status = 2


class FormatError(TxlmError, ValueError):
    """Malformed input: a model file, a session state."""
    status = 3


class ChecksumError(TxlmError, ValueError):
    """Stored data does not match its checksum."""
    status = 4


class UnsupportedError(TxlmError):
    """Well-formed but not something txlm runs."""
    status = 5


class NoVulkanError(TxlmError):
    """No Vulkan loader or no usable driver."""
    status = 6


class NoDeviceError(TxlmError):
    """No device matches the request."""
    status = 7


class OutOfMemoryError(TxlmError, MemoryError):
    """Host or device memory, or the context's memory budget."""
    status = 8


class DeviceLostError(TxlmError):
    status = 9


class VulkanError(TxlmError):
    status = 10


class CancelledError(TxlmError):
    """A progress callback asked a long call to stop. ``done`` says how far it got
    (tokens fed or positions scored), when the call counts them."""
    status = 11
    done: int | None = None


class LimitError(TxlmError):
    """A size exceeds a configured cap."""
    status = 12


class NonFiniteError(TxlmError, ArithmeticError):
    """A log-probability came out NaN or infinite."""
    status = 13


class ClosedError(TxlmError, ValueError):
    """A model, session, batch or context used after close()."""
    status = 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long call at a safe point; the session is usable and ``done`` says
    how far the call got (tokens fed, positions scored or tokens generated), when it counts."""

    def __init__(self, message: str, done: int | None = None):
        super().__init__(message)
        self.done = done


class LibraryNotFoundError(TxlmError, ImportError):
    """libtxlm.so could not be found or opened."""


_BY_STATUS: Dict[int, Type[TxlmError]] = {
    c.status: c for c in (InvalidArgumentError, FileError, FormatError, ChecksumError, UnsupportedError,
                          NoVulkanError, NoDeviceError, OutOfMemoryError, DeviceLostError, VulkanError,
                          CancelledError, LimitError, NonFiniteError)
}


def error_for(status: int, message: str) -> TxlmError:
    """The exception of a status, with the library's message."""
    return _BY_STATUS.get(status, TxlmError)(message or f"txlm status {status}", status)
