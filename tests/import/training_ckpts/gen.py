"""Writes small checkpoints in the file layouts of the codes that trained
the published Transformer-XL models, and the log-probabilities each code
computes from them (tests/import/test_training_ckpts.c checks txlm
against these; docs/tensors.md says what each layout is and where it
comes from).

- the authors' PyTorch code (kimiyoung/transformer-xl, pytorch/):
  model.state_dict() (zip and legacy), the whole model as train.py saves
  it with torch.save(model) (zip and legacy, whose pickle embeds each
  module class's source), and data_utils.py's cache.pt (the Corpus with
  its Vocab and the encoded data sets);
- NVIDIA's (DeepLearningExamples, PyTorch/LanguageModeling/Transformer-XL):
  train.py's save_checkpoint dict, float32, and all-float16 as apex O2
  leaves it (the older form, without rng_states and memory);
- HF transformers v4: config.json with tie_word_embeddings (tied and
  untied) and no tgt_len, HF tensor names, and HF's zero-memory start.

The classes below are written for this generator: they have the module
paths, attribute names and module trees of the originals, so torch.save
writes what those codes write, and nothing else of theirs. The reference
log-probabilities come from tools/train/txl.py with each code's
semantics switched on (cluster order, same_length rule, sinusoid
frequencies, zero memory). Run with PyTorch 1.13: python3 gen.py OUTDIR
"""
import argparse
import collections
import json
import os
import random
import struct
import sys
import tempfile
import textwrap

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "train"))
import txl  # noqa: E402

