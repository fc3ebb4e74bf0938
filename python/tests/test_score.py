"""Model.score and Model.eval against `txlm score` and `txlm eval` on the same text."""
import json
import math

import pytest
from conftest import DEMO_TEXT, run_cli, word_text

import txlm

pd = pytest.importorskip("pandas")

# a text with what the alignment has to follow: double spaces, an empty line, non-ASCII, no final newline
DEMO_SAMPLE = DEMO_TEXT[:900] + "\n\nCaf\u00e9  cr\u00e8me, \u00e0 la carte.\nThe end"


def fmt(x: float) -> str:
    return "NA" if not math.isfinite(x) else f"{x:.6f}"


def cli_rows(model, text, tmp_path, *flags):
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    lines = run_cli("score", "-m", model.path, str(f), *flags).decode().splitlines()
    return [line.split("\t") for line in lines[1:]]


@pytest.mark.parametrize("flags", [(), ("--nats",), ("--eos-per-line",), ("--tgt-len", "40")])
@pytest.mark.parametrize("which", ["demo", "word"])
def test_words_as_txlm_score(demo, word_model, tmp_path, flags, which):
    m, text = (demo, DEMO_SAMPLE) if which == "demo" else (word_model, word_text(word_model, lines=9))
    kw = {"nats": "--nats" in flags, "eos_per_line": "--eos-per-line" in flags,
          "tgt_len": int(flags[1]) if "--tgt-len" in flags else None}
    want = cli_rows(m, text, tmp_path, "--words", *flags)
    got = m.score(text, words=True, frame=False, **kw)
    assert [[str(r.sentence_id), str(r.word_id), r.word, fmt(r.surprisal), str(r.tokens)] for r in got] == want
    df = m.score(text, **kw)
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(txlm.WordScore._fields)
    assert df["surprisal"].map(fmt).tolist() == [w[3] for w in want]


@pytest.mark.parametrize("which", ["demo", "word"])
def test_tokens_as_txlm_score_jsonl(demo, word_model, tmp_path, which):
    m, text = (demo, DEMO_SAMPLE) if which == "demo" else (word_model, word_text(word_model))
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    want = [json.loads(line) for line in run_cli("score", "-m", m.path, str(f), "--format", "jsonl").splitlines()]
    got = m.score(text, words=False, frame=False)
    assert len(got) == len(want)
    for r, w in zip(got, want):
        assert (r.sentence_id, r.token_id, r.token, r.begin, r.end) == \
               (w["sentence_id"], w["token_id"], w["token"], w["begin"], w["end"])
        assert (None if math.isnan(r.surprisal) else f"{r.surprisal:.6f}") == \
               (None if w["surprisal"] is None else f"{w['surprisal']:.6f}")
    words = m.score(text, frame=False)
    assert all(text.encode()[w.begin:w.end].decode() == w.word for w in words)


def test_score_progress_and_types(demo):
    seen = []
    df = demo.score(DEMO_TEXT[:1000], words=False, tgt_len=64, progress=seen.append)
    assert len(df) == len(demo.tokenize(DEMO_TEXT[:1000]))
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == math.ceil((len(df) - 1) / 64)
    assert demo.score(b"bytes work too", frame=False)[1].word == "work"
    assert demo.score("", frame=False) == []
    with pytest.raises(TypeError):
        demo.score(123)
    with pytest.raises(ValueError):
        demo.score("x", tgt_len=0)
    assert txlm.to_frame([], txlm.TokenScore).dtypes["surprisal"] == "float64"


@pytest.mark.parametrize("which", ["demo", "word"])
def test_eval_as_txlm_eval(demo, word_model, tmp_path, which):
    m, text = (demo, DEMO_TEXT) if which == "demo" else (word_model, word_text(word_model, lines=30))
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    want = json.loads(run_cli("eval", "-m", m.path, str(f), "--json"))
    got = m.eval(text)
    unit = "bpc" if which == "demo" else "perplexity"
    assert got.unit == unit and got.tokens == want["tokens"] and got.unk == want["unk"]
    pairs = [(got.mean_nll, want["mean_nll"]), (got.mean_nll_se, want["mean_nll_se"]), (got.value, want[unit]),
             (got.value_se, want[unit + "_se"]), (got.unk_rate, want["unk_rate"])]
    assert [f"{a:.6f}" for a, _ in pairs] == [f"{b:.6f}" for _, b in pairs]
    assert (got.tgt_len, got.mem_len) == (want["tgt_len"], want["mem_len"])
    if which == "word":
        assert got.unk > 0
    else:  # README: 2.5521 bits per character on the shipped excerpt
        assert f"{got.value:.4f}" == "2.5521"
    f.write_bytes(text[:400].encode())
    short = m.eval(text[:400], tgt_len=5, mem_len=3)
    want_short = json.loads(run_cli("eval", "-m", m.path, str(f), "--json", "--tgt-len", "5", "--mem-len", "3"))
    assert f"{short.mean_nll:.6f}" == f"{want_short['mean_nll']:.6f}"
    assert "tokens, mean NLL" in str(got)

