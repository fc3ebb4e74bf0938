"""Fixtures: the build's library and tools, the demo model and the golden cases packed.

The meson test (tests/python) sets TXLM_LIBRARY, TXLM_CLI, TXLM_PACK and
TXLM_GOLDEN; run by hand, they default to the source tree and its build/:

    TXLM_LIBRARY=build/libtxlm.so /usr/bin/python3 -m pytest python/tests
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TXLM_BUILD", ROOT / "build"))
# absolute: tests run processes in other folders (by hand, TXLM_LIBRARY=build/libtxlm.so as above)
os.environ["TXLM_LIBRARY"] = os.path.abspath(os.environ.get("TXLM_LIBRARY", BUILD / "libtxlm.so"))
CLI = os.environ.get("TXLM_CLI", str(BUILD / "tools" / "txlm"))
PACK = os.environ.get("TXLM_PACK", str(BUILD / "tools" / "txlm-pack"))
GOLDEN = Path(os.environ.get("TXLM_GOLDEN", ROOT / "tests" / "golden"))
DEMO = str(ROOT / "models" / "demo.txlm")
DEMO_TEXT = (ROOT / "models" / "demo_heldout.txt").read_text()
# processes the tests start (Dask workers, scripts) import this source tree's package and helpers
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(Path(__file__).parent)] +
                                           ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
sys.path.insert(0, str(ROOT / "python"))

import txlm  # noqa: E402


def run_cli(*args: str, input: bytes | None = None) -> bytes:
    """The txlm command's standard output; a failing command fails the test with its stderr."""
    r = subprocess.run([CLI, *args], input=input, capture_output=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"txlm {' '.join(args)} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def rss_bytes() -> int:
    """This process's resident memory."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(scope="session")
def demo() -> txlm.Model:
    m = txlm.Model(DEMO)
    yield m
    m.close()


@pytest.fixture(scope="session")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Dict]:
    """Every golden case: its packed model path, its segments.json and its folder."""
    out = tmp_path_factory.mktemp("golden")
    cases = {}
    for case in sorted(p for p in GOLDEN.iterdir() if (p / "segments.json").exists()):
        path = out / f"{case.name}.txlm"
        r = subprocess.run([PACK, str(case), "-o", str(path)], capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        segments = json.loads((case / "segments.json").read_text())
        cases[case.name] = {"path": str(path), "dir": case, "segments": segments}
    return cases


@pytest.fixture(scope="session")
def word_model(golden: Dict[str, Dict]) -> txlm.Model:
    """A word-level model with an adaptive softmax (golden adaptive_word)."""
    m = txlm.Model(golden["adaptive_word"]["path"])
    yield m
    m.close()


@pytest.fixture(scope="session")
def wt103_model(golden: Dict[str, Dict], tmp_path_factory: pytest.TempPathFactory) -> txlm.Model:
    """The same word model with the WikiText-103 tokenizer, whose detokenizer holds the last word back."""
    path = tmp_path_factory.mktemp("wt103") / "wt103.txlm"
    r = subprocess.run([PACK, str(golden["adaptive_word"]["dir"]), "--tokenizer", "wt103", "-o", str(path)],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    m = txlm.Model(path)
    yield m
    m.close()


def word_text(model: txlm.Model, lines: int = 6, per_line: int = 9, seed: int = 3) -> str:
    """Lines of words from a word model's vocabulary, with a few it lacks (<unk>)."""
    rng = np.random.default_rng(seed)
    vocab = [w for w in model.vocab if not w.startswith("<")]
    out: List[str] = []
    for i in range(lines):
        words = [vocab[int(k)] for k in rng.integers(0, len(vocab), per_line)]
        if i % 2:
            words[3] = "zebra"
        out.append(" ".join(words))
    return "\n".join(out) + "\n"


@pytest.fixture(autouse=True)
def no_validation_messages() -> None:
    """Every test leaves the validation layer silent (zero messages tolerated)."""
    ctx = txlm.Context.shared()
    before = ctx.validation_messages
    yield
    if not ctx.closed:
        assert ctx.validation_messages == before, "Vulkan validation messages"
