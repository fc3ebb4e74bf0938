"""txlm.Batch: several sessions of one model fed and sampled in one pass (``txlm_batch_*``).

Each session keeps its own memory, sampler and segment length; a batch
runs the shared work once over the rows of all streams (docs/batching.md).
Results per stream equal feeding each session alone to within 1e-5, and a
batch of one stream gives the lone session's bits.
"""
from __future__ import annotations

import ctypes
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence

import numpy as np

from . import _capi
from ._arrays import Ids, float_ptr, ids_array, int32_ptr
from ._handle import Closable, Handle
from .errors import InvalidArgumentError
from .options import Penalty, SessionOptions, sampling

if TYPE_CHECKING:
    from .model import MemoryUse, Model
    from .session import Session


@dataclass(frozen=True)
class BatchSizes:
    """Device bytes of a batch of sessions (``txlm_batch_sizes``)."""
    stream_ring_bytes: int
    stream_scratch_bytes: int
    batch_bytes: int
    total_bytes: int
    available_bytes: int


def plan(model: "Model", streams: int, options: SessionOptions) -> BatchSizes:
    sizes, opts = _capi.BatchSizes(), options.resolved(model.params.tgt_len).to_c()
    with model._h.use() as mp:
        _capi.check(_capi.lib().txlm_batch_plan(mp, int(streams), ctypes.byref(opts), ctypes.byref(sizes)),
                    "planning a batch")
    return BatchSizes(*(int(getattr(sizes, f)) for f, _ in _capi.BatchSizes._fields_))


class Batch(Closable):
    """A batch for up to max_streams sessions of one model (``model.batch(max_streams, **options)``)."""

    def __init__(self, model: "Model", max_streams: int, options: SessionOptions):
        if isinstance(max_streams, bool) or not isinstance(max_streams, (int, np.integer)):
            raise TypeError(f"max_streams: an int expected, not {type(max_streams).__name__}")
        self.model = model
        self.max_streams = int(max_streams)
        self.options = options.resolved(model.params.tgt_len)
        lib, opts = _capi.lib(), self.options.to_c()
        self._h = Handle.make(self, "batch", lib.txlm_batch_free, lambda mp: _capi.made(
            lib.txlm_batch_create, "creating a batch", mp, self.max_streams, ctypes.byref(opts)), model._h)

    def _claimed(self, stack: ExitStack, sessions: Sequence["Session"]) -> List[int]:
        """The batch and every session claimed for the call (a session in another call is refused)."""
        from .session import Session
        ptrs = [stack.enter_context(self._h.claim())]
        seen = {}
        for i, s in enumerate(sessions):
            if not isinstance(s, Session):
                raise TypeError(f"stream {i}: a txlm.Session expected, not {type(s).__name__}")
            if id(s) in seen:
                raise InvalidArgumentError(f"stream {i}: the same session as stream {seen[id(s)]}")
            seen[id(s)] = i
            ptrs.append(stack.enter_context(s._h.claim()))
        return ptrs

    def feed(self, sessions: Sequence["Session"], tokens: Sequence[Ids], *, logprobs: bool = True,
             first_row: int = 0) -> List[Optional[np.ndarray]]:
        """One segment for each session, in one pass; each stream's log-probabilities of rows
        [first_row, n) as float32 [n - first_row, n_token] (None with logprobs=False)."""
        if len(sessions) != len(tokens):
            raise InvalidArgumentError(f"batch feed: {len(sessions)} sessions but {len(tokens)} token lists")
        arrays = [ids_array(t, f"stream {i}") for i, t in enumerate(tokens)]
        feeds = (_capi.StreamFeed * max(len(arrays), 1))()
        outs: List[Optional[np.ndarray]] = []
        with ExitStack() as stack:
            ptrs = self._claimed(stack, sessions)
            for i, arr in enumerate(arrays):
                fr = min(first_row, arr.size) if logprobs else arr.size
                out = np.empty((arr.size - fr, self.model.params.n_token), np.float32) if logprobs else None
                outs.append(out)
                f = feeds[i]
                f.session, f.tokens, f.n, f.first_row = ptrs[i + 1], int32_ptr(arr), arr.size, fr
                f.logprobs = float_ptr(out) if out is not None and out.size else None
            _capi.check(_capi.lib().txlm_batch_feed(ptrs[0], feeds, len(arrays)), "batch feed")
        return outs

    def score(self, sessions: Sequence["Session"], tokens: Sequence[Ids], targets: Sequence[Ids]) -> List[np.ndarray]:
        """One segment for each session, scored against its targets: log p(targets[i]) per row."""
        if not len(sessions) == len(tokens) == len(targets):
            raise InvalidArgumentError("batch score: give as many token and target lists as sessions")
        arrays = [ids_array(t, f"stream {i}") for i, t in enumerate(tokens)]
        tgts = [ids_array(t, f"stream {i} targets") for i, t in enumerate(targets)]
        feeds = (_capi.StreamFeed * max(len(arrays), 1))()
        outs = [np.empty(a.size, np.float32) for a in arrays]
        with ExitStack() as stack:
            ptrs = self._claimed(stack, sessions)
            for i, (arr, tgt) in enumerate(zip(arrays, tgts)):
                if tgt.size != arr.size:
                    raise InvalidArgumentError(f"stream {i}: {arr.size} tokens but {tgt.size} targets")
                f = feeds[i]
                f.session, f.tokens, f.n, f.first_row = ptrs[i + 1], int32_ptr(arr), arr.size, 0
                f.targets, f.target_logprobs = int32_ptr(tgt), float_ptr(outs[i])
            _capi.check(_capi.lib().txlm_batch_feed(ptrs[0], feeds, len(arrays)), "batch score")
        return outs

    def sample(self, sessions: Sequence["Session"], temperature: float = 1.0, top_k: int = 0, top_p: float = 0.0,
               repeat_penalty: float = 1.0, windows: Optional[Sequence[Optional[Sequence[int]]]] = None) -> List[int]:
        """The next token of each session, each with its own sampler (as Session.sample on each
        alone); windows: one repetition window per session (or None). Tokens are not fed."""
        opts = sampling(temperature, top_k, top_p)
        if windows is not None and len(windows) != len(sessions):
            raise InvalidArgumentError(f"batch sample: {len(sessions)} sessions but {len(windows)} windows")
        pens = [Penalty(repeat_penalty, w) for w in (windows or [None] * len(sessions))]
        pen_ptrs = (ctypes.POINTER(_capi.RepeatPenalty) * max(len(pens), 1))(*[ctypes.pointer(p.c) for p in pens])
        out = np.empty(len(sessions), np.int32)
        with ExitStack() as stack:
            ptrs = self._claimed(stack, sessions)
            sess = (ctypes.c_void_p * max(len(sessions), 1))(*ptrs[1:])
            _capi.check(_capi.lib().txlm_batch_sample(ptrs[0], sess, len(sessions), ctypes.byref(opts), pen_ptrs,
                                                      int32_ptr(out)), "batch sample")
        return [int(t) for t in out]

    def memory_use(self) -> "MemoryUse":
        """The batch's own device memory (its sessions' not)."""
        from .model import memory_use
        with self._h.claim() as ptr:
            return memory_use(_capi.lib().txlm_batch_memory, ptr, "batch memory")
