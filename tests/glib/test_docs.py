#!/usr/bin/env python3
"""docs/embedding.md's programs, as written there: the shortest program
(GJS) runs and prints txlm generate's text token by token; the three
examples the doc shows are examples/glib/'s files byte for byte, and its
shell block, run line by line in a folder where build/, examples/ and
models/ are this build's and the source's, builds and runs each: the
same text, the first part txlm generate's with seed 1, the part after the
cancel txlm generate's going on from that state with seed 2, the memory
the tokens fed. A line for gjs or python3-gi is skipped, saying so, where
that is missing.
usage: test_docs.py SOURCE_DIR BUILD_DIR TXLM SANITIZE"""
import json
import os
import re
import shutil
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


def generate(*args):
    out = subprocess.run([cli, "generate", "-m", "models/demo.txlm", "--no-display-prompt", *args], cwd=work,
                         check=True, capture_output=True).stdout.decode()
    return out[:-1]


have_gjs = shutil.which("gjs") is not None
have_gi = subprocess.run(["/usr/bin/python3", "-c", "import gi"], capture_output=True).returncode == 0

with tempfile.TemporaryDirectory() as work:
    for name, target in (("build", build), ("examples", os.path.join(src, "examples")),
                         ("models", os.path.join(src, "models"))):
        os.symlink(os.path.abspath(target), os.path.join(work, name))
    env = dict(os.environ)
    san = [] if sanitize == "none" else [f"-fsanitize={sanitize}"]

    # the examples shown are the files
    for path, lang in (("examples/glib/generate.c", "c"), ("examples/glib/generate.js", "js"),
                       ("examples/glib/generate.py", "python")):
        shown = block_after(f"`{path}`:", lang)
        check(shown == open(os.path.join(src, path)).read(), f"docs/embedding.md shows {path} as it is")
    # the C example compiles clean
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "txlm-glib-1.0"], check=True, capture_output=True,
                            text=True, env={**env, "PKG_CONFIG_PATH": os.path.join(build, "meson-uninstalled")}).stdout.split()
    r = subprocess.run(["cc", "-Wall", "-Werror", *san, os.path.join(src, "examples/glib/generate.c"), *cflags,
                        "-o", os.path.join(work, "generate-wall")], capture_output=True, text=True)
    check(r.returncode == 0, "examples/glib/generate.c compiles with -Wall -Werror" + (": " + r.stderr if r.returncode else ""))

    # the doc's shell block, line by line, as written (cc with the sanitizer's flags in such a build)
    lines = block_after("From the source folder, against the build:", "sh").splitlines()
    shell = "set -e\ncc() { command cc " + " ".join(san) + ' "$@"; }\n'
    outputs = []
    for line in lines:
        if line.startswith("export "):
            shell += line + "\n"
            continue
        if line.startswith("gjs ") and not have_gjs:
            print("skipped (no gjs; Debian: gjs): " + line)
            continue
        if line.startswith("/usr/bin/python3 ") and not have_gi:
            print("skipped (no PyGObject; Debian: python3-gi): " + line)
            continue
        r = subprocess.run(["bash", "-c", shell + line], cwd=work, capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"{line}" + (f": {r.stderr}" if r.returncode else ""))
        outputs.append((line, r.stdout))

    first = generate("-p", "The secret of life is", "-n", "40", "--seed", "1", "--state-out", "first.state")
    for line, out in outputs:
        m = re.fullmatch(r"(.*)\n---\n(.*)\n\[stopped after (\d+) tokens; the memory holds (\d+) tokens\]\n", out, re.S)
        check(m is not None, f"{line.split()[0]}: prints the text, ---, and the stop ({out[-80:]!r})")
        if not m:
            continue
        n, memory = int(m.group(3)), int(m.group(4))
        check(m.group(1) == first, f"{line.split()[0]}: the first part is txlm generate's with seed 1")
        after = generate("--state-in", "first.state", "-n", str(n), "--seed", "2")
        check(m.group(2) == after and 10 <= n < 200,
              f"{line.split()[0]}: the {n} tokens after are txlm generate's from that state with seed 2")
        check(memory == 21 + 40 + n, f"{line.split()[0]}: the memory holds the prompt's 21 tokens, 40 and {n}")

    # the shortest program, as written
    if not have_gjs:
        print("skipped (no gjs; Debian: gjs): the shortest program")
    else:
        snippet = block_after("## The shortest program", "js")
        with open(os.path.join(work, "snippet.js"), "w") as f:
            f.write(snippet)
        genv = {**env, "GI_TYPELIB_PATH": os.path.join(build, "glib"),
                "LD_LIBRARY_PATH": os.path.join(build, "glib") + ":" + build}
        r = subprocess.run(["gjs", "-m", "snippet.js"], cwd=work, capture_output=True, text=True, env=genv)
        want = generate("-p", "The secret of life is", "-n", "20", "--seed", "1")
        lines = r.stdout.split("\n")
        tokens = [json.loads(line[len("token: "):]) for line in lines[:20] if line.startswith("token: ")]
        rest = "\n".join(lines[20:])
        check(r.returncode == 0 and len(tokens) == 20 and "".join(tokens) == want and rest == want + "\n",
              f"the shortest program prints 20 tokens and then txlm generate's text {want!r}: {r.stdout!r} {r.stderr}")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
