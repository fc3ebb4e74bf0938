#!/usr/bin/env python3
"""txlm serve's endpoints over plain HTTP, each answer checked against
the command line: a completion's text (plain and streamed, n choices,
stop strings, penalties, token-id prompts, echo) equals `txlm generate`
with the same seed and options; /v1/score equals `txlm score`; a session
fed in three requests gives the log-probabilities of one feed of the
whole text, its exported state is byte for byte `generate --state-out`'s
and goes on as `generate --state-in` does; tokenize, detokenize, models,
health, metrics, chat's refusal, and keys (a session of another key is
not found); logprobs 0 in every form of request; text_offset at each
token's text (a word and a character model); what sessions report (the
seed their sampler came from, tokens fed, an imported state, PUT's
answer and its 415); --log's lines.
usage: test_serve_api.py TXLM TXLM_PACK GOLDEN_CASE_DIR (a word model: adaptive_word)"""
import math
import os
import re
import socket
import sys

from serve_util import Server, generate, score, streamed_text, wait_for, setup

txlm, pack_tool, model, tmp, c = setup(300)
PROMPT = "w5 w9 w12"
CASES = [  # (request fields, txlm generate options)
    ({"temperature": 0}, ["--temp", "0"]),
    ({}, []),
    ({"temperature": 0.9, "top_k": 50, "repeat_penalty": 1.2, "stop": "w1"}, ["--temp", "0.9", "--top-k", "50",
                                                                              "--repeat-penalty", "1.2", "--stop", "w1"]),
    ({"top_p": 0.8, "stop": ["w3", "w77"]}, ["--top-p", "0.8", "--stop", "w3", "--stop", "w77"]),
]


def completions(sv):
    for fields, opts in CASES:
        for seed in (3, 40):
            want = generate(txlm, model, PROMPT, 9, seed, *opts)
            got = sv.json("POST", "/v1/completions", {"model": "m", "prompt": PROMPT, "max_tokens": 9, "seed": seed, **fields})
            ch = got["choices"][0]
            c.ok(ch["text"] == want and got["object"] == "text_completion" and got["model"] == "m",
                 "completion %s seed %d: %r (generate: %r)" % (fields, seed, ch["text"], want))
            stopped = len(want.split()) < 9
            c.ok(ch["finish_reason"] == ("stop" if stopped else "length"), "finish_reason %s" % ch["finish_reason"])
            c.ok(got["usage"]["prompt_tokens"] == 3 and got["usage"]["total_tokens"] == 3 + got["usage"]["completion_tokens"],
                 "usage %s" % got["usage"])
            status, evs, done = sv.events("/v1/completions", {"prompt": PROMPT, "max_tokens": 9, "seed": seed, "stream": True,
                                                              "stream_options": {"include_usage": True}, **fields})
            c.ok(status == 200 and done and streamed_text(evs) == want, "streamed %s seed %d: %r" % (fields, seed, streamed_text(evs)))
            c.ok(evs[-1]["choices"] == [] and evs[-1]["usage"] == got["usage"] and
                 evs[-2]["choices"][0]["finish_reason"] == ch["finish_reason"], "streamed usage and finish_reason")


