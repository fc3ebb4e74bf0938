"""A .txlm model as a checkpoint folder (config.json, pytorch_model.bin,
vocab.txt) that txlm-pack reads, so that a model shipped only as .txlm
(models/demo.txlm) can be packed again with another --dtype."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
import txlm_file  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    cfg, tensors, vocab = txlm_file.read(src)
    os.makedirs(out, exist_ok=True)
    cfg = dict(cfg, model_type="transfo-xl", n_token=cfg["n_token"], vocab_size=cfg["n_token"])
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    torch.save({k: v.contiguous() for k, v in tensors.items()}, os.path.join(out, "pytorch_model.bin"))
    for s in vocab:
        if b"\n" in s or b"\r" in s:
            raise SystemExit(f"{src}: symbol {s!r} cannot be a line of vocab.txt")
    with open(os.path.join(out, "vocab.txt"), "wb") as f:
        f.write(b"".join(s + b"\n" for s in vocab))


if __name__ == "__main__":
    main()
