"""What the txlm serve tests share: a server started on a free loopback
port and stopped at the end, plain HTTP calls (http.client), server-sent
events, and `txlm generate` / `txlm score` run for comparison. Every call
has a timeout; a test's whole run is bounded by an alarm."""
import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Server:
    """txlm serve -m MODEL --port 0 ARGS..., the port read from its first line."""

    def __init__(self, txlm, model, *args, env=None):
        self.lines = []
        self.proc = subprocess.Popen([txlm, "serve", "-m", model, "--port", "0", *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env=env or os.environ.copy())
        self.port = None
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("txlm serve exited before listening:\n" + "".join(self.lines))
            self.lines.append(line)
            if "listening on http://" in line:
                self.port = int(line.split("listening on http://")[1].split(" ")[0].rsplit(":", 1)[1])
                break
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """The exit status after sig (the process is killed past timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("txlm serve did not stop within %d s after signal %d" % (timeout, sig))

    def wait_exit(self, timeout=60):
        """The exit status of a server already told to stop (no signal sent: a second one exits at once)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("txlm serve did not stop within %d s" % timeout)

    def log(self):
        return "".join(self.lines)

    def call(self, method, path, body=None, headers=None, timeout=120, raw=None):
        return call(self.port, method, path, body, headers, timeout, raw)

    def json(self, method, path, body=None, headers=None, want=200):
        status, hdrs, data = self.call(method, path, body, headers)
        assert status == want, "%s %s -> %d (want %d): %s" % (method, path, status, want, data[:400])
        return json.loads(data)

    def events(self, path, body, headers=None):
        return events(self.port, path, body, headers)

    def metric(self, name, headers=None):
        status, _, data = self.call("GET", "/metrics", headers=headers)
        assert status == 200, data
        for line in data.decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                if line.split(" ")[0] == name:
                    return float(line.split(" ")[1])
        raise AssertionError("no metric " + name)

    def rss_kib(self):
        for line in open("/proc/%d/status" % self.proc.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def call(port, method, path, body=None, headers=None, timeout=120, raw=None):
    """(status, headers, body bytes). body: a dict (sent as JSON), bytes or str."""
    h = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        h.setdefault("Content-Type", "application/json")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def events(port, path, body, headers=None, timeout=120):
    """A streamed completion's events: (status, [parsed JSON objects], saw [DONE])."""
    h = {"Content-Type": "application/json", **(headers or {})}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("POST", path, body=json.dumps(body), headers=h)
        r = c.getresponse()
        if r.status != 200:
            return r.status, [json.loads(r.read())], False
        assert r.getheader("Content-Type") == "text/event-stream", r.getheaders()
        out, done = [], False
        for block in r.read().decode().split("\n\n"):
            if not block.strip():
                continue
            assert block.startswith("data: "), block
            data = block[6:]
            assert not done, "an event after [DONE]"
            if data == "[DONE]":
                done = True
            else:
                out.append(json.loads(data))
        return r.status, out, done
    finally:
        c.close()


def streamed_text(evs, index=0):
    return "".join(c["text"] for e in evs for c in e.get("choices", []) if c["index"] == index)


def generate(txlm, model, prompt, n, seed, *opts, state_in=None, state_out=None):
    """txlm generate's continuation (--no-display-prompt, the final line break dropped)."""
    cmd = [txlm, "generate", "-m", model, "-n", str(n), "--seed", str(seed), "--no-display-prompt", *opts]
    if prompt is not None:
        cmd += ["-p", prompt]
    if state_in:
        cmd += ["--state-in", state_in]
    if state_out:
        cmd += ["--state-out", state_out]
    out = subprocess.run(cmd, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert text.endswith("\n"), text
    return text[:-1]


def score(txlm, model, text):
    """txlm score --format jsonl of text: the surprisals (None for NA), in bits."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([txlm, "score", "-m", model, f.name, "--format", "jsonl"], capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return [json.loads(line)["surprisal"] for line in out.stdout.decode().splitlines()]
    finally:
        os.unlink(f.name)


def pack(pack_tool, case_dir, out):
    subprocess.run([pack_tool, case_dir, "-o", out], check=True, capture_output=True, timeout=120)


def wait_for(cond, what, timeout=30):
    """Polls cond() until true (counting polls, not timing work); fails past timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def workdir():
    """A temporary folder, removed when the test ends."""
    d = tempfile.mkdtemp(prefix="txlm-serve-")
    atexit.register(shutil.rmtree, d, True)
    return d


def alarm(seconds):
    """The whole test is bounded: past `seconds` it fails (a hang is a failure)."""
    def fire(sig, frame):
        print("FAIL: the test ran past %d s" % seconds)
        os._exit(1)
    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


def setup(seconds):
    """A test's start, from its arguments TXLM TXLM_PACK GOLDEN_CASE_DIR:
    its time bound, a work folder, the case packed into it. (txlm, pack
    tool, model, folder, Checks)."""
    txlm, pack_tool, case_dir = sys.argv[1:4]
    alarm(seconds)
    tmp = workdir()
    model = os.path.join(tmp, "m.txlm")
    pack(pack_tool, case_dir, model)
    return txlm, pack_tool, model, tmp, Checks()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Checks:
    """Counts failures; each check prints one line."""

    def __init__(self):
        self.fails = 0

    def ok(self, cond, what):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            self.fails += 1
        sys.stdout.flush()
        return cond

    def run(self, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # a failed step is reported, the others still run
            import traceback
            traceback.print_exc()
            self.ok(False, "%s: %s" % (fn.__name__, e))

    def done(self):
        print("%d failures" % self.fails)
        return 1 if self.fails else 0
