"""The authors' released TensorFlow models at small sizes, without
TensorFlow (usage: gen.py OUT_DIR): for each of the paper's four model
shapes (tf/sota/*.sh: wt103 adaptive with div_val 4 and shared
projections, lm1b adaptive with untied projections and proj_same_dim
false, enwik8 and text8 character-level with one shared pair of r biases)
and one more (div_val 1 with clusters and d_embed != d_model), the files
tf/sota/download.sh fetches: model/checkpoint, model/model.ckpt-N.index and
.data-* (tf_bundle_writer.py), data/corpus-info.json and data/cache.pkl
(py2_pickle.py). Variables are named and shaped as tf/model.py creates
them with train_gpu.py's flags, with Adam's slots and global_step beside
them. The expected log-probabilities come from ref_forward below, which
follows tf/model.py's computation step by step (kimiyoung/transformer-xl
at 44781ed): mask_adaptive_embedding_lookup, _create_mask, rel_shift by
pad and reshape, LayerNorm with epsilon 1e-12, _cache_mem, memories that
start as mem_len rows of zeros (train_gpu.py's np.zeros), and
mask_adaptive_logsoftmax's head and tails."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py2_pickle as pk  # noqa: E402
import tf_bundle_writer as tfw  # noqa: E402

SHAPES = {
    "wt103": dict(dataset="wt103", n_layer=2, d_model=64, d_embed=64, n_head=2, d_head=16, d_inner=48, div_val=4,
                  cutoffs=[20, 40, 100], n_token=160, untie_r=True, share=True, same_dim=True, shards=3, block=256,
                  step=0),
    "lm1b": dict(dataset="lm1b", n_layer=2, d_model=64, d_embed=64, n_head=4, d_head=8, d_inner=40, div_val=4,
                 cutoffs=[30, 60, 120], n_token=170, untie_r=True, share=False, same_dim=False, shards=2, block=512,
                 step=1191000),
    "enwik8": dict(dataset="enwik8", n_layer=2, d_model=32, d_embed=32, n_head=2, d_head=16, d_inner=40, div_val=1,
                   cutoffs=[], n_token=204, untie_r=False, share=False, same_dim=True, shards=1, block=4096, step=0),
    "text8": dict(dataset="text8", n_layer=3, d_model=32, d_embed=32, n_head=4, d_head=8, d_inner=48, div_val=1,
                  cutoffs=[], n_token=27, untie_r=False, share=False, same_dim=True, shards=2, block=300, step=0,
                  dtypes=True),
    "div1proj": dict(dataset="wt103", n_layer=2, d_model=32, d_embed=24, n_head=2, d_head=16, d_inner=40, div_val=1,
                     cutoffs=[30], n_token=60, untie_r=True, share=True, same_dim=True, shards=1, block=400, step=5),
}

P = "transformer/"


def clusters(s):
    ends = [0] + s["cutoffs"] + [s["n_token"]]
    return [(ends[i], ends[i + 1], s["d_embed"] // (s["div_val"] ** i)) for i in range(len(ends) - 1)]


def tie_projs(s):
    return [False] + [s["share"]] * len(s["cutoffs"])


def has_emb_proj(s, dc):
    if s["div_val"] == 1:
        return s["d_model"] != s["d_embed"]
    return not (s["d_model"] == dc and not s["same_dim"])


def has_out_proj(s, i, dc):
    if tie_projs(s)[i] or not s["cutoffs"]:
        return False
    return not ((s["div_val"] == 1 or not s["same_dim"]) and s["d_model"] == dc)


def variables(s, rng):
    """tf/model.py's trainable variables for the shape s, as float32."""
    d, H, dh, di, L = s["d_model"], s["n_head"], s["d_head"], s["d_inner"], s["n_layer"]
    v = {}

    def w(name, *shape, scale=None):
        v[name] = (rng.standard_normal(shape) * (scale if scale is not None else shape[0] ** -0.5)).astype(np.float32)

    rshape = (L, H, dh) if s["untie_r"] else (H, dh)
    w(P + "r_w_bias", *rshape, scale=0.1)
    w(P + "r_r_bias", *rshape, scale=0.1)
    cl = clusters(s)
    if s["div_val"] == 1:
        w(P + "adaptive_embed/lookup_table", s["n_token"], s["d_embed"], scale=s["d_embed"] ** -0.5)
        if has_emb_proj(s, s["d_embed"]):
            w(P + "adaptive_embed/proj_W", s["d_embed"], d)
    else:
        for i, (a, b, dc) in enumerate(cl):
            w(P + "adaptive_embed/cutoff_%d/lookup_table" % i, b - a, dc, scale=dc ** -0.5)
            if has_emb_proj(s, dc):
                w(P + "adaptive_embed/cutoff_%d/proj_W" % i, dc, d)
    for n in range(L):
        pre = P + "layer_%d/" % n
        w(pre + "rel_attn/qkv/kernel", d, 3 * H * dh)
        w(pre + "rel_attn/r/kernel", d, H * dh)
        w(pre + "rel_attn/o/kernel", H * dh, d)
        for ln in ("rel_attn/LayerNorm/", "ff/LayerNorm/"):
            v[pre + ln + "gamma"] = (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)
            w(pre + ln + "beta", d, scale=0.1)
        w(pre + "ff/layer_1/kernel", d, di)
        w(pre + "ff/layer_1/bias", di, scale=0.1)
        w(pre + "ff/layer_2/kernel", di, d)
        w(pre + "ff/layer_2/bias", d, scale=0.1)
    if not s["cutoffs"]:
        w(P + "adaptive_softmax/bias", s["n_token"], scale=0.3)
    for i, (a, b, dc) in enumerate(cl if s["cutoffs"] else []):
        w(P + "adaptive_softmax/cutoff_%d/b" % i, b - a, scale=0.3)
        if has_out_proj(s, i, dc):
            w(P + "adaptive_softmax/cutoff_%d/proj" % i, dc, d)
        if i == 0:  # tf/model.py initialises these to zeros; scaled up so that a wrong cluster order shows
            w(P + "adaptive_softmax/cutoff_0/cluster_W", len(s["cutoffs"]), s["d_embed"], scale=0.5)
            w(P + "adaptive_softmax/cutoff_0/cluster_b", len(s["cutoffs"]), scale=1.0)
    return v


