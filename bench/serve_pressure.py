#!/usr/bin/env python3
"""txlm serve's front door under pressure (docs/performance.md, "The
server under pressure"). Not a test: it prints a Markdown table.

While one streamed completion runs and a client asks GET /health over
and over, three clients each send a text of 1,000,000 characters to
/v1/tokenize and one PUTs a session's largest state (its memory full).
Measured at the clients: the longest wait for /health's answer and the
longest gap between two events of the stream, idle (the same length of
time before the load) and under the load, and how long the load took.
With several --build, the rounds of each build alternate, so that a
busy machine weighs on them alike. The load is sent by curl processes,
so that reading its large answers never holds up the watching client
(Python's threads share one interpreter lock).

usage: bench/serve_pressure.py [--build build]... [--model models/demo.txlm] [--reps 3]"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "serve"))
from serve_util import Server, call  # noqa: E402

TEXT = open(os.path.join(os.path.dirname(__file__), "..", "models", "demo_heldout.txt")).read()


class Watch:
    """A running stream's event gaps and /health's answer times, each with when it was seen."""

    def __init__(self, port):
        self.port, self.stop = port, threading.Event()
        self.gaps, self.health = [], []
        self.threads = [threading.Thread(target=self.stream), threading.Thread(target=self.poll)]
        for t in self.threads:
            t.start()

    def stream(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("POST", "/v1/completions", body=json.dumps({"prompt": "The", "max_tokens": 4000, "stream": True}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        last = time.perf_counter()
        while not self.stop.is_set():
            line = r.fp.readline()
            if not line:
                break
            if line.startswith(b"data: "):
                now = time.perf_counter()
                self.gaps.append((now, now - last))
                last = now
        c.close()

    def poll(self):
        while not self.stop.is_set():
            t0 = time.perf_counter()
            status, _, _ = call(self.port, "GET", "/health")
            t1 = time.perf_counter()
            assert status == 200, status
            self.health.append((t1, t1 - t0))
            time.sleep(0.005)

    def longest(self, series, t0, t1):
        vals = [v for t, v in series if t0 <= t <= t1]
        return max(vals) if vals else float("nan")

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def full_state(sv, p):
    """The state of a session whose memory is full (the largest this model's sessions have)."""
    sid = sv.json("POST", "/v1/sessions")["id"]
    sv.json("POST", "/v1/sessions/%s/score" % sid, {"text": TEXT[:4 * p["mem_len"] + 1000]})
    status, _, state = sv.call("GET", "/v1/sessions/%s/state" % sid)
    assert status == 200
    return sid, state


def curl(port, method, path, body_file, content_type):
    return subprocess.Popen(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, "-H",
                             "Content-Type: " + content_type, "--data-binary", "@" + body_file,
                             "http://127.0.0.1:%d%s" % (port, path)], stdout=subprocess.PIPE, text=True)


def round_(a, sv, sid, files):
    w = Watch(sv.port)
    time.sleep(2.0)  # the stream under way
    idle0 = time.perf_counter()
    time.sleep(2.0)
    t0 = time.perf_counter()
    load = [curl(sv.port, "POST", "/v1/tokenize", files["text"], "application/json") for _ in range(3)]
    load.append(curl(sv.port, "PUT", "/v1/sessions/%s/state" % sid, files["state"], "application/octet-stream"))
    codes = [p.communicate(timeout=600)[0] for p in load]
    t1 = time.perf_counter()
    time.sleep(0.3)
    w.end()
    assert all(s == "200" for s in codes), codes
    return {"idle_health": w.longest(w.health, idle0, t0), "idle_gap": w.longest(w.gaps, idle0, t0),
            "health": w.longest(w.health, t0, t1), "gap": w.longest(w.gaps, t0, t1), "load_s": t1 - t0}


def report(txlm, a, state, rows):
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    worst = {k: max(r[k] for r in rows) for k in rows[0]}
    print("\n%s, %s: 3 x /v1/tokenize of 1,000,000 characters and a PUT of a full state (%d bytes), "
          "medians (worst) of %d rounds\n" % (txlm, a.model, len(state), len(rows)))
    print("| | idle | under the load |\n|---|---|---|")
    print("| /health, longest answer | %.0f ms (%.0f) | %.0f ms (%.0f) |" % (1e3 * med["idle_health"], 1e3 * worst["idle_health"],
                                                                      1e3 * med["health"], 1e3 * worst["health"]))
    print("| stream, longest gap between events | %.0f ms (%.0f) | %.0f ms (%.0f) |" % (1e3 * med["idle_gap"], 1e3 * worst["idle_gap"],
                                                                                    1e3 * med["gap"], 1e3 * worst["gap"]))
    print("| the load's time | | %.2f s (%.2f) |" % (med["load_s"], worst["load_s"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append")
    ap.add_argument("--model", default="models/demo.txlm")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    builds = [os.path.join(b, "tools", "txlm") for b in (a.build or ["build"])]
    text = (TEXT * (1000000 // len(TEXT) + 1))[:1000000]
    rows = {b: [] for b in builds}
    state = b""
    tmp = tempfile.mkdtemp(prefix="serve-pressure-")
    files = {"text": os.path.join(tmp, "text.json"), "state": os.path.join(tmp, "state")}
    with open(files["text"], "w") as f:
        json.dump({"text": text}, f)
    for _ in range(a.reps):
        for txlm in builds:
            sv = Server(txlm, a.model, "--max-body", str(2 << 20))
            try:
                p = sv.json("GET", "/v1/models")["data"][0]["txlm"]
                sid, state = full_state(sv, p)
                with open(files["state"], "wb") as f:
                    f.write(state)
                rows[txlm].append(round_(a, sv, sid, files))
            finally:
                sv.stop()
    for f in files.values():
        os.unlink(f)
    os.rmdir(tmp)
    for txlm in builds:
        report(txlm, a, state, rows[txlm])


if __name__ == "__main__":
    main()
