"""txlm.dask: a LocalCluster of 2 worker processes scores a corpus exactly as one process does,
and a worker killed mid-run has its partitions recomputed with the same results."""
import os
import signal

import pytest
from conftest import DEMO, DEMO_TEXT

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")
db = pytest.importorskip("dask.bag")
import txlm.dask  # noqa: E402

# documents of different lengths, one empty, one of several lines
CORPUS = [DEMO_TEXT[i * 97:i * 97 + 40 + 23 * (i % 5)] for i in range(14)] + ["", "Two lines.\nOf text."]


def one_process(model, docs, index=None, **kw):
    frames = []
    for doc, text in zip(index if index is not None else range(len(docs)), docs):
        df = model.score(text, frame=True, **kw)
        df.insert(0, "document", doc)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def same(got, want):
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


@pytest.fixture(scope="module")
def cluster():
    # the workers inherit this process's environment: TXLM_LIBRARY, PYTHONPATH (conftest)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as c, distributed.Client(c) as client:
        yield client


def test_local_schedulers_equal_one_process(demo):
    want = one_process(demo, CORPUS)
    same(txlm.dask.score(CORPUS, DEMO, npartitions=4).compute(scheduler="sync"), want)
    same(txlm.dask.score(db.from_sequence(CORPUS, npartitions=3), DEMO).compute(scheduler="threads"), want)
    tokens = txlm.dask.score(CORPUS[:3], DEMO, words=False, nats=True).compute(scheduler="sync")
    same(tokens, one_process(demo, CORPUS[:3], words=False, nats=True))


def test_two_workers_equal_one_process(demo, cluster):
    want = one_process(demo, CORPUS)
    got = txlm.dask.score(db.from_sequence(CORPUS, npartitions=5), DEMO).compute()
    same(got, want)
    pids = {w["id"]: w.get("pid") for w in cluster.scheduler_info()["workers"].values()}
    assert len(pids) == 2
    # a DataFrame of documents: named by its index, in its order
    frame = pd.DataFrame({"text": CORPUS}, index=[100 + 3 * i for i in range(len(CORPUS))])
    got = txlm.dask.score(frame, DEMO, npartitions=4, tgt_len=16).compute()
    same(got, one_process(demo, CORPUS, index=frame.index, tgt_len=16))
    # each worker process loaded the model once, through the plugin
    loaded = cluster.run(lambda: len([m for m in txlm.Model._shared.values() if not m.closed]))
    assert sorted(loaded.values()) == [1, 1]


def kill_first_time(df, marker):
    """The first run of the partition it is given kills its worker process, as a crash would."""
    if (df["document"] == 5).any():
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return df
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
    return df


def test_killed_worker_partitions_recomputed(demo, cluster, tmp_path):
    marker = str(tmp_path / "killed")
    pids_before = set(cluster.run(os.getpid).values())
    scored = txlm.dask.score(db.from_sequence(CORPUS, npartitions=8), DEMO)   # documents 4 and 5 in partition 2
    got = scored.map_partitions(kill_first_time, marker, meta=scored._meta).compute()
    same(got, one_process(demo, CORPUS))
    with open(marker) as f:
        killed = int(f.read())
    assert killed in pids_before  # a worker did die, mid-run, after scoring its partition
    cluster.wait_for_workers(2, timeout=120)
    assert killed not in set(cluster.run(os.getpid).values())