def stored(s, v):
    """What the bundle holds: the variables (some in other float types when
    the shape asks: half, bfloat16, double, each read back as the reference
    sees it), Adam's two slots (for some variables: the files stay small),
    its beta powers and global_step."""
    out, used = {}, {}
    for k, a in v.items():
        if s.get("dtypes") and k.endswith("LayerNorm/beta"):
            out[k] = a.astype(np.float64)
        elif s.get("dtypes") and k.endswith("ff/layer_1/bias"):
            out[k] = a.astype(np.float16)
        elif s.get("dtypes") and k.endswith("qkv/kernel"):
            bits = (a.view(np.uint32) + 0x8000) >> 16  # rounded to bfloat16
            out[k] = ("bfloat16", bits.astype(np.uint16))
            a = (bits.astype(np.uint32) << 16).view(np.float32)
        else:
            out[k] = a
        used[k] = np.asarray(out[k][1].astype(np.uint32) << 16).view(np.float32) if isinstance(out[k], tuple) \
            else np.asarray(out[k], dtype=np.float64)
        if "LayerNorm" in k or "r_w_bias" in k or k.endswith("/b"):  # a few suffice to check they are skipped
            out[k + "/Adam"] = np.full(a.shape, 0.5, np.float32)
            out[k + "/Adam_1"] = np.full(a.shape, 0.25, np.float32)
    out["global_step"] = np.array(s["step"], np.int64)
    out["beta1_power"] = np.array(0.9, np.float32)
    out["beta2_power"] = np.array(0.999, np.float32)
    return out, {k: np.asarray(x, np.float64) for k, x in used.items()}


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    var = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(var + 1e-12) * g + b  # tf.contrib.layers.layer_norm's epsilon


