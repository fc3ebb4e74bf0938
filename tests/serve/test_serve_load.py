#!/usr/bin/env python3
"""txlm serve under load, for a bounded number of rounds: 16 clients at
once, plain and streamed, each answer equal to the same request sent
alone, no error, the server's memory flat from round to round; clients
that leave in the middle (streamed and not) have their streams cancelled
at once; a full queue answers 429 with Retry-After; a session in use
refuses every other request on it (409) until its client leaves; SIGTERM with
requests in flight lets them finish and exits 0 (meanwhile /health and
new requests get 503, not a refused connection), and past --grace
cancels them and still exits 0; a second signal exits at once, and a
pass that never returns (the fault point hang-pass) ends the process
within the bounded waits. Memory: requests with logprobs (plain, echoed,
on sessions, pooled) add no device memory (txlm_device_bytes, the
engine's own count) and stay within the start-up plan; queued streams
hold no buffers, and a running one's are sized by its prompt.
usage: test_serve_load.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import os
import signal
import socket
import sys
import threading
import json

from serve_util import Server, call, events, streamed_text, wait_for, setup

txlm, pack_tool, model, tmp, c = setup(420)
CLIENTS, ROUNDS = 16, 3


def request(k, r):
    """Client k's request of round r: its own prompt, seed and options."""
    body = {"prompt": "w%d w%d w%d" % (k + 2, 3 * k + 5, r + 7), "max_tokens": 6 + (k + r) % 7, "seed": 100 * k + r}
    if k % 3 == 1:
        body.update(temperature=0.7, top_k=40)
    if k % 4 == 2:
        body.update(stop="w1", repeat_penalty=1.3)
    if k % 5 == 3:
        body.update(logprobs=2)
    body["stream"] = (k + r) % 2 == 1
    return body


def answer(port, body):
    """The text and finish reason of one request, streamed or not."""
    if body["stream"]:
        status, evs, done = events(port, "/v1/completions", body)
        assert status == 200 and done, (status, evs)
        finish = [ch["finish_reason"] for e in evs for ch in e["choices"] if ch["finish_reason"]]
        lps = [t for e in evs for ch in e["choices"] if ch.get("logprobs") for t in ch["logprobs"]["token_logprobs"]]
        return streamed_text(evs), finish, len(lps)
    status, _, data = call(port, "POST", "/v1/completions", body)
    assert status == 200, data
    ch = json.loads(data)["choices"][0]
    return ch["text"], [ch["finish_reason"]], len(ch["logprobs"]["token_logprobs"]) if ch["logprobs"] else 0


