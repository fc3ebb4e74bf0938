"""Text generation streamed piece by piece, the loop ``txlm generate`` runs.

The prompt is fed in segments (memory carried); then each token is drawn,
fed back as a one-token segment, and its text goes through the streaming
detokenizer and the stop strings. The pieces yielded, joined, are exactly
the continuation ``txlm generate --no-display-prompt`` prints with the same
seed and options (without its final newline).
"""
from __future__ import annotations

import codecs
import math
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence

import numpy as np

from ._arrays import Text, text_bytes
from .errors import InvalidArgumentError
from .options import sampling
from .text import Stopper

if TYPE_CHECKING:
    from .session import Session


class _Output:
    """Detokenized bytes in, text out: the prompt's own text skipped, stop strings applied, UTF-8 decoded."""

    def __init__(self, stops: Sequence[str]):
        self.stopper = Stopper(stops)
        self.skip = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def emit(self, piece: bytes) -> str:
        drop = min(len(piece), self.skip)
        self.skip -= drop
        return self.decoder.decode(self.stopper.push(piece[drop:]))

    def finish(self, held: bytes) -> str:
        text = self.emit(held)
        return text + self.decoder.decode(self.stopper.flush(), final=True)


def _prompt_ids(session: "Session", data: bytes) -> np.ndarray:
    """The prompt's ids; with no prompt and nothing in memory, the start of a text (a line break)."""
    model = session.model
    ids = model.tokenize(data) if data else np.zeros(0, np.int32)
    if ids.size or session.memory_len:
        return ids
    eos = model.params.eos_id
    return np.array([eos if eos is not None else 0], dtype=np.int32)


def _check_sampling(temperature: float, top_p: float, repeat_penalty: float) -> None:
    """What the library refuses at the first draw, refused before the prompt is fed."""
    if not math.isfinite(temperature):
        raise InvalidArgumentError(f"temperature: {temperature} is not a finite number")
    if not 0 <= top_p <= 1:
        raise InvalidArgumentError(f"top_p: {top_p} is outside [0, 1]")
    if not (math.isfinite(repeat_penalty) and repeat_penalty >= 0):
        raise InvalidArgumentError(f"repeat_penalty: {repeat_penalty} is not a finite number >= 0")


def _check(max_tokens: int, repeat_last_n: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, (int, np.integer)) or max_tokens < -1:
        raise InvalidArgumentError(f"max_tokens: {max_tokens!r}; give a count, or -1 (or None) for no limit")
    if isinstance(repeat_last_n, bool) or not isinstance(repeat_last_n, (int, np.integer)) or repeat_last_n < 0:
        raise InvalidArgumentError(f"repeat_last_n: {repeat_last_n!r} is not a count")


def generate(session: "Session", prompt: Text = "", max_tokens: Optional[int] = 200, temperature: float = 1.0,
             top_k: int = 0, top_p: float = 0.0, repeat_penalty: float = 1.0, stop: Sequence[str] = (),
             seed: Optional[int] = None, repeat_last_n: int = 64) -> Iterator[str]:
    """Feeds prompt into session and yields the continuation's text as it becomes final.

    max_tokens: tokens to draw (-1 or None: until a stop string, or forever).
    temperature, top_k, top_p: as Session.sample. repeat_penalty: llama.cpp's,
    over the last repeat_last_n tokens (the prompt's included). stop: strings
    that end the text (not yielded). seed: reseeds the sampler first (None:
    it goes on from where it is). With no prompt, a session with empty memory
    starts a new text (as after a line break); a session with memory goes on.
    Options are checked when the generator is made, before anything is fed."""
    limit = -1 if max_tokens is None else max_tokens
    _check(limit, repeat_last_n)
    if isinstance(stop, (str, bytes)):
        stop = [stop]
    data = text_bytes(prompt, "prompt")
    sampling(temperature, top_k, top_p)
    _check_sampling(float(temperature), float(top_p), float(repeat_penalty))
    out = _Output(stop)
    return _run(session, data, limit, temperature, top_k, top_p, repeat_penalty, seed, repeat_last_n, out)


def _run(session: "Session", data: bytes, limit: int, temperature: float, top_k: int, top_p: float,
         repeat_penalty: float, seed: Optional[int], repeat_last_n: int, out: _Output) -> Iterator[str]:
    model = session.model
    if seed is not None:
        session.set_seed(seed)
    ids = _prompt_ids(session, data)
    session.feed_long(ids)
    keep = repeat_last_n if repeat_penalty != 1 else 0
    window: List[int] = [int(i) for i in ids[len(ids) - keep:]] if keep else []
    detok = model.detokenizer()
    try:
        if data:
            # the prompt's last line through the detokenizer, so the reply's spacing joins up;
            # the text it gives back is the prompt's own and is not yielded
            eos = model.params.eos_id
            start = len(ids)
            while start > 0 and ids[start - 1] != eos:
                start -= 1
            out.skip = len(model.detokenize_bytes(ids[start:]))
            for t in ids[start:]:
                out.skip -= min(len(detok.push_bytes(int(t))), out.skip)
        made = 0
        while (limit < 0 or made < limit) and not out.stopper.stopped:
            tok = session.sample(temperature, top_k, top_p, repeat_penalty, window)
            session.feed([tok], logprobs=False)
            made += 1
            if keep:
                window = (window + [tok])[-keep:]
            text = out.emit(detok.push_bytes(tok))
            if text:
                yield text
        text = out.finish(detok.flush_bytes())
        if text:
            yield text
    finally:
        detok.close()
        out.stopper.close()
