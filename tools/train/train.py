#!/usr/bin/python3
"""Trains the demo character-level Transformer-XL on the `fortunes` package's
text (see corpus.py) and writes a checkpoint directory txlm-pack reads:
config.json, model.safetensors, vocab.txt (plus train_state.pt to resume).

usage: train.py OUT_DIR [--steps N] [--threads T] [--bench] [--resume] [size options]
Run it under `nice`; it checkpoints every --save-every steps, so stopping it
early leaves a usable model.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import txl  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--d-inner", type=int, default=768)
    p.add_argument("--tgt-len", type=int, default=96)
    p.add_argument("--mem-len", type=int, default=96)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.05)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=150)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--clip", type=float, default=0.25)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save-every", type=int, default=100)
    p.add_argument("--eval-chars", type=int, default=20000, help="held-out characters scored at each save")
    p.add_argument("--text", help="train on this file instead (its last 5%% held out), for quick checks")
    p.add_argument("--bench", action="store_true", help="time 5 steps and stop")
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def config(a):
    return {
        "n_token": len(corpus.SYMBOLS), "vocab_size": len(corpus.SYMBOLS),
        "d_model": a.d_model, "d_embed": a.d_model, "n_head": a.n_head, "d_head": a.d_model // a.n_head,
        "d_inner": a.d_inner, "n_layer": a.n_layer, "div_val": 1, "cutoffs": [], "tie_weight": True,
        "tie_projs": [False], "pre_lnorm": False, "untie_r": True, "same_length": False, "clamp_len": -1,
        "mem_len": a.mem_len, "tgt_len": a.tgt_len, "ext_len": 0, "attn_type": 0,
        "layer_norm_epsilon": 1e-5, "dropout": a.dropout, "dropatt": 0.0, "adaptive": False,
        "sample_softmax": -1,
    }


def lr_at(a, step):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    t = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def eval_bpc(model, ids, tgt_len):
    """One stream, segments of tgt_len, memory carried (txlm eval's protocol)."""
    was = model.training
    model.eval()
    mems, nll, n = None, 0.0, 0
    with torch.no_grad():
        for s in range(0, len(ids) - 1, tgt_len):
            seg = ids[s:s + tgt_len + 1]
            out, mems = model(seg[None, :-1], mems, seg[None, 1:])
            nll += float(out.sum())
            n += seg.numel() - 1
    model.train(was)
    return nll / n / math.log(2)


def save(model, cfg, a, opt, step, out):
    os.makedirs(out, exist_ok=True)
    txl.write_safetensors(os.path.join(out, "model.safetensors"), model.tensors())
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    corpus.write_vocab(os.path.join(out, "vocab.txt"))
    state = {"step": step, "opt": opt.state_dict(), "args": vars(a)}
    txl.replace_file(os.path.join(out, "train_state.pt"), lambda f: torch.save(state, f))


def main():
    a = parse()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.text:
        with open(a.text, encoding="ascii", errors="replace") as f:
            text = f.read()
        cut = int(len(text) * (1 - corpus.HELDOUT_FRACTION))
        train_text, held_text = text[:cut], text[cut:]
    else:
        train_text, held_text = corpus.split_text()
    train = torch.tensor(corpus.encode(train_text), dtype=torch.long)
    held = torch.tensor(corpus.encode(held_text), dtype=torch.long)[: a.eval_chars]
    print(f"train {len(train)} chars, held-out {len(held_text)} chars", flush=True)

    cfg = config(a)
    model = txl.TransfoXL(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    step = 0
    if a.resume:
        model.load_tensors(txl.read_safetensors(os.path.join(a.out, "model.safetensors")))
        st = torch.load(os.path.join(a.out, "train_state.pt"))
        opt.load_state_dict(st["opt"])
        step = st["step"]
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params} parameters, config {json.dumps(cfg)}", flush=True)

    # a.batch parallel streams over the training text, each read in order
    per = len(train) // a.batch
    data = train[: per * a.batch].view(a.batch, per)
    model.train()
    pos = (step * a.tgt_len) % (per - 1)
    mems, t0, run_loss, run_n = None, time.time(), 0.0, 0
    while step < a.steps:
        if pos + a.tgt_len + 1 > per:
            pos, mems = 0, None
        inp = data[:, pos:pos + a.tgt_len]
        tgt = data[:, pos + 1:pos + a.tgt_len + 1]
        pos += a.tgt_len
        for g in opt.param_groups:
            g["lr"] = lr_at(a, step)
        nll, mems = model(inp, mems, tgt)
        loss = nll.mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        step += 1
        run_loss += float(loss)
        run_n += 1
        if a.bench and step == 5:
            print(f"{(time.time() - t0) / 5:.2f} s/step", flush=True)
            return 0
        if step % 25 == 0:
            print(f"step {step} lr {lr_at(a, step):.2e} train bpc {run_loss / run_n / math.log(2):.3f} "
                  f"{time.time() - t0:.0f}s", flush=True)
            run_loss, run_n = 0.0, 0
        if step % a.save_every == 0 or step == a.steps:
            save(model, cfg, a, opt, step, a.out)
            print(f"step {step} saved; held-out bpc (first {len(held)} chars) {eval_bpc(model, held, a.tgt_len):.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