def rel_shift(x):
    """tf/model.py's rel_shift on [qlen, klen, bsz, n_head]."""
    q, k, b, n = x.shape
    x = np.pad(x, [[0, 0], [1, 0], [0, 0], [0, 0]])
    x = x.reshape(k + 1, q, b, n)[1:]
    return x.reshape(q, k, b, n)


def create_mask(qlen, mlen, same_length):
    m = np.ones((qlen, qlen))
    mask_u, mask_dia = np.triu(m), np.diag(np.diag(m))
    ret = np.concatenate([np.zeros((qlen, mlen)), mask_u - mask_dia], 1)
    if same_length:
        mask_l = np.tril(m)
        ret = np.concatenate([ret[:, :qlen] + mask_l - mask_dia, ret[:, qlen:]], 1)
    return ret


def rel_attn(V, pre, w, r, rwb, rrb, mask, mem, s):
    H, dh = s["n_head"], s["d_head"]
    qlen = w.shape[0]
    cat = np.concatenate([mem, w], 0)
    heads = cat @ V[pre + "qkv/kernel"]
    r_k = (r @ V[pre + "r/kernel"]).reshape(r.shape[0], H, dh)
    q, k, v = np.split(heads, 3, -1)
    q = q[-qlen:].reshape(qlen, 1, H, dh)
    k = k.reshape(-1, 1, H, dh)
    v = v.reshape(-1, 1, H, dh)
    ac = np.einsum("ibnd,jbnd->ijbn", q + rwb, k)
    bd = rel_shift(np.einsum("ibnd,jnd->ijbn", q + rrb, r_k))
    score = (ac + bd) / dh ** 0.5
    m = mask[:, :, None, None]
    score = score * (1 - m) - 1e30 * m
    score = score - score.max(1, keepdims=True)
    prob = np.exp(score)
    prob /= prob.sum(1, keepdims=True)
    vec = np.einsum("ijbn,jbnd->ibnd", prob, v).reshape(qlen, H * dh)
    return layer_norm(vec @ V[pre + "o/kernel"] + w, V[pre + "LayerNorm/gamma"], V[pre + "LayerNorm/beta"])


def ff(V, pre, x):
    h = np.maximum(x @ V[pre + "layer_1/kernel"] + V[pre + "layer_1/bias"], 0)
    return layer_norm(h @ V[pre + "layer_2/kernel"] + V[pre + "layer_2/bias"] + x, V[pre + "LayerNorm/gamma"],
                      V[pre + "LayerNorm/beta"])


def embed(V, s, x):
    """mask_adaptive_embedding_lookup (train_gpu.py runs with use_tpu False)."""
    if s["div_val"] == 1:
        y = V[P + "adaptive_embed/lookup_table"][x]
        if P + "adaptive_embed/proj_W" in V:
            y = y @ V[P + "adaptive_embed/proj_W"]
    else:
        y = np.zeros((len(x), s["d_model"]))
        for i, (a, b, dc) in enumerate(clusters(s)):
            sel = (x >= a) & (x < b)
            cur = V[P + "adaptive_embed/cutoff_%d/lookup_table" % i][x[sel] - a]
            pw = V.get(P + "adaptive_embed/cutoff_%d/proj_W" % i)
            y[sel] = cur @ pw if pw is not None else cur
    return y * s["d_model"] ** 0.5


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def out_proj(V, s, i):
    """mask_adaptive_logsoftmax's cur_proj for cluster i, or None."""
    if not s["cutoffs"] or tie_projs(s)[i]:
        return V.get(P + "adaptive_embed/proj_W" if s["div_val"] == 1 else P + "adaptive_embed/cutoff_%d/proj_W" % i)
    return V.get(P + "adaptive_softmax/cutoff_%d/proj" % i)


def logit(x, W, b, proj):
    y = x if proj is None else np.einsum("id,ed->ie", x, proj)
    return y @ W.T + b


