#!/usr/bin/python3
"""Checks that the engine and txl.py agree on a character model: reads the
.txlm into PyTorch (txlm_file.py), then compares
  - every log-probability of `txlm logprobs` over the first --tokens tokens of
    TEXT, fed in segments of tgt_len with memory carried (max |delta| <= --tol);
  - with --expect-bpc B, PyTorch's bits per character on the whole of TEXT
    (txlm eval's protocol) against B (|delta| <= --expect-tol);
  - with --engine-eval, `txlm eval --json` on TEXT against PyTorch's value
    (|delta| <= --bpc-tol).
Exit 0: agree; 1: disagree; 77: no torch here.

--clamp-len C and --same-length 0|1 override the model's settings in both.

usage: check_txlm.py TXLM_EXE MODEL.txlm TEXT [--tokens N] [--tol T] [--expect-bpc B]
                     [--expect-tol T] [--engine-eval] [--bpc-tol T] [--clamp-len C] [--same-length 0|1]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import txlm_file  # noqa: E402
import verdict  # noqa: E402


def char_ids(vocab, data):
    """The engine's character tokenizer: the one-byte symbol, else <eos> for a newline, else <unk>."""
    byte_id = {}
    for i, s in enumerate(vocab):
        if len(s) == 1 and s[0] not in byte_id:
            byte_id[s[0]] = i
    eos = vocab.index(b"<eos>") if b"<eos>" in vocab else -1
    unk = vocab.index(b"<unk>") if b"<unk>" in vocab else -1
    ids = []
    for b in data:
        i = byte_id.get(b, eos if b == 10 else -1)
        if i < 0:
            i = unk
        if i < 0:
            raise ValueError(f"byte 0x{b:02x} has no symbol")
        ids.append(i)
    return ids


def torch_bpc(model, ids, seg):
    mems, nll = None, 0.0
    with torch.no_grad():
        for s in range(0, len(ids) - 1, seg):
            x = torch.tensor(ids[s:s + seg + 1])
            out, mems = model(x[:-1], mems, x[1:])
            nll += float(out.double().sum())
    return nll / (len(ids) - 1) / math.log(2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("txlm")
    p.add_argument("model")
    p.add_argument("text")
    p.add_argument("--tokens", type=int, default=400)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--bpc-tol", type=float, default=1e-4)
    p.add_argument("--expect-bpc", type=float)
    p.add_argument("--expect-tol", type=float, default=1e-3)
    p.add_argument("--engine-eval", action="store_true")
    p.add_argument("--clamp-len", type=int)
    p.add_argument("--same-length", type=int, choices=[0, 1])
    a = p.parse_args()
    torch.set_num_threads(1)

    model, vocab = txlm_file.load(a.model)
    overrides = []
    if a.clamp_len is not None:
        model.cfg["clamp_len"] = a.clamp_len
        overrides += ["--clamp-len", str(a.clamp_len)]
    if a.same_length is not None:
        model.cfg["same_length"] = bool(a.same_length)
        overrides += ["--same-length", str(a.same_length)]
    seg = model.cfg["tgt_len"] or 128
    with open(a.text, "rb") as f:
        ids = char_ids(vocab, f.read())
    bad = []

    toks = ids[: a.tokens]
    segs = [min(seg, len(toks) - s) for s in range(0, len(toks), seg)]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lp.f32")
        subprocess.run([a.txlm, "logprobs", "-m", a.model, "--tokens", ",".join(map(str, toks)),
                        "--segments", ",".join(map(str, segs)), "-o", out, *overrides], check=True)
        got = np.fromfile(out, dtype="<f4").reshape(len(toks), -1)
    mems, rows = None, []
    with torch.no_grad():
        s = 0
        for n in segs:
            lp, mems = model(torch.tensor(toks[s:s + n]), mems)
            rows.append(lp.numpy())
            s += n
    d = float(np.abs(np.concatenate(rows) - got).max())
    print(f"log-probs of {len(toks)} tokens in segments of {seg}: max |delta| {d:.3g}")
    if d > a.tol:
        bad.append(f"log-probs differ by {d:.3g} > {a.tol}")

    mine = torch_bpc(model, ids, seg)
    print(f"PyTorch: {mine:.6f} bits per character on {a.text} ({len(ids) - 1} characters scored)")
    if a.expect_bpc is not None and abs(mine - a.expect_bpc) > a.expect_tol:
        bad.append(f"bpc {mine:.6f}, expected {a.expect_bpc} +- {a.expect_tol}")
    if a.engine_eval:
        r = subprocess.run([a.txlm, "eval", "-m", a.model, a.text, "--json", *overrides], check=True,
                           stdout=subprocess.PIPE)
        engine = json.loads(r.stdout)["bpc"]
        print(f"txlm eval: {engine:.6f} bits per character")
        if abs(engine - mine) > a.bpc_tol:
            bad.append(f"bpc differs: txlm {engine:.6f}, PyTorch {mine:.6f}")
    return verdict.report(bad)


if __name__ == "__main__":
    sys.exit(main())
