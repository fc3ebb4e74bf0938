"""Handles (txlm/_handle.py) at the moments that used to go wrong, each forced rather than hoped for:

- the garbage collector finalizing an object on a thread that holds a handle's lock (while a child is
  registered, while close() holds its handles, as a call starts): the finalizer never waits for the
  lock, and the object is freed as soon as the thread lets go of it;
- another thread's close() at every point where a child (session, batch, detokenizer, model) is being
  made: it is refused until the child is registered, so the parent is never freed under it;
- a parent whose owner is gone waits for its last child, a close() refused changes nothing, and a
  handle closed while a call is inside is freed when the call returns.

A deadlock fails the test (a thread that does not finish in WAIT seconds) instead of hanging the suite."""
import gc
import threading
from contextlib import contextmanager

import pytest
from conftest import DEMO

import txlm
from txlm import _capi
from txlm._handle import Handle, State, live_handles

WAIT = 60


class Owner:
    """An object owning a handle, in a reference cycle with itself: only the cycle collector frees it."""

    def __init__(self):
        self.me = self


def fake(what, freed, ptr, owner, parent=None):
    """A handle of a pretend C object owned by owner: its free records the pointer in freed."""
    return Handle.make(owner, what, freed.append, lambda _: ptr, parent)


def on_thread(fn):
    """fn() on another thread, which must finish within WAIT seconds (else: a deadlock)."""
    raised = []

    def run():
        try:
            fn()
        except BaseException as e:  # noqa: B902 - handed to the test
            raised.append(e)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(WAIT)
    assert not t.is_alive(), "deadlock: the thread did not finish"
    if raised:
        raise raised[0]


@contextmanager
def no_automatic_collection():
    """The test decides when the collector runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class CollectWhileHeld:
    """A handle's lock that runs the garbage collector once while held, as an allocation there could."""

    def __init__(self, lock):
        self.lock, self.states = lock, []

    def __enter__(self):
        self.lock.__enter__()
        if not self.states:
            self.states.append("collecting")
            gc.collect()
            self.states.append("collected")

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


@pytest.mark.parametrize("step", ["a child registered", "close", "a call starting"])
def test_collector_inside_a_handle_lock(step):
    """A session left in a reference cycle is collected while this thread holds its model's lock."""
    freed, owners = [], [Owner(), Owner()]   # kept: the model's, and a second session's

    def call():
        with model.use():
            pass
    with no_automatic_collection():
        model = fake("model", freed, 1, owners[0])
        fake("session", freed, 2, Owner(), model)   # its owner is garbage, in a cycle
        model._lock = CollectWhileHeld(model._lock)
        steps = {"a child registered": lambda: fake("session", freed, 3, owners[1], model), "close": model.close,
                 "a call starting": call}
        on_thread(steps[step])
    assert model._lock.states == ["collecting", "collected"]
    assert freed[:1] == [2], "the collected session was not freed once the lock was let go"
    model.close()
    assert freed == ([2, 3, 1] if step == "a child registered" else [2, 1])


def test_real_session_collected_while_its_model_is_locked():
    """The same through txlm's own objects: the session's C object is freed when the lock is let go."""
    m = txlm.Model(DEMO)
    with no_automatic_collection():
        s = m.session()
        s.feed(m.tokenize("ab"))
        s.me = s
        h, before = s._h, live_handles()
        del s

        def collect_in_lock():
            with m._h._lock:
                gc.collect()
                assert h.state is State.OPEN   # queued: this thread holds the model's lock
        on_thread(collect_in_lock)
    assert h.state is State.FREED and live_handles() == before - 1
    m.close()


CHILDREN = {
    # what is made, the C function that makes it, its parent's object, how
    "session": ("txlm_session_create", lambda m, c: m, lambda m, c: m.session()),
    "batch": ("txlm_batch_create", lambda m, c: m, lambda m, c: m.batch(2)),
    "detokenizer": ("txlm_detokenizer_create", lambda m, c: m, lambda m, c: m.detokenizer()),
    "model": ("txlm_model_load", lambda m, c: c, lambda m, c: txlm.Model(DEMO, context=c)),
}