def logprobs(V, s, hid):
    """Every token's log-probability: the head's for the shortlist, head
    column cutoff_ends[1] + i - 1 plus the tail's for cluster i."""
    table = (lambda a, b, i: V[P + "adaptive_embed/lookup_table"][a:b]) if s["div_val"] == 1 else \
        (lambda a, b, i: V[P + "adaptive_embed/cutoff_%d/lookup_table" % i])
    if not s["cutoffs"]:
        return log_softmax(logit(hid, V[P + "adaptive_embed/lookup_table"], V[P + "adaptive_softmax/bias"],
                                 out_proj(V, s, 0)))
    cl = clusters(s)
    out = np.zeros((hid.shape[0], s["n_token"]))
    head = None
    for i, (a, b, dc) in enumerate(cl):
        W, bias = table(a, b, i), V[P + "adaptive_softmax/cutoff_%d/b" % i]
        if i == 0:
            W = np.concatenate([W, V[P + "adaptive_softmax/cutoff_0/cluster_W"]], 0)
            bias = np.concatenate([bias, V[P + "adaptive_softmax/cutoff_0/cluster_b"]], 0)
            head = log_softmax(logit(hid, W, bias, out_proj(V, s, 0)))
            out[:, a:b] = head[:, :b - a]
        else:
            tail = log_softmax(logit(hid, W, bias, out_proj(V, s, i)))
            out[:, a:b] = head[:, cl[1][0] + i - 1][:, None] + tail
    return out


def ref_forward(V, s, tokens, segments, mem_len, clamp_len, same_length=True):
    """train_gpu.py's evaluation of one stream: memories start as zeros."""
    d = s["d_model"]
    mems = [np.zeros((mem_len, d)) for _ in range(s["n_layer"])]
    res, at = [], 0
    for n in segments:
        x = np.asarray(tokens[at:at + n])
        at += n
        out = embed(V, s, x)
        qlen, mlen = n, mem_len
        klen = qlen + mlen
        mask = create_mask(qlen, mlen, same_length)
        pos_seq = np.arange(klen - 1, -1, -1.0)
        if clamp_len > 0:
            pos_seq = np.minimum(pos_seq, clamp_len)
        inv_freq = 1 / (10000 ** (np.arange(0, d, 2.0) / d))
        sin_inp = np.einsum("i,j->ij", pos_seq, inv_freq)
        pos_emb = np.concatenate([np.sin(sin_inp), np.cos(sin_inp)], -1)
        new_mems = []
        for i in range(s["n_layer"]):
            new_mems.append(np.concatenate([mems[i], out], 0)[-mem_len:] if mem_len else mems[i])
            pre = P + "layer_%d/" % i
            rwb = V[P + "r_w_bias"][i] if s["untie_r"] else V[P + "r_w_bias"]
            rrb = V[P + "r_r_bias"][i] if s["untie_r"] else V[P + "r_r_bias"]
            out = rel_attn(V, pre + "rel_attn/", out, pos_emb, rwb, rrb, mask, mems[i], s)
            out = ff(V, pre + "ff/", out)
        mems = new_mems
        res.append(logprobs(V, s, out))
    return np.concatenate(res, 0).astype(np.float32)


WORDS = ["the", "of", "and", "in", "to", "a", "was", "is", "for", "on", "as", "by", "with", "he", "at", "from", "his",
         "an", "were", "are", "which", "it", "that", "be", "first", "this", "also", "had", "after", "its", "not", "or"]


def symbols(s, rng):
    """The corpus's vocabulary as its tf/vocabulary.py Vocab builds it."""
    n = s["n_token"]
    if s["dataset"] == "enwik8":  # prep_enwik8.py: bytes as decimal numbers, ranked by count
        byte_vals = [10, 32, 101, 116, 97, 111, 105, 110] + [b for b in range(256) if b not in (10, 32, 101, 116, 97, 111,
                                                                                                  105, 110)]
        return [str(b) for b in byte_vals[:n]]
    if s["dataset"] == "text8":  # prep_text8.py: characters, '_' for the space
        return ["_"] + list("etaoinshrdlcumwfgypbvkjxqz")
    words = WORDS + ["w%d" % i for i in range(n)]
    if s["dataset"] == "lm1b":  # 1b_word_vocab.txt begins <S>, </S>, <UNK>
        return ["<S>", "</S>", "<UNK>"] + words[:n - 3]
    return ["<eos>"] + words[:n - 2] + ["<unk>"]


