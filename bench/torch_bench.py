#!/usr/bin/python3
"""The PyTorch side of bench/compare.py: the workloads of `txlm bench` on the
same weights (an HF folder written by `txlm-pack --synthetic --export-safetensors`),
through the project's PyTorch Transformer-XL (tools/train/txl.py). Prints one JSON object.

Evaluation scores only the tail clusters the targets need and generation draws
hierarchically (head, then one tail), as txlm does, so both sides do the same work
in the output layer. The layers run as txl.py writes them (the reference algorithm:
keys, values and position keys are recomputed over memory + segment every step).
"""
import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_txl(path):
    spec = importlib.util.spec_from_file_location("txl", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def target_logprobs(model, z, targets):
    """log p(target) per row of z [n, d], computing the head and only the tails the targets fall in."""
    if not model.n_clusters:
        lp = torch.log_softmax(model._logits(z, 0)[0], dim=-1)
        return lp.gather(-1, targets[:, None])[:, 0]
    head, zp = model._logits(z, 0)
    head = torch.cat([head, torch.nn.functional.linear(zp, model.w("crit.cluster_weight"),
                                                       model.w("crit.cluster_bias"))], dim=-1)
    head_lp = torch.log_softmax(head, dim=-1)
    short = model.cfg["cutoffs"][0]
    out = torch.empty(targets.shape[0], device=z.device)
    for ci in range(model.n_clusters + 1):
        lo, hi = model.ends[ci], model.ends[ci + 1]
        rows = ((targets >= lo) & (targets < hi)).nonzero()[:, 0]
        if rows.numel() == 0:
            continue
        if ci == 0:
            out[rows] = head_lp[rows, targets[rows]]
            continue
        tail = torch.log_softmax(model._logits(z[rows], ci)[0], dim=-1)
        out[rows] = head_lp[rows, short + ci - 1] + tail.gather(-1, (targets[rows] - lo)[:, None])[:, 0]
    return out


def sample_next(model, z_row, gen):
    """One exact draw at temperature 1: the head's distribution, then the drawn cluster's tail."""
    if not model.n_clusters:
        lp = torch.log_softmax(model._logits(z_row[None], 0)[0][0], dim=-1)
        return int(torch.multinomial(lp.exp(), 1, generator=gen))
    head, zp = model._logits(z_row[None], 0)
    head = torch.cat([head, torch.nn.functional.linear(zp, model.w("crit.cluster_weight"),
                                                       model.w("crit.cluster_bias"))], dim=-1)
    i = int(torch.multinomial(torch.softmax(head[0], dim=-1), 1, generator=gen))
    short = model.cfg["cutoffs"][0]
    if i < short:
        return i
    ci = i - short + 1
    tail = torch.softmax(model._logits(z_row[None], ci)[0][0], dim=-1)
    return model.ends[ci] + int(torch.multinomial(tail, 1, generator=gen))


DEV = torch.device("cpu")


def ids_at(ids, at, n):
    return torch.tensor([int(ids[(at + i) % len(ids)]) for i in range(n)], dtype=torch.long, device=DEV)


def sync():
    """Device work is asynchronous: wait for it before reading a host clock."""
    if DEV.type == "cuda":
        torch.cuda.synchronize()


def run_eval(model, ids, mem_len, tgt_len, tokens, reps):
    at, mems = 0, None

    def score(n):
        nonlocal at, mems
        done = 0
        while done < n:
            k = min(tgt_len, n - done)
            x = ids_at(ids, at, k + 1)
            z, mems = model.hidden(x[None, :k], mems)
            target_logprobs(model, z[0], x[1:])
            done += k
            at += k

    score(mem_len or tgt_len)
    out = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        score(tokens)
        sync()
        out.append(tokens / (time.perf_counter() - t0))
    return out


def run_gen(model, ids, mem_len, tgt_len, tokens, reps, seed):
    mems, z = None, None
    prompt = mem_len or 1
    for at in range(0, prompt, tgt_len):
        k = min(tgt_len, prompt - at)
        z, mems = model.hidden(ids_at(ids, at, k)[None], mems)
    gen = torch.Generator(device=DEV).manual_seed(seed)
    # one untimed token, as txlm bench does (its first one compiles kernels)
    tok = sample_next(model, z[0, -1], gen)
    z, mems = model.hidden(torch.tensor([[tok]], device=DEV), mems)
    out = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(tokens):
            tok = sample_next(model, z[0, -1], gen)
            z, mems = model.hidden(torch.tensor([[tok]], device=DEV), mems)
        sync()
        out.append(tokens / (time.perf_counter() - t0))
    return out


def run_load(txl, hf, mem_len, reps, seed):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        model = txl.load_checkpoint(hf).to(DEV)
        model.cfg["mem_len"] = mem_len
        z, _ = model.hidden(torch.tensor([[0]], device=DEV), None)
        sample_next(model, z[0, -1], torch.Generator(device=DEV).manual_seed(seed))
        sync()
        out.append(time.perf_counter() - t0)
        del model
    return out


def run_logprobs(model, ids, segments, path):
    mems, rows, at = None, [], 0
    for k in segments:
        z, mems = model.hidden(ids_at(ids, at, k)[None], mems)
        rows.append(model.log_probs(z[0]).float())
        at += k
    torch.cat(rows).cpu().numpy().astype("<f4").tofile(path)


def blas_library():
    """The BLAS shared library this process has loaded for PyTorch's matrix
    products (Debian's torch goes through the libblas.so.3 alternative,
    which is the slow reference BLAS unless OpenBLAS is installed)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "blas" in os.path.basename(path).lower():
                libs.add(os.path.realpath(path))
    return ", ".join(sorted(libs)) or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hf", required=True, help="folder with config.json and model.safetensors")
    ap.add_argument("--workloads", default="load,eval,gen", help="load,eval,gen or logprobs")
    ap.add_argument("--ids", required=True, help="token ids, little-endian int32")
    ap.add_argument("--mem-len", type=int, default=640)
    ap.add_argument("--tgt-len", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=512, help="tokens per evaluation repetition")
    ap.add_argument("--gen-tokens", type=int, default=None, help="tokens per generation repetition (default --tokens)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--segments", default="16,16,16,16", help="logprobs: segment lengths")
    ap.add_argument("-o", "--output", help="logprobs: float32 [tokens, n_token] written here")
    ap.add_argument("--txl", default=os.path.join(REPO, "tools", "train", "txl.py"), help="the PyTorch model code")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16"],
                    help="cuda: fp32, tf32 (matrix units' float32 mode) or fp16 (autocast)")
    a = ap.parse_args()

    global DEV
    DEV = torch.device(a.device)
    torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    autocast = (torch.autocast("cuda", dtype=torch.float16) if a.precision == "fp16" and DEV.type == "cuda"
                else contextlib.nullcontext())
    txl = load_txl(a.txl)
    ids = np.fromfile(a.ids, dtype="<i4")
    work = a.workloads.split(",")
    res = {"torch": torch.__version__, "device": torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else "cpu",
           "precision": a.precision, "blas": blas_library(), "threads": torch.get_num_threads(), "mem_len": a.mem_len,
           "tgt_len": a.tgt_len, "tokens": a.tokens, "reps": a.reps}
    with torch.no_grad(), autocast:
        if "load" in work:
            res["load_s"] = run_load(txl, a.hf, a.mem_len, a.reps, a.seed)
        if set(work) & {"eval", "gen", "logprobs"}:
            model = txl.load_checkpoint(a.hf).to(DEV)
            model.cfg["mem_len"] = a.mem_len
            if "eval" in work:
                res["eval_tokens_per_s"] = run_eval(model, ids, a.mem_len, a.tgt_len, a.tokens, a.reps)
            if "gen" in work:
                res["gen_tokens_per_s"] = run_gen(model, ids, a.mem_len, a.tgt_len, a.gen_tokens or a.tokens, a.reps,
                                                  a.seed)
            if "logprobs" in work:
                if not a.output:
                    sys.exit("torch_bench: logprobs needs -o OUT")
                run_logprobs(model, ids, [int(x) for x in a.segments.split(",")], a.output)
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
