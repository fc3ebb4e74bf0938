"""Scoring a text as ``txlm score`` and ``txlm eval`` do, with the same numbers.

The text is read line by line (each line with its '\\n'), every line
tokenized on its own, and the tokens of all lines scored as one stream:
segments of tgt_len tokens against the next tokens, the memory carried from
segment to segment (the evaluation protocol). A word's surprisal is the sum
of its tokens' (docs/research.md has the alignment rules); the text's first
token has no context and its surprisal is NaN.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ._arrays import Text, text_bytes
from ._calls import Progress
from .errors import InvalidArgumentError
from .text import TokenSpans, split_lines

if TYPE_CHECKING:
    from .model import Model


class WordScore(NamedTuple):
    """One word of ``txlm score --words`` (ids count from 1; begin/end: bytes of the UTF-8 text)."""
    sentence_id: int
    word_id: int
    word: str
    surprisal: float
    tokens: int
    begin: int
    end: int


class TokenScore(NamedTuple):
    """One token of ``txlm score``: its vocabulary symbol and the text it came from."""
    sentence_id: int
    token_id: int
    token: str
    text: str
    surprisal: float
    begin: int
    end: int


def _session_options(model: "Model", tgt_len: Optional[int], options: dict) -> dict:
    if tgt_len is not None and (isinstance(tgt_len, bool) or not isinstance(tgt_len, int) or tgt_len < 1):
        raise InvalidArgumentError(f"tgt_len: {tgt_len!r}; give a length of at least 1 (None: the model's)")
    seg = tgt_len or model.params.tgt_len or 128
    return dict(options, max_segment=seg)


def _lines(model: "Model", data: bytes) -> List[Tuple[int, bytes, TokenSpans]]:
    return [(offset, line, model.tokenize_spans(line)) for offset, line in split_lines(data)]


def _stream(model: "Model", lines: Sequence[Tuple[int, bytes, TokenSpans]], eos_per_line: bool) -> np.ndarray:
    """Every line's ids (and an <eos> after a last line without '\\n', with eos_per_line), one stream."""
    eos = model.params.eos_id
    parts = [np.array([eos], np.int32)] if eos_per_line else []
    for _, line, t in lines:
        parts.append(t.ids)
        if eos_per_line and not line.endswith(b"\n"):
            parts.append(np.array([eos], np.int32))
    return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _stream_logprobs(model: "Model", ids: np.ndarray, options: dict, progress: Progress) -> np.ndarray:
    """log p of each of ids[1:] given those before, scored as txlm eval scores (float32)."""
    if ids.size < 2:
        return np.zeros(0, np.float32)
    with model.session(**options) as s:
        return s.score(ids[:-1], ids[1:], progress=progress)


def score(model: "Model", text: Text, words: bool = True, *, nats: bool = False, eos_per_line: bool = False,
          tgt_len: Optional[int] = None, frame: Optional[bool] = None, progress: Progress = None,
          **options: Any) -> Any:
    """The surprisal (-log2 p, or -ln p with nats=True) of every word of text, or of every token
    with words=False, with the numbers ``txlm score [--words] [--nats] [--eos-per-line]`` prints.

    tgt_len: the segment length (None: the model's); options: session options (mem_len,
    clamp_len, same_length, zero_memory). frame: a pandas DataFrame (None: when pandas is
    installed), else a list of WordScore or TokenScore records. progress(fraction) after each
    segment; a true return or Ctrl-C stops the scoring."""
    data = text_bytes(text)
    opts = _session_options(model, tgt_len, options)
    if eos_per_line and model.params.eos_id is None:
        raise InvalidArgumentError("eos_per_line: the model's vocabulary has no <eos>")
    lines = _lines(model, data)
    ids = _stream(model, lines, eos_per_line)
    lp = np.full(ids.size, np.nan, dtype=np.float64)
    lp[1:] = _stream_logprobs(model, ids, opts, progress)
    scale = 1.0 if nats else math.log(2.0)
    records = (_words if words else _tokens)(model, lines, lp[1:] if eos_per_line else lp, eos_per_line, scale)
    return to_frame(records, WordScore if words else TokenScore) if _want_frame(frame) else records