# Source of the modules, written to a temporary folder and imported from
# there so that their classes have the originals' module paths (and the
# legacy format finds source text to embed).
MEM_TRANSFORMER = '''
import torch
import torch.nn as nn
from proj_adaptive_softmax import ProjectedAdaptiveLogSoftmax


class PositionalEmbedding(nn.Module):
    def __init__(self, demb):
        super(PositionalEmbedding, self).__init__()
        self.demb = demb
        inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
        self.register_buffer('inv_freq', inv_freq)


class PositionwiseFF(nn.Module):
    def __init__(self, d_model, d_inner, dropout, pre_lnorm=False):
        super(PositionwiseFF, self).__init__()
        self.d_model, self.d_inner, self.dropout = d_model, d_inner, dropout
        self.CoreNet = nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(inplace=True), nn.Dropout(dropout),
                                     nn.Linear(d_inner, d_model), nn.Dropout(dropout))
        self.layer_norm = nn.LayerNorm(d_model)
        self.pre_lnorm = pre_lnorm


class RelPartialLearnableMultiHeadAttn(nn.Module):
    def __init__(self, n_head, d_model, d_head, dropout, dropatt=0, tgt_len=None, ext_len=None, mem_len=None,
                 pre_lnorm=False):
        super(RelPartialLearnableMultiHeadAttn, self).__init__()
        self.n_head, self.d_model, self.d_head, self.dropout = n_head, d_model, d_head, dropout
        self.qkv_net = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
        self.drop = nn.Dropout(dropout)
        self.dropatt = nn.Dropout(dropatt)
        self.o_net = nn.Linear(n_head * d_head, d_model, bias=False)
        self.layer_norm = nn.LayerNorm(d_model)
        self.scale = 1 / (d_head ** 0.5)
        self.pre_lnorm = pre_lnorm
        self.r_net = nn.Linear(self.d_model, self.n_head * self.d_head, bias=False)


class RelPartialLearnableDecoderLayer(nn.Module):
    def __init__(self, n_head, d_model, d_head, d_inner, dropout, **kwargs):
        super(RelPartialLearnableDecoderLayer, self).__init__()
        self.dec_attn = RelPartialLearnableMultiHeadAttn(n_head, d_model, d_head, dropout, **kwargs)
        self.pos_ff = PositionwiseFF(d_model, d_inner, dropout, pre_lnorm=kwargs.get('pre_lnorm'))


class AdaptiveEmbedding(nn.Module):
    def __init__(self, n_token, d_embed, d_proj, cutoffs, div_val=1, sample_softmax=False):
        super(AdaptiveEmbedding, self).__init__()
        self.n_token, self.d_embed = n_token, d_embed
        self.cutoffs = cutoffs + [n_token]
        self.div_val, self.d_proj = div_val, d_proj
        self.emb_scale = d_proj ** 0.5
        self.cutoff_ends = [0] + self.cutoffs
        self.emb_layers = nn.ModuleList()
        self.emb_projs = nn.ParameterList()
        if div_val == 1:
            self.emb_layers.append(nn.Embedding(n_token, d_embed, sparse=sample_softmax > 0))
            if d_proj != d_embed:
                self.emb_projs.append(nn.Parameter(torch.Tensor(d_proj, d_embed)))
        else:
            for i in range(len(self.cutoffs)):
                l_idx, r_idx = self.cutoff_ends[i], self.cutoff_ends[i + 1]
                d_emb_i = d_embed // (div_val ** i)
                self.emb_layers.append(nn.Embedding(r_idx - l_idx, d_emb_i))
                self.emb_projs.append(nn.Parameter(torch.Tensor(d_proj, d_emb_i)))


class MemTransformerLM(nn.Module):
    def __init__(self, n_token, n_layer, n_head, d_model, d_head, d_inner, dropout, dropatt, tie_weight=True,
                 d_embed=None, div_val=1, tie_projs=[False], pre_lnorm=False, tgt_len=None, ext_len=None,
                 mem_len=None, cutoffs=[], adapt_inp=False, same_length=False, attn_type=0, clamp_len=-1,
                 sample_softmax=-1):
        super(MemTransformerLM, self).__init__()
        self.n_token = n_token
        d_embed = d_model if d_embed is None else d_embed
        self.d_embed, self.d_model, self.n_head, self.d_head = d_embed, d_model, n_head, d_head
        self.word_emb = AdaptiveEmbedding(n_token, d_embed, d_model, cutoffs, div_val=div_val)
        self.drop = nn.Dropout(dropout)
        self.n_layer = n_layer
        self.tgt_len, self.mem_len, self.ext_len = tgt_len, mem_len, ext_len
        self.max_klen = tgt_len + ext_len + mem_len
        self.attn_type = attn_type
        self.layers = nn.ModuleList()
        for i in range(n_layer):
            self.layers.append(RelPartialLearnableDecoderLayer(
                n_head, d_model, d_head, d_inner, dropout, tgt_len=tgt_len, ext_len=ext_len, mem_len=mem_len,
                dropatt=dropatt, pre_lnorm=pre_lnorm))
        self.sample_softmax = sample_softmax
        self.crit = ProjectedAdaptiveLogSoftmax(n_token, d_embed, d_model, cutoffs, div_val=div_val)
        if tie_weight:
            for i in range(len(self.crit.out_layers)):
                self.crit.out_layers[i].weight = self.word_emb.emb_layers[i].weight
        if tie_projs:
            for i, tie_proj in enumerate(tie_projs):
                if tie_proj and div_val == 1 and d_model != d_embed:
                    self.crit.out_projs[i] = self.word_emb.emb_projs[0]
                elif tie_proj and div_val != 1:
                    self.crit.out_projs[i] = self.word_emb.emb_projs[i]
        self.same_length = same_length
        self.clamp_len = clamp_len
        self.pos_emb = PositionalEmbedding(self.d_model)
        self.r_w_bias = nn.Parameter(torch.Tensor(self.n_head, self.d_head))
        self.r_r_bias = nn.Parameter(torch.Tensor(self.n_head, self.d_head))
'''

PROJ_ADAPTIVE_SOFTMAX = '''
import torch
import torch.nn as nn


class ProjectedAdaptiveLogSoftmax(nn.Module):
    def __init__(self, n_token, d_embed, d_proj, cutoffs, div_val=1, keep_order=False):
        super(ProjectedAdaptiveLogSoftmax, self).__init__()
        self.n_token, self.d_embed, self.d_proj = n_token, d_embed, d_proj
        self.cutoffs = cutoffs + [n_token]
        self.cutoff_ends = [0] + self.cutoffs
        self.div_val = div_val
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        if self.n_clusters > 0:
            self.cluster_weight = nn.Parameter(torch.zeros(self.n_clusters, self.d_embed))
            self.cluster_bias = nn.Parameter(torch.zeros(self.n_clusters))
        self.out_layers = nn.ModuleList()
        self.out_projs = nn.ParameterList()
        if div_val == 1:
            for i in range(len(self.cutoffs)):
                if d_proj != d_embed:
                    self.out_projs.append(nn.Parameter(torch.Tensor(d_proj, d_embed)))
                else:
                    self.out_projs.append(None)
            self.out_layers.append(nn.Linear(d_embed, n_token))
        else:
            for i in range(len(self.cutoffs)):
                l_idx, r_idx = self.cutoff_ends[i], self.cutoff_ends[i + 1]
                d_emb_i = d_embed // (div_val ** i)
                self.out_projs.append(nn.Parameter(torch.Tensor(d_proj, d_emb_i)))
                self.out_layers.append(nn.Linear(d_emb_i, r_idx - l_idx))
        self.keep_order = keep_order
'''

