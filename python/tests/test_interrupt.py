"""Ctrl-C and progress callbacks: a long call stops at a safe point through the library's
cancel, raises, and leaves the session usable, exactly where it stopped."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import DEMO, DEMO_TEXT

import txlm


def sigint_on_call(k):
    """A progress callback that sends this process SIGINT (Ctrl-C) on its k-th call."""
    calls = []

    def progress(fraction):
        calls.append(fraction)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGINT)
    return progress


def test_ctrl_c_stops_feed_and_session_goes_on(demo):
    ids = demo.tokenize(DEMO_TEXT[:640])
    s = demo.session(max_segment=64)
    with pytest.raises(KeyboardInterrupt) as e:
        s.feed_long(ids, progress=sigint_on_call(2))
    assert isinstance(e.value, txlm.Interrupted) and e.value.done == 128
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is given back
    assert s.memory_len == 128
    s.feed_long(ids[128:])
    ref = demo.session(max_segment=64)
    ref.feed_long(ids)
    assert s.next_logprobs().tobytes() == ref.next_logprobs().tobytes()


def test_ctrl_c_stops_scoring_and_loading(demo):
    with pytest.raises(txlm.Interrupted):
        demo.score(DEMO_TEXT, tgt_len=32, progress=sigint_on_call(3))
    assert len(demo.score("still works", frame=False)) == 2
    with pytest.raises(KeyboardInterrupt):
        txlm.Model(DEMO, progress=sigint_on_call(5))
    s = demo.session()
    s.feed(demo.tokenize("abc"), logprobs=False)
    with pytest.raises(txlm.Interrupted) as e:
        s.generate_tokens(20, progress=sigint_on_call(4))
    assert e.value.done == 4


def test_progress_stops_and_raises(demo):
    ids = demo.tokenize(DEMO_TEXT[:320])
    s = demo.session(max_segment=32)
    with pytest.raises(txlm.CancelledError) as e:
        s.feed_long(ids, progress=lambda f: f >= 0.3)
    assert e.value.done == 96 and s.memory_len == 96
    with pytest.raises(ZeroDivisionError):
        s.feed_long(ids, progress=lambda f: 1 / 0)
    assert s.memory_len == 128  # one more segment went in before the callback failed
    s.reset()
    fractions = []
    assert s.feed_long(ids, progress=fractions.append) == 320
    assert fractions == [pytest.approx(k / 10) for k in range(1, 11)]


SCRIPT = textwrap.dedent("""
    import sys, txlm
    m = txlm.Model(sys.argv[1])
    s = m.session(max_segment=16)
    ids = m.tokenize(open(sys.argv[2]).read())
    calls = []
    def progress(fraction):
        calls.append(fraction)
        if len(calls) == 1:
            print("ready", flush=True)
            sys.stdin.readline()   # Ctrl-C arrives while we wait here
    try:
        s.feed_long(ids, progress=progress)
        print("not interrupted")
    except KeyboardInterrupt as e:
        print("interrupted", e.done, s.memory_len)
        s.feed_long(ids[e.done:])
        print("usable", s.memory_len)
""")


def test_real_ctrl_c_in_a_process(tmp_path):
    """SIGINT from outside, as a terminal sends it."""
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    p = subprocess.Popen([sys.executable, str(script), DEMO, os.path.join(os.path.dirname(DEMO), "demo_heldout.txt")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate("\n", timeout=120)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert out.split() == ["interrupted", "16", "16", "usable", "128"]
