"""Threads: a session used from two threads at once is refused (as the C library refuses it),
and different sessions of one model run from several threads with the results of one."""
import threading

import pytest
from conftest import DEMO_TEXT

import txlm


def while_inside(session_call, other_call):
    """Runs other_call on a second thread while the first is inside session_call's C call
    (from its progress callback); returns what the second thread raised."""
    raised = []

    def other():
        try:
            other_call()
        except BaseException as e:  # noqa: B902 - handed to the test
            raised.append(e)

    def progress(fraction):
        if not hasattr(progress, "done"):
            progress.done = True
            t = threading.Thread(target=other)
            t.start()
            t.join()

    session_call(progress)
    return raised


@pytest.mark.parametrize("second", ["feed", "sample", "state", "next", "batch", "generate"])
def test_session_in_two_threads_refused(demo, second):
    ids = demo.tokenize(DEMO_TEXT[:400])
    s = demo.session(max_segment=64)
    calls = {
        "feed": lambda: s.feed([1, 2]),
        "sample": lambda: s.sample(),
        "state": lambda: s.state(),
        "next": lambda: s.next_logprobs(),
        "batch": lambda: demo.batch(1).feed([s], [[1]]),
        "generate": lambda: next(s.generate("x", 3)),
    }
    raised = while_inside(lambda p: s.feed_long(ids, progress=p), calls[second])
    assert len(raised) == 1 and isinstance(raised[0], txlm.InvalidArgumentError), raised
    assert "inside another call" in str(raised[0])
    ref = demo.session(max_segment=64)
    ref.feed_long(ids)
    assert s.next_logprobs().tobytes() == ref.next_logprobs().tobytes()  # the first call was not disturbed


def test_close_while_inside_a_call_refused(demo):
    m = txlm.Model(demo.path)
    s = m.session(max_segment=32)
    errors = []

    def progress(fraction):
        for close in (s.close, m.close):
            try:
                close()
            except txlm.InvalidArgumentError as e:
                errors.append(e)
    s.feed_long(m.tokenize(DEMO_TEXT[:100]), progress=progress)
    assert len(errors) == 8 and all("inside a call" in str(e) for e in errors)
    assert not s.closed and not m.closed
    m.close()
    assert s.closed


def test_call_starting_while_close_frees_refused():
    """close() checks that no call is inside and takes the pointer in one step: a call that
    starts just after the check finds the handle closed, and the pointer is never freed under it."""
    from txlm._handle import Handle
    freed, late = [], []
    h = Handle(1234, lambda ptr: freed.append((ptr, h._busy)), "thing")

    class Interleaved:
        """h's lock; the first time close() lets go of it, another thread's call starts."""
        def __init__(self):
            self.lock, self.armed = threading.Lock(), True

        def __enter__(self):
            self.lock.acquire()

        def __exit__(self, *exc):
            self.lock.release()
            if self.armed and h.ptr is None:  # the release of the step that took the pointer
                self.armed = False
                call = h.use()  # kept: the call stays inside until the test ends
                try:
                    late.append((call, call.__enter__()))
                except txlm.ClosedError as e:
                    late.append(e)
    h._lock = Interleaved()
    h.close()
    assert freed == [(1234, 0)], "freed while a call was inside: %s" % freed
    assert len(late) == 1 and isinstance(late[0], txlm.ClosedError), late


def test_close_of_a_parent_inside_a_call_keeps_its_children():
    """A model inside a call refuses close() before closing any of its sessions."""
    from txlm._handle import Handle
    freed = []
    parent = Handle(1, freed.append, "model")
    child = Handle(2, freed.append, "session", parent)
    with parent.use():
        with pytest.raises(txlm.InvalidArgumentError, match="inside a call"):
            parent.close()
        assert not child.closed and not parent.closed and freed == []
    parent.close()
    assert child.closed and parent.closed and freed == [2, 1]


def test_sessions_in_parallel_equal_one_thread(demo):
    texts = [DEMO_TEXT[i * 200:(i + 1) * 200] for i in range(4)]
    want = [demo.session().feed(demo.tokenize(t)) for t in texts]
    got = [None] * 4

    def work(i):
        s = demo.session()
        for _ in range(3):
            s.reset()
            got[i] = s.feed(demo.tokenize(texts[i]))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
