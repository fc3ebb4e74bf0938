"""Batch against lone sessions (1e-5, a batch of one to the bit) and `txlm logprobs` with streams."""
import numpy as np
import pytest
from conftest import DEMO_TEXT, run_cli

import txlm


def streams(model):
    ids = model.tokenize(DEMO_TEXT[:600])
    return [ids[:90], ids[100:200], ids[300:320]]  # ragged: segments of 32 then what is left


def test_batch_feed_equals_lone_sessions(demo):
    toks = streams(demo)
    seg = 32
    batch = demo.batch(3, max_segment=seg)
    together = [demo.session(max_segment=seg) for _ in toks]
    alone = [demo.session(max_segment=seg) for _ in toks]
    for a in range(0, max(len(t) for t in toks), seg):
        live = [i for i, t in enumerate(toks) if a < len(t)]
        outs = batch.feed([together[i] for i in live], [toks[i][a:a + seg] for i in live])
        for i, out in zip(live, outs):
            ref = alone[i].feed(toks[i][a:a + seg])
            assert out.shape == ref.shape and np.max(np.abs(out - ref)) <= 1e-5
    for s, r in zip(together, alone):
        assert s.memory_len == r.memory_len


def test_batch_of_one_is_bit_identical(demo):
    ids = demo.tokenize(DEMO_TEXT[:100])
    b = demo.batch(1)
    s, r = demo.session(), demo.session()
    assert b.feed([s], [ids])[0].tobytes() == r.feed(ids).tobytes()
    s.set_seed(5)
    r.set_seed(5)
    assert b.sample([s], temperature=0.8)[0] == r.sample(temperature=0.8)


def test_batch_as_cli_streams(demo, tmp_path):
    toks = [t[:40] for t in streams(demo)]
    out = tmp_path / "lp.f32"
    run_cli("logprobs", "-m", demo.path, "--tokens", ";".join(",".join(map(str, t)) for t in toks), "-o", str(out))
    want = np.fromfile(out, dtype="<f4").reshape(-1, demo.params.n_token)
    b = demo.batch(3)
    sessions = [demo.session() for _ in toks]
    got = np.concatenate(b.feed(sessions, toks))
    assert got.tobytes() == want.tobytes()


def test_batch_score_and_sample(demo):
    toks = streams(demo)
    b = demo.batch(3, max_segment=200)
    ss = [demo.session(max_segment=200) for _ in toks]
    got = b.score(ss, [t[:-1] for t in toks], [t[1:] for t in toks])
    for t, g in zip(toks, got):
        assert np.max(np.abs(g - demo.session(max_segment=200).score(t))) <= 1e-5
    rs = [txlm.Session.from_state(demo, s.state(), max_segment=200) for s in ss]
    for i, (s, r) in enumerate(zip(ss, rs)):
        s.set_seed(i)
        r.set_seed(i)
    windows = [list(t[-5:]) for t in toks]
    drawn = b.sample(ss, temperature=0.9, top_k=12, repeat_penalty=1.2, windows=windows)
    assert drawn == [r.sample(0.9, 12, 0.0, 1.2, w) for r, w in zip(rs, windows)]
    assert b.memory_use().device_bytes > 0
    plan = demo.batch_plan(4)
    assert plan.total_bytes >= 4 * plan.stream_ring_bytes > 0


def test_batch_refusals(demo):
    b = demo.batch(2)
    s = demo.session()
    with pytest.raises(txlm.InvalidArgumentError, match="same session"):
        b.feed([s, s], [[1, 2], [3]])
    with pytest.raises(txlm.InvalidArgumentError, match="stream"):
        b.feed([s, demo.session()], [[1, 2], [3, 10**4]])
    with pytest.raises(txlm.InvalidArgumentError):
        b.feed([demo.session() for _ in range(3)], [[1]] * 3)
    with pytest.raises(TypeError):
        b.feed(["not a session"], [[1]])
    assert s.memory_len == 0  # a refused call changes no session
