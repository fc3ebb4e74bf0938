"""What the tests of docs/embedding.md's programs share (tests/glib/test_docs.py
and tests/desktop/test_qt_example.py): the doc's fenced blocks, a folder laid
out as the doc's commands expect (build/, examples/ and models/ this build's
and the source's), the doc's shell block run there line by line, and the
check every example's output meets: what txlm generate prints with seed 1,
then, after the cancel, what it prints going on from that state with seed 2."""
import os
import re
import subprocess

STOPPED = re.compile(r"(.*)\n---\n(.*)\n\[stopped after (\d+) tokens; the memory holds (\d+) tokens\]\n", re.S)


class EmbeddingDoc:
    def __init__(self, src, build, cli):
        self.src, self.build, self.cli = src, build, cli
        self.doc = open(os.path.join(src, "docs/embedding.md")).read()
        self.failures = 0
        self.work = None
        self._first = None

    def check(self, ok, what):
        print(("ok" if ok else "FAIL") + ": " + what, flush=True)
        self.failures += not ok

    def block_after(self, marker, lang):
        """The fenced block of language lang that first follows marker in the doc."""
        at = self.doc.index(marker)
        start = self.doc.index("```" + lang + "\n", at) + len(lang) + 4
        return self.doc[start:self.doc.index("\n```\n", start) + 1]

    def lay_out(self, work):
        """work gets build/, examples/ and models/ as links; the doc's commands run there."""
        for name, target in (("build", self.build), ("examples", os.path.join(self.src, "examples")),
                             ("models", os.path.join(self.src, "models"))):
            os.symlink(os.path.abspath(target), os.path.join(work, name))
        self.work = work

    def check_shown(self, path, lang):
        """The doc shows the file at path (after "`path`:") byte for byte."""
        self.check(self.block_after(f"`{path}`:", lang) == open(os.path.join(self.src, path)).read(),
                   f"docs/embedding.md shows {path} as it is")

    def generate(self, *args):
        out = subprocess.run([self.cli, "generate", "-m", "models/demo.txlm", "--no-display-prompt", *args],
                             cwd=self.work, check=True, capture_output=True).stdout.decode()
        return out[:-1]

    def run_shell_block(self, marker, shell, env=None, skip=lambda line: None, stop_at_failure=False):
        """The doc's sh block after marker, line by line, as written, each line after shell (and the
        block's export lines before it); skip(line) gives why a line is not run, or None. Returns
        (line, standard output) of each line run, and shell with the block's export lines added."""
        outputs = []
        for line in self.block_after(marker, "sh").splitlines():
            if line.startswith("export "):
                shell += line + "\n"
                continue
            why = skip(line)
            if why:
                print(f"skipped ({why}): {line}")
                continue
            r = subprocess.run(["bash", "-c", shell + line], cwd=self.work, capture_output=True, text=True, env=env)
            self.check(r.returncode == 0, line + (f": {r.stderr}" if r.returncode else ""))
            outputs.append((line, r.stdout))
            if r.returncode and stop_at_failure:
                break
        return outputs, shell

    def check_stopped_run(self, label, out):
        """out is an example's: the text, ---, the text after it until the cancel, and the stop's line."""
        if self._first is None:
            self._first = self.generate("-p", "The secret of life is", "-n", "40", "--seed", "1",
                                        "--state-out", "first.state")
        m = STOPPED.fullmatch(out)
        self.check(m is not None, f"{label}prints the text, ---, and the stop ({out[-80:]!r})")
        if not m:
            return
        n, memory = int(m.group(3)), int(m.group(4))
        self.check(m.group(1) == self._first, f"{label}the first part is txlm generate's with seed 1")
        after = self.generate("--state-in", "first.state", "-n", str(n), "--seed", "2")
        self.check(m.group(2) == after and 10 <= n < 200,
                   f"{label}the {n} tokens after are txlm generate's from that state with seed 2")
        self.check(memory == 21 + 40 + n, f"{label}the memory holds the prompt's 21 tokens, 40 and {n}")

    def exit_status(self):
        print(f"{self.failures} failures")
        return 1 if self.failures else 0