def vocab_record(s, syms):
    attrs = {"counter": pk.Counter2({x: 100 - i for i, x in enumerate(syms[:40])}), "special": [],
             "min_freq": 0, "max_size": None, "lower_case": True, "delimiter": None, "vocab_file": None,
             "idx2sym": syms, "sym2idx": pk.OrderedDict2([(x, i) for i, x in enumerate(syms)])}
    if s["dataset"] == "wt103":
        attrs.update(special=["<eos>"], lower_case=False, eos_idx=0)
    if s["dataset"] == "lm1b":
        attrs.update(lower_case=False, vocab_file="../data/lm1b/1b_word_vocab.txt", unk_idx=2)
    return pk.Obj("vocabulary", "Vocab", attrs)


def corpus_record(s, syms, rng):
    ids = lambda k: pk.Array(rng.integers(0, len(syms), k))  # noqa: E731
    attrs = {"dataset": s["dataset"], "vocab": vocab_record(s, syms), "valid": ids(50), "test": ids(60),
             "cutoffs": [0] + s["cutoffs"] + [s["n_token"]] if s["cutoffs"] else []}
    if s["dataset"] != "lm1b":  # lm1b's training shards are encoded when the records are made, not cached
        attrs["train"] = ids(300)
    return pk.Obj("data_utils", "Corpus", attrs)


def write_model(root, name, s, rng):
    os.makedirs(os.path.join(root, "model"), exist_ok=True)
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    V = variables(s, rng)
    tensors, used = stored(s, V)
    ckpt = "model.ckpt-%d" % s["step"]
    stats = {}
    tfw.write_bundle(os.path.join(root, "model", ckpt), tensors, s["shards"], s["block"], stats=stats)
    # several data blocks (the index block lists them), snappy kept for some: the forms a real .index takes
    assert stats["blocks"] >= 3 and stats["snappy"] >= 1, (name, stats)
    print("%s: %d blocks, %d snappy" % (name, stats["blocks"], stats["snappy"]))
    with open(os.path.join(root, "model", "checkpoint"), "w") as f:
        # the authors' file names the path on the machine that saved it
        f.write('model_checkpoint_path: "/home/xl/EXP-%s/%s"\nall_model_checkpoint_paths: "/home/xl/EXP-%s/%s"\n'
                % (name, ckpt, name, ckpt))
    syms = symbols(s, rng)
    assert len(syms) == s["n_token"]
    with open(os.path.join(root, "data", "cache.pkl"), "wb") as f:
        f.write(pk.dumps(corpus_record(s, syms, rng)))
    info = {"vocab_size": s["n_token"], "cutoffs": [0] + s["cutoffs"] + [s["n_token"]] if s["cutoffs"] else [],
            "dataset": s["dataset"]}
    with open(os.path.join(root, "data", "corpus-info.json"), "w") as f:
        json.dump(info, f)
    return used, ckpt


def tokens_for(s, rng, n):
    """Tokens from every cluster (the tails' first and last ids too)."""
    t = list(rng.integers(0, s["n_token"], n))
    for i, (a, b, dc) in enumerate(clusters(s)):
        t[(3 * i + 1) % n], t[(3 * i + 2) % n] = a, b - 1
    return [int(x) for x in t]


# name, how txlm-pack is pointed at it (top folder, model folder, prefix,
# .index), the session's mem_len and clamp_len (0: the model's, the paper's
# from tf/sota/<dataset>.sh), segments
CASES = [
    ("wt103", ".", 8, 6, [5, 7, 6, 6]),
    ("wt103", ".", 0, 0, [6, 6, 6, 6]),
    ("lm1b", "model", 0, 0, [5, 7, 6, 6]),
    ("lm1b", "model", 6, 4, [4, 4, 4, 4, 4]),
    ("enwik8", "model/model.ckpt-0", 0, 0, [8, 8, 8]),
    ("enwik8", "model/model.ckpt-0", 10, -1, [5, 7, 6, 6]),
    ("text8", "model/model.ckpt-0.index", 9, 5, [5, 7, 6, 6]),
    ("div1proj", ".", 7, 0, [6, 6, 6, 6]),
]
PAPER = {"wt103": (1600, 1000), "lm1b": (128, -1), "enwik8": (3800, 1000), "text8": (3800, 1000)}


