#!/usr/bin/env python3
"""txlm serve's threads sharing sessions: clients make, use, list, read
and delete sessions at once while streams run, each answer checked;
the server exits 0. Short, so that CI also runs it on a ThreadSanitizer
build, where any data race between the HTTP thread, the scheduler and
the reaper makes the server exit non-zero (tests/tsan.supp lists what
is not ours).
usage: test_serve_threads.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import sys
import threading

from serve_util import Server, setup

txlm, pack_tool, model, tmp, c = setup(300)
errors = []


def session_user(sv, k):
    """Makes a session, feeds it twice (its facts read by the others meanwhile), deletes it."""
    for r in range(3):
        sid = sv.json("POST", "/v1/sessions", {"seed": k})["id"]
        for prompt in ("w%d w9" % (k + 2), "w%d" % (r + 3)):
            status, _, data = sv.call("POST", "/v1/sessions/%s/completions" % sid, {"prompt": prompt, "max_tokens": 30})
            if status != 200:
                errors.append("completion on a session: %d %s" % (status, data[:120]))
        if sv.json("GET", "/v1/sessions/" + sid)["tokens"] == 0:
            errors.append("a session fed twice reports no tokens")
        sv.json("DELETE", "/v1/sessions/" + sid)


def watcher(sv, users):
    """Lists the sessions, busy ones included, and the server's state, while the users run."""
    while any(t.is_alive() for t in users):
        for s in sv.json("GET", "/v1/sessions")["data"]:
            if not isinstance(s["tokens"], int) or s["tokens"] < 0:
                errors.append("a session's tokens: %r" % s)
        sv.json("GET", "/health")


def streamer(sv):
    for i in range(3):
        status, evs, done = sv.events("/v1/completions", {"prompt": "w5", "max_tokens": 6, "n": 2, "stream": True})
        if status != 200 or not done:
            errors.append("a stream: %d %s" % (status, evs[:1]))


sv = Server(txlm, model, "--max-sessions", "8", "--parallel", "3")
try:
    def guarded(fn, *args):
        try:
            fn(*args)
        except Exception as e:  # reported below
            errors.append("%s: %r" % (fn.__name__, e))
    users = [threading.Thread(target=guarded, args=(session_user, sv, k)) for k in range(3)]
    threads = users + [threading.Thread(target=guarded, args=(watcher, sv, users)) for _ in range(2)]
    threads += [threading.Thread(target=guarded, args=(streamer, sv))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    c.ok(not errors, "sessions made, used, listed and deleted at once, streams beside: %s" % (errors[:3] or "no error"))
    c.ok(sv.json("GET", "/health")["sessions"] == 0, "every session deleted")
    c.ok(sv.stop() == 0, "exit status 0 (under ThreadSanitizer: no data race reported)")
finally:
    sv.stop()
    if c.fails:
        print(sv.log()[-6000:])
sys.exit(c.done())
