"""Where a stuck worker waits, all the way down (``kill -USR1``; the integration tests' stuck report).

mode's task dump on SIGUSR1 stops at the first ``async for`` (an ``async_generator_asend`` has no link to its
generator), so a records agent waiting inside its batching generator or the write-behind queue showed only
``await coro``. ``await_chains`` follows every task's await chain through coroutines and lists every unfinished
async generator with its own chain, so each wait point is named by file, line and function (the worker's dump
adds ``consumer_state.partition_lines``: what an idle agent cannot show).
"""

from __future__ import annotations

import asyncio
import gc
import types
from typing import Any


def await_chains() -> str:
    """The await chain of every pending task of the running loop, then of every suspended async generator."""
    parts: list[str] = []
    try:
        tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    except RuntimeError:  # no running loop (called from a plain thread): generators only
        tasks = []
    for task in tasks:
        parts.append(f"Await chain of task {task.get_name()}:\n" + _chain(task.get_coro()))
    for obj in gc.get_objects():
        if isinstance(obj, types.AsyncGeneratorType) and obj.ag_frame is not None:  # not finished
            state = "running" if obj.ag_running else "between items"
            parts.append(f"Await chain of async generator {obj.ag_code.co_qualname} ({state}):\n" + _chain(obj))
    return "\n".join(parts)


def _chain(obj: Any, limit: int = 40) -> str:
    lines = []
    for _ in range(limit):
        if obj is None:
            break
        frame = getattr(obj, "cr_frame", None) or getattr(obj, "ag_frame", None) or getattr(obj, "gi_frame", None)
        if frame is not None:
            lines.append(f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}')
        elif not lines or not lines[-1].endswith(type(obj).__name__):
            lines.append(f"  ({type(obj).__name__})")
        obj = getattr(obj, "cr_await", None) or getattr(obj, "ag_await", None) or getattr(obj, "gi_yieldfrom", None)
    return "\n".join(lines) if lines else "  (no frame)"
