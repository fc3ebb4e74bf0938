"""Arguments checked and converted for C: token ids as int32 arrays, text as UTF-8 bytes."""
from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from . import _capi
from .errors import InvalidArgumentError

Ids = Union[Sequence[int], np.ndarray]
Text = Union[str, bytes]

_I32 = np.iinfo(np.int32)


def ids_array(ids: Any, what: str = "ids") -> np.ndarray:
    """A contiguous 1-D int32 array of token ids (no copy when ids already is one).

    Integers only: floats, booleans and strings raise TypeError, values
    beyond int32 InvalidArgumentError (the library checks the vocabulary)."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{what}: token ids expected, not {type(ids).__name__} (tokenize text first)")
    arr = ids if isinstance(ids, np.ndarray) else np.asarray(ids)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int32)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what}: token ids must be integers, not {arr.dtype}")
    if arr.ndim != 1:
        raise TypeError(f"{what}: a 1-D sequence of token ids expected, not shape {arr.shape}")
    if arr.dtype != np.int32:
        bad = np.flatnonzero((arr < _I32.min) | (arr > _I32.max))
        if bad.size:
            raise InvalidArgumentError(f"{what}: id {int(arr[bad[0]])} at {int(bad[0])} is outside the vocabulary")
    return np.ascontiguousarray(arr, dtype=np.int32)


def text_bytes(text: Any, what: str = "text") -> bytes:
    """UTF-8 bytes of a str (bytes pass as they are)."""
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"{what}: str or bytes expected, not {type(text).__name__}")


def int32_ptr(arr: np.ndarray) -> Any:
    return arr.ctypes.data_as(_capi.p_int32)


def float_ptr(arr: np.ndarray) -> Any:
    return arr.ctypes.data_as(_capi.p_float)
