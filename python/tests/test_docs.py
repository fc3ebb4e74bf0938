"""docs/python.md's worked example runs as written and prints what the page shows."""
import re
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("pandas")


def test_worked_example_prints_what_the_docs_show():
    page = (ROOT / "docs" / "python.md").read_text()
    m = re.search(r"<!-- the block below runs in tests/python.*?-->\n```python\n(.*?)```\n\n"
                  r"prints\n\n```text\n(.*?)```", page, re.S)
    assert m, "docs/python.md: the worked example and its output are not where this test looks"
    code, shown = m.groups()
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == shown
