"""Driving txlm-write on a real X display: an Xvfb server, the app with its
test hook (TXLM_WRITE_PROBE: state.json and screenshots, apps/write/write-probe.h),
real key and mouse events through xdotool (XTEST: the X server makes them
as if from the keyboard and mouse, so they reach GTK as any user's do),
and a small PNG reader for the screenshots.

Every wait polls the app's reported state until a condition holds, with a
bounded timeout generous enough for a loaded 2-core machine; no sleep is a
condition of correctness.
"""
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import zlib

SKIP = 77  # meson's exit status for a skipped test


class Failure(Exception):
    pass


def missing_tools():
    """The programs a display test needs that are not installed, with their Debian packages."""
    need = {"Xvfb": "xvfb", "xdotool": "xdotool"}
    return [f"{prog} (Debian: {pkg})" for prog, pkg in need.items() if not shutil.which(prog)]


class Display:
    """An Xvfb server on a display number of its own choosing (-displayfd:
    several tests at once never race for one, and it says when it is ready)."""

    def __init__(self, size="1280x800x24", timeout=60):
        r, w = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", size, "-nolisten", "tcp"],
                                     pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(w)
        number = b""
        deadline = time.monotonic() + timeout
        while not number.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                self.close()
                raise Failure(f"Xvfb did not start within {timeout} s")
            chunk = os.read(r, 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")
                self.close()
                raise Failure(f"Xvfb ended at start: {err.strip()}")
            number += chunk
        os.close(r)
        self.name = ":" + number.decode().strip()

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class App:
    """txlm-write on display, its probe in a folder of its own."""

    def __init__(self, exe, display, args, env=None):
        # in memory where there is a tmpfs: the probe's many small writes stay off a busy disk
        self.dir = tempfile.mkdtemp(prefix="txlm-write-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
        self.env = dict(os.environ, DISPLAY=display.name, TXLM_WRITE_PROBE=self.dir,
                        # a critical warning is a failure, not a line in a log
                        G_DEBUG="fatal-criticals",
                        # no dconf, no accessibility bus, no portal: nothing outside the test
                        GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="1", GTK_A11Y="none", GTK_USE_PORTAL="0",
                        **(env or {}))
        self.env.pop("WAYLAND_DISPLAY", None)
        self.stderr_path = os.path.join(self.dir, "stderr.txt")
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([exe, *args], env=self.env, stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.window = None

    def state(self):
        try:
            with open(os.path.join(self.dir, "state.json"), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def wait(self, what, condition, timeout=120):
        """The first state for which condition holds; Failure (with the last
        state) after timeout seconds or if the app ends."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure(f"waiting for {what}: txlm-write ended with status {self.proc.returncode}:\n"
                              + self.stderr_text())
            s = self.state()
            if s is not None:
                last = s
                if condition(s):
                    return s
            time.sleep(0.05)
        raise Failure(f"waiting for {what}: not within {timeout} s; last state:\n{json.dumps(last, indent=1)}")

    def xdotool(self, *args, timeout=60):
        run = subprocess.run(["xdotool", *map(str, args)], env=self.env, capture_output=True, text=True,
                             timeout=timeout)
        if run.returncode != 0:
            raise Failure(f"xdotool {' '.join(map(str, args))}: {run.stderr.strip()}")
        return run.stdout

    def find_window(self, timeout=60):
        """The app's visible top-level window (GTK also makes a hidden leader window)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(self.proc.pid)], env=self.env,
                                 capture_output=True, text=True, timeout=30)
            ids = run.stdout.split()
            if ids:
                self.window = ids[0]
                return self.window
            time.sleep(0.1)
        raise Failure(f"no visible window of txlm-write within {timeout} s")

    def focus(self):
        self.xdotool("windowfocus", "--sync", self.window)

    def type(self, text):
        # XTEST key events to the focused window (xdotool's --window would
        # send synthetic events, which GTK ignores)
        self.xdotool("type", "--delay", "25", text)

    def key(self, *keys):
        self.xdotool("key", "--clearmodifiers", *keys)

    def click(self, bounds):
        x, y, w, h = bounds
        self.xdotool("mousemove", "--window", self.window, "--sync", int(x + w / 2), int(y + h / 2), "click", "1")

    def screenshot_signal(self):
        self.proc.send_signal(signal.SIGUSR1)

    def stderr_text(self):
        self.stderr.flush()
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def finish(self, timeout=120):
        """Waits for the app to end; its status."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure(f"txlm-write did not end within {timeout} s of being asked to quit")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def read_png(path):
    """(width, height, rows): an 8-bit RGB or RGBA PNG (what GTK writes),
    each row a bytes of width * 4 RGBA values."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure(f"{path}: not a PNG")
    pos, idat, head = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = head
    if depth != 8 or colour not in (2, 6) or interlace:
        raise Failure(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}: not read here")
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if bpp == 3:
            line = bytearray(b for k in range(width) for b in (*line[k * 3:k * 3 + 3], 255))
        rows.append(bytes(line))
    return width, height, rows


def colour_counts(rows):
    """How many pixels of each opaque colour "#rrggbb"."""
    counts = {}
    for row in rows:
        for k in range(0, len(row), 4):
            if row[k + 3] == 255:
                key = "#%02x%02x%02x" % (row[k], row[k + 1], row[k + 2])
                counts[key] = counts.get(key, 0) + 1
    return counts
