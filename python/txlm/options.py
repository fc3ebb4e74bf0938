"""Session options (``txlm_session_options``) and sampling options (``txlm_sampling``
with the repetition penalty), checked and converted for C."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _capi
from ._arrays import ids_array, int32_ptr
from .errors import InvalidArgumentError

# The segment length when a model has no tgt_len (the CLI's).
DEFAULT_SEGMENT = 128


@dataclass(frozen=True)
class SessionOptions:
    """How a session runs (docs/api.md, "Sessions").

    mem_len: memory rows kept (0: the model's). clamp_len: the longest relative
    distance (0: the model's, -1: none). same_length: None for the model's.
    max_segment: the longest segment fed at once; None: the model's tgt_len
    (128 without one), which is what every txlm command uses, so results
    equal the CLI's; 0: the library's default, max(tgt_len, 512).
    zero_memory: start from mem_len rows of zeros, as HF transformers does.
    """
    mem_len: int = 0
    clamp_len: int = 0
    same_length: Optional[bool] = None
    max_segment: Optional[int] = None
    zero_memory: bool = False

    @classmethod
    def of(cls, options: Dict[str, Any]) -> "SessionOptions":
        unknown = set(options) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown session option(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
        for k in ("mem_len", "clamp_len", "max_segment"):
            v = options.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise TypeError(f"{k}: an int expected, not {type(v).__name__}")
        return cls(**options)

    def resolved(self, tgt_len: int) -> "SessionOptions":
        """max_segment None replaced by the model's segment length."""
        if self.max_segment is not None:
            return self
        return SessionOptions(self.mem_len, self.clamp_len, self.same_length, tgt_len or DEFAULT_SEGMENT,
                              self.zero_memory)

    def to_c(self) -> _capi.SessionOptions:
        o = _capi.SessionOptions()
        try:
            o.mem_len, o.clamp_len = _u32(self.mem_len, "mem_len"), self.clamp_len
            o.same_length = -1 if self.same_length is None else int(bool(self.same_length))
            o.max_segment = _u32(self.max_segment or 0, "max_segment")
            o.zero_memory = int(bool(self.zero_memory))
        except OverflowError as e:
            raise InvalidArgumentError(str(e)) from None
        return o

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _u32(v: int, what: str) -> int:
    if not 0 <= int(v) < 2**32:
        raise InvalidArgumentError(f"{what}: {v} is outside [0, 2^32)")
    return int(v)


def sampling(temperature: float = 1.0, top_k: int = 0, top_p: float = 0.0) -> _capi.Sampling:
    """The C sampling options; the library refuses NaN, top_p outside [0, 1] and the like."""
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)):
        raise TypeError(f"top_k: an int expected, not {type(top_k).__name__}")
    if not 0 <= top_k < 2**31:
        raise InvalidArgumentError(f"top_k: {top_k} is outside [0, 2^31)")
    s = _capi.Sampling()
    s.temperature, s.top_k, s.top_p = float(temperature), int(top_k), float(top_p)
    return s


class Penalty:
    """A repetition penalty and its window of token ids, kept alive for the C call."""

    def __init__(self, penalty: float = 1.0, window: Optional[Sequence[int]] = None):
        self.window = ids_array(window if window is not None else [], "repeat window")
        self.c = _capi.RepeatPenalty()
        self.c.penalty = float(penalty)
        self.c.tokens = int32_ptr(self.window) if self.window.size else None
        self.c.n = int(self.window.size)

    @property
    def active(self) -> bool:
        p = self.c.penalty
        return not (p == 1.0 or p == 0.0) or math.isnan(p)
