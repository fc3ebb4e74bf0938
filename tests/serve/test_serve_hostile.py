#!/usr/bin/env python3
"""Hostile requests to txlm serve: each gets a clear 4xx (or, for a
client too slow to finish its request, the connection shut at the
request deadline) and nothing else changes: bodies over the limit
(declared and chunked), malformed and deeply nested JSON, wrong types,
numbers out of range, unknown fields (ignored), huge max_tokens, token
ids outside the vocabulary, a byte a second in the headers and in the
body, hundreds of idle connections while a normal request is served.
Afterwards the server answers a normal request as before, its sessions
untouched. Then, on servers of their own: bodies past the whole
server's budget (--max-body-total: 429 at once from Content-Length, or
once a chunked body passes it), connections past --max-connections-per-ip,
and a new session that the reaper could free before its answer were it
not held (the fault point slow-new-session, --session-idle 0.1). Runs
under the sanitizer build too.
usage: test_serve_hostile.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import os
import re
import socket
import sys
import time

from serve_util import Server, setup, wait_for

txlm, pack_tool, model, tmp, c = setup(300)
NORMAL = {"prompt": "w5 w9", "max_tokens": 5, "seed": 1}


def refused(sv, body, want_status, want_text, what, path="/v1/completions", headers=None):
    status, _, data = sv.call("POST", path, body, headers)
    try:
        err = json.loads(data)["error"]
        shaped = isinstance(err["message"], str) and "type" in err and "param" in err
    except (ValueError, KeyError, TypeError):
        shaped, err = False, {"message": data[:200]}
    c.ok(status == want_status and shaped and want_text in err["message"],
         "%s: %d %s" % (what, status, err["message"][:160]))
    return err


def bodies(sv):
    refused(sv, "x" * 5000, 413, "over the limit", "a declared body over --max-body")
    chunks = b"".join(b"3e8\r\n" + b"[" * 1000 + b"\r\n" for _ in range(10)) + b"0\r\n\r\n"
    got, _ = raw(sv.port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
    c.ok(got.startswith(b"HTTP/1.1 413") and b"over the limit" in got, "a chunked body over --max-body: %r" % got[:40])
    # cut short: said so, at its end (not "nesting", not one byte early); a real error at its byte
    err = refused(sv, '{"prompt": "w5", ', 400, "not valid JSON: it ends at byte 17, inside its value", "truncated JSON")
    c.ok("nest" not in err["message"], "  a body cut short says nothing of nesting")
    refused(sv, "{", 400, "ends at byte 1, inside its value", "a lone {")
    refused(sv, '{"prompt": "w5\\', 400, "ends at byte 15, inside its value", "cut inside a string")
    refused(sv, '{"a": 1]', 400, "not valid JSON (at byte 7)", "a stray ] at its byte")
    refused(sv, "", 400, "the body is empty", "an empty body (no JSON object)")
    refused(sv, " \r\n", 400, "the body is empty", "a body of white space")
    refused(sv, "", 400, "the body is empty", "score: an empty body", "/v1/score")
    refused(sv, '{"prompt": "w5"} trailing', 400, "after its JSON", "bytes after the JSON")
    refused(sv, "[" * 2000 + "]" * 2000, 400, "deeper than 1000 levels", "2000 levels of nesting")
    refused(sv, '{"prompt":' + "[" * 1100 + "]" * 1100 + "}", 400, "deeper than 1000 levels", "a field nested 1100 deep")
    refused(sv, '"just a string"', 400, "must be a JSON object", "a string body")
    refused(sv, b"\xff\xfe{}", 400, "not valid JSON", "bytes that are not UTF-8 JSON")
    # U+0000 would end the string where the server reads it: the rest of a prompt, a text, a name lost
    refused(sv, '{"prompt": "w5\\u0000 w9", "max_tokens": 2}', 400, "U+0000", "a prompt holding \\u0000")
    refused(sv, b'{"prompt": "w5\x00 w9", "max_tokens": 2}', 400, "U+0000", "a prompt holding a raw NUL byte")
    refused(sv, '{"prompt": "w5", "stop": ["w9\\u0000w1"]}', 400, "U+0000", "a stop string holding \\u0000")
    refused(sv, '{"prompt\\u0000x": "w5"}', 400, "U+0000", "a field's name holding \\u0000")
    refused(sv, '{"text": "w5 \\u0000w9"}', 400, "U+0000", "a scored text holding \\u0000", "/v1/score")
    refused(sv, '{"text": "w5 \\u0000w9"}', 400, "U+0000", "a tokenized text holding \\u0000", "/v1/tokenize")
    refused(sv, '{"max_tokens": 99999, "max_tokens": 2}', 400, "99999", "a field given twice: its first counts")
    status, _, data = sv.call("POST", "/v1/tokenize", '{"text": "w5 \\\\u0000"}')
    c.ok(status == 200 and len(json.loads(data)["tokens"]) == 2, "an escaped backslash before u0000 is text (%d %s)" %
         (status, data[:80]))


def fields(sv):
    cases = [
        ({"max_tokens": "5"}, "max_tokens must be an integer"),
        ({"max_tokens": 1e12}, "max_tokens"),
        ({"max_tokens": 1000000000}, "max_tokens: 1000000000 is outside [0, 100]"),
        ({"max_tokens": 10 ** 30}, "outside"),
        ({"max_tokens": -1}, "outside"),
        ({"max_tokens": 2.5}, "must be an integer"),
        ({"temperature": 5}, "temperature"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"top_p": -0.1}, "top_p"),
        ({"top_k": 5000}, "top_k"),
        ({"n": 0}, "n:"),
        ({"n": 100000}, "n:"),
        ({"logprobs": 99}, "logprobs"),
        ({"seed": -3}, "seed"),
        ({"seed": 1e300}, "seed"),
        ({"stream": "yes"}, "stream must be true or false"),
        ({"stop": [""]}, "empty stop string"),
        ({"stop": ["a"] * 40}, "at most 32"),
        ({"stop": 7}, "stop must be a string"),
        ({"prompt": [5, 100000]}, "not a token id of this model"),
        ({"prompt": [5, -1]}, "not a token id of this model"),
        ({"prompt": [5, "w9"]}, "must be a token id"),
        ({"prompt": []}, "empty array"),
        ({"prompt": {"text": "w5"}}, "prompt must be a string, an array of token ids, or an array of prompts"),
        ({"prompt": ["w5", {"text": "w5"}]}, "prompt[1] must be a string or an array of token ids"),
        ({"prompt": ["w5"] * 20}, "at most 16 choices"),
        ({"frequency_penalty": 0.5}, "use repeat_penalty"),
        ({"logit_bias": {"5": 100}}, "logit_bias is not supported"),
        ({"suffix": "end"}, "suffix is not supported"),
        ({"best_of": 3}, "best_of"),
        ({"session": 12}, "session must be a string"),
        ({"session": "sess-0000"}, "no session"),
        ({"session": "s1-0000"}, "belongs to another server: its prefix is \"s1\", this server's is \"sess\""),
        ({"stream_options": 1}, "stream_options must be an object"),
    ]
    for extra, text in cases:
        unknown = text.startswith("no session") or "another server" in text
        err = refused(sv, {**NORMAL, **extra}, 404 if unknown else 400, text, "%.60s" % json.dumps(extra))
        key = next(iter(extra))
        if text != "no session" and key not in ("frequency_penalty", "logit_bias", "suffix", "best_of"):
            c.ok(err.get("param") == key, "  param names %s (%s)" % (key, err.get("param")))
    # echo with logprobs answers each prompt token with its top list: a prompt of at most --max-tokens (100)
    long = " ".join(["w5"] * 101)
    refused(sv, {"prompt": long, "echo": True, "logprobs": 1, "max_tokens": 0}, 400, "prompt: 101 tokens",
            "echo and logprobs: a prompt over --max-tokens")
    refused(sv, {"prompt": ["w5", long], "echo": True, "logprobs": 0, "max_tokens": 0}, 400, "prompt[1]: 101 tokens",
            "echo and logprobs: the second prompt over --max-tokens")
    for extra in ({"prompt": long[3:], "echo": True, "logprobs": 1}, {"prompt": long, "echo": True}, {"prompt": long, "logprobs": 1}):
        status, _, data = sv.call("POST", "/v1/completions", {**extra, "max_tokens": 0})
        opts = sorted(k for k in extra if k != "prompt")
        c.ok(status == 200, "%s, a prompt of %d tokens: served (%d)" % (opts, len(extra["prompt"].split()), status))
    status, _, data = sv.call("POST", "/v1/completions", {**NORMAL, "unknown_field": {"deep": [1, 2]}, "user": "u"})
    c.ok(status == 200, "unknown fields are ignored, as OpenAI's server does (%d)" % status)
    refused(sv, {"text": 5}, 400, "text must be a string", "score: text of a wrong type", "/v1/score")
    refused(sv, {}, 400, "text is required", "score: no text", "/v1/score")
    refused(sv, {"tokens": [1, 2, 5000]}, 400, "not a token id", "detokenize: an id outside the vocabulary", "/v1/detokenize")
    refused(sv, {"tokens": "1,2"}, 400, "tokens must be an array", "detokenize: tokens of a wrong type", "/v1/detokenize")
    refused(sv, {"seed": "x"}, 400, "seed must be an integer", "sessions: a seed of a wrong type", "/v1/sessions")


def raw(port, data, pause=0.0):
    """Sends data (a byte at a time every `pause` s when pause > 0); the
    bytes received until the server closes, and how many were sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    sent = 0
    try:
        if pause:
            for b in data:
                s.sendall(bytes([b]))
                sent += 1
                time.sleep(pause)
        else:
            s.sendall(data)
            sent = len(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    got = b""
    try:
        while True:
            part = s.recv(65536)
            if not part:
                break
            got += part
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    return got, sent


def slow(sv):
    # a byte every 0.25 s: within the idle timeout each time, but the request needs 60 s; the deadline is 2 s
    head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
    got, sent = raw(sv.port, head + b" " * 200, pause=0.25)
    c.ok(sent < 60 and b"200 OK" not in got, "headers a byte at a time: cut off at the deadline after %d of %d bytes" %
         (sent, len(head) + 200))
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", sv.port), timeout=60)
    s.sendall(head)
    sent = 0
    try:
        for _ in range(200):
            s.sendall(b" ")
            sent += 1
            time.sleep(0.25)
            if time.monotonic() - start > 40:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
    c.ok(sent < 60, "a body a byte at a time: cut off at the deadline after %d of 200 bytes" % sent)
    c.ok(sv.metric("txlm_connections_cut_total") >= 2, "both counted as cut off")


def idle_crowd(sv):
    crowd = []
    for i in range(300):
        s = socket.create_connection(("127.0.0.1", sv.port), timeout=30)
        if i % 3 == 0:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")  # half a request, then silence
        crowd.append(s)
    status, _, data = sv.call("POST", "/v1/completions", NORMAL)
    c.ok(status == 200 and json.loads(data)["choices"][0]["text"] == WANT, "300 idle connections: a normal request is served")
    c.ok(sv.metric("txlm_connections") >= 300, "the idle connections are held (%d)" % sv.metric("txlm_connections"))
    for s in crowd:
        s.close()


def methods(sv):
    got, _ = raw(sv.port, b"BREW /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n")
    c.ok(got.startswith(b"HTTP/1.1 405"), "an unknown method: 405 (%r)" % got[:40])
    got, _ = raw(sv.port, b"GET /\x01\x02 HTTP/9.9\r\n\r\n")
    c.ok(got.startswith(b"HTTP/1.1 505"), "an HTTP version that is not 1.x: 505 (%r)" % got[:40])
    got, _ = raw(sv.port, b"GET /he\x01lth\r\n\r\n")
    c.ok(got.startswith(b"HTTP/1.1 400") or got == b"", "a broken request line: 400 or closed (%r)" % got[:40])
    got, _ = raw(sv.port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
    c.ok(got.startswith(b"HTTP/1.1 4") or got == b"", "100 KB of headers: 4xx or closed (%r)" % got[:30])


def held_body(port, length, sent):
    """A request whose headers declare `length` bytes of body and whose first `sent` bytes follow; left open."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /v1/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
              % length + b" " * sent)
    return s


def budget():
    """--max-body-total: bodies of all connections together. A request whose Content-Length would pass it gets 429
    with Retry-After at once, before its body is sent; a chunked one once it passes it; the bytes come back when a
    body is done with."""
    sv = Server(txlm, model, "--max-body", "4096", "--max-body-total", "6000", "--max-sessions", "1")
    try:
        held = held_body(sv.port, 4000, 100)  # 4000 bytes of the budget held while its body trickles in
        wait_for(lambda: sv.metric("txlm_body_bytes") == 4000, "the first body to be held")
        s = socket.create_connection(("127.0.0.1", sv.port), timeout=30)
        s.sendall(b"POST /v1/tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n\r\n")  # headers only
        got = s.recv(65536)
        s.close()
        c.ok(got.startswith(b"HTTP/1.1 429") and b"Retry-After: 1" in got and b"--max-body-total" in got,
             "a body that would pass --max-body-total: 429 with Retry-After before it is sent (%r)" % got[:60])
        chunks = b"".join(b"3e8\r\n" + b" " * 1000 + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"
        got, _ = raw(sv.port, b"POST /v1/tokenize HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
        c.ok(got.startswith(b"HTTP/1.1 429") and b"--max-body-total" in got, "a chunked body past it: 429 (%r)" % got[:40])
        held.sendall(b" " * 3883 + b'{"text": "w5 w9"}')  # the held body completes: answered, its bytes returned
        reply = held.recv(65536)
        held.close()
        c.ok(reply.startswith(b"HTTP/1.1 200") and b'"tokens":[5,9]' in reply, "the held body is served (%r)" % reply[:40])
        wait_for(lambda: sv.metric("txlm_body_bytes") == 0, "every body's bytes back")
        body = '{"text": "w5 w9"}' + " " * 2983
        status, _, data = sv.call("POST", "/v1/tokenize", body)
        c.ok(status == 200, "then a 3000-byte body is served (%d)" % status)
        sv.json("POST", "/v1/sessions")
        refused(sv, {}, 429, "1 session exists, the most this server keeps", "--max-sessions 1: one session, in the singular",
                "/v1/sessions")
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def per_ip():
    """--max-connections-per-ip: a connection past it is closed at once, unanswered; the others are served."""
    sv = Server(txlm, model, "--max-connections-per-ip", "3")
    try:
        crowd = []
        for k in range(3):  # each answered once and kept open: the server holds it
            s = socket.create_connection(("127.0.0.1", sv.port), timeout=30)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            got = s.recv(65536)
            c.ok(got.startswith(b"HTTP/1.1 200"), "connection %d from the address is served (%r)" % (k + 1, got[:20]))
            crowd.append(s)
        got, _ = raw(sv.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        c.ok(got == b"", "a fourth is closed unanswered (%r)" % got[:40])
        crowd.pop().close()
        def served():
            try:
                return sv.call("GET", "/health")[0] == 200
            except OSError:  # closed: the server has not seen the other close yet
                return False
        wait_for(served, "a place again once one closes")
        for s in crowd:
            s.close()
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def new_session_held():
    """A session made is held until its answer is written: with the reaper free to expire it meanwhile (0.5 s
    between its making and its answer, an idle limit of 0.1 s), the answer is whole and right, and the session
    expires afterwards."""
    env = dict(os.environ, TXLM_FAULT_SERVE="slow-new-session")
    sv = Server(txlm, model, "--session-idle", "0.1", env=env)
    try:
        for k in range(3):
            status, _, data = sv.call("POST", "/v1/sessions", {"seed": 5 + k})
            facts = json.loads(data) if status == 200 else {}
            c.ok(status == 200 and re.fullmatch(r"sess-[0-9a-f]{32}", facts.get("id", "")) and facts.get("seed") == 5 + k
                 and facts.get("busy") is False and facts.get("memory_rows") == 0,
                 "a new session's answer, the reaper running beside it: %d %s" % (status, data[:160]))
        wait_for(lambda: sv.json("GET", "/health")["sessions"] == 0, "the sessions to expire afterwards")
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


sv = Server(txlm, model, "--max-body", "4096", "--request-timeout", "2", "--max-sessions", "2", "--max-tokens", "100")
try:
    WANT = json.loads(sv.call("POST", "/v1/completions", NORMAL)[2])["choices"][0]["text"]
    sid = sv.json("POST", "/v1/sessions")["id"]
    sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w7", "max_tokens": 3})
    before = sv.json("GET", "/v1/sessions/" + sid)
    for step in (bodies, fields, slow, idle_crowd, methods):
        c.run(step, sv)
    after = sv.json("GET", "/v1/sessions/" + sid)
    c.ok(after["tokens"] == before["tokens"] and after["memory_rows"] == before["memory_rows"], "the session is untouched")
    status, _, data = sv.call("POST", "/v1/completions", NORMAL)
    c.ok(status == 200 and json.loads(data)["choices"][0]["text"] == WANT, "a normal request is answered as before")
    c.ok(sv.stop() == 0, "exit status 0")
finally:
    sv.stop()
    if c.fails:
        print(sv.log())
for step in (budget, per_ip, new_session_held):
    c.run(step)
sys.exit(c.done())
