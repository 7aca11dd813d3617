"""Garbage-collector and allocator settings for the worker's hot path.

The pipeline allocates millions of short-lived objects (parsed envelopes, planned rows, Kafka events) that hold
no reference cycles. CPython's default thresholds (700, 10, 10) start a young-generation collection every 700
allocations and a full one often, and each traverses whatever batch is alive (5,000 records, the deferred
buffer): measured on lineitem planning, the collector took about half of the time (93 -> 47 us per record with
it off). Here the objects alive after start-up (modules, the model, the contract) are frozen out of every
collection and the thresholds raised, so collections are rarer and cheaper; cycles are still collected.

glibc's allocator gives each thread that allocates its own arena (up to 8 per core), and memory freed in one arena
is rarely returned to the system: the worker's threads (Neo4j writes and planning in ``asyncio.to_thread``, the
vector writer, librdkafka's callbacks) each kept their own. Two arenas cut the worker's peak RSS on TPC-H SF 0.05
from 1,115 to 1,035 MiB at the same throughput (1,852 / 1,856 records/s); ``MALLOC_ARENA_MAX`` in the environment
still wins.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os

THRESHOLDS = (100_000, 50, 100)
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def tune_malloc() -> bool:
    """Cap glibc's malloc arenas (before the process starts its threads); False where there is no glibc or the
    environment sets ``MALLOC_ARENA_MAX`` itself."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    libc = _libc()
    with contextlib.suppress(AttributeError):
        return libc is not None and bool(libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS))
    return False


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    with contextlib.suppress(OSError):
        return ctypes.CDLL(name)
    return None


def trim_malloc() -> bool:
    """Give the memory glibc's allocator holds free back to the system (``malloc_trim``); False where there is
    no glibc. After a burst that freed a lot: a replay's scan of the records topic (librdkafka's fetch buffers and
    the messages it decoded) left ~150-400 MB free but held, and each later scan's peak stacked on it (20 schema
    diffs at TPC-H SF 0.1, each replaying its source: worker RSS 580 -> 1,150 MiB)."""
    libc = _libc()
    with contextlib.suppress(AttributeError):
        return libc is not None and bool(libc.malloc_trim(0))
    return False


def tune_gc() -> None:
    gc.collect()
    gc.freeze()  # start-up objects live for the whole process: never traverse them again
    gc.set_threshold(*THRESHOLDS)
