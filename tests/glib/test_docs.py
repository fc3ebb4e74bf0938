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
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from embedding_doc import EmbeddingDoc  # noqa: E402

src, build, cli, sanitize = sys.argv[1:5]
doc = EmbeddingDoc(src, build, cli)

have_gjs = shutil.which("gjs") is not None
have_gi = subprocess.run(["/usr/bin/python3", "-c", "import gi"], capture_output=True).returncode == 0


def missing_interpreter(line):
    if line.startswith("gjs ") and not have_gjs:
        return "no gjs; Debian: gjs"
    if line.startswith("/usr/bin/python3 ") and not have_gi:
        return "no PyGObject; Debian: python3-gi"
    return None


with tempfile.TemporaryDirectory() as work:
    doc.lay_out(work)
    env = dict(os.environ)
    san = [] if sanitize == "none" else [f"-fsanitize={sanitize}"]

    # the examples shown are the files
    for path, lang in (("examples/glib/generate.c", "c"), ("examples/glib/generate.js", "js"),
                       ("examples/glib/generate.py", "python")):
        doc.check_shown(path, lang)
    # the C example compiles clean
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "txlm-glib-1.0"], check=True, capture_output=True,
                            text=True, env={**env, "PKG_CONFIG_PATH": os.path.join(build, "meson-uninstalled")}).stdout.split()
    r = subprocess.run(["cc", "-Wall", "-Werror", *san, os.path.join(src, "examples/glib/generate.c"), *cflags,
                        "-o", os.path.join(work, "generate-wall")], capture_output=True, text=True)
    doc.check(r.returncode == 0, "examples/glib/generate.c compiles with -Wall -Werror" + (": " + r.stderr if r.returncode else ""))

    # the doc's shell block, line by line, as written (cc with the sanitizer's flags in such a build)
    shell = "set -e\ncc() { command cc " + " ".join(san) + ' "$@"; }\n'
    outputs, _ = doc.run_shell_block("From the source folder, against the build:", shell, env=env,
                                     skip=missing_interpreter)
    for line, out in outputs:
        doc.check_stopped_run(f"{line.split()[0]}: ", out)

    # the shortest program, as written
    if not have_gjs:
        print("skipped (no gjs; Debian: gjs): the shortest program")
    else:
        snippet = doc.block_after("## The shortest program", "js")
        with open(os.path.join(work, "snippet.js"), "w") as f:
            f.write(snippet)
        genv = {**env, "GI_TYPELIB_PATH": os.path.join(build, "glib"),
                "LD_LIBRARY_PATH": os.path.join(build, "glib") + ":" + build}
        r = subprocess.run(["gjs", "-m", "snippet.js"], cwd=work, capture_output=True, text=True, env=genv)
        want = doc.generate("-p", "The secret of life is", "-n", "20", "--seed", "1")
        lines = r.stdout.split("\n")
        tokens = [json.loads(line[len("token: "):]) for line in lines[:20] if line.startswith("token: ")]
        rest = "\n".join(lines[20:])
        doc.check(r.returncode == 0 and len(tokens) == 20 and "".join(tokens) == want and rest == want + "\n",
                  f"the shortest program prints 20 tokens and then txlm generate's text {want!r}: {r.stdout!r} {r.stderr}")

sys.exit(doc.exit_status())
