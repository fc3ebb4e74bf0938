"""Reads a .txlm model (docs/format.md) into txl.TransfoXL, so that the
PyTorch implementation can be compared with the engine on the very weights
the engine runs. Structure is range-checked; checksums are left to txlm.
Handles the f32, f16 and bf16 tensor types (what txlm-pack --dtype f16 writes).
"""
import struct

import numpy as np
import torch

import txl

DTYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2")}
BF16 = 2


class FormatError(ValueError):
    pass


def _u(fmt, raw, off, what):
    size = struct.calcsize(fmt)
    if off < 0 or off + size > len(raw):
        raise FormatError(f"{what}: offset {off} + {size} runs past the end ({len(raw)} bytes)")
    return struct.unpack_from(fmt, raw, off)


def read(path):
    """-> (config dict with HF keys, {HF name: float32 tensor}, vocabulary symbols as bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    magic, major, _minor, order, _hsize, _align, fsize, table, count, esize = _u("<8sHHIIIQQII", raw, 0, path)
    if magic != b"TXLMODEL" or major != 1 or order != 0x01020304:
        raise FormatError(f"{path}: not a version 1 little-endian .txlm file")
    if fsize != len(raw):
        raise FormatError(f"{path}: header says {fsize} bytes, file has {len(raw)}")
    sec = {}
    for i in range(count):
        tag, _flags, off, size, _ck = _u("<4sIQQQ", raw, table + i * esize, f"{path}: section entry {i}")
        if off + size > len(raw):
            raise FormatError(f"{path}: section {tag!r} [{off}, +{size}) outside the file")
        sec[tag] = (off, size)
    for tag in (b"HPRM", b"VOCB", b"TDIR"):
        if tag not in sec:
            raise FormatError(f"{path}: section {tag.decode()} missing")

    h = sec[b"HPRM"][0]
    (n_token, d_model, d_embed, n_head, d_head, d_inner, n_layer, div_val, n_cut) = _u("<9I", raw, h + 4, "HPRM")
    cutoffs = list(_u("<15I", raw, h + 40, "HPRM"))[:n_cut]
    tie_projs = [bool(b) for b in _u("<16B", raw, h + 100, "HPRM")[: n_cut + 1]]
    tie_weight, pre_lnorm, _untie_r, same_length = _u("<4B", raw, h + 116, "HPRM")
    clamp_len, mem_len, tgt_len = _u("<iII", raw, h + 120, "HPRM")
    (eps,) = _u("<f", raw, h + 140, "HPRM")
    cfg = {
        "n_token": n_token, "d_model": d_model, "d_embed": d_embed, "n_head": n_head, "d_head": d_head,
        "d_inner": d_inner, "n_layer": n_layer, "div_val": div_val, "cutoffs": cutoffs,
        "tie_projs": tie_projs, "tie_weight": bool(tie_weight), "pre_lnorm": bool(pre_lnorm),
        # r biases are stored per layer even for models trained with one shared pair
        "untie_r": True, "same_length": bool(same_length), "clamp_len": clamp_len,
        "mem_len": mem_len, "tgt_len": tgt_len, "layer_norm_epsilon": eps,
    }

    v = sec[b"VOCB"][0]
    n, _kind, _flags, _eos, _unk, blob_size = _u("<IIIiiI", raw, v, "VOCB")
    offs = _u(f"<{n + 1}I", raw, v + 24, "VOCB offsets")
    blob = v + 24 + 4 * (n + 1)
    if offs[-1] != blob_size or blob + blob_size > len(raw):
        raise FormatError(f"{path}: VOCB blob size {blob_size} does not match its offsets")
    vocab = [raw[blob + offs[i]:blob + offs[i + 1]] for i in range(n)]

    t = sec[b"TDIR"][0]
    tcount, tesize = _u("<II", raw, t, "TDIR")
    tensors = {}
    for i in range(tcount):
        e = t + 8 + i * tesize
        name = _u("<96s", raw, e, f"TDIR entry {i}")[0].split(b"\0", 1)[0].decode("utf-8")
        dtype, rank = _u("<II", raw, e + 96, name)
        dims = _u("<8Q", raw, e + 104, name)[:rank]
        off, nbytes = _u("<QQ", raw, e + 168, name)
        if off + nbytes > len(raw):
            raise FormatError(f"{path}: tensor {name} [{off}, +{nbytes}) outside the file")
        if dtype == BF16:
            arr = (np.frombuffer(raw, "<u2", nbytes // 2, off).astype(np.uint32) << 16).view(np.float32)
        elif dtype in DTYPES:
            arr = np.frombuffer(raw, DTYPES[dtype], nbytes // DTYPES[dtype].itemsize, off)
        else:
            raise FormatError(f"{path}: tensor {name}: dtype {dtype} not handled here")
        if arr.size != int(np.prod(dims)):
            raise FormatError(f"{path}: tensor {name}: {arr.size} values for dims {list(dims)}")
        hf = name if name.startswith("crit.") else "transformer." + name
        tensors[hf] = torch.from_numpy(arr.astype(np.float32).reshape(dims))
    return cfg, tensors, vocab


def load(path):
    cfg, tensors, vocab = read(path)
    model = txl.TransfoXL(cfg)
    model.load_tensors(tensors)
    model.eval()
    return model, vocab