def choices_and_prompts(sv):
    got = sv.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 6, "seed": 10, "n": 3, "temperature": 0.8})
    want = [generate(txlm, model, PROMPT, 6, 10 + i, "--temp", "0.8") for i in range(3)]
    c.ok([ch["text"] for ch in got["choices"]] == want, "n 3: choice i is seed + i alone")
    ids = sv.json("POST", "/v1/tokenize", {"text": PROMPT})["tokens"]
    c.ok(ids == [5, 9, 12], "tokenize %s" % ids)
    by_ids = sv.json("POST", "/v1/completions", {"prompt": [ids, "w7 w8"], "max_tokens": 5, "seed": 4, "temperature": 0})
    c.ok(by_ids["choices"][0]["text"] == generate(txlm, model, PROMPT, 5, 4, "--temp", "0") and
         by_ids["choices"][1]["text"] == generate(txlm, model, "w7 w8", 5, 5, "--temp", "0"), "two prompts, one by token ids")
    echo = sv.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 4, "seed": 2, "echo": True, "logprobs": 3})
    ch = echo["choices"][0]
    lp = ch["logprobs"]
    c.ok(ch["text"] == PROMPT + generate(txlm, model, PROMPT, 4, 2), "echo: the prompt, then the continuation")
    c.ok(lp["tokens"][:3] == ["w5", "w9", "w12"] and lp["token_logprobs"][0] is None and len(lp["tokens"]) == 7 and
         lp["text_offset"][:3] == [0, 3, 6], "echo logprobs: the prompt's tokens first, the first without one")
    # each prompt token's log-probability is what txlm score gives it; each top list is sorted and holds the token when it is likelier
    want_bits = score(txlm, model, PROMPT)
    c.ok(all(abs(-lp["token_logprobs"][k] / math.log(2) - want_bits[k]) < 1e-5 for k in (1, 2)), "echo logprobs = txlm score")
    tops_ok = all(len(t) == 3 and sorted(t.values(), reverse=True) == list(t.values()) and
                  (tok in t or v < min(t.values())) for tok, v, t in zip(lp["tokens"][1:], lp["token_logprobs"][1:], lp["top_logprobs"][1:]))
    c.ok(tops_ok, "top_logprobs: 3 each, sorted, the token among them when it is likely enough")
    zero = sv.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 0, "echo": True})
    c.ok(zero["choices"][0]["text"] == PROMPT and zero["usage"]["completion_tokens"] == 0, "max_tokens 0 with echo: the prompt")
    none = sv.json("POST", "/v1/completions", {"max_tokens": 5, "seed": 6})
    c.ok(none["choices"][0]["text"] == generate(txlm, model, None, 5, 6), "no prompt: a text's start, as generate without -p")


def logprobs_zero(sv):
    """logprobs 0: each token's own log-probability, an empty top list (OpenAI's), in every form of request."""
    def same(zero, one, what):
        a, b = zero["choices"][0]["logprobs"], one["choices"][0]["logprobs"]
        c.ok(zero["choices"][0]["text"] == one["choices"][0]["text"] and a["tokens"] == b["tokens"] and
             a["token_logprobs"] == b["token_logprobs"] and a["text_offset"] == b["text_offset"] and
             all(t == ({} if lp is not None else None) for t, lp in zip(a["top_logprobs"], a["token_logprobs"])) and
             len(a["tokens"]) > 0, "logprobs 0, %s: the tokens' own, empty top lists (%s)" % (what, a))
    for what, fields in [("plain", {"prompt": PROMPT, "max_tokens": 5}),
                         ("echo", {"prompt": PROMPT, "max_tokens": 5, "echo": True}),
                         ("echo, max_tokens 0", {"prompt": PROMPT, "max_tokens": 0, "echo": True}),
                         ("token ids", {"prompt": [5, 9, 12], "max_tokens": 5, "echo": True}),
                         ("no prompt", {"max_tokens": 3})]:
        zero = sv.json("POST", "/v1/completions", {**fields, "seed": 3, "logprobs": 0})
        same(zero, sv.json("POST", "/v1/completions", {**fields, "seed": 3, "logprobs": 1}), what)
    status, evs, done = sv.events("/v1/completions", {"prompt": PROMPT, "max_tokens": 5, "seed": 3, "logprobs": 0, "stream": True})
    tops = [t for e in evs for ch in e["choices"] for t in ch["logprobs"]["top_logprobs"]]
    c.ok(status == 200 and done and len(tops) == 5 and tops == [{}] * 5, "logprobs 0, streamed: %s" % tops)
    sid = sv.json("POST", "/v1/sessions", {"seed": 2})["id"]
    got = sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": PROMPT, "max_tokens": 4, "logprobs": 0, "echo": True})
    lp = got["choices"][0]["logprobs"]
    c.ok(len(lp["tokens"]) == 7 and lp["top_logprobs"] == [None] + [{}] * 6, "logprobs 0, a session: %s" % lp)
    sv.json("DELETE", "/v1/sessions/" + sid)


