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
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from embedding_doc import EmbeddingDoc  # noqa: E402

src, build, cli, sanitize = sys.argv[1:5]
doc = EmbeddingDoc(src, build, cli)

with tempfile.TemporaryDirectory() as work:
    doc.lay_out(work)
    san = [] if sanitize == "none" else [f"-fsanitize={sanitize}"]
    doc.check_shown("examples/qt/generate.cpp", "cpp")

    # the doc's shell block, line by line, as written (c++ with the sanitizer's flags in such a build)
    shell = "set -e\nc++() { command c++ " + " ".join(san) + ' "$@"; }\n'
    outputs, shell = doc.run_shell_block("From the source folder, against the build, with Qt 6:", shell,
                                  stop_at_failure=True)

    # the same file, every warning an error
    r = subprocess.run(["bash", "-c", shell + "c++ -std=c++17 -fPIC -Wall -Wextra -Werror -I. "
                        "-fsyntax-only examples/qt/generate.cpp $(pkg-config --cflags Qt6Core txlm)"],
                       cwd=work, capture_output=True, text=True)
    doc.check(r.returncode == 0, "examples/qt/generate.cpp compiles with -Wall -Wextra -Werror"
              + (": " + r.stderr if r.returncode else ""))

    if outputs:
        doc.check_stopped_run("", outputs[-1][1])

sys.exit(doc.exit_status())
