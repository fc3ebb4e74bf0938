"""Corpus scoring across processes and machines with Dask.

``txlm.dask.score(documents, model_path)`` scores every document of a Dask
bag (of str), a Dask DataFrame (a text column), a pandas Series or a list,
and returns a lazy Dask DataFrame of per-word (or per-token) surprisals,
one row per word, in document order, with the numbers ``Model.score`` gives
in one process (each document is scored on its own, from an empty memory).

Each worker process loads the model once: with a distributed Client, a
worker plugin (``ModelPlugin``) opens it when the worker starts (and again
on a worker that replaces a lost one); tasks find it in the process's
shared models (``Model.shared``), which is also what runs without a
cluster. A worker lost mid-run has its partitions recomputed by Dask's
scheduler on another worker, with the same results.

On a cluster, start one worker process per GPU, each with its device, all
with the Python that has txlm (Debian's /usr/bin/dask runs /usr/bin/python3)::

    ~/txlm-venv/bin/python -m dask scheduler                       # on one host
    TXLM_DEVICE=0 ~/txlm-venv/bin/python -m dask worker tcp://HOST:8786 --nworkers 1 --nthreads 1   # per GPU

A script that starts a LocalCluster needs ``if __name__ == "__main__":``
around it: its worker processes import the script as they start.
docs/python.md has the whole recipe, and one for Slurm arrays without Dask.
"""
from __future__ import annotations

import hashlib
import operator
import os
from typing import Any, List, Optional, Sequence

import dask
import dask.bag as db
import dask.dataframe as dd
import pandas as pd
from distributed import WorkerPlugin

from .context import Device
from .model import Model
from .scoring import TokenScore, WordScore, score as _score_text

__all__ = ["ModelPlugin", "score"]

_DTYPES = {"document": "int64", "sentence_id": "int64", "word_id": "int64", "token_id": "int64", "word": "object",
           "token": "object", "text": "object", "surprisal": "float64", "tokens": "int64", "begin": "int64",
           "end": "int64"}


class ModelPlugin(WorkerPlugin):
    """Loads a model once in each worker process, when the worker starts, and keeps it open."""

    def __init__(self, path: str, device: Device = None, verify: bool = True):
        self.path, self.device, self.verify = os.path.abspath(path), device, verify
        digest = hashlib.sha1(f"{self.path}\0{device}\0{verify}".encode()).hexdigest()[:12]
        self.name = f"txlm-model-{digest}"   # registering again replaces, not duplicates
        self.model: Optional[Model] = None

    def setup(self, worker: Any) -> None:
        """Opens the model in the worker's process (once: Model.shared)."""
        self.model = Model.shared(self.path, self.device, verify=self.verify)

    def teardown(self, worker: Any) -> None:
        """Lets the model go (it closes when nothing else holds it)."""
        self.model = None


def _meta(words: bool, document_dtype: Any = "int64") -> pd.DataFrame:
    fields = ["document"] + list((WordScore if words else TokenScore)._fields)
    dtypes = dict(_DTYPES, document=document_dtype)
    return pd.DataFrame({f: pd.Series(dtype=dtypes[f]) for f in fields})


def _score_docs(texts: Sequence[str], documents: Sequence[Any], path: str, device: Device, verify: bool,
                words: bool, kwargs: dict) -> pd.DataFrame:
    """One partition: each text scored alone by the process's copy of the model."""
    model = Model.shared(path, device, verify=verify)
    frames = []
    for doc, text in zip(documents, texts):
        df = _score_text(model, text, words=words, frame=True, **kwargs)
        df.insert(0, "document", doc)
        frames.append(df)
    meta = _meta(words, pd.Series(list(documents)).dtype if len(documents) else "int64")
    if not frames:
        return meta
    return pd.concat(frames, ignore_index=True).astype(meta.dtypes.to_dict())


def _score_bag_partition(texts: List[str], first: int, *args: Any) -> pd.DataFrame:
    return _score_docs(texts, list(range(first, first + len(texts))), *args)


def _score_frame_partition(part: pd.DataFrame, column: str, *args: Any) -> pd.DataFrame:
    return _score_docs(list(part[column]), list(part.index), *args)


def _register(client: Any, plugin: ModelPlugin) -> None:
    if client is None:
        try:
            from distributed import default_client
            client = default_client()
        except ValueError:  # no distributed client: the local schedulers load the model in this process
            return
    client.register_worker_plugin(plugin, name=plugin.name)


def score(documents: Any, model_path: str, *, words: bool = True, text_column: str = "text",
          npartitions: Optional[int] = None, device: Device = None, verify: bool = True, client: Any = None,
          **kwargs: Any) -> dd.DataFrame:
    """Scores every document with the model at model_path (a path every worker can read).

    documents: a Dask bag of str (documents numbered 0, 1, ... in bag order), a Dask
    DataFrame (its text_column; documents named by its index), a pandas Series or
    DataFrame, or a list of str (split into npartitions). words, nats, eos_per_line,
    tgt_len and the session options as Model.score. device: each worker's (None:
    its $TXLM_DEVICE, then its preferred device). client: the distributed Client whose
    workers get the model plugin (None: the current one, if any).

    Returns a Dask DataFrame with a "document" column before Model.score's columns;
    ``.compute()`` gives the rows in document order."""
    plugin = ModelPlugin(model_path, device, verify)
    args = (plugin.path, device, verify, words, kwargs)
    if isinstance(documents, (list, tuple)):
        documents = db.from_sequence(list(documents), npartitions=npartitions or min(len(documents), 100) or 1)
    elif isinstance(documents, pd.Series):
        documents = documents.to_frame(text_column)
    if isinstance(documents, pd.DataFrame):
        documents = dd.from_pandas(documents, npartitions=npartitions or 1, sort=False)
    _register(client, plugin)
    if isinstance(documents, dd.DataFrame):
        meta = _meta(words, documents.index.dtype)
        return documents.map_partitions(_score_frame_partition, text_column, *args, meta=meta,
                                        enforce_metadata=False)
    if isinstance(documents, db.Bag):
        parts = [dask.delayed(list)(p) for p in documents.to_delayed()]  # a partition may be an iterator
        firsts: List[Any] = [0]
        for p in parts[:-1]:  # each partition's first document number: the lengths before it
            firsts.append(dask.delayed(operator.add)(firsts[-1], dask.delayed(len)(p)))
        scored = [dask.delayed(_score_bag_partition)(p, first, *args) for p, first in zip(parts, firsts)]
        return dd.from_delayed(scored, meta=_meta(words), verify_meta=False)
    raise TypeError("documents: a Dask bag or DataFrame, a pandas Series or DataFrame, or a list of str expected, "
                    f"not {type(documents).__name__}")