def _words(model: "Model", lines: Sequence[Tuple[int, bytes, TokenSpans]], lp: np.ndarray, eos_per_line: bool,
           scale: float) -> List[WordScore]:
    out: List[WordScore] = []
    pos = 0
    for sentence, (offset, line, t) in enumerate(lines, 1):
        n_words = len(t.words)
        sums, counts = [0.0] * n_words, [0] * n_words
        for k in range(len(t.ids)):
            w = int(t.word[k])
            if w >= 0:
                sums[w] += float(lp[pos + k])   # in token order, as the CLI adds them
                counts[w] += 1
        pos += len(t.ids) + (1 if eos_per_line and not line.endswith(b"\n") else 0)
        for w in range(n_words):
            b, e = int(t.words[w][0]), int(t.words[w][1])
            out.append(WordScore(sentence, w + 1, line[b:e].decode("utf-8", "replace"), -sums[w] / scale,
                                 counts[w], offset + b, offset + e))
    return out


def _tokens(model: "Model", lines: Sequence[Tuple[int, bytes, TokenSpans]], lp: np.ndarray, eos_per_line: bool,
            scale: float) -> List[TokenScore]:
    out: List[TokenScore] = []
    pos = 0
    symbols = model.vocab
    for sentence, (offset, line, t) in enumerate(lines, 1):
        n = len(t.ids) + (1 if eos_per_line and not line.endswith(b"\n") else 0)
        for k in range(n):
            tok = int(t.ids[k]) if k < len(t.ids) else model.params.eos_id
            b, e = (int(t.spans[k][0]), int(t.spans[k][1])) if k < len(t.ids) else (len(line), len(line))
            out.append(TokenScore(sentence, k + 1, symbols[tok], line[b:e].decode("utf-8", "replace"),
                                  -float(lp[pos + k]) / scale, offset + b, offset + e))
        pos += n
    return out


def _want_frame(frame: Optional[bool]) -> bool:
    if frame is not None:
        return frame
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def to_frame(records: Sequence[Union[WordScore, TokenScore]], kind: type = WordScore) -> Any:
    """Score records as a pandas DataFrame (one column per field)."""
    import pandas as pd
    fields = list(kind._fields)
    df = pd.DataFrame.from_records(records, columns=fields)
    return df.astype({f: "float64" if f == "surprisal" else "object" if f in ("word", "token", "text") else "int64"
                      for f in fields})


@dataclass(frozen=True)
class EvalResult:
    """The figures of ``txlm eval``: the mean NLL (nats) over every target with its standard
    error, the perplexity (word models) or bits per character (character models) with its
    standard error, and the <unk> targets."""
    tokens: int
    mean_nll: float
    mean_nll_se: float
    unit: str               # "perplexity" or "bpc"
    value: float
    value_se: float
    unk: int
    unk_rate: float
    tgt_len: int
    mem_len: int

    def __str__(self) -> str:
        name = "bits per character" if self.unit == "bpc" else "perplexity"
        return (f"{self.tokens} tokens, mean NLL {self.mean_nll:.4f} +/- {self.mean_nll_se:.4f}, {name} "
                f"{self.value:.4f} +/- {self.value_se:.4f}, {self.unk} <unk> ({100 * self.unk_rate:.2f}%)")


def evaluate(model: "Model", text: Text, *, tgt_len: Optional[int] = None, progress: Progress = None,
             **options: Any) -> EvalResult:
    """The paper's evaluation protocol over a text, with the figures ``txlm eval --json`` prints
    (the same numbers: the same segments, and the mean and its error by the same updates)."""
    data = text_bytes(text)
    opts = _session_options(model, tgt_len, options)
    ids = np.concatenate([model.tokenize(line) for _, line in split_lines(data)] or [np.zeros(0, np.int32)])
    if ids.size < 2:
        raise InvalidArgumentError("eval: fewer than two tokens to evaluate")
    lp = _stream_logprobs(model, ids, opts, progress)
    n, mean, m2 = 0, 0.0, 0.0
    for x in (-lp.astype(np.float64)).tolist():   # Welford's updates, in the CLI's order
        n += 1
        d = x - mean
        mean += d / n
        m2 += d * (x - mean)
    se = math.sqrt(m2 / (n * (n - 1))) if n > 1 else 0.0
    chars = model.params.tokenizer != "word"
    unk = int(np.count_nonzero(ids[1:] == model.params.unk_id)) if model.params.unk_id is not None else 0
    value = mean / math.log(2.0) if chars else _exp(mean)
    value_se = se / math.log(2.0) if chars else _exp(mean) * se
    mem_len = options.get("mem_len") or model.params.mem_len
    return EvalResult(n, mean, se, "bpc" if chars else "perplexity", value, value_se, unk, unk / n,
                      opts["max_segment"], mem_len)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf
