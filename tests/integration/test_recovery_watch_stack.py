"""A Faust table recovery that receives none of its changelog messages (the two-worker test's failures) ends once
the recovery watch seeks the partitions again (streams/runtime/recovery_watch.py); without the watch it does not.
A real Faust worker on the real Kafka, its recovery made to lose its seek (``stalled_recovery_app.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration

APP = Path(__file__).with_name("stalled_recovery_app.py")
ENTRIES = 500


def _changelog(bootstrap: str, app_id: str) -> None:
    """The table's changelog as a previous worker left it: ``ENTRIES`` keys, each written twice."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [
        NewTopic(f"{app_id}-t-changelog", num_partitions=1, replication_factor=1, config={"cleanup.policy": "compact"}),
        NewTopic(f"{app_id}-in", num_partitions=1, replication_factor=1),
    ]
    for fut in admin.create_topics(topics).values():
        fut.result(30)
    prod = Producer({"bootstrap.servers": bootstrap})
    for rnd in range(2):
        for i in range(ENTRIES):
            prod.produce(f"{app_id}-t-changelog", key=f"k{i}".encode(), value=f"v{rnd}".encode())
    assert prod.flush(30) == 0


def _run(bootstrap: str, app_id: str, stall: float, wait: float, tmp: Path) -> tuple[str | None, str]:
    """Start the worker; the line ``RECOVERED n`` if it came within ``wait`` seconds, and the worker's log."""
    log = tmp / f"worker-{stall}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, str(APP), bootstrap, app_id, str(stall), "worker", "--without-web"],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp,
        )
        try:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and proc.poll() is None:
                done = re.search(r"RECOVERED \d+", log.read_text(errors="replace"))  # (Faust logs what is printed)
                if done:
                    return done.group(0), log.read_text(errors="replace")
                time.sleep(0.5)
            return None, log.read_text(errors="replace")
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_a_recovery_that_lost_its_seek_ends_once_the_watch_seeks_again(kafka_bootstrap: str, tmp_path: Path) -> None:
    app_id = f"rw{uuid.uuid4().hex[:8]}"
    _changelog(kafka_bootstrap, app_id)

    # the control: without the watch, recovery never ends (the sabotage does what the CI failures showed)
    line, log = _run(kafka_bootstrap, app_id, stall=0, wait=30, tmp=tmp_path)
    assert line is None, f"recovery ended without the watch: the test does not reproduce the stall\n{log[-3000:]}"

    line, log = _run(kafka_bootstrap, app_id, stall=4, wait=120, tmp=tmp_path)
    assert line == f"RECOVERED {ENTRIES}", log[-5000:]
    assert "seeking them again" in log and "Consumer state" in log
