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
