"""No leaks: 400 cycles of creating and freeing models, sessions, batches and detokenizers
(half closed explicitly, half left to garbage collection, some in reference cycles) leave the
process's memory flat: the C heap in use (malloc's count, to the byte), Python's objects, the
C handles still open (exactly none) and the resident size (loosely: the driver touches pages
lazily, steps of a few MiB that are not leaks).

Measured in a process of its own without the Vulkan validation layer: the layer's own
bookkeeping grows with every object ever created (7 KiB per session created and freed, the
same from C), which would hide a leak of ours or fake one."""
import ctypes
import gc
import os
import subprocess
import sys

import pytest
from conftest import DEMO, rss_bytes

import txlm
from txlm._handle import live_handles

WARM_UP = 100   # the allocator and the driver reach their steady state (a C loop's first cycles grow too)
CYCLES = 400
# What 400 cycles may add. One model left unfreed is 7 MB of weights, one session about
# 1 MB, a detokenizer a few hundred bytes of heap (400 of them pass 96 KiB); a Python object
# kept per cycle is 400 blocks.
HEAP_SLACK = 96 << 10
BLOCKS_SLACK = 200
RSS_SLACK = 64 << 20


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                              "uordblks", "fordblks", "keepcost")]


def heap_bytes() -> int:
    """Bytes malloc has handed out and not had back (glibc's mallinfo2: small blocks and mmapped)."""
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    m = libc.mallinfo2()
    return m.uordblks + m.hblkhd


def cycle(i: int) -> None:
    """Every kind of object made, used and freed; the longer device work every 4th cycle."""
    m = txlm.Model(DEMO, verify=False, progress=lambda f: None)
    s = m.session(mem_len=16, max_segment=8)
    ids = m.tokenize("abc de")
    s.feed(ids)
    t = txlm.Session.from_state(m, s.state(), mem_len=16, max_segment=8)
    b = m.batch(2, mem_len=16, max_segment=8)
    d = m.detokenizer()
    d.push(int(ids[0]))
    if i % 4 == 1:
        s.feed_long(ids, progress=lambda f: None)
        b.feed([s, t], [ids[:3], ids[:2]])
        "".join(s.generate("", 2, seed=i))
    if i % 2:
        for x in (d, b, t, s, m):
            x.close()
    elif i % 4 == 0:
        m.cycle = (m, s, b)  # left to the cycle collector, which finalizes in any order


def cycles(first: int, n: int) -> None:
    for i in range(first, first + n):
        cycle(i)
        if i % 100 == 99:
            # the objects left in reference cycles hold their models' weights until collected;
            # collecting as often keeps the high-water mark, and so the resident size, steady
            gc.collect()


def growth() -> str:
    """What the measured cycles added: heap bytes, Python blocks, C handles, resident bytes."""
    cycles(0, WARM_UP)
    before = (heap_bytes(), sys.getallocatedblocks(), live_handles(), rss_bytes())
    cycles(WARM_UP, CYCLES)
    after = (heap_bytes(), sys.getallocatedblocks(), live_handles(), rss_bytes())
    return " ".join(str(a - b) for a, b in zip(after, before))


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="under AddressSanitizer malloc's counts are not glibc's, and freed memory waits "
                           "in quarantine")
def test_create_free_cycles_keep_memory_flat():
    env = dict(os.environ, TXLM_VALIDATION="0")
    r = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    heap, blocks, handles, rss = map(int, r.stdout.split())
    assert handles == 0, f"{handles} C handles never freed"
    assert heap < HEAP_SLACK, f"{heap} more heap bytes in use after {CYCLES} cycles"
    assert blocks < BLOCKS_SLACK, f"{blocks} more Python objects after {CYCLES} cycles"
    assert rss < RSS_SLACK, f"{rss / 2**20:.1f} MiB more resident after {CYCLES} cycles"


if __name__ == "__main__":
    print(growth())