VOCABULARY = '''
from collections import Counter, OrderedDict


class Vocab(object):
    def __init__(self, special=[], min_freq=0, max_size=None, lower_case=True, delimiter=None, vocab_file=None):
        self.counter = Counter()
        self.special = special
        self.min_freq = min_freq
        self.max_size = max_size
        self.lower_case = lower_case
        self.delimiter = delimiter
        self.vocab_file = vocab_file

    def build(self, words):
        self.idx2sym = []
        self.sym2idx = OrderedDict()
        for sym in self.special:
            self.idx2sym.append(sym)
            self.sym2idx[sym] = len(self.idx2sym) - 1
            setattr(self, '{}_idx'.format(sym.strip('<>')), self.sym2idx[sym])
        for sym in words:
            self.counter[sym] += 1
            if sym not in self.sym2idx:
                self.idx2sym.append(sym)
                self.sym2idx[sym] = len(self.idx2sym) - 1
'''

DATA_UTILS = '''
from utils.vocabulary import Vocab


class Corpus(object):
    def __init__(self, dataset, vocab, train, valid, test):
        self.dataset = dataset
        self.vocab = vocab
        self.train, self.valid, self.test = train, valid, test
'''

# NVIDIA's output layer: what differs from the authors' is the criterion (its
# first lines are the authors' again, as in NVIDIA's file; kept whole so that
# each class reads like the code it stands for)
# (crit.out_layers_weights/biases as ParameterLists, out_projs with None at
# tied indices, the embedding's projections as crit.shared_out_projs).
NV_SOFTMAX = '''
import torch
import torch.nn as nn


class OptionalParameterList(nn.ParameterList):
    pass


class ProjectedAdaptiveLogSoftmax(nn.Module):
    def __init__(self, n_token, d_embed, d_proj, cutoffs, div_val=1, tie_projs=None, out_layers_weights=None,
                 out_projs=None, keep_order=False):
        super().__init__()
        self.n_token, self.d_embed, self.d_proj = n_token, d_embed, d_proj
        self.cutoffs = cutoffs + [n_token]
        self.cutoff_ends = [0] + self.cutoffs
        self.div_val = div_val
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.tie_projs = tie_projs
        if self.n_clusters > 0:
            self.cluster_weight = nn.Parameter(torch.zeros(self.n_clusters, self.d_embed))
            self.cluster_bias = nn.Parameter(torch.zeros(self.n_clusters))
        if not out_layers_weights:
            self.out_layers_weights = nn.ParameterList()
        else:
            self.out_layers_weights = out_layers_weights
        self.out_layers_biases = nn.ParameterList()
        self.shared_out_projs = out_projs
        self.out_projs = OptionalParameterList()
        if div_val == 1:
            if d_proj != d_embed:
                for i in range(len(self.cutoffs)):
                    if tie_projs[i]:
                        self.out_projs.append(None)
                    else:
                        self.out_projs.append(nn.Parameter(torch.zeros(d_proj, d_embed)))
            else:
                self.out_projs.append(None)
            self.out_layers_biases.append(nn.Parameter(torch.zeros(n_token)))
            if not out_layers_weights:
                self.out_layers_weights.append(nn.Parameter(torch.zeros(n_token, d_embed)))
        else:
            for i in range(len(self.cutoffs)):
                l_idx, r_idx = self.cutoff_ends[i], self.cutoff_ends[i + 1]
                d_emb_i = d_embed // (div_val ** i)
                if tie_projs[i]:
                    self.out_projs.append(None)
                else:
                    self.out_projs.append(nn.Parameter(torch.zeros(d_proj, d_emb_i)))
                self.out_layers_biases.append(nn.Parameter(torch.zeros(r_idx - l_idx)))
                if not out_layers_weights:
                    self.out_layers_weights.append(nn.Parameter(torch.zeros(r_idx - l_idx, d_emb_i)))
        self.keep_order = keep_order
'''


