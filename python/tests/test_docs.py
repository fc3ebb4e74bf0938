"""docs/python.md's examples run as written: every block marked "runs in
tests/python (test_docs.py)". Those marked "and prints the block after it"
print exactly that block; the Installing lines make a virtual environment
in a home folder of their own and print the figures shown under them; the
Slurm shard script (on the demo model, the one change) runs as three array
tasks, and the merge after it gives model.score's rows of every document;
the Dask script runs on a LocalCluster of its own, and through a scheduler
and a worker started by the cluster lines with the virtual environment the
Installing lines made (on this machine, a free port for hostA:8786). Every
process a test starts runs in a process group of its own, which the test
ends (SIGTERM, then SIGKILL), whatever happened."""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from conftest import DEMO, ROOT

PAGE = (ROOT / "docs" / "python.md").read_text()
MARK = "<!-- the block below runs in tests/python (test_docs.py)"


def marked(fence):
    """(the marker's rest, the block's code) of every marked block of that fence, in order."""
    return re.findall(re.escape(MARK) + r"(.*?)-->\n```" + fence + r"\n(.*?)```\n", PAGE, re.S)


def test_examples_print_what_the_docs_show():
    pytest.importorskip("pandas")
    shown = re.findall(re.escape(MARK) + r" and prints the block after it -->\n```python\n(.*?)```\n\n"
                       r"prints\n\n```text\n(.*?)```", PAGE, re.S)
    assert len(shown) == len([m for m in marked("python") if "prints the block after it" in m[0]]) >= 2, \
        "docs/python.md: an example and its output are not where this test looks"
    for code, want in shown:
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, code + r.stderr
        assert r.stdout == want, code


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The lines under "Installing", as written, in a folder holding this source's python/ and models/ and this
    build's library as build/libtxlm.so, with a home folder of their own: (home, work folder, their run)."""
    if not (os.path.exists("/usr/bin/python3") and shutil.which("bash")):
        pytest.skip("no /usr/bin/python3")
    pytest.importorskip("pip")
    (block,) = [code for rest, code in marked("sh") if "home folder of its own" in rest]
    base = tmp_path_factory.mktemp("installed")
    work, home = base / "work", base / "home"
    home.mkdir()
    shutil.copytree(ROOT / "python", work / "python", ignore=shutil.ignore_patterns("tests", "build", "*.egg-info",
                                                                                    "__pycache__"))
    (work / "build").mkdir()
    (work / "build" / "libtxlm.so").symlink_to(os.environ["TXLM_LIBRARY"])
    (work / "models").symlink_to(ROOT / "models")
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", block + '\n~/txlm-venv/bin/python -c "import txlm; '
                        'print(txlm.__file__)"\n'], cwd=work, env=venv_env(home), capture_output=True,
                       text=True, timeout=600)
    return home, work, block, r


def venv_env(home, library=None):
    """A user's environment: their home, no source tree on the path, TXLM_LIBRARY only when given."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TXLM_LIBRARY", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    if library is not None:
        env["TXLM_LIBRARY"] = str(library)
    return env


def test_installing_lines(installed):
    """The installed package (not this source tree's) prints the figures shown."""
    home, work, block, r = installed
    want = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert out[-2:-1] == want and out[-1].startswith(str(home / "txlm-venv")), r.stdout


DOCS = ["The cat sat on the mat.\nNA null 1.5", "A second\ndocument.", "Third.", "Any fool can make things bigger.",
        "The end."]


def same_scores(got):
    """got (a DataFrame with document, word, surprisal) holds model.score's rows of each of DOCS, in order."""
    pd = pytest.importorskip("pandas")
    import txlm
    with txlm.Model(DEMO) as model:
        want = pd.concat([model.score(d).assign(document=i) for i, d in enumerate(DOCS)])
    assert list(zip(got["document"], got["word"])) == list(zip(want["document"], want["word"]))
    for g, w in zip(got["surprisal"], want["surprisal"]):
        assert (math.isnan(g) and math.isnan(w)) or abs(g - w) < 1e-9


def read_tsv(path):
    pd = pytest.importorskip("pandas")
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])


