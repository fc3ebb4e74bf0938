"""txlm: Transformer-XL language models on any GPU through Vulkan, from Python.

A thin, exact layer over the C library libtxlm (include/txlm.h): the same
calls, the same numbers. docs/python.md is the guide::

    import txlm
    with txlm.Model("models/demo.txlm") as model:
        s = model.session()
        logprobs = s.feed(model.tokenize("The secret of life is"))   # float32 [tokens, vocab]
        print("".join(s.generate(" to", max_tokens=40, seed=1)))
        words = model.score("The cat sat on the mat.")               # a DataFrame of surprisals

``txlm.dask`` scores corpora across machines with Dask.
"""
from . import errors
from ._capi import lib as _lib
from .batch import Batch, BatchSizes
from .context import Context, DeviceInfo, devices
from .errors import (CancelledError, ClosedError, FileError, FormatError, Interrupted, InvalidArgumentError,
                     LibraryNotFoundError, NonFiniteError, TxlmError)
from .model import MemoryUse, Model, ModelParams
from .options import SessionOptions
from .scoring import EvalResult, TokenScore, WordScore, to_frame
from .session import Attention, Session, TopK
from .text import Detokenizer, TokenSpans, Vocab

__version__ = "0.1.0"

__all__ = [
    "Attention", "Batch", "BatchSizes", "CancelledError", "ClosedError", "Context", "Detokenizer", "DeviceInfo",
    "EvalResult", "FileError", "FormatError", "Interrupted", "InvalidArgumentError", "LibraryNotFoundError",
    "MemoryUse", "Model", "ModelParams", "NonFiniteError", "Session", "SessionOptions", "TokenScore",
    "TokenSpans", "TopK", "TxlmError", "Vocab", "WordScore", "devices", "errors", "library_version", "to_frame",
]


def library_version() -> str:
    """The version of the libtxlm loaded, "MAJOR.MINOR.PATCH"."""
    return _lib().txlm_version().decode()
