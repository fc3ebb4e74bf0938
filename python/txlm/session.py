"""txlm.Session: the memory of one text stream, fed, scored and sampled.

Every method maps one C call (or a loop of them over segments); each
claims the session for its duration, so a second thread using the same
session meanwhile is refused with InvalidArgumentError, as in C.
"""
from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Optional, Sequence

import numpy as np

from . import _capi
from ._arrays import Ids, Text, float_ptr, ids_array, int32_ptr, text_bytes
from ._calls import LongCall, Progress
from ._handle import Closable, Handle
from .errors import InvalidArgumentError
from .options import Penalty, SessionOptions, sampling

if TYPE_CHECKING:
    from .model import MemoryUse, Model

_CAPTURE = {"off": 0, "probs": 1, "terms": 2}


class TopK(NamedTuple):
    """The k most likely next tokens, most likely first."""
    ids: np.ndarray        # int32 [k]
    logprobs: np.ndarray   # float32 [k]


class Attention(NamedTuple):
    """The last segment's attention of one layer (txlm_session_attention)."""
    probs: np.ndarray               # float32 [n_head, qlen, klen], memory keys first
    terms: Optional[np.ndarray]     # float32 [4, n_head, qlen, klen] when captured with "terms"
    mlen: int                       # memory rows the segment saw


