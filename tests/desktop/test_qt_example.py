#!/usr/bin/env python3
"""docs/embedding.md's Qt program, as written there: the C++ block the doc
shows is examples/qt/generate.cpp byte for byte; the file compiles with
-Wall -Wextra -Werror; the doc's shell block, run line by line in a folder
where build/, examples/ and models/ are this build's and the source's,
builds it (moc, c++) and runs it: its first part is what txlm generate
prints with seed 1, the part after the cancel what txlm generate prints
going on from that state with seed 2 for the tokens it says it made, and
the memory holds the prompt's tokens and all of those.
usage: test_qt_example.py SOURCE_DIR BUILD_DIR TXLM SANITIZE"""
import os
import re
import subprocess
import sys
import tempfile

src, build, cli, sanitize = sys.argv[1:5]
doc = open(os.path.join(src, "docs/embedding.md")).read()
failures = 0


def check(ok, what):
    global failures
    print(("ok" if ok else "FAIL") + ": " + what, flush=True)
    failures += not ok


def block_after(marker, lang):
    """The fenced block of language lang that first follows marker in the doc."""
    at = doc.index(marker)
    start = doc.index("```" + lang + "\n", at) + len(lang) + 4
    return doc[start:doc.index("\n```\n", start) + 1]


with tempfile.TemporaryDirectory() as work:
    for name, target in (("build", build), ("examples", os.path.join(src, "examples")),
                         ("models", os.path.join(src, "models"))):
        os.symlink(os.path.abspath(target), os.path.join(work, name))
    san = [] if sanitize == "none" else [f"-fsanitize={sanitize}"]

    def generate(*args):
        out = subprocess.run([cli, "generate", "-m", "models/demo.txlm", "--no-display-prompt", *args], cwd=work,
                             check=True, capture_output=True).stdout.decode()
        return out[:-1]

    path = "examples/qt/generate.cpp"
    check(block_after(f"`{path}`:", "cpp") == open(os.path.join(src, path)).read(),
          f"docs/embedding.md shows {path} as it is")

    # the doc's shell block, line by line, as written (c++ with the sanitizer's flags in such a build)
    lines = block_after("From the source folder, against the build, with Qt 6:", "sh").splitlines()
    shell = "set -e\nc++() { command c++ " + " ".join(san) + ' "$@"; }\n'
    out = None
    for line in lines:
        if line.startswith("export "):
            shell += line + "\n"
            continue
        r = subprocess.run(["bash", "-c", shell + line], cwd=work, capture_output=True, text=True)
        check(r.returncode == 0, line + (f": {r.stderr}" if r.returncode else ""))
        out = r.stdout
        if r.returncode:
            break

    # the same file, every warning an error
    r = subprocess.run(["bash", "-c", shell + "c++ -std=c++17 -fPIC -Wall -Wextra -Werror -I. "
                        "-fsyntax-only examples/qt/generate.cpp $(pkg-config --cflags Qt6Core txlm)"],
                       cwd=work, capture_output=True, text=True)
    check(r.returncode == 0, "examples/qt/generate.cpp compiles with -Wall -Wextra -Werror"
          + (": " + r.stderr if r.returncode else ""))

    if out is not None:
        first = generate("-p", "The secret of life is", "-n", "40", "--seed", "1", "--state-out", "first.state")
        m = re.fullmatch(r"(.*)\n---\n(.*)\n\[stopped after (\d+) tokens; the memory holds (\d+) tokens\]\n", out, re.S)
        check(m is not None, f"it prints the text, ---, and the stop ({out[-80:]!r})")
        if m:
            n, memory = int(m.group(3)), int(m.group(4))
            check(m.group(1) == first, "the first part is txlm generate's with seed 1")
            after = generate("--state-in", "first.state", "-n", str(n), "--seed", "2")
            check(m.group(2) == after and 10 <= n < 200,
                  f"the {n} tokens after are txlm generate's from that state with seed 2")
            check(memory == 21 + 40 + n, f"the memory holds the prompt's 21 tokens, 40 and {n}")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
