"""Text pieces of the C API: the vocabulary, tokens traced back to the text,
the streaming detokenizer and stop strings.

Symbols and text come out of the library as bytes; they are given as str,
decoded from UTF-8. A vocabulary symbol that is not UTF-8 on its own (a
byte model's byte 0xC3) decodes with ``surrogateescape``, so that
``model.token_to_id(model.vocab[i]) == i`` always holds.
"""
from __future__ import annotations

import codecs
import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple, overload

import numpy as np

from . import _capi
from ._handle import Closable, Handle

if TYPE_CHECKING:
    from .model import Model


def decode_symbol(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def encode_symbol(sym: str) -> bytes:
    return sym.encode("utf-8", "surrogateescape")


class Vocab(Sequence[str]):
    """The model's vocabulary: ``vocab[id]`` is a symbol, ``len(vocab)`` its size,
    ``vocab.index(sym)`` (ValueError when absent) and ``sym in vocab``."""

    def __init__(self, model: "Model"):
        self._model = model
        self._symbols: Optional[List[str]] = None

    def _all(self) -> List[str]:
        if self._symbols is None:
            self._symbols = [decode_symbol(self._model.symbol_bytes(i)) for i in range(self._model.vocab_size)]
        return self._symbols

    def __len__(self) -> int:
        return self._model.vocab_size

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> List[str]: ...

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self._all()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, sym: object) -> bool:
        return isinstance(sym, str) and self._model.token_to_id(sym) is not None

    def index(self, sym: str, *args: object) -> int:  # type: ignore[override]
        """The id of a symbol (ValueError when the vocabulary has none)."""
        i = self._model.token_to_id(sym)
        if i is None:
            raise ValueError(f"{sym!r} is not in the vocabulary")
        return i

    def __repr__(self) -> str:
        return f"<txlm.Vocab of {len(self)} symbols>"


@dataclass(frozen=True)
class TokenSpans:
    """Tokens with where they came from (``txlm_tokenize_spans``): byte offsets into the UTF-8 text.

    ids[k] came from text bytes [spans[k][0], spans[k][1]); word[k] is the
    word token k belongs to (-1: none, as a line break's <eos>); words[w]
    is word w's bytes. guessed counts tokens whose span is a guess."""
    ids: np.ndarray        # int32 [n]
    spans: np.ndarray      # int64 [n, 2]
    word: np.ndarray       # int64 [n], -1 for no word
    words: np.ndarray      # int64 [n_words, 2]
    guessed: int


def _span_array(ptr: ctypes.Array, n: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    raw = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_size_t)), shape=(n * 2,))
    return raw.astype(np.int64).reshape(n, 2)


def token_spans(model_ptr: int, data: bytes) -> TokenSpans:
    """txlm_tokenize_spans of data, copied into NumPy arrays."""
    lib = _capi.lib()
    t = _capi.TokenSpans()
    _capi.check(lib.txlm_tokenize_spans(model_ptr, data, len(data), ctypes.byref(t)), "tokenizing")
    try:
        n, nw = t.n, t.n_words
        ids = np.ctypeslib.as_array(t.ids, shape=(n,)).copy() if n else np.zeros(0, np.int32)
        # TXLM_NO_WORD, (size_t)-1, wraps to -1
        word = np.ctypeslib.as_array(t.word, shape=(n,)).astype(np.int64) if n else np.zeros(0, np.int64)
        return TokenSpans(ids, _span_array(t.spans, n), word, _span_array(t.words, nw), int(t.guessed))
    finally:
        lib.txlm_token_spans_free(ctypes.byref(t))


class Detokenizer(Closable):
    """Streaming detokenization (``txlm_detokenizer_*``): ``push(id)`` gives the text now final,
    ``flush()`` the rest; the pieces joined are ``model.detokenize(ids)``. Text is decoded
    incrementally, so a character split over tokens comes out whole."""

    def __init__(self, model: "Model"):
        lib = _capi.lib()
        self._h = Handle.make(self, "detokenizer", lib.txlm_detokenizer_free, lambda mp: _capi.made(
            lib.txlm_detokenizer_create, "creating a detokenizer", mp), model._h)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def push_bytes(self, token: int) -> bytes:
        """The bytes now final after one more token."""
        piece, length = ctypes.c_void_p(), ctypes.c_size_t()
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_detokenizer_push(ptr, int(token), ctypes.byref(piece), ctypes.byref(length)),
                        "detokenizing")
            return _capi.bytes_at(piece.value, length.value)

    def flush_bytes(self) -> bytes:
        """The bytes held back; a new stream starts."""
        piece, length = ctypes.c_void_p(), ctypes.c_size_t()
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_detokenizer_flush(ptr, ctypes.byref(piece), ctypes.byref(length)),
                        "detokenizing")
            return _capi.bytes_at(piece.value, length.value)

    def push(self, token: int) -> str:
        """The text now final after one more token (often empty)."""
        return self._decoder.decode(self.push_bytes(token))

    def flush(self) -> str:
        """The text held back; a new stream starts."""
        text = self._decoder.decode(self.flush_bytes(), final=True)
        self._decoder.reset()
        return text

    def reset(self) -> None:
        """Starts a new stream, dropping the text held back."""
        with self._h.claim() as ptr:
            _capi.lib().txlm_detokenizer_reset(ptr)
        self._decoder.reset()


class Stopper(Closable):
    """Stop strings over streamed text (``txlm_stopper_*``): ``push(text)`` gives what is
    known not to start a stop string; ``stopped`` becomes True once one completes."""

    def __init__(self, stops: Sequence[str]):
        lib = _capi.lib()
        raw = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in stops]
        arr = (ctypes.c_char_p * max(len(raw), 1))(*raw)
        self._h = Handle.make(self, "stopper", lib.txlm_stopper_free, lambda _: _capi.made(
            lib.txlm_stopper_create, "stop strings", arr, len(raw)))
        self.stopped = False

    def push(self, data: bytes) -> bytes:
        """The part of the text pushed so far now known not to start a stop string."""
        piece, length, stopped = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int()
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_stopper_push(ptr, data, len(data), ctypes.byref(piece), ctypes.byref(length),
                                                     ctypes.byref(stopped)), "stop strings")
            out = _capi.bytes_at(piece.value, length.value)
        self.stopped = self.stopped or bool(stopped.value)
        return out

    def flush(self) -> bytes:
        """What was held back (nothing after a stop); the stopper starts over."""
        piece, length = ctypes.c_void_p(), ctypes.c_size_t()
        with self._h.claim() as ptr:
            _capi.check(_capi.lib().txlm_stopper_flush(ptr, ctypes.byref(piece), ctypes.byref(length)), "stop strings")
            return _capi.bytes_at(piece.value, length.value)


def split_lines(data: bytes) -> List[Tuple[int, bytes]]:
    """The lines of data with their '\\n' and byte offsets, as getline reads them (``txlm score``)."""
    lines, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        lines.append((start, data[start:end]))
        start = end
    return lines
