"""The worker's allocator setting (streams/runtime/gc_tuning.py): glibc's malloc arenas capped, unless the
environment decides."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys

import pytest

from esc.streams.runtime.gc_tuning import tune_malloc


def test_arenas_capped_on_glibc() -> None:
    if ctypes.util.find_library("c") is None or "glibc" not in " ".join(__import__("platform").libc_ver()):
        pytest.fail("this suite runs on Linux with glibc (the README's platform)")
    # in a fresh interpreter: mallopt answers 1 when it took the setting
    code = "from esc.streams.runtime.gc_tuning import tune_malloc; print(tune_malloc())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert out.stdout.strip() == "True"


def test_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert tune_malloc() is False


TRIM_PROBE = """
from esc.streams.runtime.gc_tuning import trim_malloc
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) // 1024
keep = []
held = [bytes(4000) + bytes([i % 256]) for i in range(50_000)]  # ~200 MB in glibc's heap (under mmap's threshold)
for i in range(0, len(held), 100):
    keep.append(held[i])  # a few stay alive, spread over the heap, as a worker's long-lived objects are
del held
before = rss()
print(before, trim_malloc(), rss())
"""


def test_trim_gives_freed_heap_memory_back() -> None:
    out = subprocess.run([sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    before, trimmed, after = out.stdout.split()
    assert int(before) > 150, out.stdout  # freed, yet held by the allocator
    assert trimmed == "True" and int(after) < int(before) / 2, out.stdout
