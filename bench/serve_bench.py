#!/usr/bin/env python3
"""txlm serve's throughput and per-request overhead (docs/performance.md,
"The server"). Not a test: it prints Markdown tables.

  batching   generated tokens/s of C clients at once over one client,
             against `txlm bench --batch 1,C`'s generation ratio on the
             same model. As bench measures it, each request's prompt fills
             the memory (mem_len tokens of models/demo_heldout.txt) and the
             rate is that of generation (the answer's timings): the share
             of the batching gain the server keeps (the target: 80%)
  overhead   one client, a request of one token: its time at the client
             beyond the server's own prompt and generation time (the
             answer's timings): HTTP, JSON, queueing and waking (the
             target: under 2 ms); and the server's time per token with one
             client against txlm generate's (from its stderr line)

usage: bench/serve_bench.py [--build build] [--model models/demo.txlm] [--clients 8] [--tokens 128] [--reps 3]"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "serve"))
from serve_util import Server, call  # noqa: E402

TEXT = open(os.path.join(os.path.dirname(__file__), "..", "models", "demo_heldout.txt")).read()


def bench_ratio(a):
    out = subprocess.run([a.txlm, "bench", "-m", a.model, "--batch", "1,%d" % a.clients, "--workloads", "gen",
                          "--gen-tokens", str(a.tokens), "-r", str(a.reps), "--json"], capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)["batches"]
    return rows[0]["gen_tokens_per_s"], rows[1]["gen_tokens_per_s"]


def one(port, prompt, seed, n):
    """(tokens made, seconds at the client, the answer's timings)."""
    t0 = time.perf_counter()
    status, _, body = call(port, "POST", "/v1/completions", {"prompt": prompt, "max_tokens": n, "seed": seed})
    took = time.perf_counter() - t0
    assert status == 200, body
    r = json.loads(body)
    return r["usage"]["completion_tokens"], took, r["timings"]


def aggregate(port, prompt, clients, a):
    """Generated tokens/s of `clients` clients at once, each a.reps requests (the sum of their generation rates)."""
    rates = [[] for _ in range(clients)]

    def client(k):
        for r in range(a.reps):
            made, _, t = one(port, prompt, 1000 * k + r, a.tokens)
            rates[k].append(made / (t["generation_ms"] / 1e3))
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(statistics.median(x) for x in rates)


def generate_token_time(a, prompt):
    """txlm generate's seconds per token after the same prompt (the median of a.reps runs)."""
    token = []
    for r in range(a.reps):
        err = subprocess.run([a.txlm, "generate", "-m", a.model, "-p", prompt, "-n", str(a.tokens), "--seed", str(r)],
                             capture_output=True, text=True, check=True).stderr
        m = re.search(r"generated (\d+) tokens in ([0-9.]+) s", err)
        token.append(float(m.group(2)) / int(m.group(1)))
    return statistics.median(token)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--model", default="models/demo.txlm")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    a.txlm = os.path.join(a.build, "tools", "txlm")
    b1, bc = bench_ratio(a)
    sv = Server(a.txlm, a.model, "--parallel", str(a.clients))
    try:
        mem = json.loads(call(sv.port, "GET", "/v1/models")[2])["data"][0]["txlm"]["mem_len"]
        ids = json.loads(call(sv.port, "POST", "/v1/tokenize", {"text": TEXT})[2])["tokens"][:mem + 1]
        prompt = json.loads(call(sv.port, "POST", "/v1/detokenize", {"tokens": ids})[2])["text"]
        one(sv.port, prompt, 0, a.tokens)  # pipelines made, caches warm
        s1 = aggregate(sv.port, prompt, 1, a)
        sc = aggregate(sv.port, prompt, a.clients, a)
        short = [one(sv.port, "The", r, 1) for r in range(10 * a.reps)]
        over = statistics.median(took - sum(t.values()) / 1e3 for _, took, t in short)
        per_token = statistics.median(t["generation_ms"] / 1e3 / made for made, _, t in
                                      [one(sv.port, prompt, r, a.tokens) for r in range(a.reps)])
    finally:
        sv.stop()
    g_token = generate_token_time(a, prompt)
    print("| model | bench gen tok/s, batch 1 / %d | bench ratio | server tok/s, 1 / %d clients | server ratio | "
          "server ratio / bench ratio |" % (a.clients, a.clients))
    print("|---|---|---|---|---|---|")
    print("| %s | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f | %.0f%% |" % (
        os.path.basename(a.model), b1, bc, bc / b1, s1, sc, sc / s1, 100 * (sc / s1) / (bc / b1)))
    print()
    print("| generate: per token | server, one client: per token | overhead per request (beyond the server's own times) |")
    print("|---|---|---|")
    print("| %.2f ms | %.2f ms | %.2f ms |" % (1e3 * g_token, 1e3 * per_token, 1e3 * over))


if __name__ == "__main__":
    main()