def install_modules(root):
    """The originals' module layout under root, importable."""
    files = {"mem_transformer.py": MEM_TRANSFORMER, "proj_adaptive_softmax.py": PROJ_ADAPTIVE_SOFTMAX,
             "data_utils.py": DATA_UTILS, "utils/__init__.py": "", "utils/vocabulary.py": VOCABULARY,
             "nv_softmax.py": NV_SOFTMAX}
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip())
    sys.path.insert(0, root)


SHAPE = dict(n_token=60, n_layer=2, n_head=2, d_model=16, d_head=8, d_inner=16, dropout=0.0, dropatt=0.0,
             cutoffs=[20, 35, 50], tgt_len=6, ext_len=0, mem_len=24, clamp_len=-1, attn_type=0, sample_softmax=-1)
WORDS = ["<eos>", "the", ",", ".", "of", "and", "in", "to", "a", "<unk>"] + ["w%d" % i for i in range(10, 60)]
# every cluster; the memory fills, then slides
TOKENS = [3, 21, 40, 55, 7, 36, 22, 59, 1, 45, 30, 52, 9, 33, 47, 0, 18, 26, 57, 41, 5, 38, 12, 50, 2, 44, 29, 58, 11, 36]
SEGMENTS = [6, 6, 6, 6, 6]


def fill(model, seed, named=None):
    """Every parameter (not inv_freq), seeded, of order one."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in named or model.named_parameters():
            fan = p.shape[-1] if p.dim() > 1 else 8
            p.copy_(torch.randn(p.shape, generator=g) / fan ** 0.5)
            if "layer_norm.weight" in name:
                p.add_(1.0)
            if "cluster" in name:
                p.mul_(4.0)  # clusters well apart, so an order mistake shows


def hf_names(state, nvidia=False):
    """State dict of either PyTorch code -> the HF names txl.py uses."""
    out = {}
    for k, v in state.items():
        if nvidia and k.startswith("crit.shared_out_projs."):
            continue
        if nvidia and k.startswith("crit.out_layers_weights."):
            k = "crit.out_layers.%s.weight" % k.split(".")[-1]
        if nvidia and k.startswith("crit.out_layers_biases."):
            k = "crit.out_layers.%s.bias" % k.split(".")[-1]
        if not k.startswith("crit."):
            k = "transformer." + k
        out[k] = v.float()
    return out


def reference(cfg, tensors, inv_freq=None, zero_memory=False):
    """Log-probabilities [len(TOKENS), n_token] through one session, memory carried."""
    m = txl.TransfoXL(dict(cfg, zero_memory=zero_memory))
    m.load_tensors(tensors)
    if inv_freq is not None:
        m.inv_freq = inv_freq.float()
    m.eval()
    out, mems, at = [], None, 0
    with torch.no_grad():
        for n in SEGMENTS:
            lp, mems = m(torch.tensor(TOKENS[at:at + n]), mems)
            out.append(lp)
            at += n
    return torch.cat(out).numpy().astype("<f4")


def authors_model(seed, **kw):
    import mem_transformer
    shape = dict(SHAPE, **kw)
    m = mem_transformer.MemTransformerLM(**shape)
    fill(m, seed)
    return m, shape


def hf_config(shape, tie_weight, tie_projs, **extra):
    """config.json as HF v4 save_pretrained writes it: tie_word_embeddings, no tie_weight, no tgt_len."""
    c = {"architectures": ["TransfoXLLMHeadModel"], "model_type": "transfo-xl", "transformers_version": "4.30.2",
         "torch_dtype": "float32", "adaptive": True, "attn_type": 0, "clamp_len": shape["clamp_len"],
         "cutoffs": shape["cutoffs"], "d_embed": shape.get("d_embed") or shape["d_model"], "d_head": shape["d_head"],
         "d_inner": shape["d_inner"], "d_model": shape["d_model"], "div_val": shape.get("div_val", 1),
         "dropatt": 0.0, "dropout": 0.1, "eos_token_id": 0, "init": "normal", "init_range": 0.01, "init_std": 0.02,
         "layer_norm_epsilon": 1e-05, "mem_len": shape["mem_len"], "n_head": shape["n_head"],
         "n_layer": shape["n_layer"], "pre_lnorm": shape.get("pre_lnorm", False), "proj_init_std": 0.01,
         "proj_share_all_but_first": all(tie_projs[1:]), "same_length": shape.get("same_length", False),
         "sample_softmax": -1, "untie_r": True, "vocab_size": shape["n_token"], "tie_word_embeddings": tie_weight}
    c.update(extra)
    return c


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def gen_authors(out, cases):
    tie_projs = [False, True, True, True]
    m, shape = authors_model(11, div_val=2, d_embed=16, same_length=True, tie_projs=tie_projs)
    sd = m.state_dict()
    cfg = dict(shape, tie_weight=True, untie_r=False, cluster_order="reverse")
    ref = reference(cfg, hf_names(sd), sd["pos_emb.inv_freq"])
    write(os.path.join(out, "authors.f32"), ref.tobytes())
    torch.save(sd, os.path.join(out, "authors_state.pt"))
    torch.save(sd, os.path.join(out, "authors_state_legacy.pt"), _use_new_zipfile_serialization=False)
    torch.save(m, os.path.join(out, "authors_model.pt"))
    torch.save(m, os.path.join(out, "authors_model_legacy.pt"), _use_new_zipfile_serialization=False)
    # the config an HF-style folder would carry, and the vocabulary
    json.dump(hf_config(shape, True, tie_projs, untie_r=False, tgt_len=shape["tgt_len"]),
              open(os.path.join(out, "authors_config.json"), "w"), indent=1)
    with open(os.path.join(out, "vocab.txt"), "w") as f:
        f.write("\n".join(WORDS) + "\n")
    import data_utils
    from utils.vocabulary import Vocab
    v = Vocab(special=["<eos>"], lower_case=False)
    v.build(WORDS[1:])
    data = torch.tensor(TOKENS * 50, dtype=torch.long)  # the encoded splits: skipped, never read
    corpus = data_utils.Corpus("wt103", v, data, data[:100], data[:80])
    torch.save(corpus, os.path.join(out, "cache.pt"), _use_new_zipfile_serialization=False)
    for name in ["authors_model.pt", "authors_model_legacy.pt"]:
        cases.append({"name": name, "args": [name, "--vocab", "cache.pt"], "expect": "authors.f32", "order": "reverse"})
    for name in ["authors_state.pt", "authors_state_legacy.pt"]:
        cases.append({"name": name, "args": [name, "--config", "authors_config.json", "--vocab", "vocab.txt"],
                      "expect": "authors.f32", "order": "reverse"})


def nv_model(seed, f16, **kw):
    """NVIDIA's module tree: the authors' body with NVIDIA's criterion."""
    import mem_transformer
    import nv_softmax
    shape = dict(SHAPE, **kw)
    m = mem_transformer.MemTransformerLM(**dict(shape, tie_weight=False, tie_projs=[False]))
    tie_weight, tie_projs = kw.get("tie_weight", True), kw["tie_projs"]
    weights = [l.weight for l in m.word_emb.emb_layers] if tie_weight else None
    m.crit = nv_softmax.ProjectedAdaptiveLogSoftmax(shape["n_token"], shape["d_embed"], shape["d_model"],
                                                    shape["cutoffs"], div_val=shape["div_val"], tie_projs=tie_projs,
                                                    out_projs=m.word_emb.emb_projs, out_layers_weights=weights)
    fill(m, seed)
    if f16:
        m = m.half()
    return m, shape


