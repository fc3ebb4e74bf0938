#!/usr/bin/env python3
"""txlm chat on a terminal (a pseudo-terminal here), stdout to a file:
  - the prompt "> " goes to the terminal (stderr), never into stdout;
  - a line is edited and kept in a history: the Up arrow brings "w5 w9"
    back (shown on the terminal, no bell), and Enter sends it again, so
    the replies are those of the same line typed twice (checked against
    the chat fed by a pipe);
  - Ctrl-D at the prompt ends the chat with exit status 0 and leaves the
    terminal on a new line (the last bytes are a line break, not "> ").
usage: test_chat_tty.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

txlm, pack, case_dir = sys.argv[1:4]
work = tempfile.mkdtemp()
model = os.path.join(work, "m.txlm")
subprocess.run([pack, case_dir, "-o", model], check=True, stdout=subprocess.DEVNULL)
args = [txlm, "chat", "-m", model, "--temp", "0", "-n", "6"]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


# the same two lines through a pipe: what the terminal session must reply
piped = subprocess.run(args, input=b"w5 w9\nw5 w9\n", capture_output=True, timeout=120)
check(piped.returncode == 0 and piped.stdout.count(b"\n") == 2, f"piped chat: {piped.stdout!r}")
check(b"> " not in piped.stdout and b"> " not in piped.stderr, "no prompt when standard input is a pipe")

out_path = os.path.join(work, "stdout.txt")
pid, fd = pty.fork()
if pid == 0:
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.execv(txlm, args)
seen = b""


def read_until(want, seconds=60):
    """Terminal output until `want` has appeared after what was seen before."""
    global seen
    start, end = len(seen), time.time() + seconds
    while want not in seen[start:] and time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return want in seen[start:]


def replies_done(n, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        with open(out_path, "rb") as f:
            if f.read().count(b"\n") >= n:
                return True
        time.sleep(0.1)
    return False


check(read_until(b"> "), "the prompt on the terminal")
os.write(fd, b"w5 w9\r")
check(replies_done(1) and read_until(b"> "), "the first line answered, the prompt again")
mark = len(seen)
os.write(fd, b"\x1b[A")  # Up arrow: the line before comes back on the terminal
check(read_until(b"w5 w9", 10) and b"\x07" not in seen[mark:], f"the Up arrow shows the line before: {seen[mark:]!r}")
os.write(fd, b"\r")
check(replies_done(2) and read_until(b"> "), "the line from the history answered, the prompt again")
os.write(fd, b"\x04")  # Ctrl-D
read_until(b"\n", 10)
deadline = time.time() + 30
status = None
while status is None and time.time() < deadline:
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
    else:
        read_until(b"\x00", 0.2)
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
check(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"Ctrl-D ends the chat (status {status})")
check(seen.endswith(b"\n"), f"Ctrl-D leaves the terminal on a new line: {seen[-20:]!r}")
with open(out_path, "rb") as f:
    stdout = f.read()
check(b"> " not in stdout, f"no prompt in standard output: {stdout!r}")
check(stdout == piped.stdout,
      f"the Up arrow gave back the line: {stdout!r} against {piped.stdout!r}")
subprocess.run(["rm", "-rf", work])
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