@contextmanager
def process_groups():
    """start(command, **popen) runs a command in a process group of its own; every group started
    is ended on the way out (SIGTERM, up to 60 s to exit, then SIGKILL), so none outlives the test,
    also when the test itself gets SIGTERM (meson's timeout, which SIGKILLs 0.5 s later: the
    groups are SIGKILLed at once, before this process ends as SIGTERM ends it)."""
    started = []

    def start(cmd, **kw):
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        started.append(p)
        return p

    def on_sigterm(signum, frame):
        for p in started:
            signal_group(p, signal.SIGKILL)
        signal.signal(signal.SIGTERM, before)
        os.kill(os.getpid(), signal.SIGTERM)
    before = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield start
    finally:
        signal.signal(signal.SIGTERM, before)
        for p in reversed(started):
            signal_group(p, signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                pass
            signal_group(p, signal.SIGKILL)   # the group's other processes too (a worker's children)
            p.wait()


def signal_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def finish(p, timeout, what, log=None):
    """Waits for p, which must exit 0 within timeout (else its group is killed on the way out); a failure
    shows its output and the log of another process it needed."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = "", f"did not finish in {timeout} s"
    if p.returncode != 0:
        pytest.fail(f"{what}: {out}{err}" + (f"\n{log.name}:\n{log.read_text()}" if log else ""))


def corpus_script(folder):
    """score_corpus.py as the page shows it, on the demo model and a folder of DOCS, one file each."""
    (code,) = [code for rest, code in marked("python") if "as score_corpus.py" in rest]
    assert code.count('"/shared/corpus/*.txt"') == 1 and code.count('"/shared/models/wt103.txlm"') == 1
    (folder / "corpus").mkdir()
    for i, d in enumerate(DOCS):
        (folder / "corpus" / f"doc{i}.txt").write_text(d, encoding="utf-8")
    code = code.replace('"/shared/corpus/*.txt"', json.dumps(str(folder / "corpus" / "*.txt")))
    (folder / "score_corpus.py").write_text(code.replace('"/shared/models/wt103.txlm"', json.dumps(DEMO)))


def test_dask_script_on_one_machine(tmp_path):
    """score_corpus.py without an argument: a LocalCluster of 2 worker processes, which import the script as
    they start; it finishes and writes model.score's rows of every document."""
    pytest.importorskip("distributed")
    corpus_script(tmp_path)
    with process_groups() as start:
        p = start([sys.executable, "score_corpus.py"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                  text=True)
        finish(p, 300, "score_corpus.py")
    same_scores(read_tsv(tmp_path / "surprisal.tsv"))


def test_dask_cluster_lines(installed, tmp_path):
    """The scheduler and the first worker as the cluster lines start them, with the venv's Python, on a free
    port of this machine; score_corpus.py through them gives model.score's rows; the worker imported the venv's
    txlm; both stop on SIGTERM."""
    pytest.importorskip("distributed")
    home, work, _, r = installed
    assert r.returncode == 0, "the Installing lines failed (test_installing_lines)"
    (block,) = [code for rest, code in marked("sh") if "a scheduler, the first worker" in rest]
    lines = [line.split(" #")[0].strip().rstrip("&").strip() for line in block.splitlines()]
    (scheduler,) = [line for line in lines if " -m dask scheduler" in line]
    worker = [line for line in lines if " -m dask worker tcp://hostA:8786" in line][0]   # TXLM_DEVICE=0
    (client,) = [line for line in lines if "score_corpus.py tcp://hostA:8786" in line]
    corpus_script(tmp_path)
    env, logs = venv_env(home, work / "build" / "libtxlm.so"), {}   # as the Installing lines export it

    def start_logged(start, name, line):
        logs[name] = open(tmp_path / f"{name}.log", "w")
        return start(["bash", "-c", line], cwd=tmp_path, env=env, stdout=logs[name], stderr=subprocess.STDOUT)

    address_file = tmp_path / "scheduler.json"
    try:
        with process_groups() as start:
            sched = start_logged(start, "scheduler", f"{scheduler} --host 127.0.0.1 --port 0 --dashboard-address :0 "
                                                     f"--scheduler-file {address_file}")
            deadline, address = time.monotonic() + 120, None
            while address is None:
                assert sched.poll() is None and time.monotonic() < deadline, \
                    "the scheduler did not start: " + (tmp_path / "scheduler.log").read_text()
                time.sleep(0.2)
                try:
                    address = json.loads(address_file.read_text())["address"]
                except (OSError, ValueError):   # not written yet, or half
                    pass
            work_p = start_logged(start, "worker", worker.replace("tcp://hostA:8786", address))
            p = start(["bash", "-c", client.replace("tcp://hostA:8786", address)], cwd=tmp_path, env=env,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            finish(p, 300, client, tmp_path / "worker.log")
            from distributed import Client
            with Client(address, timeout=60) as c:
                where = c.run(eval, "__import__('txlm').__file__")
            assert len(where) == 1 and all(w.startswith(str(home / "txlm-venv")) for w in where.values()), where
            for proc, name in ((work_p, "worker"), (sched, "scheduler")):
                signal_group(proc, signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"the {name} did not stop within 60 s of SIGTERM: " +
                                (tmp_path / f"{name}.log").read_text())
    finally:
        for f in logs.values():
            f.close()
    same_scores(read_tsv(tmp_path / "surprisal.tsv"))


def test_slurm_arrays(tmp_path):
    """The shard script as three array tasks over five documents, then the merge: model.score's rows of each
    document, in document order, its NaN surprisals and words such as "NA" read back as they were."""
    pd = pytest.importorskip("pandas")
    (shard,) = [code for rest, code in marked("python") if "on the demo model for" in rest]
    (merge,) = [code for rest, code in marked("python") if "where the tasks above wrote out/" in rest]
    assert '"/shared/models/wt103.txlm"' in shard and "SLURM_ARRAY_TASK_ID" in shard and "glob.glob" in merge
    (tmp_path / "score_shard.py").write_text(shard.replace('"/shared/models/wt103.txlm"', json.dumps(DEMO)))
    with open(tmp_path / "corpus.jsonl", "w") as f:
        for d in DOCS:
            f.write(json.dumps({"text": d}) + "\n")
    (tmp_path / "out").mkdir()
    for task in range(3):
        env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT="3")
        r = subprocess.run([sys.executable, "score_shard.py", "corpus.jsonl", "out"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-c", merge + "\nprint(df.to_json(orient='records'))"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    same_scores(pd.DataFrame(json.loads(r.stdout), columns=["document", "word", "surprisal"]).fillna(math.nan))
