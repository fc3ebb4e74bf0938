"""Errors: bad paths, bad ids, wrong types, closed objects used again; each a Python exception
carrying the library's message."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DEMO

import txlm


def test_bad_paths(tmp_path):
    with pytest.raises(txlm.FileError, match="nonexistent") as e:
        txlm.Model(tmp_path / "nonexistent.txlm")
    assert isinstance(e.value, OSError) and e.value.status == 2
    junk = tmp_path / "junk.txlm"
    junk.write_bytes(b"not a model at all" * 10)
    with pytest.raises(txlm.FormatError, match="junk"):
        txlm.Model(junk)
    with pytest.raises(txlm.TxlmError, match="regular file|directory"):
        txlm.Model(tmp_path)
    truncated = tmp_path / "cut.txlm"
    truncated.write_bytes(open(DEMO, "rb").read()[:100000])
    with pytest.raises(txlm.TxlmError):
        txlm.Model(truncated)
    with pytest.raises(TypeError):
        txlm.Model(42)


def test_bad_ids(demo):
    s = demo.session()
    with pytest.raises(txlm.InvalidArgumentError, match="97|vocabulary") as e:
        s.feed([3, 17, 97])
    assert isinstance(e.value, ValueError) and "vocabulary" in str(e.value)
    with pytest.raises(txlm.InvalidArgumentError):
        s.feed([-1])
    with pytest.raises(txlm.InvalidArgumentError, match="outside"):
        s.feed(np.array([1, 2**40], dtype=np.int64))
    with pytest.raises(txlm.InvalidArgumentError, match="no tokens"):
        s.feed([])
    with pytest.raises(txlm.InvalidArgumentError):
        s.score([1, 2, 3], [1, 2])
    with pytest.raises(txlm.InvalidArgumentError):
        demo.detokenize([1000])
    with pytest.raises(txlm.InvalidArgumentError):
        demo.symbol_bytes(97)
    with pytest.raises(txlm.InvalidArgumentError):
        s.top_k(0)
    assert s.memory_len == 0  # refused calls fed nothing


def test_wrong_types(demo):
    s = demo.session()
    for bad in ("abc", b"abc", [1.5, 2.0], [[1, 2]], [True, False], None, 3.0):
        with pytest.raises(TypeError):
            s.feed(bad)
    with pytest.raises(TypeError):
        demo.tokenize(123)
    with pytest.raises(TypeError, match="unknown session option"):
        demo.session(memlen=3)
    with pytest.raises(TypeError):
        demo.session(mem_len="8")
    with pytest.raises(ValueError):
        demo.session(mem_len=-1)
    with pytest.raises(TypeError):
        s.sample(top_k=1.5)
    with pytest.raises(TypeError):
        s.top_k("3")
    with pytest.raises(TypeError):
        demo.batch("2")


def test_bad_sampling_options(demo):
    s = demo.session()
    s.feed([5, 6], logprobs=False)
    for kw in ({"temperature": float("nan")}, {"top_p": 2.0}, {"top_p": -0.5}, {"repeat_penalty": -1.0}):
        with pytest.raises(txlm.InvalidArgumentError):
            s.sample(**kw)
    with pytest.raises(txlm.InvalidArgumentError):
        s.sample(repeat_penalty=1.2, window=[500])
    with pytest.raises(txlm.InvalidArgumentError):
        demo.session().generate("x", temperature=float("inf"))  # checked when made, before feeding
    with pytest.raises(txlm.InvalidArgumentError):  # a ValueError too
        demo.session().generate("x", max_tokens=-5)
    with pytest.raises(txlm.InvalidArgumentError, match="top_k"):
        s.sample(top_k=-1)
    with pytest.raises(txlm.InvalidArgumentError, match="mem_len"):
        demo.session(mem_len=-1)
    # the library's message names the call once, not "sampling: sampling: ..."
    with pytest.raises(txlm.InvalidArgumentError) as e:
        s.sample(temperature=float("nan"))
    assert str(e.value).startswith("sampling: temperature") and "sampling: sampling" not in str(e.value)


def test_closed_objects(demo):
    m = txlm.Model(DEMO)
    s = m.session()
    d = m.detokenizer()
    b = m.batch(2)
    m.close()
    assert m.closed and s.closed and d.closed and b.closed
    for call in (lambda: m.tokenize("x"), lambda: m.session(), lambda: s.feed([1]), lambda: d.push(1),
                 lambda: b.feed([s], [[1]]), lambda: m.vocab_size and m.token_to_id("a"), lambda: s.state()):
        with pytest.raises(txlm.ClosedError, match="closed"):
            call()
    m.close()  # twice is fine
    with txlm.Model(DEMO) as m2:
        with m2.session() as s2:
            s2.feed([1, 2], logprobs=False)
        assert s2.closed and not m2.closed
    assert m2.closed
    assert not demo.closed  # the shared model of that path was another object


def test_context_close_closes_models():
    with txlm.Context() as ctx:
        m = txlm.Model(DEMO, context=ctx)
        s = m.session()
    assert ctx.closed and m.closed and s.closed
    with pytest.raises(txlm.ClosedError):
        txlm.Model(DEMO, context=ctx)


def test_no_device():
    with pytest.raises(txlm.errors.NoDeviceError):
        txlm.Model(DEMO, device="no such device name")


def test_library_not_found(tmp_path):
    code = "import txlm\ntry:\n    txlm.Model('x')\nexcept txlm.LibraryNotFoundError as e:\n    print('refused:', e)\n"
    env = dict(os.environ, TXLM_LIBRARY=str(tmp_path / "libnothing.so"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "refused:" in r.stdout and "libnothing.so" in r.stdout, r.stderr
