#!/usr/bin/env python3
"""txlm serve --session-dir: sessions that outlive a restart. Sessions
are made and continued, the server stopped with SIGTERM and started
again on the same directory; continued, each answer (text, scores,
log-probabilities) and each exported state equals a run that was never
interrupted, under the same ids, with their seeds, token counts and
owners (API keys). The directory holds one file per session (mode 0600,
no temporary left); a session read back loses its file, as do one
deleted and one expired; after kill -9 the sessions that were in memory
are gone and those still on disk are served; files of another prefix
and damaged ones are left alone.
usage: test_serve_restart.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import os
import signal
import stat
import sys

from serve_util import Server, setup, wait_for

txlm, pack_tool, model, tmp, c = setup(300)
KEY = {"Authorization": "Bearer k1"}
OTHER = {"Authorization": "Bearer k2"}
KEYS = ("--api-key", "k1", "--api-key", "k2")

# requests before and after the restart: (session, path, body); "A" and "B" are the sessions' ids
BEFORE = [("A", "completions", {"prompt": "w5 w9", "max_tokens": 6}),
          ("B", "completions", {"prompt": "w7", "max_tokens": 5, "seed": 3, "temperature": 0.8}),
          ("A", "score", {"text": "w12 w13 w40"})]
AFTER = [("A", "completions", {"prompt": "w4", "max_tokens": 6}),
         ("B", "completions", {"prompt": "w8", "max_tokens": 6, "temperature": 0.8}),
         ("B", "completions", {"prompt": "w9", "max_tokens": 3, "echo": True, "logprobs": 2}),
         ("A", "score", {"text": "w3 w2"})]


def answer(sv, sid, path, body):
    got = sv.json("POST", "/v1/sessions/%s/%s" % (sid, path), body, headers=KEY)
    if path == "score":
        return [t["logprob"] for t in got["tokens"]]
    ch = got["choices"][0]
    return ch["text"], ch["logprobs"], got["seed"], got["sampler"]


def make(sv):
    return {"A": sv.json("POST", "/v1/sessions", {"seed": 11}, headers=KEY)["id"],
            "B": sv.json("POST", "/v1/sessions", {"seed": 22}, headers=KEY)["id"]}


def files(d):
    return sorted(f for f in os.listdir(d))


def facts(sv, sid, headers=KEY):
    f = sv.json("GET", "/v1/sessions/" + sid, headers=headers)
    return {k: f[k] for k in ("tokens", "seed", "from_state", "memory_rows")}


# the run never interrupted
ref = Server(txlm, model, *KEYS)
try:
    ids = make(ref)
    for who, path, body in BEFORE:
        answer(ref, ids[who], path, body)
    want_facts = {who: facts(ref, sid) for who, sid in ids.items()}
    want = [answer(ref, ids[who], path, body) for who, path, body in AFTER]
    want_state = {who: ref.call("GET", "/v1/sessions/%s/state" % sid, headers=KEY)[2] for who, sid in ids.items()}
finally:
    ref.stop()

d = os.path.join(tmp, "sessions")
first = Server(txlm, model, *KEYS, "--session-dir", d)
try:
    ids = make(first)
    for who, path, body in BEFORE:
        answer(first, ids[who], path, body)
    kept = first.json("POST", "/v1/sessions", {"seed": 5}, headers=KEY)["id"]     # never used again: stays on disk
    gone = first.json("POST", "/v1/sessions", {"seed": 6}, headers=OTHER)["id"]   # another key's, deleted later
    c.ok(first.stop() == 0 and "4 sessions written to" in first.log(), "SIGTERM: 4 sessions written, exit status 0")
finally:
    first.stop()
want_files = sorted(x + ".session" for x in list(ids.values()) + [kept, gone])
c.ok(files(d) == want_files, "one file a session, nothing else: %s" % files(d))
modes = {f: stat.S_IMODE(os.stat(os.path.join(d, f)).st_mode) for f in files(d)}
c.ok(all(m == 0o600 for m in modes.values()) and stat.S_IMODE(os.stat(d).st_mode) == 0o700,
     "the files 0600 in a folder 0700 (%s)" % sorted(set(modes.values())))
sizes = {who: os.path.getsize(os.path.join(d, ids[who] + ".session")) for who in ids}
print("disk per session (bytes):", sizes)

# files the server must leave alone: another prefix's, a damaged one
with open(os.path.join(d, "s9-00112233445566778899aabbccddeeff.session"), "wb") as f:
    f.write(b"txlm-serve-session 1\n{}\n")
with open(os.path.join(d, "sess-damaged.session"), "wb") as f:
    f.write(b"not a session\n")

second = Server(txlm, model, *KEYS, "--session-dir", d)
try:
    listed = sorted(s["id"] for s in second.json("GET", "/v1/sessions", headers=KEY)["data"])
    c.ok(listed == sorted(list(ids.values()) + [kept]), "after the restart: this key's sessions listed under their ids")
    c.ok("sess-damaged.session: not a session file" in second.log(), "a damaged file: said so, left alone")
    c.ok({who: facts(second, sid) for who, sid in ids.items()} == want_facts,
         "their facts as before the restart (tokens, seed, memory rows): %s" % want_facts)
    c.ok(files(d) == sorted(want_files + ["s9-00112233445566778899aabbccddeeff.session", "sess-damaged.session"]),
         "listing reads nothing back: every file still there")
    status, _, _ = second.call("GET", "/v1/sessions/" + gone, headers=KEY)
    c.ok(status == 404, "a session of another key is not found with this one (%d)" % status)
    got = [answer(second, ids[who], path, body) for who, path, body in AFTER]
    for k, (g, w) in enumerate(zip(got, want)):
        c.ok(g == w, "request %d after the restart equals the uninterrupted run: %s" % (k, str(g)[:100]))
    states = {who: second.call("GET", "/v1/sessions/%s/state" % sid, headers=KEY)[2] for who, sid in ids.items()}
    c.ok(states == want_state, "their states byte for byte the uninterrupted run's")
    c.ok(not any(os.path.exists(os.path.join(d, sid + ".session")) for sid in ids.values()),
         "a session read back loses its file (a crash cannot bring back the older memory)")
    c.ok(second.call("DELETE", "/v1/sessions/" + gone, headers=OTHER)[0] == 200 and
         not os.path.exists(os.path.join(d, gone + ".session")), "a session deleted before being read back: its file removed")
    second.proc.send_signal(signal.SIGKILL)
    second.proc.wait(30)
finally:
    second.stop()

third = Server(txlm, model, *KEYS, "--session-dir", d)
try:
    status, _, _ = third.call("GET", "/v1/sessions/" + ids["A"], headers=KEY)
    c.ok(status == 404, "after kill -9: a session that was in memory is gone (%d)" % status)
    c.ok(third.json("GET", "/v1/sessions/" + kept, headers=KEY)["seed"] == 5, "one still on disk is served again")
    c.ok(third.stop() == 0 and os.path.exists(os.path.join(d, kept + ".session")), "and, never read back, keeps its file")
finally:
    third.stop()
fourth = Server(txlm, model, *KEYS, "--session-dir", d, "--session-idle", "1")
try:
    # its idle time went on from where it stood (more than 1 s by now): it expires, and its file with it
    wait_for(lambda: not os.path.exists(os.path.join(d, kept + ".session")), "the idle session's file to go")
    c.ok(fourth.call("GET", "/v1/sessions/" + kept, headers=KEY)[0] == 404, "an expired session: gone, its file too")
    c.ok(fourth.stop() == 0, "exit status 0")
finally:
    fourth.stop()
c.ok(files(d) == ["s9-00112233445566778899aabbccddeeff.session", "sess-damaged.session"],
     "left: the other prefix's file and the damaged one (%s)" % files(d))
if c.fails:
    print(first.log(), second.log(), third.log(), fourth.log())
sys.exit(c.done())
