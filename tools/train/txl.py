"""Transformer-XL in PyTorch, written from docs/transformer-xl-inference.md.

Parameters carry the HuggingFace tensor names, so a checkpoint directory
(config.json + model.safetensors or pytorch_model.bin) loads directly and a
trained model saves in the form txlm-pack reads. The same module trains
(dropout, batches of parallel streams) and scores (fp32, batch 1 and up).
"""
import json
import math
import os
import struct
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

# Hyper-parameters with their defaults when config.json omits them.
DEFAULTS = {
    "d_embed": None, "div_val": 1, "cutoffs": [], "tie_weight": True, "tie_projs": None,
    "pre_lnorm": False, "untie_r": True, "same_length": False, "clamp_len": -1,
    "mem_len": 0, "tgt_len": 0, "layer_norm_epsilon": 1e-5, "dropout": 0.0, "dropatt": 0.0,
    # How the codes that wrote checkpoints differ (docs/tensors.md): the head column of tail
    # cluster i ("forward": cutoffs[0] + i - 1, HF and the authors' TF code; "reverse": -i, the
    # authors' and NVIDIA's PyTorch codes), same_length's bound (1: NVIDIA's klen - mem_len - 1)
    # and HF's start from mem_len rows of zeros instead of an empty memory.
    "cluster_order": "forward", "same_length_rule": 0, "zero_memory": False,
}


def full_config(cfg):
    c = dict(DEFAULTS)
    c.update(cfg)
    if "n_token" not in c:
        c["n_token"] = c["vocab_size"]
    if c["d_embed"] is None:
        c["d_embed"] = c["d_model"]
    if c["tie_projs"] is None:
        c["tie_projs"] = [False] + [True] * len(c["cutoffs"])
    return c


