"""docs/python.md's examples run as written: every block marked "runs in
tests/python (test_docs.py)". Those marked "and prints the block after it"
print exactly that block; the Installing lines make a virtual environment
in a home folder of their own and print the figures shown under them; the
Slurm shard script (on the demo model, the one change) runs as three array
tasks, and the merge after it gives model.score's rows of every document.
The Dask example needs a cluster (test_dask.py runs its calls)."""
import json
import math
import os
import re
import shutil
import subprocess
import sys

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


@pytest.mark.skipif(not (os.path.exists("/usr/bin/python3") and shutil.which("bash")), reason="no /usr/bin/python3")
def test_installing_lines(tmp_path):
    """The lines under "Installing", as written, in a folder holding this source's python/ and models/ and this
    build's library as build/libtxlm.so; the installed package (not this source tree's) prints the figures shown."""
    pytest.importorskip("pip")
    (block,) = [code for rest, code in marked("sh") if "home folder of its own" in rest]
    want = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    work, home = tmp_path / "work", tmp_path / "home"
    home.mkdir()
    shutil.copytree(ROOT / "python", work / "python", ignore=shutil.ignore_patterns("tests", "build", "*.egg-info",
                                                                                    "__pycache__"))
    (work / "build").mkdir()
    (work / "build" / "libtxlm.so").symlink_to(os.environ["TXLM_LIBRARY"])
    (work / "models").symlink_to(ROOT / "models")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TXLM_LIBRARY", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", block + '\n~/txlm-venv/bin/python -c "import txlm; '
                        'print(txlm.__file__)"\n'], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert out[-2:-1] == want and out[-1].startswith(str(home / "txlm-venv")), r.stdout


def test_slurm_arrays(tmp_path):
    """The shard script as three array tasks over five documents, then the merge: model.score's rows of each
    document, in document order, its NaN surprisals and words such as "NA" read back as they were."""
    pd = pytest.importorskip("pandas")
    import txlm
    (shard,) = [code for rest, code in marked("python") if "on the demo model for" in rest]
    (merge,) = [code for rest, code in marked("python") if "where the tasks above wrote out/" in rest]
    assert '"/shared/models/wt103.txlm"' in shard and "SLURM_ARRAY_TASK_ID" in shard and "glob.glob" in merge
    (tmp_path / "score_shard.py").write_text(shard.replace('"/shared/models/wt103.txlm"', json.dumps(DEMO)))
    docs = ["The cat sat on the mat.\nNA null 1.5", "A second\ndocument.", "Third.", "Any fool can make things bigger.",
            "The end."]
    with open(tmp_path / "corpus.jsonl", "w") as f:
        for d in docs:
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
    got = json.loads(r.stdout)
    with txlm.Model(DEMO) as model:
        want = pd.concat([model.score(d).assign(document=i) for i, d in enumerate(docs)])
    assert [(g["document"], g["word"]) for g in got] == list(zip(want["document"], want["word"]))
    for g, s in zip(got, want["surprisal"]):
        assert (g["surprisal"] is None and math.isnan(s)) or abs(g["surprisal"] - s) < 1e-9