class Session(Closable):
    """The per-layer memory of one text stream (``model.session(**options)``)."""

    def __init__(self, model: "Model", options: SessionOptions):
        self.model = model
        self.options = options.resolved(model.params.tgt_len)
        # the longest segment one C call takes (max_segment 0: the library's default)
        self.max_segment = self.options.max_segment or max(model.params.tgt_len, 512)
        self.n_token = model.params.n_token
        lib = _capi.lib()
        opts = self.options.to_c()
        self._h = Handle.make(self, "session", lib.txlm_session_free, lambda mp: _capi.made(
            lib.txlm_session_create, "creating a session", mp, ctypes.byref(opts)), model._h)
        self._capture = "off"

    # ---- feeding -----------------------------------------------------------

    def feed(self, ids: Ids, *, logprobs: bool = True, first_row: int = 0) -> Optional[np.ndarray]:
        """Feeds tokens, in segments of at most max_segment, and returns the log-probabilities
        of rows [first_row, n) as float32 [n - first_row, n_token] (None with logprobs=False).

        Row i is the distribution of the token after ids[i]. The library writes straight into
        the returned array."""
        arr = ids_array(ids)
        n = arr.size
        if n == 0:
            raise InvalidArgumentError("feed: no tokens")
        if isinstance(first_row, bool) or not 0 <= first_row <= n:
            raise InvalidArgumentError(f"feed: first_row {first_row} is outside [0, {n}]")
        first = first_row if logprobs else n
        out = np.empty((n - first, self.n_token), dtype=np.float32) if logprobs else None
        fn, seg = _capi.lib().txlm_session_feed_rows, self.max_segment
        with self._h.claim() as ptr:
            for a in range(0, n, seg):
                b = min(a + seg, n)
                fr = min(max(first - a, 0), b - a)
                dest = float_ptr(out[a + fr - first:]) if out is not None and fr < b - a else None
                _capi.check(fn(ptr, int32_ptr(arr[a:]) if a else int32_ptr(arr), b - a, fr, dest), "feeding")
        return out

    def feed_long(self, ids: Ids, *, progress: Progress = None) -> int:
        """Feeds any number of tokens without log-probabilities (a prompt, a long context);
        progress(fraction) after each segment, a true return or Ctrl-C stops it there (the
        memory then holds exactly the tokens fed). Returns the tokens fed."""
        arr = ids_array(ids)
        fed = ctypes.c_size_t()
        with self._h.claim() as ptr, LongCall(progress, "feeding") as call:
            status = _capi.lib().txlm_session_feed_long(ptr, int32_ptr(arr), arr.size, call.fn, None,
                                                         ctypes.byref(fed))
        call.check(status, fed.value)
        return fed.value

    def feed_text(self, text: Text, *, progress: Progress = None) -> int:
        """Tokenizes text with the model's tokenizer and feeds it as feed_long does; returns the tokens fed."""
        data = text_bytes(text)
        fed = ctypes.c_size_t()
        with self._h.claim() as ptr, LongCall(progress, "feeding text") as call:
            status = _capi.lib().txlm_session_feed_text(ptr, data, len(data), call.fn, None, ctypes.byref(fed))
        call.check(status, fed.value)
        return fed.value

    def score(self, tokens: Ids, targets: Optional[Ids] = None, *, progress: Progress = None) -> np.ndarray:
        """log p(targets[i] | tokens[0..i], memory) for every position, float32, fed in segments
        of max_segment (``txlm_session_score_long``). Without targets: the log-probability of
        each of tokens[1:] given the tokens before it (n - 1 values)."""
        tok = ids_array(tokens, "tokens")
        if targets is None:
            tok, tgt = tok[:-1], tok[1:]
        else:
            tgt = ids_array(targets, "targets")
            if tgt.size != tok.size:
                raise InvalidArgumentError(f"score: {tok.size} tokens but {tgt.size} targets")
        out = np.empty(tok.size, dtype=np.float32)
        done = ctypes.c_size_t()
        with self._h.claim() as ptr, LongCall(progress, "scoring") as call:
            status = _capi.lib().txlm_session_score_long(ptr, int32_ptr(tok), int32_ptr(tgt), tok.size, float_ptr(out),
                                                          call.fn, None, ctypes.byref(done))
        call.check(status, done.value)
        return out

    # ---- the next token ----------------------------------------------------

    def next_logprobs(self) -> np.ndarray:
        """The n_token log-probabilities of the token after the last one fed (nothing moves)."""
        out = np.empty(self.n_token, dtype=np.float32)
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_next_logprobs(ptr, float_ptr(out)), "next token")
        return out

    def top_k(self, k: int) -> TopK:
        """The k most likely next tokens, most likely first (ties: lower id first)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"top_k: k must be an int, not {type(k).__name__}")
        if not 1 <= k <= self.n_token:
            raise InvalidArgumentError(f"top_k: k {k} is outside [1, {self.n_token}]")
        ids, lps = np.empty(k, dtype=np.int32), np.empty(k, dtype=np.float32)
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_next_top_k(ptr, int(k), int32_ptr(ids), float_ptr(lps)), "next token")
        return TopK(ids, lps)

    def set_seed(self, seed: int) -> None:
        """Seeds the sampler: same seed, same draws (a new session starts from seed 0)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
            raise InvalidArgumentError(f"seed: {seed!r} is not an int in [0, 2^64)")
        with self._h.claim() as ptr:
            _capi.lib().txlm_session_set_seed(ptr, int(seed))

    def sample(self, temperature: float = 1.0, top_k: int = 0, top_p: float = 0.0, repeat_penalty: float = 1.0,
               window: Optional[Sequence[int]] = None) -> int:
        """Draws the token after the last one fed (not fed: feed it to go on). temperature <= 0
        is greedy; top_k 0 and top_p 0 or 1 are off; repeat_penalty (llama.cpp's) applies to
        the ids of window."""
        opts, pen, tok = sampling(temperature, top_k, top_p), Penalty(repeat_penalty, window), ctypes.c_int32()
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_sample_penalized(ptr, ctypes.byref(opts), ctypes.byref(pen.c),
                                                                  ctypes.byref(tok)), "sampling")
        return int(tok.value)

    def generate_tokens(self, n: int, temperature: float = 1.0, top_k: int = 0, top_p: float = 0.0,
                        repeat_penalty: float = 1.0, window: Optional[Sequence[int]] = None, *,
                        progress: Progress = None) -> np.ndarray:
        """Draws and feeds up to n tokens (``txlm_session_generate``), the penalty's window sliding
        over the tokens drawn; progress(fraction) after each, a true return or Ctrl-C stops there.
        Returns the ids drawn (and fed)."""
        opts, pen = sampling(temperature, top_k, top_p), Penalty(repeat_penalty, window)
        out, made = np.empty(max(int(n), 0), dtype=np.int32), ctypes.c_size_t()
        with self._h.claim() as ptr, LongCall(progress, "generating") as call:
            status = _capi.lib().txlm_session_generate(ptr, ctypes.byref(opts), ctypes.byref(pen.c), out.size,
                                                        int32_ptr(out), call.fn, None, ctypes.byref(made))
        if status == _capi.CANCELLED and call.stopped and not call.interrupted and call.error is None:
            return out[:made.value]  # the callback ended the generation: the tokens so far
        call.check(status, made.value)
        return out[:made.value]

    def generate(self, prompt: Text = "", max_tokens: int = 200, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 0.0, repeat_penalty: float = 1.0, stop: Sequence[str] = (),
                 seed: Optional[int] = None, repeat_last_n: int = 64) -> Iterator[str]:
        """Feeds prompt and yields the continuation's text piece by piece, as ``txlm generate``
        prints it (same seed, same text). See txlm.generation.generate."""
        from .generation import generate
        return generate(self, prompt, max_tokens, temperature, top_k, top_p, repeat_penalty, stop, seed,
                        repeat_last_n)

    # ---- memory and state --------------------------------------------------

    def reset(self) -> None:
        """Forgets the memory: the next segment starts a new text."""
        with self._h.claim() as ptr:
            _capi.lib().txlm_session_reset(ptr)

    @property
    def memory_len(self) -> int:
        """Rows now held in each layer's memory."""
        with self._h.claim() as ptr:
            return int(_capi.lib().txlm_session_memory_len(ptr))

    def memory_use(self) -> "MemoryUse":
        """The session's device and host memory (attention capture included, the model's not)."""
        from .model import memory_use
        with self._h.claim() as ptr:
            return memory_use(_capi.lib().txlm_session_memory, ptr, "session memory")

    def state(self) -> bytes:
        """The memory, last output row and sampler, as bytes bound to this model."""
        lib = _capi.lib()
        with self._h.claim() as ptr:
            size = lib.txlm_session_state_size(ptr)
            buf, written = ctypes.create_string_buffer(size), ctypes.c_size_t()
            _capi.check(lib.txlm_session_save(ptr, buf, size, ctypes.byref(written)), "saving the state")
        return buf.raw[:written.value]

    def restore(self, state: bytes) -> None:
        """Replaces the memory and sampler with a saved state (of this model; mem_len large enough)."""
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"state: bytes expected, not {type(state).__name__}")
        data = bytes(state)
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_restore(ptr, data, len(data)), "restoring the state")

    def save(self, path: "os.PathLike[str] | str") -> None:
        """The state into a file, written atomically."""
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_save_file(ptr, os.fsencode(path)), "saving the state")

    def restore_file(self, path: "os.PathLike[str] | str") -> None:
        """Restores a state saved to a file (by save, or `txlm generate --state-out`)."""
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_restore_file(ptr, os.fsencode(path)), "restoring the state")

    @classmethod
    def from_state(cls, model: "Model", state: bytes, **options: Any) -> "Session":
        """A new session of model with options, restored from state."""
        s = model.session(**options)
        try:
            s.restore(state)
        except BaseException:
            s.close()
            raise
        return s

    def __reduce__(self) -> Any:
        # pickled as its model (a path), its options and its state
        return (_unpickle, (self.model, self.options.as_dict(), self.state()))

    # ---- attention ---------------------------------------------------------

    def capture_attention(self, mode: str = "probs") -> None:
        """Keeps what the next feeds compute in attention: "probs", "terms" (and the four score
        terms) or "off"."""
        if mode not in _CAPTURE:
            raise InvalidArgumentError(f"capture_attention: mode {mode!r}; give one of {sorted(_CAPTURE)}")
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_session_capture_attention(ptr, _CAPTURE[mode]), "capturing attention")
            self._capture = mode

    def attention(self, layer: int, terms: bool = False) -> Attention:
        """The last segment's captured attention of one layer (terms: capture_attention("terms") first)."""
        if terms and self._capture != "terms":
            raise InvalidArgumentError('attention: the score terms are kept only after capture_attention("terms")')
        lib, shape = _capi.lib(), _capi.AttentionShape()
        with self._h.claim() as ptr:
            _capi.check(lib.txlm_session_attention(ptr, int(layer), None, None, ctypes.byref(shape)), "attention")
            probs = np.empty((shape.n_head, shape.qlen, shape.klen), dtype=np.float32)
            t = np.empty((4,) + probs.shape, dtype=np.float32) if terms else None
            _capi.check(lib.txlm_session_attention(ptr, int(layer), float_ptr(probs),
                                                   float_ptr(t) if t is not None else None, ctypes.byref(shape)),
                        "attention")
        return Attention(probs, t, int(shape.mlen))

    # ---- lifetime ----------------------------------------------------------

    def __repr__(self) -> str:
        return "<txlm.Session closed>" if self.closed else f"<txlm.Session of {self.model.path!r}>"


def _unpickle(model: "Model", options: dict, state: bytes) -> Session:
    return Session.from_state(model, state, **options)
