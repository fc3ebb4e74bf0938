#!/usr/bin/python3
"""Trains a tiny model for a few steps on TEXT with train.py, then checks that
  - the held-out bits per character fell well below the untrained model's;
  - txlm-pack accepts the checkpoint as a character model, and the weights
    read back from the .txlm give the same log-probabilities as the checkpoint;
  - resuming from the checkpoint continues at the saved step.
Exit 0: all hold; 1: one failed; 77: no torch here.

usage: check_train.py TXLM_PACK TEXT
"""
import math
import os
import re
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import corpus  # noqa: E402
import txl  # noqa: E402
import txlm_file  # noqa: E402
import verdict  # noqa: E402

TINY = ["--n-layer", "2", "--d-model", "48", "--n-head", "3", "--d-inner", "96", "--tgt-len", "24",
        "--mem-len", "20", "--batch", "4", "--warmup", "5", "--lr", "3e-3", "--threads", "1", "--dropout", "0"]


def train(out, text, steps, *extra):
    r = subprocess.run([sys.executable, os.path.join(here, "train.py"), out, "--text", text, "--steps", str(steps),
                        "--save-every", "20", *TINY, *extra], check=True, stdout=subprocess.PIPE, text=True)
    return r.stdout


def main():
    pack, text = sys.argv[1], sys.argv[2]
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck")
        log = train(ck, text, 40)
        bpcs = [float(x) for x in re.findall(r"held-out bpc \(first \d+ chars\) ([0-9.]+)", log)]
        start = math.log2(len(corpus.SYMBOLS))
        print(f"held-out bpc at saves: {bpcs} (uniform: {start:.3f})")
        if len(bpcs) != 2 or bpcs[-1] > start - 1.5:
            bad.append("held-out bpc did not fall by 1.5 bits")

        out = os.path.join(tmp, "m.txlm")
        subprocess.run([pack, ck, "--tokenizer", "char", "-o", out], check=True, stdout=subprocess.PIPE)
        packed, vocab = txlm_file.load(out)
        if vocab != [s.encode() for s in corpus.SYMBOLS]:
            bad.append("vocabulary read back differs")
        ref = txl.load_checkpoint(ck)
        ids = torch.tensor(corpus.encode(open(text, encoding="ascii", errors="replace").read()[:100]))
        with torch.no_grad():
            a, ma = ref(ids[:50])
            b, mb = packed(ids[:50])
            a2, _ = ref(ids[50:], ma)
            b2, _ = packed(ids[50:], mb)
        d = max(float((a - b).abs().max()), float((a2 - b2).abs().max()))
        print(f"checkpoint vs .txlm read back: max |delta| {d:.3g}")
        if d > 1e-6:
            bad.append(f"log-probs differ by {d:.3g}")

        log = train(ck, text, 45, "--resume")
        steps = re.findall(r"step (\d+) saved", log)
        if steps != ["45"]:
            bad.append(f"resume saved at steps {steps}, expected [45]")
    return verdict.report(bad)


if __name__ == "__main__":
    sys.exit(main())
