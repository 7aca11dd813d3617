"""Profiling in a child process: the worker's Python work is bound by one interpreter lock, not by CPUs.

Profiling a record batch is pure Python (~70 us per record: parsing, type detection, hashing, grouping), and in
one process it competes for the GIL with parsing, planning and the Kafka client, so a worker used about one core
of two while the rest idled. Here the batch's record values go to one spawned child (``profile_messages`` is a
pure function of them), and the deltas come back; the parent only picks the records to profile (the seen-index)
and publishes. Whole CSV/TSV files are read and profiled there too (``profile_file``). If the child dies, the pool
is rebuilt and that batch (or file) is profiled in a thread instead. The records of a file profiled whole are sent
from there too (``send_file``).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from esc.agents import metrics
from esc.agents.file_profile import FileProfile, profile_file
from esc.agents.pipeline import profile_messages
from esc.agents.profiler import ProfileDelta
from esc.streams.readers import SourceFile
from esc.streams.runtime import log_limits
from esc.streams.runtime.child_process import die_with_parent
from esc.streams.runtime.file_sender import send_file
from esc.streams.runtime.gc_tuning import tune_gc

log = logging.getLogger(__name__)


def _start_child(parent_pid: int) -> None:
    die_with_parent(parent_pid)  # a SIGKILLed worker leaves no profiling child behind
    tune_gc()
    # the child's own lines (its Kafka producer's, during an outage) to stderr, bounded like the worker's
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    log_limits.install()


class ProfilePool:
    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn, not fork: the worker has threads (Kafka client, store drivers) that a fork would copy mid-state
            self._pool = ProcessPoolExecutor(
                self.processes, mp_context=multiprocessing.get_context("spawn"), initializer=_start_child,
                initargs=(os.getpid(),),
            )
        return self._pool

    async def profile(
        self, values: Sequence[bytes | None], stream: str, first: int, last: int, also: dict[str, int]
    ) -> list[ProfileDelta]:
        args = (list(values), stream, first, last, also)
        try:
            deltas = await asyncio.get_running_loop().run_in_executor(self._executor(), profile_messages, *args)
        except BrokenProcessPool:
            log.warning("profiling process died; restarting it, and profiling this batch in a thread")
            self.close()
            deltas = await asyncio.to_thread(profile_messages, *args)
            return deltas  # counted by profile_batch in this process
        for d in deltas:  # counted in the child's registry, which nobody scrapes
            metrics.PROFILE_UPDATES.labels(metrics.source_label(d.source)).inc()
        return deltas

    async def profile_file(
        self, sf: SourceFile, digest: str, offset: int, batch: int, max_fields: int | None
    ) -> FileProfile | str:
        """A whole CSV/TSV file's profile update (``agents/file_profile.py``), read and profiled in the child; a
        reason instead when the columnar reader declines the file."""
        args = (sf, digest, offset, batch, max_fields)
        try:
            got = await asyncio.get_running_loop().run_in_executor(self._executor(), profile_file, *args)
        except BrokenProcessPool:
            log.warning("profiling process died; restarting it, and profiling %s in a thread", sf.rel)
            self.close()
            got = await asyncio.to_thread(profile_file, *args)
        if not isinstance(got, str):
            metrics.PROFILE_UPDATES.labels(metrics.source_label(sf.source)).inc()
        return got

    async def send_file(
        self, sf: SourceFile, digest: str, bootstrap: str, topic: str, max_fields: int | None
    ) -> list[bytes] | str:
        """Send a profiled CSV/TSV file's records from the child (``file_sender.py``): their keys once Kafka has
        them all, or why not (the caller then reads the file record by record)."""
        args = (sf, digest, bootstrap, topic, max_fields)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor(), send_file, *args)
        except BrokenProcessPool:
            log.warning("profiling process died while sending %s; restarting it", sf.rel)
            self.close()
            return "the profiling process died"
        except Exception as exc:  # a delivery failure: the record path sends the file again
            return f"sending from the profiling process failed: {exc!r}"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
