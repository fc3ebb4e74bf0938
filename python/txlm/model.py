"""txlm.Model: a .txlm file loaded onto a device, its vocabulary and tokenizer."""
from __future__ import annotations

import ctypes
import os
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from . import _capi, scoring
from ._arrays import Ids, Text, ids_array, int32_ptr, text_bytes
from ._calls import LongCall, Progress
from ._handle import Closable, Handle
from .context import Context, Device
from .errors import InvalidArgumentError
from .options import SessionOptions
from .text import Detokenizer, TokenSpans, Vocab, encode_symbol, token_spans

if TYPE_CHECKING:
    from .batch import Batch, BatchSizes
    from .session import Session

PathLike = Union[str, "os.PathLike[str]"]

_TOKENIZERS = {0: "word", 1: "char-byte", 2: "char-text8"}


@dataclass(frozen=True)
class ModelParams:
    """The hyper-parameters and vocabulary facts of a model (``txlm_model_params``)."""
    n_token: int
    d_model: int
    d_embed: int
    n_head: int
    d_head: int
    d_inner: int
    n_layer: int
    div_val: int
    n_clusters: int
    clamp_len: int
    mem_len: int
    tgt_len: int
    pre_lnorm: bool
    same_length: bool
    tokenizer: str                 # "word", "char-byte" or "char-text8"
    eos_id: Optional[int]          # None when the vocabulary has none
    unk_id: Optional[int]


@dataclass(frozen=True)
class MemoryUse:
    """Device memory allocated, and host memory of the largest parts (``txlm_memory_use``)."""
    device_bytes: int
    host_bytes: int


def memory_use(fn: Any, ptr: int, what: str) -> MemoryUse:
    m = _capi.MemoryUse()
    _capi.check(fn(ptr, ctypes.byref(m)), what)
    return MemoryUse(int(m.device_bytes), int(m.host_bytes))