def check_offsets(text, lp, what, eos="<eos>"):
    """Every token's own text where text_offset says (<eos>: a line break), in order; the tokens of a stop
    string, which the text leaves out, at its end."""
    cut = [off == len(text) for off in lp["text_offset"]]
    bad = [(k, tok, off) for k, (tok, off) in enumerate(zip(lp["tokens"], lp["text_offset"]))
           if not all(cut[k:]) and (text[off:off + 1] != "\n" if tok == eos else text[off:off + len(tok)] != tok)]
    c.ok(not bad and lp["text_offset"] == sorted(lp["text_offset"]), "%s: text_offset at each token's text (%s)" % (what, bad[:4]))


def text_offsets(sv):
    """text_offset: where each token's own text starts in the choice's text, against the token spans (a string
    prompt's, from /v1/score) and the generated text, for a word model (sv) and a character model (the demo's)."""
    for seed in (2, 5):
        got = sv.json("POST", "/v1/completions", {"prompt": PROMPT + "\nw7", "max_tokens": 12, "seed": seed, "echo": True,
                                                  "logprobs": 1, "stop": ["w1", "w2"]})
        check_offsets(got["choices"][0]["text"], got["choices"][0]["logprobs"], "a word model, seed %d" % seed)
    demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "demo.txlm")
    ch = Server(txlm, demo)
    try:
        prompt = "a  b c\n d"
        spans = [t["begin"] for t in ch.json("POST", "/v1/score", {"text": prompt})["tokens"]]
        got = ch.json("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 0, "echo": True, "logprobs": 1})
        lp = got["choices"][0]["logprobs"]
        c.ok(lp["text_offset"] == spans == [0, 1, 2, 3, 4, 5, 6, 7, 8], "echo of %r: the tokens' spans (%s)" % (prompt, lp["text_offset"]))
        ids = ch.json("POST", "/v1/tokenize", {"text": prompt})["tokens"]
        got = ch.json("POST", "/v1/completions", {"prompt": ids, "max_tokens": 0, "echo": True, "logprobs": 1})
        c.ok(got["choices"][0]["logprobs"]["text_offset"] == spans, "echo of its token ids: the same (%s)" %
             got["choices"][0]["logprobs"]["text_offset"])
        for seed in range(1, 7):
            fields = {"prompt": "The secret of life is", "max_tokens": 30, "seed": seed, "logprobs": 1, "stop": ["th", "e\n"]}
            got = ch.json("POST", "/v1/completions", fields)
            check_offsets(got["choices"][0]["text"], got["choices"][0]["logprobs"], "generated, seed %d" % seed)
            status, evs, _ = ch.events("/v1/completions", {**fields, "echo": True, "stream": True})
            lps = {"tokens": [], "text_offset": []}
            for e in evs:
                for x in e["choices"]:
                    for k in lps:
                        lps[k] += x["logprobs"][k]
            check_offsets(streamed_text(evs), lps, "echoed and streamed, seed %d" % seed)
    finally:
        ch.stop()


def scoring(sv):
    text = "w5 w9 w12 w40\nw7 w8 w300 w2 w2\nw11 " + " ".join("w%d" % (i * 7 % 900 + 2) for i in range(20))
    want = score(txlm, model, text)
    got = sv.json("POST", "/v1/score", {"text": text, "words": True})
    s = [t["surprisal"] for t in got["tokens"]]
    c.ok(len(s) == len(want) and s[0] is None and want[0] is None and
         all(abs(a - b) <= 1e-5 for a, b in zip(s[1:], want[1:])), "/v1/score = txlm score (%d tokens)" % len(s))
    words = [w["word"] for w in got["words"]]
    c.ok(words == text.split() and all(w["tokens"] == 1 for w in got["words"]), "words: the text's own words")
    nats = sv.json("POST", "/v1/score", {"text": "w5 w9", "nats": True})
    c.ok(abs(nats["tokens"][1]["surprisal"] - -nats["tokens"][1]["logprob"]) < 1e-12 and nats["unit"] == "nats", "nats")
    # a session fed in three requests (cut at segments of 8) against one feed of the whole text
    ids = sv.json("POST", "/v1/tokenize", {"text": text})["tokens"]
    one = sv.json("POST", "/v1/sessions")["id"]
    whole = sv.json("POST", "/v1/sessions/%s/score" % one, {"text": text})["tokens"]
    three = sv.json("POST", "/v1/sessions")["id"]
    parts = [ids[:8], ids[8:24], ids[24:]]
    got3 = []
    for p in parts:
        txt = sv.json("POST", "/v1/detokenize", {"tokens": p})["text"]
        back = sv.json("POST", "/v1/tokenize", {"text": txt})["tokens"]
        assert back == p, (p, back)
        got3 += sv.json("POST", "/v1/score", {"session": three, "text": txt})["tokens"]
    a = [t["logprob"] for t in whole]
    b = [t["logprob"] for t in got3]
    c.ok(len(a) == len(b) == len(ids) and a[0] is None and b[0] is None and
         max(abs(x - y) for x, y in zip(a[1:], b[1:])) <= 1e-5, "a session fed in three requests = one feed")
    c.ok(all(abs(x - -w * math.log(2)) <= 1e-5 for x, w in zip(a[1:], want[1:])), "the session's one feed = txlm score")
    info = sv.json("GET", "/v1/sessions/" + three)
    c.ok(info["tokens"] == len(ids) and info["memory_rows"] == 16, "session info: %s" % info)
    for sid in (one, three):
        sv.json("DELETE", "/v1/sessions/" + sid)
    sv.json("GET", "/v1/sessions/" + one, want=404)


def sessions(sv):
    sid = sv.json("POST", "/v1/sessions", {"seed": 1})["id"]
    first = sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": PROMPT, "max_tokens": 5, "seed": 7})
    gen_state = os.path.join(tmp, "gen.state")
    c.ok(first["choices"][0]["text"] == generate(txlm, model, PROMPT, 5, 7, state_out=gen_state) and first["session"] == sid,
         "a session's completion = generate")
    status, hdrs, state = sv.call("GET", "/v1/sessions/%s/state" % sid)
    c.ok(status == 200 and hdrs["Content-Type"] == "application/octet-stream" and state == open(gen_state, "rb").read(),
         "the exported state is generate --state-out's, byte for byte (%d bytes)" % len(state))
    # the body's "session" field, no seed: the session's own sampler goes on, as --state-in without --seed
    nxt = sv.json("POST", "/v1/completions", {"session": sid, "prompt": " w3", "max_tokens": 4})
    c.ok(nxt["choices"][0]["text"] == generate_state_in(" w3", 4, gen_state), "a session goes on as generate --state-in")
    # an imported state starts a new session where the old one was
    status, _, body = sv.call("POST", "/v1/sessions", state, {"Content-Type": "application/octet-stream"})
    imp = __import__("json").loads(body)
    c.ok(status == 200 and imp["memory_rows"] == 8, "import: a session from a state (%s)" % body[:200])
    a = sv.json("POST", "/v1/sessions/%s/completions" % imp["id"], {"prompt": " w3", "max_tokens": 4})
    c.ok(a["choices"][0]["text"] == nxt["choices"][0]["text"], "the imported session goes on as the original did")
    status, _, body = sv.call("PUT", "/v1/sessions/%s/state" % imp["id"], state[:100], {"Content-Type": "application/octet-stream"})
    c.ok(status == 400 and b"refused" in body, "a damaged state is refused: %s" % body[:200])
    status, _, body = sv.call("POST", "/v1/sessions/%s/completions" % sid, {"prompt": PROMPT, "n": 2})
    c.ok(status == 400 and b"one stream" in body, "a session is one stream: %s" % body[:200])
    lst = sv.json("GET", "/v1/sessions")
    c.ok(sorted(x["id"] for x in lst["data"]) == sorted([sid, imp["id"]]) and lst["max_sessions"] == 3, "the list of sessions")
    # the cap: a third is refused with 429 and Retry-After
    third = sv.json("POST", "/v1/sessions")["id"]
    status, hdrs, body = sv.call("POST", "/v1/sessions")
    c.ok(status == 429 and int(hdrs.get("Retry-After", 0)) >= 1 and b"--max-sessions" in body, "the session cap: %d %s" % (status, body[:200]))
    for x in (sid, imp["id"], third):
        sv.json("DELETE", "/v1/sessions/" + x)
    sv.json("DELETE", "/v1/sessions/" + sid, want=404)


def session_facts(sv):
    """What sessions report is true: the seed a session's sampler came from (a completion without one goes on
    with the session's sampler and says so), tokens fed against memory rows, an imported state, PUT's answer."""
    a = sv.json("POST", "/v1/sessions", {"seed": 5})
    b = sv.json("POST", "/v1/sessions", {"seed": 5})
    c.ok(a["seed"] == 5 and a["tokens"] == 0 and a["from_state"] is False, "a new session: its seed (%s)" % a)
    ga = sv.json("POST", "/v1/sessions/%s/completions" % a["id"], {"prompt": PROMPT, "max_tokens": 4})
    gb = sv.json("POST", "/v1/completions", {"session": b["id"], "prompt": PROMPT, "max_tokens": 4})
    c.ok(ga["choices"][0]["text"] == gb["choices"][0]["text"] and ga["seed"] == gb["seed"] == 5 and
         ga["sampler"] == gb["sampler"] == "continued", "sessions seeded 5, no seed in the request: the same text, "
         "the session's seed and its sampler continued (%s, %s)" % (ga["seed"], gb["seed"]))
    fed = sv.json("GET", "/v1/sessions/" + a["id"])
    c.ok(fed["tokens"] == 3 + 4 and fed["seed"] == 5, "tokens fed: the prompt and every token drawn (%s)" % fed)
    got = sv.json("POST", "/v1/sessions/%s/completions" % a["id"], {"prompt": " w3", "max_tokens": 2, "seed": 9})
    c.ok(got["seed"] == 9 and got["sampler"] == "seeded" and sv.json("GET", "/v1/sessions/" + a["id"])["seed"] == 9,
         "a seed in the request reseeds the session, and it says so")
    status, _, state = sv.call("GET", "/v1/sessions/%s/state" % a["id"])
    rows = sv.json("GET", "/v1/sessions/" + a["id"])["memory_rows"]
    status, _, body = sv.call("POST", "/v1/sessions", state, {"Content-Type": "application/octet-stream"})
    imp = __import__("json").loads(body)
    c.ok(status == 200 and imp["tokens"] == 0 and imp["from_state"] is True and imp["memory_rows"] == rows and
         imp["seed"] is None, "imported: no tokens fed here, the state's memory rows, no seed known (%s)" % imp)
    got = sv.json("POST", "/v1/sessions/%s/completions" % imp["id"], {"prompt": " w3", "max_tokens": 2})
    c.ok(got["seed"] is None and got["sampler"] == "continued", "an imported session's sampler goes on: no seed told")
    status, _, body = sv.call("PUT", "/v1/sessions/%s/state" % b["id"], state, {"Content-Type": "application/octet-stream"})
    put = __import__("json").loads(body)
    after = sv.json("GET", "/v1/sessions/" + b["id"])
    c.ok(status == 200 and put["busy"] is False and put["memory_rows"] == after["memory_rows"] == rows and
         put["tokens"] == 0 and put["from_state"] is True and put["seed"] is None,
         "PUT .../state answers the session as it is now (%s)" % put)
    for headers in ({}, {"Content-Type": "application/json"}):
        status, _, data = sv.call("PUT", "/v1/sessions/%s/state" % b["id"], state, headers)
        c.ok(status == 415 and b"application/octet-stream" in data, "PUT .../state, %s: 415 (%d)" %
             (headers or "no Content-Type", status))
        # a body over --max-body: the same answer, before the body is read (not 413)
        head = "PUT /v1/sessions/%s/state HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n" % (
            b["id"], 2 << 20, "".join("%s: %s\r\n" % kv for kv in headers.items()))
        with socket.create_connection(("127.0.0.1", sv.port), timeout=60) as s:
            s.sendall(head.encode())
            got = s.recv(65536)
        c.ok(got.startswith(b"HTTP/1.1 415") and b"application/octet-stream" in got,
             "PUT .../state, %s, 2 MiB declared: 415 (%r)" % (headers or "no Content-Type", got[:20]))
    for x in (a["id"], b["id"], imp["id"]):
        sv.json("DELETE", "/v1/sessions/" + x)


def generate_state_in(prompt, n, state):
    import subprocess
    out = subprocess.run([txlm, "generate", "-m", model, "-p", prompt, "-n", str(n), "--state-in", state,
                          "--no-display-prompt"], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()[:-1]


def small_endpoints(sv):
    models = sv.json("GET", "/v1/models")
    c.ok(models["object"] == "list" and models["data"][0]["id"] == "m" and models["data"][0]["txlm"]["n_token"] == 1000,
         "/v1/models")
    c.ok(sv.json("GET", "/v1/models/m")["id"] == "m", "/v1/models/m")
    sv.json("GET", "/v1/models/other", want=404)
    det = sv.json("POST", "/v1/detokenize", {"tokens": [5, 9, 0, 12]})
    c.ok(det["text"] == "w5 w9\nw12", "detokenize: %r" % det["text"])
    health = sv.json("GET", "/health")
    c.ok(health["status"] == "ok" and health["parallel"] == 4, "/health")
    status, hdrs, body = sv.call("GET", "/metrics")
    text = body.decode()
    c.ok(status == 200 and hdrs["Content-Type"].startswith("text/plain") and "txlm_generated_tokens_total" in text and
         "txlm_step_seconds_bucket{le=\"+Inf\"}" in text and "txlm_queue_depth 0" in text, "/metrics")
    status, _, body = sv.call("POST", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    c.ok(status == 400 and b"plain language model" in body, "chat: a clear refusal (%d)" % status)
    status, hdrs, _ = sv.call("GET", "/v1/completions")
    c.ok(status == 405 and hdrs.get("Allow") == "POST", "GET /v1/completions: 405, Allow: POST")
    c.ok(sv.call("GET", "/v1/nothing")[0] == 404, "unknown path: 404")


def keys():
    sv = Server(txlm, model, "--api-key", "alpha", "--api-key", "beta")
    try:
        A, B = {"Authorization": "Bearer alpha"}, {"Authorization": "Bearer beta"}
        c.ok(sv.call("GET", "/health")[0] == 200, "keys: /health needs none")
        for path in ("/v1/models", "/metrics", "/v1/sessions"):
            status, hdrs, body = sv.call("GET", path)
            c.ok(status == 401 and b"invalid_api_key" in body, "keys: %s without a key: 401" % path)
            c.ok(sv.call("GET", path, headers={"Authorization": "Bearer alph"})[0] == 401, "keys: %s with a wrong key" % path)
        sid = sv.json("POST", "/v1/sessions", headers=A)["id"]
        c.ok(sv.call("GET", "/v1/sessions/" + sid, headers=B)[0] == 404, "keys: another key's session is not found")
        c.ok(sv.call("POST", "/v1/sessions/%s/score" % sid, {"text": "w5"}, headers=B)[0] == 404, "keys: nor scored")
        c.ok(sv.json("GET", "/v1/sessions", headers=B)["data"] == [], "keys: nor listed")
        c.ok(sv.json("GET", "/v1/sessions/" + sid, headers=A)["id"] == sid, "keys: its own key finds it")
        c.ok(sv.stop() == 0, "keys: exit status 0")
    finally:
        sv.stop()


def logging():
    """--log: a line on stderr per request: method, path, status, seconds, and the session used or made."""
    sv = Server(txlm, model, "--log")
    try:
        sid = sv.json("POST", "/v1/sessions")["id"]
        sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": PROMPT, "max_tokens": 2})
        sv.json("POST", "/v1/completions", {"session": sid, "prompt": " w3", "max_tokens": 2})
        sv.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 2})
        sv.json("GET", "/v1/nothing", want=404)
        sv.call("GET", "/v1/sessions/%s/state" % sid)
        want = [r"POST /v1/sessions 200 [0-9.]+ s session %s$" % sid,
                r"POST /v1/sessions/%s/completions 200 [0-9.]+ s session %s$" % (sid, sid),
                r"POST /v1/completions 200 [0-9.]+ s session %s$" % sid,
                r"POST /v1/completions 200 [0-9.]+ s$",
                r"GET /v1/nothing 404 [0-9.]+ s$",
                r"GET /v1/sessions/%s/state 200 [0-9.]+ s session %s$" % (sid, sid)]

        def lines():
            return [line.rstrip("\n")[len("txlm: serve: "):] for line in sv.log().splitlines(True)
                    if line.startswith("txlm: serve: ") and "listening" not in line]
        wait_for(lambda: len(lines()) >= len(want), "the log lines")
        got = lines()
        c.ok(len(got) == len(want) and all(re.match(w, g) for w, g in zip(want, got)), "--log: %s" % got)
        c.ok(sv.stop() == 0, "--log: exit status 0")
    finally:
        sv.stop()


def expiry():
    sv = Server(txlm, model, "--session-idle", "0.5")
    try:
        sid = sv.json("POST", "/v1/sessions")["id"]
        c.ok(sv.json("GET", "/health")["session_idle_seconds"] == 0.5, "/health reports the idle limit")
        wait_for(lambda: sv.call("GET", "/v1/sessions/" + sid)[0] == 404, "the idle session to expire", 20)
        c.ok(sv.metric("txlm_sessions_expired_total") == 1 and sv.metric("txlm_sessions") == 0, "an idle session expires")
        c.ok(sv.stop() == 0, "expiry: exit status 0")
    finally:
        sv.stop()


def no_sessions():
    sv = Server(txlm, model, "--max-sessions", "0")
    try:
        status, hdrs, body = sv.call("POST", "/v1/sessions")
        c.ok(status == 400 and "Retry-After" not in hdrs and b"--max-sessions 0" in body,
             "--max-sessions 0: a session is refused with 400, not a 429 to retry (%d %s)" % (status, body[:100]))
        c.ok(sv.stop() == 0, "no sessions: exit status 0")
    finally:
        sv.stop()


sv = Server(txlm, model, "--max-sessions", "3")
try:
    for step in (completions, choices_and_prompts, logprobs_zero, text_offsets, scoring, sessions, session_facts,
                 small_endpoints):
        c.run(step, sv)
    c.ok(sv.stop() == 0, "SIGTERM: exit status 0")
finally:
    sv.stop()
    if c.fails:
        print(sv.log())
c.run(keys)
c.run(logging)
c.run(expiry)
c.run(no_sessions)
sys.exit(c.done())
