#!/usr/bin/env python3
"""txlm serve's threads sharing sessions: clients make, use, list, read
and delete sessions at once while streams run, each answer checked;
others tokenize long texts, export and import states and use sessions
that a first server wrote to --session-dir, each read back on its first
use while the others are listed (the worker threads' work); the server
exits 0. Short, so that CI also runs it on a ThreadSanitizer build,
where any data race between the polling thread, the workers, the
scheduler, the reaper and the main thread makes the server exit
non-zero (tests/tsan.supp lists what is not ours).
usage: test_serve_threads.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import os
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


def front_door(sv, k):
    """A long text tokenized, a session's state exported and imported into a new one and into itself."""
    text = " ".join("w%d" % (3 + (i * 7 + k) % 190) for i in range(20000))
    for r in range(2):
        got = sv.json("POST", "/v1/tokenize", {"text": text})["tokens"]
        if len(got) != 20000:
            errors.append("tokenize: %d tokens" % len(got))
        sid = sv.json("POST", "/v1/sessions", {"seed": k})["id"]
        sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w5 w%d" % (k + 3), "max_tokens": 8})
        status, _, state = sv.call("GET", "/v1/sessions/%s/state" % sid)
        octet = {"Content-Type": "application/octet-stream"}
        copy = sv.json("POST", "/v1/sessions", state, headers=octet)
        if copy["memory_rows"] != sv.json("PUT", "/v1/sessions/%s/state" % sid, state, headers=octet)["memory_rows"]:
            errors.append("a state imported twice: different memories")
        sv.json("DELETE", "/v1/sessions/" + sid)
        sv.json("DELETE", "/v1/sessions/" + copy["id"])


def stored_user(sv, sid):
    """A session written by the first server, read back on first use."""
    got = sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w9", "max_tokens": 5})
    if got["session"] != sid or sv.json("GET", "/v1/sessions/" + sid)["tokens"] <= 5:
        errors.append("a stored session read back: %r" % got)
    sv.json("DELETE", "/v1/sessions/" + sid)


def streamer(sv):
    for i in range(3):
        status, evs, done = sv.events("/v1/completions", {"prompt": "w5", "max_tokens": 6, "n": 2, "stream": True})
        if status != 200 or not done:
            errors.append("a stream: %d %s" % (status, evs[:1]))


store = os.path.join(tmp, "sessions")
first = Server(txlm, model, "--session-dir", store)
try:
    stored = []
    for k in range(3):
        stored.append(first.json("POST", "/v1/sessions", {"seed": k})["id"])
        first.json("POST", "/v1/sessions/%s/completions" % stored[-1], {"prompt": "w5", "max_tokens": 4})
    c.ok(first.stop() == 0, "a first server wrote 3 sessions to --session-dir")
finally:
    first.stop()
sv = Server(txlm, model, "--max-sessions", "12", "--parallel", "3", "--session-dir", store)
try:
    def guarded(fn, *args):
        try:
            fn(*args)
        except Exception as e:  # reported below
            errors.append("%s: %r" % (fn.__name__, e))
    users = [threading.Thread(target=guarded, args=(session_user, sv, k)) for k in range(3)]
    threads = users + [threading.Thread(target=guarded, args=(watcher, sv, users)) for _ in range(2)]
    threads += [threading.Thread(target=guarded, args=(streamer, sv))]
    threads += [threading.Thread(target=guarded, args=(front_door, sv, k)) for k in range(2)]
    threads += [threading.Thread(target=guarded, args=(stored_user, sv, sid)) for sid in stored]
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
