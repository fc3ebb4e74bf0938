"""Session.feed against `txlm logprobs` (to the bit) and the golden cases' reference
log-probabilities; the next-token calls and Session.score against feed."""
import numpy as np
import pytest
from conftest import DEMO_TEXT, run_cli

import txlm


def cli_logprobs(path, tokens, segments, n_token, tmp_path):
    out = tmp_path / "lp.f32"
    run_cli("logprobs", "-m", path, "--tokens", ",".join(map(str, tokens)), "--segments", ",".join(map(str, segments)),
            "-o", str(out))
    return np.fromfile(out, dtype="<f4").reshape(-1, n_token)


def test_demo_feed_bit_identical_to_cli(demo, tmp_path):
    """Segments of the model's tgt_len (the session's default), the memory carried."""
    text = tmp_path / "t.txt"
    text.write_text(DEMO_TEXT[:700])
    out = tmp_path / "lp.f32"
    run_cli("logprobs", "-m", demo.path, "-f", str(text), "-o", str(out))
    want = np.fromfile(out, dtype="<f4").reshape(-1, demo.params.n_token)
    s = demo.session()
    got = s.feed(demo.tokenize(DEMO_TEXT[:700]))
    assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert s.memory_len == demo.params.mem_len


@pytest.mark.parametrize("case", ["adaptive_word", "char_preln", "proj_clusters", "decode_steps"])
def test_golden_segments(golden, case, tmp_path):
    g = golden[case]
    segs = g["segments"]["segments"]
    with txlm.Model(g["path"]) as m:
        s = m.session(max_segment=max(len(x["tokens"]) for x in segs))
        tokens = [t for x in segs for t in x["tokens"]]
        want_cli = cli_logprobs(g["path"], tokens, [len(x["tokens"]) for x in segs], m.params.n_token, tmp_path)
        rows = []
        for x in segs:
            lp = s.feed(x["tokens"])
            ref = np.fromfile(g["dir"] / x["logprobs_file"], dtype="<f4").reshape(lp.shape)
            assert np.max(np.abs(lp - ref)) <= 1e-3  # the engine against PyTorch (tests/e2e/test_golden.c)
            nll = -np.mean(lp[np.arange(len(x["targets"])), x["targets"]])
            assert abs(nll - x["mean_nll"]) <= 1e-3
            assert s.memory_len == x["mem_len_after"]
            rows.append(lp)
        assert np.concatenate(rows).tobytes() == want_cli.tobytes()


def test_feed_rows_and_segments(demo):
    ids = demo.tokenize(DEMO_TEXT[:300])
    whole = demo.session().feed(ids)
    s = demo.session(max_segment=50)
    part = s.feed(ids, first_row=120)          # six segments of 50, rows from the third
    ref = demo.session(max_segment=50)
    all_rows = np.concatenate([ref.feed(ids[a:a + 50]) for a in range(0, len(ids), 50)])
    assert part.tobytes() == all_rows[120:].tobytes()
    assert demo.session(max_segment=50).feed(ids, logprobs=False) is None
    assert whole.shape == (len(ids), demo.params.n_token)
    # the default max_segment is tgt_len: 300 tokens fed as 128 + 128 + 44
    assert demo.session().max_segment == 128 and demo.session(max_segment=0).max_segment == 512


def test_next_token_calls(demo, word_model):
    for m, text in ((demo, DEMO_TEXT[:200]), (word_model, "w5 w17 w300 w3 w44")):
        s = m.session()
        lp = s.feed(m.tokenize(text))
        nxt = s.next_logprobs()
        assert nxt.tobytes() == lp[-1].tobytes()
        top = s.top_k(5)
        order = sorted(range(len(nxt)), key=lambda i: (-nxt[i], i))[:5]
        assert top.ids.tolist() == order and top.logprobs.tobytes() == nxt[order].tobytes()
        assert s.memory_len == min(len(lp), m.params.mem_len)


def test_session_score_against_feed(demo, word_model):
    for m, text in ((demo, DEMO_TEXT[:400]), (word_model, "w5 w17 w300 w3 w44 w12 w999 w200 w201 w9 w1")):
        ids = m.tokenize(text)
        lp = m.session().feed(ids[:-1])
        want = lp[np.arange(len(ids) - 1), ids[1:]]
        got = m.session().score(ids)
        assert got.shape == want.shape and np.max(np.abs(got - want)) <= 1e-5
        got2 = m.session().score(ids[:-1], ids[1:])
        assert got2.tobytes() == got.tobytes()


def test_feed_text_and_feed_long(demo):
    a, b = demo.session(), demo.session()
    assert a.feed_text(DEMO_TEXT[:300]) == len(demo.tokenize(DEMO_TEXT[:300]))
    assert b.feed_long(demo.tokenize(DEMO_TEXT[:300])) == 300
    assert a.next_logprobs().tobytes() == b.next_logprobs().tobytes()
    a.reset()
    assert a.memory_len == 0


def test_attention_capture(demo):
    s = demo.session()
    s.capture_attention("terms")
    s.feed(demo.tokenize("Hello there"))
    att = s.attention(0, terms=True)
    assert att.probs.shape == (demo.params.n_head, 11, 11) and att.mlen == 0
    assert np.allclose(att.probs.sum(-1), 1, atol=1e-5)
    assert att.terms.shape == (4,) + att.probs.shape
    t = demo.session()
    with pytest.raises(txlm.InvalidArgumentError):
        t.attention(0, terms=True)
