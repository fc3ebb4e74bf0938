"""Session state: round trips through bytes, files, pickle and the CLI's --state-in/--state-out."""
import pickle

import pytest
from conftest import DEMO_TEXT, run_cli

import txlm


def test_state_round_trip(demo):
    ids = demo.tokenize(DEMO_TEXT[:400])
    a = demo.session()
    a.feed(ids[:250], logprobs=False)
    a.set_seed(4)
    b = txlm.Session.from_state(demo, a.state())
    assert b.memory_len == a.memory_len
    assert b.next_logprobs().tobytes() == a.next_logprobs().tobytes()
    assert b.feed(ids[250:]).tobytes() == a.feed(ids[250:]).tobytes()
    assert [b.sample() for _ in range(5)] == [a.sample() for _ in range(5)]  # the sampler travels too


def test_pickle(demo):
    a = demo.session(mem_len=64)
    a.feed(demo.tokenize("Pickled memory"), logprobs=False)
    b = pickle.loads(pickle.dumps(a))
    assert b.model is demo  # the open model of that path, not a second copy
    assert b.options == a.options and b.options.mem_len == 64
    assert b.next_logprobs().tobytes() == a.next_logprobs().tobytes()
    m = pickle.loads(pickle.dumps(demo))
    assert m is demo


def test_state_files_and_cli(demo, tmp_path):
    """A state saved here goes on in `txlm generate --state-in`, and the other way round."""
    s = demo.session()
    prompt = "The secret of"
    s.feed(demo.tokenize(prompt), logprobs=False)
    path = tmp_path / "s.state"
    s.save(path)
    want = run_cli("generate", "-m", demo.path, "--state-in", str(path), "-n", "30", "--seed", "2").decode()
    t = demo.session()
    t.restore_file(path)
    assert "".join(t.generate("", 30, seed=2)) + "\n" == want
    out = tmp_path / "cli.state"
    run_cli("generate", "-m", demo.path, "-p", prompt, "-n", "10", "--seed", "8", "--state-out", str(out))
    u = demo.session()
    u.restore(out.read_bytes())
    ref = demo.session()
    "".join(ref.generate(prompt, 10, seed=8))
    assert u.next_logprobs().tobytes() == ref.next_logprobs().tobytes()


def test_state_refused(demo, word_model):
    s = demo.session()
    s.feed(demo.tokenize("abc"), logprobs=False)
    state = s.state()
    w = word_model.session()
    with pytest.raises(txlm.InvalidArgumentError, match="model"):
        w.restore(state)
    damaged = bytearray(state)
    damaged[len(damaged) // 2] ^= 0xFF
    fresh = demo.session()
    with pytest.raises(txlm.TxlmError) as e:
        fresh.restore(bytes(damaged))
    assert isinstance(e.value, (txlm.errors.ChecksumError, txlm.FormatError))
    assert fresh.memory_len == 0  # left as it was
    with pytest.raises(TypeError):
        fresh.restore("not bytes")
    with pytest.raises(txlm.FileError):
        fresh.restore_file("/nonexistent/state")
