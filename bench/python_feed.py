#!/usr/bin/env python3
"""The Python package's cost over the C call: session.feed against txlm_session_feed.

    TXLM_LIBRARY=build/libtxlm.so PYTHONPATH=python python3 bench/python_feed.py [-m MODEL] [-n REPS]

For segments of 128 tokens (the demo model's tgt_len) and of 1 token (a generation step):

  c        txlm_session_feed called through ctypes with buffers made once (the C call itself);
  python   session.feed(ids): ids checked and converted, the output array made, the
           session claimed, the same C call;
  wrapper  session.feed with the C call replaced by a function that returns at once: what
           the package adds, measured alone (the two medians above differ by less than
           their noise on a loaded machine).

c and python alternate, one of each per repetition, each on its own session with a full
memory (the steady state of a long text); medians. Results: docs/performance.md, "Python".
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import txlm  # noqa: E402
from txlm import _capi  # noqa: E402


def c_feed(session: txlm.Session, ids: np.ndarray, out: np.ndarray) -> float:
    lib = _capi.lib()
    ip, op = ids.ctypes.data_as(_capi.p_int32), out.ctypes.data_as(_capi.p_float)
    with session._h.use() as ptr:
        t = time.perf_counter()
        status = lib.txlm_session_feed(ptr, ip, ids.size, op)
        dt = time.perf_counter() - t
    _capi.check(status)
    return dt


def py_feed(session: txlm.Session, ids: np.ndarray) -> float:
    t = time.perf_counter()
    session.feed(ids)
    return time.perf_counter() - t


def wrapper_only(session: txlm.Session, ids: np.ndarray, reps: int) -> float:
    """session.feed's own time per call, with the C call returning at once."""
    lib = _capi.lib()
    real = lib.txlm_session_feed_rows
    lib.txlm_session_feed_rows = lambda *args: 0
    try:
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(100):
                session.feed(ids)
            times.append((time.perf_counter() - t) / 100)
        return statistics.median(times)
    finally:
        lib.txlm_session_feed_rows = real


def run(model: txlm.Model, n: int, reps: int) -> dict:
    text = open(os.path.join(os.path.dirname(model.path), "demo_heldout.txt")).read() \
        if os.path.basename(model.path) == "demo.txlm" else "The quick brown fox jumps over the lazy dog. " * 40
    ids = model.tokenize(text)
    ids = np.resize(ids, max(n, len(ids)))[:max(n * 8, n)].astype(np.int32)
    sc, sp = model.session(max_segment=n), model.session(max_segment=n)
    out = np.empty((n, model.params.n_token), np.float32)
    segs = [np.ascontiguousarray(ids[i:i + n]) for i in range(0, len(ids) - n + 1, n)] or [ids[:n]]
    for s in (sc, sp):  # fill the memory: the steady state
        while s.memory_len < model.params.mem_len:
            s.feed(segs[0], logprobs=False)
    tc, tp = [], []
    for r in range(reps):
        seg = segs[r % len(segs)]
        tc.append(c_feed(sc, seg, out))
        tp.append(py_feed(sp, seg))
    w = wrapper_only(sp, segs[0], 20)
    c, p = statistics.median(tc), statistics.median(tp)
    return {"tokens": n, "c_ms": c * 1e3, "python_ms": p * 1e3, "wrapper_us": w * 1e6,
            "wrapper_us_per_token": w * 1e6 / n, "wrapper_pct": 100 * w / c}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("-m", "--model", default=os.path.join(os.path.dirname(__file__), "..", "models", "demo.txlm"))
    ap.add_argument("-n", "--reps", type=int, default=30)
    a = ap.parse_args()
    model = txlm.Model(a.model)
    print(f"{model.path}: {model.context.device.name}")
    print("| segment | C call (median) | session.feed (median) | package's own time | per token | share of the C call |")
    print("|---|---|---|---|---|---|")
    for n in (128, 1):
        r = run(model, n, a.reps)
        print(f"| {n} tokens | {r['c_ms']:.3f} ms | {r['python_ms']:.3f} ms | {r['wrapper_us']:.1f} us | "
              f"{r['wrapper_us_per_token']:.3f} us | {r['wrapper_pct']:.3f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
