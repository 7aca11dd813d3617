"""Child processes die with their parent: a worker killed with SIGKILL runs no cleanup, so a profiling child (and,
through the pipe it holds, multiprocessing's resource tracker) would live on as an orphan.

``die_with_parent`` runs first in the child (a pool initializer): on Linux it asks the kernel for SIGKILL when the
parent dies (``prctl(PR_SET_PDEATHSIG)``), then checks that the parent it was started by is still there (it may
have died before the request was made). Elsewhere it only does the check.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> bool:
    """Ask for SIGKILL when the parent goes; exit at once if it is already gone. True when the kernel agreed."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except OSError:
            armed = False
    if os.getppid() != parent_pid:  # the parent died before the request: nobody would ever reap this child
        os._exit(1)
    return armed