class Model(Closable):
    """A model file loaded onto a device.

    ``Model(path, device=None)``: device is an index or a substring of a
    device's name (None: ``$TXLM_DEVICE``, then the preferred device); models
    of one device share a context. verify=False skips the per-tensor hashes.
    progress(fraction) is told how far loading got; a true return, or
    Ctrl-C, cancels it. Close with ``close()`` or a ``with`` block; garbage
    collection frees it too (after its sessions).
    """

    def __init__(self, path: PathLike, device: Device = None, *, verify: bool = True, progress: Progress = None,
                 context: Optional[Context] = None):
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path: a file path expected, not {type(path).__name__}")
        self.path = os.fsdecode(path)
        self.verify = verify
        self.context = context if context is not None else Context.shared(device)
        self.requested_device = device if context is None else context.requested
        lib = _capi.lib()
        opts = _capi.ModelOptions()
        opts.no_verify = int(not verify)

        def load(cp: int) -> int:
            ptr = ctypes.c_void_p()
            status = lib.txlm_model_load(cp, os.fsencode(self.path), ctypes.byref(opts), ctypes.byref(ptr))
            call.check(status)
            return ptr.value
        with LongCall(progress, f"loading {self.path}") as call:
            opts.progress = call.fn
            self._h = Handle.make(self, "model", lib.txlm_model_free, load, self.context._h)
        p = _capi.ModelParams()
        with self._h.use() as ptr:   # a close() of the context on another thread may have closed it already
            lib.txlm_model_get_params(ptr, ctypes.byref(p))
            self.vocab_size = int(lib.txlm_vocab_size(ptr))
        self.params = ModelParams(
            p.n_token, p.d_model, p.d_embed, p.n_head, p.d_head, p.d_inner, p.n_layer, p.div_val, p.n_clusters,
            p.clamp_len, p.mem_len, p.tgt_len, bool(p.pre_lnorm), bool(p.same_length),
            _TOKENIZERS.get(p.tokenizer, str(p.tokenizer)), None if p.eos_id < 0 else p.eos_id,
            None if p.unk_id < 0 else p.unk_id)
        self.vocab = Vocab(self)
        with Model._shared_lock:  # the first model of a file is the one unpickling finds
            key = self._key(self.path, self.requested_device, verify)
            known = Model._shared.get(key)
            if known is None or known.closed:
                Model._shared[key] = self

    # ---- shared models (pickling, Dask workers) ---------------------------

    _shared: "weakref.WeakValueDictionary[tuple, Model]" = weakref.WeakValueDictionary()
    _shared_lock = threading.RLock()

    @classmethod
    def shared(cls, path: PathLike, device: Device = None, *, verify: bool = True) -> "Model":
        """The model of this file and device already open in this process, or a new one
        (what unpickling a model or a session gives, and what each Dask worker keeps)."""
        key = cls._key(path, device, verify)
        with cls._shared_lock:  # held while loading: threads asking at once share one load
            m = cls._shared.get(key)
            if m is None or m.closed:
                m = cls(path, device, verify=verify)
                cls._shared[key] = m
            return m

    @staticmethod
    def _key(path: PathLike, device: Device, verify: bool) -> tuple:
        return (os.path.realpath(os.fsdecode(path)), None if device is None else str(device), verify)

    def __reduce__(self) -> Any:
        # a model pickles as its path: the other process opens the file (or shares one it has open)
        return (_reopen, (self.path, self.requested_device, self.verify))

    # ---- vocabulary and text ----------------------------------------------

    def symbol_bytes(self, token: int) -> bytes:
        """Vocabulary symbol of one id, as the bytes the model stores."""
        length = ctypes.c_size_t()
        with self._h.use() as ptr:
            sym = _capi.lib().txlm_token_symbol(ptr, int(token), ctypes.byref(length))
            if not sym:
                raise InvalidArgumentError(f"token id {token} is outside the vocabulary [0, {self.vocab_size})")
            return ctypes.string_at(sym, length.value)

    def token_to_id(self, symbol: str) -> Optional[int]:
        """The id of a symbol, matched byte for byte; None when the vocabulary has none."""
        raw = encode_symbol(symbol) if isinstance(symbol, str) else text_bytes(symbol, "symbol")
        out = ctypes.c_int32()
        with self._h.use() as ptr:
            _capi.check(_capi.lib().txlm_token_id(ptr, raw, len(raw), ctypes.byref(out)), "looking up a symbol")
        return None if out.value < 0 else int(out.value)

    def tokenize(self, text: Text) -> np.ndarray:
        """Text to token ids (int32) with the model's own tokenizer."""
        data = text_bytes(text)
        ids, n = _capi.p_int32(), ctypes.c_size_t()
        with self._h.use() as ptr:
            _capi.check(_capi.lib().txlm_tokenize(ptr, data, len(data), ctypes.byref(ids), ctypes.byref(n)),
                        "tokenizing")
        try:
            return np.ctypeslib.as_array(ids, shape=(n.value,)).copy() if n.value else np.zeros(0, np.int32)
        finally:
            _capi.lib().txlm_free(ids)

    def tokenize_spans(self, text: Text) -> TokenSpans:
        """Tokens traced back to the bytes of the (UTF-8) text they came from, and the text's words."""
        data = text_bytes(text)
        with self._h.use() as ptr:
            return token_spans(ptr, data)

    def detokenize_bytes(self, ids: Ids) -> bytes:
        """Token ids to the bytes of their text (a byte model's may not be UTF-8)."""
        arr = ids_array(ids)
        out = ctypes.c_void_p()
        with self._h.use() as ptr:
            _capi.check(_capi.lib().txlm_detokenize(ptr, int32_ptr(arr), arr.size, ctypes.byref(out)), "detokenizing")
        try:
            return ctypes.string_at(out.value) if out.value else b""  # NUL-terminated
        finally:
            _capi.lib().txlm_free(out)

    def detokenize(self, ids: Ids) -> str:
        """Token ids to text (bytes that are not UTF-8 become U+FFFD)."""
        return self.detokenize_bytes(ids).decode("utf-8", "replace")

    def detokenizer(self) -> Detokenizer:
        """A streaming detokenizer: one token in, the text now final out."""
        return Detokenizer(self)

    # ---- sessions, batches, scoring ---------------------------------------

    def session(self, **options: Any) -> "Session":
        """A session with empty memory; options as SessionOptions (mem_len, clamp_len,
        same_length, max_segment, zero_memory)."""
        from .session import Session
        return Session(self, SessionOptions.of(options))

    def batch(self, max_streams: int, **options: Any) -> "Batch":
        """A batch feeding and sampling up to max_streams sessions together (``txlm_batch_*``);
        options as a session's (their max_segment at most the batch's)."""
        from .batch import Batch
        return Batch(self, max_streams, SessionOptions.of(options))

    def batch_plan(self, streams: int, **options: Any) -> "BatchSizes":
        """Device bytes a batch of that many sessions would take, computed without allocating."""
        from .batch import plan
        return plan(self, streams, SessionOptions.of(options))

    def score(self, text: Text, words: bool = True, **kwargs: Any) -> Any:
        """Surprisal of every word (or token) of a text, as ``txlm score`` (see txlm.scoring.score)."""
        return scoring.score(self, text, words=words, **kwargs)

    def eval(self, text: Text, **kwargs: Any) -> scoring.EvalResult:
        """The figures of ``txlm eval`` over a text (see txlm.scoring.evaluate)."""
        return scoring.evaluate(self, text, **kwargs)

    # ---- facts and lifetime -----------------------------------------------

    @property
    def step_bytes(self) -> int:
        """Bytes of weights one generated token reads on the device."""
        with self._h.use() as ptr:
            return int(_capi.lib().txlm_model_step_bytes(ptr))

    def memory_use(self) -> MemoryUse:
        """The model's device memory and the host memory of its largest parts."""
        with self._h.use() as ptr:
            return memory_use(_capi.lib().txlm_model_memory, ptr, "model memory")

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.params.tokenizer}, {self.vocab_size} symbols"
        return f"<txlm.Model {self.path!r} ({state})>"


def _reopen(path: str, device: Device, verify: bool) -> Model:
    return Model.shared(path, device, verify=verify)