def nv_checkpoint(m, shape, f16, newer):
    from utils.vocabulary import Vocab
    vocab = Vocab(special=["<eos>"], lower_case=False)
    vocab.build(WORDS[1:])  # '<unk>' is an ordinary word there, ranked by frequency
    args = argparse.Namespace(dataset="wt103", vocab="word", n_layer=shape["n_layer"], d_model=shape["d_model"],
                              fp16=f16, amp="apex", apex_amp_opt_level="O2", tied=shape["tie_weight"],
                              adaptive=True, same_length=shape["same_length"], mem_len=shape["mem_len"])
    keys = ["n_token", "n_layer", "n_head", "d_model", "d_head", "d_inner", "dropout", "dropatt", "dtype",
            "tie_weight", "d_embed", "div_val", "tie_projs", "pre_lnorm", "tgt_len", "ext_len", "mem_len", "cutoffs",
            "same_length", "attn_type", "clamp_len", "sample_softmax"]
    model_config = {k: shape.get(k) for k in keys}
    master = [torch.nn.Parameter(p.detach().float().clone()) for p in m.parameters()]
    opt = torch.optim.Adam(master, lr=1e-3)
    for p in master:
        p.grad = torch.ones_like(p)
    opt.step()
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 100)
    state = collections.OrderedDict()
    state["args"] = args
    state["model_config"] = model_config
    state["model_state"] = m.state_dict()
    state["optimizer_state"] = opt.state_dict()
    state["scheduler_state"] = sched.state_dict()
    if newer:
        state["rng_states"] = {"python": random.getstate(), "numpy": np.random.get_state(),
                               "torch": torch.get_rng_state()}
        state["memory"] = [torch.zeros(shape["n_layer"], shape["mem_len"], 1, shape["d_model"])]
    state["vocab"] = vocab
    state["amp_state"] = {"loss_scaler0": {"loss_scale": 65536.0, "unskipped": 0}} if f16 else None
    state.update(epoch=3, batch=17, last_iter=17, train_step=1000, best_val_loss=4.2)
    return dict(state)