def concurrency():
    sv = Server(txlm, model, "--parallel", "4", "--queue", "32")
    try:
        alone = {(k, r): answer(sv.port, request(k, r)) for k in range(CLIENTS) for r in range(ROUNDS)}
        errors, rss = [], []
        for rnd in range(ROUNDS):
            got = {}

            def client(k):
                try:
                    for r in range(ROUNDS):
                        got[(k, r)] = answer(sv.port, request(k, r))
                except Exception as e:  # reported below
                    errors.append("client %d: %r" % (k, e))
            threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            bad = [key for key in alone if got.get(key) != alone[key]]
            c.ok(not errors and not bad, "round %d: %d clients x %d requests at once, each equal to its lone run%s" %
                 (rnd, CLIENTS, ROUNDS, "" if not bad else ": differ %s, e.g. %s vs %s" % (bad[:4], got.get(bad[0]), alone[bad[0]])))
            wait_for(lambda: sv.metric("txlm_active_streams") == 0, "the batch to empty")
            rss.append(sv.rss_kib())
        c.ok(sv.metric("txlm_queue_depth") == 0 and sv.metric('txlm_rejected_total') == 0, "no queue left, nothing refused")
        steps = sv.metric("txlm_step_seconds_count")
        made = sv.metric("txlm_generated_tokens_total")
        c.ok(steps < made, "passes were shared: %d steps for %d tokens" % (steps, made))
        if "ASAN_OPTIONS" not in os.environ:  # AddressSanitizer's quarantine grows on its own
            c.ok(rss[-1] - rss[1] < 8192, "memory flat: RSS %s KiB after each round" % rss)
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def open_request(port, body):
    """A request sent on a raw socket, left open (the caller closes it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
              % (len(data), data))
    return s


def disconnects():
    sv = Server(txlm, model, "--parallel", "2", "--queue", "1")
    try:
        # streamed: read the first events, then leave
        s = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000, "stream": True})
        seen = b""
        while seen.count(b"data: ") < 2:
            seen += s.recv(4096)
        s.close()
        wait_for(lambda: sv.metric("txlm_cancelled_streams_total") >= 1 and sv.metric("txlm_active_streams") == 0,
                 "the streamed generation to be cancelled")
        c.ok(sv.metric("txlm_generated_tokens_total") < 4000, "a client that leaves mid-stream: its stream is cancelled")
        # not streamed: the connection waits on the scheduler; leaving is noticed all the same
        s = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "the request to run")
        s.close()
        wait_for(lambda: sv.metric("txlm_cancelled_streams_total") >= 2 and sv.metric("txlm_active_streams") == 0,
                 "the waiting generation to be cancelled")
        c.ok(sv.metric("txlm_generated_tokens_total") < 8000, "a client that leaves while waiting: its stream is cancelled")
        # a full queue: 2 run, 1 waits, the next is refused
        held = [open_request(sv.port, {"prompt": "w5", "max_tokens": 4000}) for _ in range(3)]
        wait_for(lambda: sv.metric("txlm_active_streams") == 2 and sv.metric("txlm_queue_depth") == 1, "2 running, 1 queued")
        status, hdrs, body = call(sv.port, "POST", "/v1/completions", {"prompt": "w5", "max_tokens": 2})
        c.ok(status == 429 and hdrs.get("Retry-After") == "1" and b"rate_limit_error" in body, "a full queue: 429, Retry-After")
        for s in held:
            s.close()
        wait_for(lambda: sv.metric("txlm_active_streams") == 0 and sv.metric("txlm_queue_depth") == 0, "all cancelled")
        c.ok(call(sv.port, "POST", "/v1/completions", {"prompt": "w5", "max_tokens": 2})[0] == 200, "then served again")
        # more streams than running and waiting ones together: never servable, so not 429 (a client would retry for ever)
        status, hdrs, body = call(sv.port, "POST", "/v1/completions", {"prompt": "w5", "max_tokens": 2, "n": 4})
        c.ok(status == 400 and "Retry-After" not in hdrs and b"at most 3 at once" in body,
             "n 4 on a server of 2 + 1 streams: 400 (%d %s)" % (status, body[:120]))
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def busy_session():
    """A session serves one request at a time: while one runs on it, another request, a DELETE, its state
    read or written get 409 and change nothing; the client leaving frees it."""
    sv = Server(txlm, model)
    try:
        sid = sv.json("POST", "/v1/sessions", {"seed": 4})["id"]
        s = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000, "session": sid})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "the session's request to run")
        octet = {"Content-Type": "application/octet-stream"}
        for method, path, body, headers in (("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w6"}, None),
                                            ("POST", "/v1/score", {"text": "w6", "session": sid}, None),
                                            ("DELETE", "/v1/sessions/" + sid, None, None),
                                            ("GET", "/v1/sessions/%s/state" % sid, None, None),
                                            ("PUT", "/v1/sessions/%s/state" % sid, b"x" * 64, octet)):
            status, _, data = sv.call(method, path, body, headers)
            c.ok(status == 409 and b"busy" in data, "a session in use: %s %s: 409 (%d)" % (method, path, status))
        c.ok(sv.json("GET", "/v1/sessions/" + sid)["busy"] is True, "a session in use says it is busy")
        s.close()
        wait_for(lambda: sv.metric("txlm_active_streams") == 0, "the request to be cancelled")
        facts = sv.json("GET", "/v1/sessions/" + sid)
        c.ok(facts["busy"] is False and facts["tokens"] > 0, "the client gone: the session is free (%s)" % facts)
        c.ok(sv.call("DELETE", "/v1/sessions/" + sid)[0] == 200, "and can be deleted")
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def sigterm():
    sv = Server(txlm, model, "--parallel", "2", "--grace", "60")
    try:
        want = answer(sv.port, {"prompt": "w6 w7", "max_tokens": 300, "seed": 3, "stream": False})
        got = {}

        def run(i, stream):
            got[i] = answer(sv.port, {"prompt": "w6 w7", "max_tokens": 300, "seed": 3, "stream": stream})
        threads = [threading.Thread(target=run, args=(i, i == 1)) for i in range(3)]
        for t in threads:
            t.start()
        wait_for(lambda: sv.metric("txlm_active_streams") + sv.metric("txlm_queue_depth") == 3, "3 requests in flight")
        sv.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(120)
        c.ok(all(got.get(i) == want for i in range(3)), "SIGTERM: the requests in flight, running and queued, finish "
             "(%d of 3)" % len(got))
        rc = sv.wait_exit()
        if not c.ok(rc == 0, "SIGTERM: exit status 0 (%d)" % rc):
            print(sv.log()[-4000:])
    finally:
        sv.stop()
    sv = Server(txlm, model, "--grace", "0.5")
    try:
        held = open_request(sv.port, {"prompt": "w5", "max_tokens": 100000 // 25})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "a long request in flight")
        sv.proc.send_signal(signal.SIGINT)
        reply = b""
        while True:
            part = held.recv(65536)
            if not part:
                break
            reply += part
        c.ok(reply.startswith(b"HTTP/1.1 503") and b"stopped before" in reply, "past --grace: 503 (%r)" % reply[:60])
        rc = sv.wait_exit()
        if not c.ok(rc == 0, "SIGINT past --grace: exit status 0 (%d)" % rc):
            print(sv.log()[-4000:])
    finally:
        sv.stop()


def stopping():
    """While stopping: /health answers 503 (it says "stopping") and a new request 503 with Retry-After, on the
    listening socket; once the request in flight ends, exit 0. A second signal exits at once."""
    sv = Server(txlm, model, "--grace", "60")
    try:
        held = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "a long request in flight")
        sv.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: sv.call("GET", "/health")[0] == 503, "/health to say 503")
        status, hdrs, body = sv.call("GET", "/health")
        c.ok(status == 503 and json.loads(body)["status"] == "stopping" and hdrs.get("Connection") == "close",
             "stopping: /health 503, status stopping (%d %s)" % (status, body[:80]))
        status, hdrs, body = sv.call("POST", "/v1/completions", {"prompt": "w5", "max_tokens": 2})
        c.ok(status == 503 and hdrs.get("Retry-After") == "1" and b"shutting down" in body,
             "stopping: a new request 503 with Retry-After (%d)" % status)
        held.close()  # the stream is cancelled: the work is over, the server goes
        c.ok(sv.wait_exit() == 0, "stopping: exit status 0 once the request in flight ended")
    finally:
        sv.stop()
    sv = Server(txlm, model, "--grace", "60")
    try:
        held = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "a long request in flight")
        sv.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: sv.call("GET", "/health")[0] == 503, "the stop to begin")
        sv.proc.send_signal(signal.SIGINT)
        c.ok(sv.wait_exit(10) == 1 and "SIGINT again: exiting at once" in sv.log(),
             "a second signal within the grace period of 60 s: exit status 1 at once")
        held.close()
    finally:
        sv.stop()


def hung_pass():
    """A pass that never returns (the fault point hang-pass, as a device that hangs without a word): past the grace
    period every wait is bounded (30 s for a pass; 2 s here, short-stop-wait), and the process exits 1 saying so
    instead of waiting for ever."""
    env = dict(os.environ, TXLM_FAULT_SERVE="hang-pass,short-stop-wait")
    sv = Server(txlm, model, "--grace", "0.5", env=env)
    try:
        held = open_request(sv.port, {"prompt": "w5", "max_tokens": 10})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "the request's pass to hang")
        sv.proc.send_signal(signal.SIGTERM)
        if not c.ok(sv.wait_exit(60) == 1 and "the scheduler in a pass" in sv.log(), "a hung pass: exit status 1 within the "
                    "bounded waits"):
            print(sv.log()[-4000:])
        held.close()
    finally:
        sv.stop()


def gauge_wait(sv, name, want, what):
    wait_for(lambda: sv.metric(name) == want, what)


def memory():
    """Requests with logprobs take their rows through the batch: the device memory the engine reports is what it
    was once the sessions were made, within the start-up plan, whatever they ask."""
    sv = Server(txlm, model, "--parallel", "2", "--max-sessions", "4")
    try:
        base, plan = sv.metric("txlm_device_bytes"), sv.metric("txlm_device_planned_bytes")
        sids = [sv.json("POST", "/v1/sessions", {"seed": k})["id"] for k in range(4)]
        made = sv.metric("txlm_device_bytes")
        c.ok(base < made <= plan, "4 sessions: device bytes %d -> %d, the plan %d" % (base, made, plan))
        for sid in sids:
            sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w5 w9", "max_tokens": 3, "logprobs": 1})
            sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w7", "max_tokens": 3, "logprobs": 2, "echo": True})
            sv.json("POST", "/v1/sessions/%s/score" % sid, {"text": "w5 w9 w12"})
        sv.json("POST", "/v1/completions", {"prompt": "w5 w9", "max_tokens": 4, "logprobs": 3, "n": 2, "echo": True})
        status, evs, done = sv.events("/v1/completions", {"prompt": "w5", "max_tokens": 4, "logprobs": 1, "stream": True})
        c.ok(status == 200 and done, "a streamed completion with logprobs")
        gauge_wait(sv, "txlm_active_streams", 0, "the batch to empty")
        after = sv.metric("txlm_device_bytes")
        c.ok(after == made and after <= plan, "after logprobs on every session and the pool: device bytes %d (were %d; "
             "the plan %d)" % (after, made, plan))
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


def stream_buffers():
    """A stream's buffers of log-probabilities are taken when it starts, sized by its input: queued streams hold
    none, and an echoed prompt of 3 tokens holds 3 rows, not a segment's."""
    sv = Server(txlm, model, "--parallel", "1", "--queue", "8")
    try:
        info = sv.json("GET", "/v1/models")["data"][0]["txlm"]
        segment_rows = info["segment"] * info["n_token"] * 4
        held = open_request(sv.port, {"prompt": "w5", "max_tokens": 4000})
        wait_for(lambda: sv.metric("txlm_active_streams") == 1, "the one place taken")
        waiting = [open_request(sv.port, {"prompt": "w5 w9 w12", "max_tokens": 2, "echo": True, "logprobs": 2, "n": 2})
                   for _ in range(4)]
        wait_for(lambda: sv.metric("txlm_queue_depth") == 8, "8 streams queued")
        c.ok(sv.metric("txlm_stream_buffer_bytes") == 0, "8 queued streams with echo and logprobs hold no buffers (%d bytes)"
             % sv.metric("txlm_stream_buffer_bytes"))
        for s in waiting + [held]:
            s.close()
        gauge_wait(sv, "txlm_active_streams", 0, "all cancelled")
        gauge_wait(sv, "txlm_stream_buffer_bytes", 0, "every buffer freed")
        running = open_request(sv.port, {"prompt": "w5 w9 w12", "max_tokens": 4000, "echo": True, "logprobs": 1})
        wait_for(lambda: sv.metric("txlm_stream_buffer_bytes") > 0, "the echoed stream to start")
        held_bytes = sv.metric("txlm_stream_buffer_bytes")
        c.ok(0 < held_bytes < segment_rows, "a running stream echoing 3 tokens holds %d bytes, under one segment's rows (%d)"
             % (held_bytes, segment_rows))
        running.close()
        gauge_wait(sv, "txlm_stream_buffer_bytes", 0, "its buffers freed")
        c.ok(sv.stop() == 0, "exit status 0")
    finally:
        sv.stop()


for step in (concurrency, disconnects, busy_session, sigterm, stopping, hung_pass, memory, stream_buffers):
    c.run(step)
sys.exit(c.done())
