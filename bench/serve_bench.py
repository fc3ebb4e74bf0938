#!/usr/bin/env python3
"""txlm serve's throughput and per-request overhead (docs/performance.md,
"The server"). Not a test: it prints a Markdown table.

  batching   aggregate generated tokens/s of C clients at once over one
             client, against `txlm bench --batch 1,C`'s generation ratio
             on the same model: the share of the batching gain the server
             keeps (the target: at least 80%)
  overhead   one client: a request's time against txlm generate's own
             prompt and token times (from its stderr line), fitted over
             max_tokens 1 and G: the server's time per token and the fixed
             cost per request beyond generate's (the target: under 2 ms)

usage: bench/serve_bench.py [--build build] [--model models/demo.txlm] [--clients 8] [--tokens 64] [--reps 3]"""
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

PROMPT = "The secret of life is"


def bench_ratio(a):
    out = subprocess.run([a.txlm, "bench", "-m", a.model, "--batch", "1,%d" % a.clients, "--workloads", "gen",
                          "--gen-tokens", str(a.tokens), "-r", str(a.reps), "--json"], capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)["batches"]
    return rows[0]["gen_tokens_per_s"], rows[1]["gen_tokens_per_s"]


def one(port, seed, n):
    t0 = time.perf_counter()
    status, _, body = call(port, "POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": n, "seed": seed})
    assert status == 200, body
    made = json.loads(body)["usage"]["completion_tokens"]
    return made, time.perf_counter() - t0


def aggregate(port, clients, a):
    """Tokens/s of `clients` clients each sending a.reps requests of a.tokens tokens at once."""
    made = [0] * clients

    def client(k):
        for r in range(a.reps):
            made[k] += one(port, 1000 * k + r, a.tokens)[0]
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(made) / (time.perf_counter() - t0)


def generate_times(a):
    """txlm generate's prompt seconds and seconds per token (the median of a.reps runs)."""
    prompt, token = [], []
    for r in range(a.reps):
        err = subprocess.run([a.txlm, "generate", "-m", a.model, "-p", PROMPT, "-n", str(a.tokens), "--seed", str(r)],
                             capture_output=True, text=True, check=True).stderr
        m = re.search(r"prompt (\d+) tokens in ([0-9.]+) s .* generated (\d+) tokens in ([0-9.]+) s", err)
        prompt.append(float(m.group(2)))
        token.append(float(m.group(4)) / int(m.group(3)))
    return statistics.median(prompt), statistics.median(token)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--model", default="models/demo.txlm")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    a.txlm = os.path.join(a.build, "tools", "txlm")
    b1, bc = bench_ratio(a)
    sv = Server(a.txlm, a.model, "--parallel", str(a.clients))
    try:
        one(sv.port, 0, a.tokens)  # pipelines made, caches warm
        s1 = aggregate(sv.port, 1, a)
        sc = aggregate(sv.port, a.clients, a)
        lat1 = statistics.median(one(sv.port, r, 1)[1] for r in range(5 * a.reps))
        latg = statistics.median(one(sv.port, r, a.tokens)[1] for r in range(a.reps))
    finally:
        sv.stop()
    g_prompt, g_token = generate_times(a)
    s_token = (latg - lat1) / (a.tokens - 1)
    overhead = lat1 - g_prompt - g_token
    print("| model | bench gen tok/s, batch 1 / %d | bench ratio | server tok/s, 1 / %d clients | server ratio | "
          "server ratio / bench ratio |" % (a.clients, a.clients))
    print("|---|---|---|---|---|---|")
    print("| %s | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f | %.0f%% |" % (
        os.path.basename(a.model), b1, bc, bc / b1, s1, sc, sc / s1, 100 * (sc / s1) / (bc / b1)))
    print()
    print("| generate: prompt | generate: per token | server: per token | server: request of 1 token | overhead per request |")
    print("|---|---|---|---|---|")
    print("| %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms |" % (1e3 * g_prompt, 1e3 * g_token, 1e3 * s_token,
                                                             1e3 * lat1, 1e3 * overhead))


if __name__ == "__main__":
    main()
