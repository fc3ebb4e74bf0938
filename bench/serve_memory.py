#!/usr/bin/env python3
"""txlm serve's memory with requests that ask for log-probabilities
(docs/performance.md, "The server under pressure"). Not a test.

A model of 267,735 tokens (wt103's vocabulary and cutoffs, small layers:
some 25 MB in f16, packed with --synthetic), txlm serve --parallel 4
--max-sessions 32, 16 sessions each answering one completion with
"logprobs": 1: the server's virtual and resident size before and after,
and, where the server reports them, the device bytes the engine counts
(txlm_device_bytes) against the start-up plan (txlm_device_planned_bytes).
On lavapipe device memory is host memory: it shows in the virtual size.

usage: bench/serve_memory.py [--build build]..."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "serve"))
from serve_util import Server  # noqa: E402

HERE = os.path.dirname(__file__)


def model(build, folder):
    c = json.load(open(os.path.join(HERE, "configs", "base.json")))
    c.update(d_model=256, d_embed=256, div_val=4, n_layer=2, n_head=4, d_head=64, d_inner=512, mem_len=128, tgt_len=128)
    cfg, out = os.path.join(folder, "config.json"), os.path.join(folder, "wide.txlm")
    json.dump(c, open(cfg, "w"))
    subprocess.run([os.path.join(build, "tools", "txlm-pack"), "--synthetic", cfg, "-o", out, "--dtype", "f16"],
                   check=True, capture_output=True)
    return out


def sizes(sv):
    d = {}
    for line in open("/proc/%d/status" % sv.proc.pid):
        k = line.split(":")[0]
        if k in ("VmSize", "VmRSS"):
            d[k] = int(line.split()[1]) * 1024
    try:
        d["device"], d["plan"] = sv.metric("txlm_device_bytes"), sv.metric("txlm_device_planned_bytes")
    except AssertionError:  # a server that does not report them
        pass
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append")
    a = ap.parse_args()
    builds = a.build or ["build"]
    with tempfile.TemporaryDirectory() as tmp:
        path = model(builds[-1], tmp)
        print("| build | virtual size | resident size | device bytes (engine; plan) |\n|---|---|---|---|")
        for b in builds:
            sv = Server(os.path.join(b, "tools", "txlm"), path, "--parallel", "4", "--max-sessions", "32")
            try:
                sids = [sv.json("POST", "/v1/sessions", {"seed": k})["id"] for k in range(16)]
                x = sizes(sv)
                for sid in sids:
                    sv.json("POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w5 w9", "max_tokens": 2, "logprobs": 1})
                time.sleep(0.5)
                y = sizes(sv)
            finally:
                sv.stop()
            dev = "%.1f -> %.1f MB (%.1f MB)" % (x["device"] / 1e6, y["device"] / 1e6, x["plan"] / 1e6) if "device" in x else "not reported"
            print("| %s | %.2f -> %.2f GB | %.0f -> %.0f MB | %s |" % (b, x["VmSize"] / 1e9, y["VmSize"] / 1e9, x["VmRSS"] / 1e6,
                                                                      y["VmRSS"] / 1e6, dev))


if __name__ == "__main__":
    main()
