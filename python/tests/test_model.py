"""Model: hyper-parameters as `txlm info` gives them, the vocabulary, text in and out."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import DEMO, DEMO_TEXT, run_cli, word_text

import txlm


def info_params(path: str) -> dict:
    out = run_cli("info", "-m", path).decode()
    pairs = dict(re.findall(r"\b([a-z_]+) (-?\d+)\b", out))
    vocab = re.search(r"vocabulary: (\d+) symbols, tokenizer (\S+), eos (-?\d+), unk (-?\d+)", out)
    return {"pairs": pairs, "vocab": vocab.groups()}


@pytest.mark.parametrize("case", ["demo", "adaptive_word", "char_preln", "proj_clusters"])
def test_params_as_txlm_info(case, golden):
    path = DEMO if case == "demo" else golden[case]["path"]
    want = info_params(path)
    with txlm.Model(path) as m:
        p = m.params
        for name in ("n_token", "d_model", "d_embed", "n_head", "d_head", "d_inner", "n_layer", "div_val",
                     "clamp_len", "mem_len", "tgt_len"):
            assert getattr(p, name) == int(want["pairs"][name]), name
        assert (p.pre_lnorm, p.same_length) == (bool(int(want["pairs"]["pre_lnorm"])),
                                                bool(int(want["pairs"]["same_length"])))
        size, tokenizer, eos, unk = want["vocab"]
        assert (m.vocab_size, p.tokenizer, p.eos_id, p.unk_id) == (int(size), tokenizer, int(eos), int(unk))


def test_vocab_round_trip(demo, word_model):
    for m in (demo, word_model):
        assert len(m.vocab) == m.vocab_size == m.params.n_token
        for i, sym in enumerate(m.vocab):
            assert m.token_to_id(sym) == i
            assert sym in m.vocab and m.vocab.index(sym) == i
        assert m.token_to_id("no such symbol") is None
        assert "no such symbol" not in m.vocab
    assert word_model.vocab[0] == "<eos>" and word_model.vocab[5] == "w5"
    with pytest.raises(ValueError):
        word_model.vocab.index("zebra")


def test_tokenize_as_txlm_score(demo, word_model, tmp_path):
    """The ids of each line are the tokens txlm score prints for it."""
    for m, text in ((demo, DEMO_TEXT[:600]), (word_model, word_text(word_model))):
        f = tmp_path / "t.txt"
        f.write_text(text)
        rows = [json.loads(line) for line in run_cli("score", "-m", m.path, str(f), "--format", "jsonl").splitlines()]
        lines = text.splitlines(keepends=True)
        got = [(i + 1, m.vocab[t]) for i, line in enumerate(lines) for t in m.tokenize(line)]
        assert got == [(r["sentence_id"], r["token"]) for r in rows]
        spans = [(i + 1, s) for i, line in enumerate(lines) for s in m.tokenize_spans(line).spans.tolist()]
        offsets = np.cumsum([0] + [len(line.encode()) for line in lines])
        assert [(sid, [b + offsets[sid - 1], e + offsets[sid - 1]]) for sid, (b, e) in spans] == \
               [(r["sentence_id"], [r["begin"], r["end"]]) for r in rows]


def test_detokenize(demo, word_model):
    text = DEMO_TEXT[:500]
    ids = demo.tokenize(text)
    assert ids.dtype == np.int32 and ids.ndim == 1
    assert demo.detokenize(ids) == text
    assert demo.detokenize(list(map(int, ids))) == text
    wids = word_model.tokenize("w5 w17 zebra\nw9")
    assert list(wids) == [5, 17, word_model.params.unk_id, word_model.params.eos_id, 9]
    assert word_model.detokenize(wids) == "w5 w17 <unk>\nw9"


def test_streaming_detokenizer_joins_to_detokenize(demo, word_model):
    for m, text in ((demo, "Caf\u00e9 au lait, s'il vous pla\u00eet.\nOui."), (word_model, word_text(word_model))):
        ids = m.tokenize(text)
        d = m.detokenizer()
        pieces = [d.push(t) for t in ids] + [d.flush()]
        assert "".join(pieces) == m.detokenize(ids)
        d.close()


def test_spans_words(word_model):
    t = word_model.tokenize_spans("w5  w17 zebra")
    assert t.ids.tolist() == [5, 17, word_model.params.unk_id]
    assert t.spans.tolist() == [[0, 2], [4, 7], [8, 13]]
    assert t.word.tolist() == [0, 1, 2] and t.words.tolist() == [[0, 2], [4, 7], [8, 13]] and t.guessed == 0


def test_model_facts(demo):
    assert demo.step_bytes > 0
    use = demo.memory_use()
    assert use.device_bytes > 0 and use.host_bytes > 0
    dev = demo.context.device
    assert dev.supported and dev.name
    assert txlm.library_version() == "0.1.0"
    assert repr(demo).startswith("<txlm.Model")


LIST_DEVICES = """
import txlm, sys
first = txlm.devices()                 # before any context
m = txlm.Model(sys.argv[1])
assert txlm.devices() == first         # with a context open: the same list
assert any(d.name == m.context.device.name and d.supported for d in first)
m.session().feed([3, 5, 7])            # the open context still works
del m
print(len(first))
"""


def test_devices(tmp_path):
    """Listed before any context is open and with one open; the open context keeps working and
    closes cleanly (a separate process: a crash at its close would fail the run)."""
    r = subprocess.run([sys.executable, "-c", LIST_DEVICES, DEMO], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and int(r.stdout) >= 1, r.stderr