def write_bad(out, rng):
    """Hostile and inconsistent bundles of the text8 shape (d_model 8: the
    files stay small), one folder each (bad/NAME/model.ckpt-0), for the
    refusals test_tf_bad checks."""
    s = dict(SHAPES["text8"], d_model=8, d_embed=8, n_head=2, d_head=4, d_inner=8, n_layer=2)
    base = {k: v for k, v in stored(s, variables(s, rng))[0].items()}
    ln = P + "layer_1/ff/LayerNorm/beta"
    varint11 = b"\xff" * 10 + b"\x01"

    def hook(target, fn):
        return lambda name, proto: fn(proto) if name == target else proto

    cases = {
        "shape": (dict(base, **{ln: np.zeros(s["d_model"] + 1, np.float32)}), None, None),
        "missing": ({k: v for k, v in base.items() if k != ln}, None, None),
        "unknown": (dict(base, **{P + "layer_0/ff/extra": np.zeros(3, np.float32)}), None, None),
        "sliced": (base, hook(ln, lambda p: p + tfw.field_bytes(7, b"")), None),
        # a slice's own entry, as saved_tensor_slice_util.cc keys it: the number 0, the name as OrderedCode
        # writes a string (ended by 00 01), the rank (1) and the extent (start 0, length 8)
        "slice_key": ({**base, b"\x00" + ln.encode() + b"\x00\x01\x01\x01\x80\x88": np.zeros(8, np.float32)},
                      None, None),
        "varint": (base, hook(ln, lambda p: p + b"\x10" + varint11), None),
        "shard": (base, hook(ln, lambda p: p + tfw.field_varint(3, -1)), None),
        "dtype": (dict(base, **{ln: np.zeros(s["d_model"], np.int32)}), None, None),
        "restarts": (base, None, lambda raw: raw[:-4] + b"\xff\xff\xff\x7f" if len(raw) > 40 else raw),
    }
    # keys out of order (a table builder refuses to write them; a reader that
    # looks names up by binary search must refuse to read them): the second
    # and third entries swapped, in the first block
    orders = {"unsorted": lambda names: names[:1] + [names[2], names[1]] + names[3:]}
    cases["unsorted"] = (base, None, None)
    for name, (tensors, entry_hook, mutate) in cases.items():
        d = os.path.join(out, "bad", name)
        os.makedirs(d, exist_ok=True)
        tfw.write_bundle(os.path.join(d, "model.ckpt-0"), tensors, 1, 200, entry_hook=entry_hook, mutate=mutate,
                         order=orders.get(name))


def main(out):
    rng = np.random.default_rng(20181)
    manifest = []
    used = {}
    for name, s in SHAPES.items():
        used[name] = write_model(os.path.join(out, name), name, s, rng)[0]
    for k, (name, path, mem, clamp, segs) in enumerate(CASES):
        s = SHAPES[name]
        paper_mem, paper_clamp = PAPER[s["dataset"]]
        toks = tokens_for(s, rng, sum(segs))
        lp = ref_forward(used[name], s, toks, segs, mem or paper_mem, clamp or paper_clamp)
        expect = "%s_%d.f32" % (name, k)
        lp.tofile(os.path.join(out, expect))
        manifest.append({"name": "%s (%s, mem_len %d, clamp_len %d)" % (name, path, mem or paper_mem, clamp or paper_clamp),
                         "path": os.path.join(name, path), "n_token": s["n_token"], "tokens": toks, "segments": segs,
                         "mem_len": mem, "clamp_len": clamp, "expect": expect, "dataset": s["dataset"]})
    write_bad(out, rng)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"cases": manifest}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
