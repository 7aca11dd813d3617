"""A child started through ``die_with_parent`` is killed by the kernel when its parent is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from esc.streams.runtime.profile_pool import _start_child

def child_pid() -> int:
    return os.getpid()

if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_start_child,
                               initargs=(os.getpid(),))
    print(pool.submit(child_pid).result(), flush=True)
    time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")  # a zombie is gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_profiling_child_dies_when_its_parent_is_sigkilled(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT, "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        assert child != proc.pid and alive(child)
        os.kill(proc.pid, signal.SIGKILL)  # the parent only: no cleanup runs
        proc.wait(10)
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the child outlived its SIGKILLed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