class CloseBeforeTaken:
    """The parent's lock: each time the making thread is about to take it, after the C object
    exists, another thread first tries to close the parent."""

    def __init__(self, lock, maker, made, parent):
        self.lock, self.maker, self.made, self.parent, self.tries = lock, maker, made, parent, []

    def __enter__(self):
        if threading.current_thread() is self.maker and self.made:
            def close():
                try:
                    self.parent.close()
                    self.tries.append("closed")
                except txlm.InvalidArgumentError as e:
                    self.tries.append(str(e))
            on_thread(close)
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


@pytest.mark.parametrize("kind", sorted(CHILDREN))
def test_close_while_a_child_is_made(kind, monkeypatch):
    """A close() of the parent between the C object's creation and the end of its making is refused
    (the parent is inside a call), and the child, made whole, works and is freed before its parent."""
    create, parent_of, make = CHILDREN[kind]
    lib, made, order = _capi.lib(), [], []

    def created(*args):
        status = getattr(lib, "_orig_" + create)(*args)
        made.append(status)
        return status
    monkeypatch.setattr(lib, "_orig_" + create, getattr(lib, create), raising=False)
    monkeypatch.setattr(lib, create, created)
    for name in ("txlm_session_free", "txlm_batch_free", "txlm_detokenizer_free", "txlm_model_free",
                 "txlm_context_destroy"):
        monkeypatch.setattr(lib, name, lambda p, f=getattr(lib, name), name=name: (order.append(name), f(p)))
    ctx = txlm.Context()
    m = txlm.Model(DEMO, context=ctx)
    parent = parent_of(m, ctx)
    del made[:]   # the child's creation only
    hook = CloseBeforeTaken(parent._h._lock, threading.current_thread(), made, parent)
    parent._h._lock = hook
    child = make(m, ctx)
    parent._h._lock = hook.lock
    assert made == [0] and hook.tries, "the close was never tried"
    assert all("inside a call" in t for t in hook.tries), hook.tries
    assert not child.closed and not parent.closed
    if kind == "detokenizer":
        child.push(int(m.tokenize("a")[0]))
    elif kind == "model":
        child.session().feed(child.tokenize("ab"))
    else:
        m.session().feed(m.tokenize("ab"))
    del order[:]
    ctx.close()
    assert child.closed and parent.closed
    first = "txlm_model_free" if kind == "model" else f"txlm_{kind}_free"
    assert order == [first, "txlm_model_free", "txlm_context_destroy"], order


def test_parent_whose_owner_is_gone_waits_for_its_children():
    """A detokenizer keeps no reference to its Model: the Model object goes, the C model stays until
    the detokenizer is freed."""
    before = live_handles()
    d = txlm.Model(DEMO).detokenizer()
    model_h = d._h.parent
    gc.collect()
    assert model_h.state is State.CLOSING and live_handles() == before + 2
    assert isinstance(d.push(65), str)   # the detokenizer still works
    d.close()
    assert model_h.state is State.FREED and live_handles() == before


def test_refused_close_changes_nothing():
    """One session inside a call: its model's close() is refused before any session is closed."""
    freed = []
    owners = [Owner() for _ in range(3)]
    model = fake("model", freed, 1, owners[0])
    a, b = fake("session", freed, 2, owners[1], model), fake("session", freed, 3, owners[2], model)
    with b.claim():
        with pytest.raises(txlm.InvalidArgumentError, match="the model's session is inside a call"):
            model.close()
        assert not (model.closed or a.closed or b.closed) and freed == []
    model.close()
    assert freed in ([2, 3, 1], [3, 2, 1])


def test_closed_while_inside_a_call_freed_when_it_returns():
    """What the owners' finalizers do at interpreter exit to a handle a daemon thread is calling
    through: it closes, and the call's end frees it."""
    freed = []
    owner = Owner()
    h = fake("session", freed, 7, owner)
    with h.claim():
        h._release()
        assert h.closed and freed == []
        with pytest.raises(txlm.ClosedError):
            h.use().__enter__()
    assert freed == [7] and h.ptr is None
