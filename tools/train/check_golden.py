#!/usr/bin/python3
"""Runs every case of tests/golden through txl.py, segment by segment in one
session, and checks every log-probability (max |delta| <= 1e-4) and each
segment's mean NLL. Exit 0: all agree; 1: a mismatch; 77: no torch here.

usage: check_golden.py [GOLDEN_DIR] [--weights=bin] [--pack=TXLM_PACK]
--weights=bin reads pytorch_model.bin instead of model.safetensors; --pack
also packs each case with txlm-pack and checks the weights read back from the
.txlm file (txlm_file.py).
"""
import json
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
import txl  # noqa: E402
import txlm_file  # noqa: E402

TOL = 1e-4


def load(case_dir, weights, pack):
    if pack:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.txlm")
            subprocess.run([pack, case_dir, "-o", out], check=True, stdout=subprocess.DEVNULL)
            return txlm_file.load(out)[0]
    with open(os.path.join(case_dir, "config.json")) as f:
        cfg = json.load(f)
    model = txl.TransfoXL(cfg)
    if weights == "bin":
        model.load_tensors(torch.load(os.path.join(case_dir, "pytorch_model.bin"), map_location="cpu"))
    else:
        model.load_tensors(txl.read_safetensors(os.path.join(case_dir, "model.safetensors")))
    model.eval()
    return model


def check_case(case_dir, weights, pack=None):
    model = load(case_dir, weights, pack)
    with open(os.path.join(case_dir, "segments.json")) as f:
        segs = json.load(f)
    if segs.get("initial_memory") != "empty":
        raise ValueError(f"{case_dir}: initial_memory {segs.get('initial_memory')!r} not supported")
    n_token = model.cfg["n_token"]
    mems, worst, bad = None, 0.0, []
    with torch.no_grad():
        for k, seg in enumerate(segs["segments"]):
            tokens = torch.tensor(seg["tokens"], dtype=torch.long)
            lp, mems = model(tokens, mems)
            want = np.fromfile(os.path.join(case_dir, seg["logprobs_file"]), dtype="<f4")
            want = want.reshape(len(seg["tokens"]), n_token)
            d = float(np.abs(lp.numpy() - want).max())
            worst = max(worst, d)
            nll = float(-lp[torch.arange(len(tokens)), torch.tensor(seg["targets"])].mean())
            if d > TOL:
                bad.append(f"segment {k}: max |delta| {d:.3g}")
            if abs(nll - seg["mean_nll"]) > TOL:
                bad.append(f"segment {k}: mean_nll {nll:.6f}, golden {seg['mean_nll']:.6f}")
            if mems[0].shape[1] != seg["mem_len_after"]:
                bad.append(f"segment {k}: {mems[0].shape[1]} memory rows, golden {seg['mem_len_after']}")
    return worst, bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    weights = "bin" if "--weights=bin" in sys.argv[1:] else "safetensors"
    pack = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--pack=")), None)
    golden = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden")
    torch.set_num_threads(1)
    cases = sorted(d for d in os.listdir(golden) if os.path.exists(os.path.join(golden, d, "segments.json")))
    if not cases:
        print(f"{golden}: no golden cases")
        return 1
    failed = 0
    for case in cases:
        for via in [None, pack] if pack else [None]:
            worst, bad = check_case(os.path.join(golden, case), weights, via)
            src = "txlm-pack output" if via else weights
            print(f"{case}: max |delta| {worst:.3g} ({src})" + ("" if not bad else " FAIL"))
            for b in bad:
                print(f"  {b}")
            failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
