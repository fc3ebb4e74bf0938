#!/usr/bin/python3
"""txlm against PyTorch on the same weights (docs/performance.md).

    /usr/bin/python3 bench/compare.py [--quick] [--models wt103,base] [--reps 3]

1. Creates the models once (build/bench-models, reused): `txlm-pack --synthetic` for the
   wt103- and base-shaped configs in bench/configs (f32 with the same weights exported as an
   HF folder for PyTorch, and a q8_0 copy of wt103).
2. Checks that txlm and PyTorch give the same log-probabilities on a few segments with memory;
   a model that fails gets no ratio.
3. Times each workload alternating txlm / PyTorch, one repetition per process, and reports
   medians and the ratio txlm / PyTorch (speeds: higher is better; load: time, lower is better).
4. The Transformer-XL vs vanilla evaluation table on txlm (bench only, no PyTorch).
Results: a JSON file and a markdown summary (build/bench-results/), also printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("+", " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, **kw)
    if p.returncode:
        sys.exit(f"compare: command failed ({p.returncode}): {' '.join(cmd)}")
    return p.stdout


def make_models(a, names):
    os.makedirs(a.models_dir, exist_ok=True)
    pack = os.path.join(a.build, "tools", "txlm-pack")
    out = {}
    for name in names:
        cfg = os.path.join(REPO, "bench", "configs", name + ".json")
        f32 = os.path.join(a.models_dir, name + "-f32.txlm")
        hf = os.path.join(a.models_dir, name + "-hf")
        if not (os.path.exists(f32) and os.path.exists(os.path.join(hf, "model.safetensors"))):
            os.makedirs(hf, exist_ok=True)
            run([pack, "--synthetic", cfg, "-o", f32, "--seed", "1", "--export-safetensors",
                 os.path.join(hf, "model.safetensors")])
        variants = {"f32": f32}
        # the packed copies of the same weights
        for dt in a.dtypes.split(","):
            if dt == "f32":
                continue
            path = os.path.join(a.models_dir, f"{name}-{dt}.txlm")
            if not os.path.exists(path):
                run([pack, "--synthetic", cfg, "-o", path, "--seed", "1", "--dtype", dt])
            variants[dt] = path
        out[name] = (variants, hf)
    return out


def make_ids(path, n_token, seed=1, n=1 << 16):
    """Log-uniform ids (small ids frequent, as in a frequency-sorted vocabulary)."""
    rng = np.random.default_rng(seed)
    ids = np.minimum(np.floor(np.power(float(n_token), rng.random(n))) - 1, n_token - 1).astype("<i4")
    ids.tofile(path)
    return ids


def check(a, name, variants, hf, ids, work):
    """Same log-probabilities from both: segments of 16 and of single tokens (the generation path)
    with a memory of 32 that fills and slides."""
    segs, mem = [16, 16, 1, 1, 16, 1, 1], 32
    n = sum(segs)
    ref = os.path.join(work, name + "-torch.f32")
    run([a.python, os.path.join(REPO, "bench", "torch_bench.py"), "--hf", hf, "--workloads", "logprobs", "--ids", a.ids,
         "--mem-len", str(mem), "--segments", ",".join(map(str, segs)), "-o", ref, "--txl", a.txl,
         "--device", a.device])
    want = np.fromfile(ref, dtype="<f4").reshape(n, -1)
    result = {}
    for dt, model in variants.items():
        got_path = os.path.join(work, f"{name}-{dt}-txlm.f32")
        run([a.txlm, "logprobs", "-m", model, "--tokens", ",".join(str(int(x)) for x in ids[:n]),
             "--segments", ",".join(map(str, segs)), "--mem-len", str(mem), "-o", got_path])
        got = np.fromfile(got_path, dtype="<f4").reshape(n, -1)
        diff = np.abs(got.astype(np.float64) - want)
        # f32 must agree to float rounding. q8_0 changes the weights (PyTorch runs the f32 ones):
        # random weights through 18 layers move log p by ~0.1 on average; it must stay that
        # close and rank the same most likely token in nearly every row. (The q8_0 kernels
        # themselves match the CPU reference on the dequantised weights: tests/kernels.)
        top_agree = float(np.mean(np.argmax(got, 1) == np.argmax(want, 1)))
        tol_max, tol_mean = (2e-3, 2e-4) if dt == "f32" else (2.0, 0.25)
        ok = bool(diff.max() <= tol_max and diff.mean() <= tol_mean and (dt == "f32" or top_agree >= 0.9))
        result[dt] = {"max_abs": float(diff.max()), "mean_abs": float(diff.mean()), "top1_agree": top_agree, "ok": ok}
        log(f"check {name} {dt}: max |diff| {diff.max():.3g}, mean {diff.mean():.3g}, top-1 agree {top_agree:.3f}:",
            "OK" if ok else "FAILED")
        os.remove(got_path)
    os.remove(ref)
    return result


def median(xs):
    return statistics.median(xs) if xs else None


def time_model(a, name, variants, hf, ok):
    """Alternates txlm (each dtype) and PyTorch, one repetition per process."""
    txlm_runs = {dt: [] for dt in variants}
    precisions = a.precisions.split(",")
    torch_runs = {p: [] for p in precisions}
    common = ["--mem-len", str(a.mem_len), "--tgt-len", str(a.tgt_len), "--tokens", str(a.tokens), "--gen-tokens",
              str(a.gen_tokens), "--reps", "1", "--ids", a.ids]
    for rep in range(a.reps):
        for dt, model in variants.items():
            out = run([a.txlm, "bench", "-m", model, "--json", "--workloads", a.workloads] + common)
            txlm_runs[dt].append(json.loads(out))
        for prec in precisions if any(ok.values()) else []:
            out = run([a.python, os.path.join(REPO, "bench", "torch_bench.py"), "--hf", hf, "--workloads",
                       a.workloads, "--txl", a.txl, "--device", a.device, "--precision", prec] + common)
            torch_runs[prec].append(json.loads(out))
    keys = {"load": "load_s", "eval": "eval_tokens_per_s", "gen": "gen_tokens_per_s"}
    res = {"txlm": {}, "torch": {}, "ratio": {}}
    for w in a.workloads.split(","):
        k = keys[w]
        for dt in variants:
            xv = [r[k][0] for r in txlm_runs[dt]]
            res["txlm"].setdefault(dt, {})[w] = {"runs": xv, "median": median(xv)}
        for prec in precisions:
            tv = [r[k][0] for r in torch_runs[prec]]
            res["torch"].setdefault(prec, {})[w] = {"runs": tv, "median": median(tv)}
            for dt in variants:
                if ok.get(dt) and tv:
                    # speeds: txlm / PyTorch; load (a time): txlm / PyTorch as well, so < 1 is better there
                    res["ratio"].setdefault(dt, {}).setdefault(prec, {})[w] = \
                        res["txlm"][dt][w]["median"] / median(tv)
    res["context_s"] = {dt: median([r["context_s"] for r in txlm_runs[dt]]) for dt in variants}
    # generation against the device's copy rate, measured in each run
    for dt in variants:
        runs = [r for r in txlm_runs[dt] if "copy_bytes_per_s" in r]
        if runs:
            res.setdefault("weights", {})[dt] = {
                "step_bytes": runs[0]["step_weight_bytes"],
                "weight_bytes_per_s": median([r["gen_weight_bytes_per_s_median"] for r in runs]),
                "copy_bytes_per_s": median([r["copy_bytes_per_s"] for r in runs]),
            }
    return res


def markdown(results, a):
    lines = [f"Machine: {results['machine']}", f"Commit: {results['commit']}", ""]
    units = {"load": "s (lower is better)", "eval": "tokens/s", "gen": "tokens/s"}
    for name, r in results["models"].items():
        if "timing" not in r:
            continue
        t = r["timing"]
        lines += [f"### {name} (mem_len {a.mem_len}, tgt_len {a.tgt_len}, {a.reps} reps, medians)", "",
                  "| workload | txlm dtype | txlm | PyTorch precision | PyTorch | txlm / PyTorch | txlm runs | "
                  "PyTorch runs |", "|---|---|---|---|---|---|---|---|"]
        for w in a.workloads.split(","):
            for dt, tw in t["txlm"].items():
                for prec, pw in t["torch"].items():
                    ratio = t["ratio"].get(dt, {}).get(prec, {}).get(w)
                    lines.append(f"| {w} ({units[w]}) | {dt} | {tw[w]['median']:.3f} | {prec} | "
                                 f"{pw[w]['median'] if pw[w]['median'] is not None else float('nan'):.3f} | "
                                 f"{'%.2f' % ratio if ratio is not None else 'no ratio (check failed)'} | "
                                 f"{', '.join('%.3f' % x for x in tw[w]['runs'])} | "
                                 f"{', '.join('%.3f' % x for x in pw[w]['runs'])} |")
        lines.append("")
        for dt, wr in t.get("weights", {}).items():
            lines.append(f"- txlm generation, {dt}: {wr['weight_bytes_per_s'] * 1e-9:.2f} GB/s of weights "
                         f"({wr['step_bytes'] * 1e-6:.0f} MB a token) = "
                         f"{100 * wr['weight_bytes_per_s'] / wr['copy_bytes_per_s']:.0f}% of the device copy "
                         f"({wr['copy_bytes_per_s'] * 1e-9:.2f} GB/s; medians of the runs)")
        if t.get("weights"):
            lines.append("")
    for name, r in results["models"].items():
        for dt, c in r["check"].items():
            lines.append(f"- check {name} {dt}: max |Δ log p| {c['max_abs']:.2e}, mean {c['mean_abs']:.2e}, "
                         f"top-1 agreement {c['top1_agree']:.3f}: {'passed' if c['ok'] else 'FAILED'}")
    if "vanilla" in results:
        v = results["vanilla"]
        lines += ["", f"### Transformer-XL vs vanilla evaluation ({v['model']})", "",
                  "| attention length | XL ms/token | vanilla ms/token | speedup |", "|---|---|---|---|"]
        for row in v["vanilla"]:
            lines.append(f"| {row['attn_len']} | {row['xl_ms_per_token']:.2f} | {row['vanilla_ms_per_token']:.1f} | "
                         f"{row['vanilla_ms_per_token'] / row['xl_ms_per_token']:.1f}x |")
    return "\n".join(lines) + "\n"


def machine(a):
    if a.device != "cpu":
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        return f"{gpu}; txlm through Vulkan on it: {run([a.txlm, 'devices']).strip().splitlines()[0]}"
    mesa = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "mesa-vulkan-drivers"], stdout=subprocess.PIPE,
                          text=True).stdout
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({cpu}), lavapipe, mesa-vulkan-drivers {mesa}, load {os.getloadavg()[0]:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--models-dir", default=None, help="default BUILD/bench-models")
    ap.add_argument("--models", default="wt103,base")
    ap.add_argument("--workloads", default="load,eval,gen")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mem-len", type=int, default=640)
    ap.add_argument("--tgt-len", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=256, help="evaluation tokens per repetition")
    ap.add_argument("--gen-tokens", type=int, default=32, help="generated tokens per repetition")
    ap.add_argument("--vanilla", default="128,320,640,1600", help="attention lengths ('' to skip)")
    ap.add_argument("--vanilla-tokens", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="1 rep, few tokens, no vanilla table (harness check)")
    ap.add_argument("--txl", default=os.path.join(REPO, "tools", "train", "txl.py"))
    ap.add_argument("--any-blas", action="store_true", help="time PyTorch even without OpenBLAS")
    ap.add_argument("--dtypes", default="q8_0", help="the packings timed besides f32 (f16,q8_0,q4_0)")
    ap.add_argument("--device", default="cpu", help="PyTorch's device: cpu or cuda (txlm picks its own)")
    ap.add_argument("--precisions", default="fp32", help="PyTorch on cuda: fp32,tf32,fp16 (autocast)")
    ap.add_argument("--python", default=PY, help="the Python that has PyTorch")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.tokens, a.gen_tokens, a.vanilla = 1, 128, 4, ""
    a.models_dir = a.models_dir or os.path.join(a.build, "bench-models")
    a.txlm = os.path.join(a.build, "tools", "txlm")
    work = os.path.join(a.build, "bench-results")
    os.makedirs(work, exist_ok=True)
    if not os.path.exists(a.txl):
        sys.exit(f"compare: {a.txl} not found (the PyTorch model; give --txl)")

    # PyTorch through the reference BLAS runs ~30x slower than through
    # OpenBLAS: a ratio against it would flatter txlm, so it is refused.
    blas = json.loads(run([a.python, "-c", "import json, sys; sys.argv = ['x']; sys.path.insert(0, %r); import torch_bench; "
                               "print(json.dumps(torch_bench.blas_library()))" % os.path.join(REPO, "bench")]))
    if a.device == "cpu" and "openblas" not in blas.lower() and not a.any_blas:
        sys.exit(f"compare: PyTorch uses {blas}, not OpenBLAS (Debian: apt-get install libopenblas0-pthread); "
                 "--any-blas to time it anyway")
    names = a.models.split(",")
    models = make_models(a, names)
    a.ids = os.path.join(work, "ids.i32")
    ids = make_ids(a.ids, 267735)
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    results = {"machine": machine(a) + f"; PyTorch BLAS {blas}", "commit": commit + (" (with local changes)" if dirty else ""),
               "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "models": {}}
    for name in names:
        variants, hf = models[name]
        chk = check(a, name, variants, hf, ids, work)
        results["models"][name] = {"check": chk}
        ok = {dt: c["ok"] for dt, c in chk.items()}
        results["models"][name]["timing"] = time_model(a, name, variants, hf, ok)
    if a.vanilla:
        model = models[names[0]][0]["f32"]
        out = run([a.txlm, "bench", "-m", model, "--json", "--workloads", "vanilla", "--attn-lens", a.vanilla,
                   "--tgt-len", str(a.tgt_len), "--vanilla-tokens", str(a.vanilla_tokens), "--ids", a.ids])
        results["vanilla"] = json.loads(out)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = markdown(results, a)
    with open(os.path.join(work, "results.md"), "w") as f:
        f.write(md)
    print(md)
    failed = [f"{n} {dt}" for n, r in results["models"].items() for dt, c in r["check"].items() if not c["ok"]]
    if failed:
        sys.exit("compare: log-probabilities differ for " + ", ".join(failed) + ": no ratio reported for them")


if __name__ == "__main__":
    main()