class TransfoXL(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = self.cfg = full_config(cfg)
        self.ends = [0] + list(c["cutoffs"]) + [c["n_token"]]
        self.n_clusters = len(c["cutoffs"])
        self.params = torch.nn.ParameterList()
        self.names = {}  # HF name -> index in self.params (tied names share one index)
        d, de, dv, H, dh = c["d_model"], c["d_embed"], c["div_val"], c["n_head"], c["d_head"]

        for ci in range(self.n_clusters + 1):
            de_c = de // dv ** ci
            if dv == 1 and ci > 0:
                break
            rows = c["n_token"] if dv == 1 else self.ends[ci + 1] - self.ends[ci]
            self._new(f"transformer.word_emb.emb_layers.{ci}.weight", rows, de_c)
            if dv > 1 or d != de:
                self._new(f"transformer.word_emb.emb_projs.{ci}", d, de_c)
        if not c["untie_r"]:
            self._new("transformer.r_w_bias", H, dh)
            self._new("transformer.r_r_bias", H, dh)
        for n in range(c["n_layer"]):
            p = f"transformer.layers.{n}."
            self._new(p + "dec_attn.qkv_net.weight", 3 * H * dh, d)
            self._new(p + "dec_attn.r_net.weight", H * dh, d)
            self._new(p + "dec_attn.o_net.weight", d, H * dh)
            self._new(p + "dec_attn.layer_norm.weight", d, init="ones")
            self._new(p + "dec_attn.layer_norm.bias", d, init="zeros")
            if c["untie_r"]:
                self._new(p + "dec_attn.r_w_bias", H, dh)
                self._new(p + "dec_attn.r_r_bias", H, dh)
            self._new(p + "pos_ff.CoreNet.0.weight", c["d_inner"], d)
            self._new(p + "pos_ff.CoreNet.0.bias", c["d_inner"], init="zeros")
            self._new(p + "pos_ff.CoreNet.3.weight", d, c["d_inner"])
            self._new(p + "pos_ff.CoreNet.3.bias", d, init="zeros")
            self._new(p + "pos_ff.layer_norm.weight", d, init="ones")
            self._new(p + "pos_ff.layer_norm.bias", d, init="zeros")

        if self.n_clusters:
            self._new("crit.cluster_weight", self.n_clusters, de)
            self._new("crit.cluster_bias", self.n_clusters, init="zeros")
        for ci in range(self.n_clusters + 1):
            if dv == 1:
                if ci == 0:
                    w = "crit.out_layers.0.weight"
                    if c["tie_weight"]:
                        self._tie(w, "transformer.word_emb.emb_layers.0.weight")
                    else:
                        self._new(w, c["n_token"], de)
                    self._new("crit.out_layers.0.bias", c["n_token"], init="zeros")
                if d != de:
                    pname = f"crit.out_projs.{ci}"
                    if c["tie_projs"][ci]:
                        self._tie(pname, "transformer.word_emb.emb_projs.0")
                    else:
                        self._new(pname, d, de)
            else:
                rows = self.ends[ci + 1] - self.ends[ci]
                w = f"crit.out_layers.{ci}.weight"
                if c["tie_weight"]:
                    self._tie(w, f"transformer.word_emb.emb_layers.{ci}.weight")
                else:
                    self._new(w, rows, de // dv ** ci)
                self._new(f"crit.out_layers.{ci}.bias", rows, init="zeros")
                pname = f"crit.out_projs.{ci}"
                if c["tie_projs"][ci]:
                    self._tie(pname, f"transformer.word_emb.emb_projs.{ci}")
                else:
                    self._new(pname, d, de // dv ** ci)

        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        self.register_buffer("inv_freq", inv_freq.float(), persistent=False)

    # --- parameters -------------------------------------------------------
    def _new(self, name, *shape, init="normal"):
        t = torch.empty(*shape)
        if init == "ones":
            torch.nn.init.ones_(t)
        elif init == "zeros":
            torch.nn.init.zeros_(t)
        else:
            torch.nn.init.normal_(t, 0.0, 0.02)
        self.names[name] = len(self.params)
        self.params.append(torch.nn.Parameter(t))

    def _tie(self, name, target):
        self.names[name] = self.names[target]

    def w(self, name):
        return self.params[self.names[name]]

    def has(self, name):
        return name in self.names

    def tensors(self):
        """HF name -> tensor, each parameter once (tied names left out)."""
        seen, out = set(), {}
        for name, i in self.names.items():
            if i not in seen:
                seen.add(i)
                out[name] = self.params[i].detach()
        return out

    def load_tensors(self, tensors):
        """Copies weights in; a tied name may be absent (it is its target)."""
        by_index = {}
        for name, i in self.names.items():
            if name in tensors:
                by_index.setdefault(i, (name, tensors[name]))
        for name, i in self.names.items():
            if i not in by_index:
                raise KeyError(f"checkpoint lacks tensor {name}")
        with torch.no_grad():
            for i, (name, t) in by_index.items():
                p = self.params[i]
                if tuple(t.shape) != tuple(p.shape):
                    raise ValueError(f"{name}: shape {tuple(t.shape)}, expected {tuple(p.shape)}")
                p.copy_(t.to(p.dtype))

    # --- computation --------------------------------------------------------
    def embed(self, tokens):
        c = self.cfg
        d, dv = c["d_model"], c["div_val"]
        if dv == 1:
            x = F.embedding(tokens, self.w("transformer.word_emb.emb_layers.0.weight"))
            if self.has("transformer.word_emb.emb_projs.0"):
                x = F.linear(x, self.w("transformer.word_emb.emb_projs.0"))
        else:
            x = torch.zeros(*tokens.shape, d, dtype=self.params[0].dtype, device=tokens.device)
            for ci in range(self.n_clusters + 1):
                lo, hi = self.ends[ci], self.ends[ci + 1]
                sel = (tokens >= lo) & (tokens < hi)
                if sel.any():
                    e = F.embedding(tokens[sel] - lo, self.w(f"transformer.word_emb.emb_layers.{ci}.weight"))
                    x[sel] = F.linear(e, self.w(f"transformer.word_emb.emb_projs.{ci}")).to(x.dtype)
        return x * math.sqrt(d)

    def _mask(self, qlen, mlen, device):
        """True where key j is hidden from query i."""
        c = self.cfg
        klen = mlen + qlen
        i = torch.arange(qlen, device=device)[:, None]
        j = torch.arange(klen, device=device)[None, :]
        m = j > mlen + i
        if c["same_length"]:
            mask_len = klen - c["mem_len"] - c["same_length_rule"]
            shift = qlen - mask_len if mask_len > 0 else qlen
            m = m | (j <= i - shift)
        return m

    def _pos_emb(self, klen, device):
        pos = torch.arange(klen - 1, -1, -1, device=device, dtype=torch.float32)
        if self.cfg["clamp_len"] > 0:
            pos = pos.clamp(max=self.cfg["clamp_len"])
        s = pos[:, None] * self.inv_freq[None, :]
        return torch.cat([s.sin(), s.cos()], dim=-1)

    def _layer_norm(self, x, prefix):
        return F.layer_norm(x, x.shape[-1:], self.w(prefix + ".weight"), self.w(prefix + ".bias"),
                            self.cfg["layer_norm_epsilon"])

    def _layer(self, n, h, m, R, mask, shift_idx):
        c = self.cfg
        H, dh = c["n_head"], c["d_head"]
        p = f"transformer.layers.{n}."
        B, qlen, d = h.shape
        cat = torch.cat([m, h], dim=1) if m is not None and m.shape[1] else h
        klen = cat.shape[1]
        ci = self._layer_norm(cat, p + "dec_attn.layer_norm") if c["pre_lnorm"] else cat
        qkv = F.linear(ci, self.w(p + "dec_attn.qkv_net.weight"))
        q, k, v = qkv.chunk(3, dim=-1)
        q = q[:, -qlen:].view(B, qlen, H, dh)
        k = k.view(B, klen, H, dh)
        v = v.view(B, klen, H, dh)
        rk = F.linear(R, self.w(p + "dec_attn.r_net.weight")).view(klen, H, dh)
        if c["untie_r"]:
            rwb, rrb = self.w(p + "dec_attn.r_w_bias"), self.w(p + "dec_attn.r_r_bias")
        else:
            rwb, rrb = self.w("transformer.r_w_bias"), self.w("transformer.r_r_bias")
        ac = torch.einsum("bihd,bjhd->bhij", q + rwb, k)
        bd_raw = torch.einsum("bihd,jhd->bhij", q + rrb, rk)
        # rel-shift: score (i, j) uses rk row j + qlen - 1 - i (clamped where masked)
        bd = bd_raw.gather(3, shift_idx.expand(B, H, qlen, klen))
        s = (ac + bd) * (1.0 / math.sqrt(dh))
        s = s.masked_fill(mask, torch.finfo(s.dtype).min)
        prob = torch.softmax(s, dim=-1)
        prob = F.dropout(prob, c["dropatt"], self.training)
        att = torch.einsum("bhij,bjhd->bihd", prob, v).reshape(B, qlen, H * dh)
        o = F.dropout(F.linear(att, self.w(p + "dec_attn.o_net.weight")), c["dropout"], self.training)
        if c["pre_lnorm"]:
            a = h + o
            x = self._layer_norm(a, p + "pos_ff.layer_norm")
        else:
            a = self._layer_norm(h + o, p + "dec_attn.layer_norm")
            x = a
        f = F.relu(F.linear(x, self.w(p + "pos_ff.CoreNet.0.weight"), self.w(p + "pos_ff.CoreNet.0.bias")))
        f = F.dropout(f, c["dropout"], self.training)
        f = F.linear(f, self.w(p + "pos_ff.CoreNet.3.weight"), self.w(p + "pos_ff.CoreNet.3.bias"))
        f = F.dropout(f, c["dropout"], self.training)
        return a + f if c["pre_lnorm"] else self._layer_norm(a + f, p + "pos_ff.layer_norm")

    def hidden(self, tokens, mems=None):
        """tokens [B, qlen] -> (final hidden [B, qlen, d], new mems: n_layer x [B, <=mem_len, d])."""
        c = self.cfg
        B, qlen = tokens.shape
        if not mems and c["zero_memory"] and c["mem_len"] > 0:
            z = torch.zeros(B, c["mem_len"], c["d_model"], dtype=self.params[0].dtype, device=tokens.device)
            mems = [z] * c["n_layer"]
        mlen = mems[0].shape[1] if mems else 0
        klen = mlen + qlen
        dev = tokens.device
        mask = self._mask(qlen, mlen, dev)
        R = F.dropout(self._pos_emb(klen, dev), c["dropout"], self.training)
        i = torch.arange(qlen, device=dev)[:, None]
        j = torch.arange(klen, device=dev)[None, :]
        shift_idx = (j + qlen - 1 - i).clamp(max=klen - 1)
        h = F.dropout(self.embed(tokens), c["dropout"], self.training)
        new_mems = []
        for n in range(c["n_layer"]):
            m = mems[n] if mems else None
            cat = torch.cat([m, h], dim=1) if m is not None else h
            new_mems.append(cat[:, max(0, klen - c["mem_len"]):].detach())
            h = self._layer(n, h, m, R, mask, shift_idx)
        return F.dropout(h, c["dropout"], self.training), new_mems

    def _logits(self, z, ci):
        """logits of cluster ci (its own ids only, no head entries)."""
        c = self.cfg
        if c["div_val"] == 1:
            lo, hi = self.ends[ci], self.ends[ci + 1]
            w = self.w("crit.out_layers.0.weight")[lo:hi]
            b = self.w("crit.out_layers.0.bias")[lo:hi]
        else:
            w = self.w(f"crit.out_layers.{ci}.weight")
            b = self.w(f"crit.out_layers.{ci}.bias")
        proj = f"crit.out_projs.{ci}"
        if self.has(proj):
            z = z @ self.w(proj)
        return F.linear(z, w, b), z

    def log_probs(self, z):
        """Final hidden [..., d] -> log-probabilities [..., n_token]."""
        if not self.n_clusters:
            return torch.log_softmax(self._logits(z, 0)[0], dim=-1)
        head, zp = self._logits(z, 0)
        head = torch.cat([head, F.linear(zp, self.w("crit.cluster_weight"), self.w("crit.cluster_bias"))], dim=-1)
        head_lp = torch.log_softmax(head, dim=-1)
        short = self.cfg["cutoffs"][0]
        parts = [head_lp[..., :short]]
        for ci in range(1, self.n_clusters + 1):
            tail = torch.log_softmax(self._logits(z, ci)[0], dim=-1)
            col = short + ci - 1 if self.cfg["cluster_order"] == "forward" else short + self.n_clusters - ci
            parts.append(head_lp[..., col:col + 1] + tail)
        return torch.cat(parts, dim=-1)

    def forward(self, tokens, mems=None, targets=None):
        """tokens [B, qlen] (or [qlen]) -> (log-probs [B, qlen, n_token], or -log p(targets)
        [B, qlen] when targets are given; new mems). mems None or [] starts a new session."""
        squeeze = tokens.dim() == 1
        if squeeze:
            tokens = tokens[None]
            targets = targets[None] if targets is not None else None
        z, new_mems = self.hidden(tokens, mems or None)
        lp = self.log_probs(z)
        out = lp if targets is None else -lp.gather(-1, targets[..., None])[..., 0]
        return (out[0] if squeeze else out), new_mems


# --- checkpoint files --------------------------------------------------------
ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "BF16": None}


def read_safetensors(path):
    """safetensors: u64 header length, JSON header, then raw little-endian data."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: too short for a safetensors header")
    (hlen,) = struct.unpack("<Q", raw[:8])
    if 8 + hlen > len(raw):
        raise ValueError(f"{path}: header length {hlen} runs past the end ({len(raw)} bytes)")
    header = json.loads(raw[8:8 + hlen].decode("utf-8"))
    body = memoryview(raw)[8 + hlen:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        if not 0 <= a <= b <= len(body):
            raise ValueError(f"{path}: tensor {name}: offsets {a}..{b} outside the {len(body)}-byte data")
        dt = info["dtype"]
        if dt == "BF16":
            u = np.frombuffer(body[a:b], dtype="<u2").astype(np.uint32) << 16
            arr = u.view(np.float32)
        elif dt in ST_DTYPES:
            arr = np.frombuffer(body[a:b], dtype=np.dtype(ST_DTYPES[dt]).newbyteorder("<"))
        else:
            raise ValueError(f"{path}: tensor {name}: dtype {dt} not supported")
        shape = info["shape"]
        if arr.size != int(np.prod(shape)):
            raise ValueError(f"{path}: tensor {name}: {arr.size} values for shape {shape}")
        out[name] = torch.from_numpy(arr.astype(np.float32).reshape(shape))
    return out


def write_safetensors(path, tensors):
    """float32 tensors, names sorted, offsets contiguous (as the format requires)."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = tensors[name].detach().cpu().float().contiguous().numpy().astype("<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)

    def write(f):
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)

    replace_file(path, write)


def replace_file(path, write):
    """write(f) into a temporary file beside path, synced, then renamed onto it.

    The temporary has a random name created exclusively (mkstemp: O_EXCL, so
    a symbolic link planted at a predictable name such as path + ".tmp"
    cannot redirect the write), as the C tools do (docs/reliability.md)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # what open() would have given, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(directory):
    """config.json + model.safetensors (or pytorch_model.bin) -> TransfoXL in eval mode."""
    with open(os.path.join(directory, "config.json")) as f:
        cfg = json.load(f)
    model = TransfoXL(cfg)
    st = os.path.join(directory, "model.safetensors")
    if os.path.exists(st):
        tensors = read_safetensors(st)
    else:
        tensors = torch.load(os.path.join(directory, "pytorch_model.bin"), map_location="cpu")
    model.load_tensors(tensors)
    model.eval()
    return model