def gen_nvidia(out, cases):
    random.seed(5)
    np.random.seed(5)
    variants = [
        # float32, untied output weights, div_val 1 with d_embed != d_model (one shared projection)
        ("nvidia_f32.pt", False, True, dict(div_val=1, d_embed=8, tie_weight=False, tie_projs=[False, True, True, True],
                                             same_length=True, n_layer=1)),
        # all float16, tied, div_val 2, out_projs only at the untied indices 0 and 2
        ("nvidia_f16.pt", True, False, dict(div_val=2, d_embed=16, tie_weight=True,
                                             tie_projs=[False, True, False, True], same_length=True, n_layer=1)),
    ]
    for name, f16, newer, kw in variants:
        m, shape = nv_model(23 if f16 else 29, f16, **kw)
        shape = dict(shape, **kw)
        sd = m.state_dict()
        cfg = dict(shape, untie_r=False, cluster_order="reverse", same_length_rule=1)
        ref = reference(cfg, hf_names(sd, nvidia=True), sd["pos_emb.inv_freq"])
        expect = name.replace(".pt", ".f32")
        write(os.path.join(out, expect), ref.tobytes())
        torch.save(nv_checkpoint(m, shape, f16, newer), os.path.join(out, name))
        cases.append({"name": name, "args": [name], "expect": expect, "order": "reverse"})


def gen_hf(out, cases):
    for tied, pre in [(True, False), (False, False), (True, True)]:
        shape = dict(SHAPE, div_val=1, d_embed=16, same_length=True, clamp_len=5, pre_lnorm=pre)
        tie_projs = [False, True, True, True]
        cfg = dict(shape, tie_weight=tied, tie_projs=tie_projs, untie_r=True)
        m = txl.TransfoXL(cfg)
        fill(m, 41 if tied else 43, [(n, m.params[i]) for n, i in m.names.items()])
        tensors = {n: m.w(n).detach().clone() for n in m.names}
        if tied:
            del tensors["crit.out_layers.0.weight"]
        d = "hf_preln" if pre else "hf_tied" if tied else "hf_untied"
        os.makedirs(os.path.join(out, d), exist_ok=True)
        torch.save(tensors, os.path.join(out, d, "pytorch_model.bin"))
        json.dump(hf_config(shape, tied, tie_projs), open(os.path.join(out, d, "config.json"), "w"), indent=1)
        with open(os.path.join(out, d, "vocab.txt"), "w") as f:
            f.write("\n".join(WORDS) + "\n")
        if not pre:
            write(os.path.join(out, d + ".f32"), reference(cfg, tensors).tobytes())
            cases.append({"name": d, "args": [d], "expect": d + ".f32", "order": "forward"})
        if not tied:  # --cluster-order overrides what the names say
            write(os.path.join(out, d + "_reverse.f32"), reference(dict(cfg, cluster_order="reverse"), tensors).tobytes())
            cases.append({"name": d + " --cluster-order reverse", "args": [d, "--cluster-order", "reverse"],
                          "expect": d + "_reverse.f32", "order": "reverse"})
        if tied:  # HF's own start: mem_len rows of zeros every query attends to (pre-norm: LN(0))
            write(os.path.join(out, d + "_zero.f32"), reference(cfg, tensors, zero_memory=True).tobytes())
            cases.append({"name": d + " zero memory", "args": [d], "expect": d + "_zero.f32", "order": "forward",
                          "zero_memory": True})


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cases = []
    with tempfile.TemporaryDirectory() as mods:
        install_modules(mods)
        gen_authors(out, cases)
        gen_nvidia(out, cases)
        gen_hf(out, cases)
    manifest = {"tokens": TOKENS, "segments": SEGMENTS, "n_token": SHAPE["n_token"], "cases": cases}
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
