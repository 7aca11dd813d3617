"""A source partition that stops delivering after a recovery (the two-worker test's failure of stop 33) delivers
again once the stream watch seeks it (streams/runtime/stream_watch.py); without the watch it does not. A real
Faust worker with the worker's Faust patches on the real Kafka, its partition made to stall two ways
(``stalled_stream_app.py``): taken out of the set Faust fetches, or its fetch position moved past the rest."""

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

APP = Path(__file__).with_name("stalled_stream_app.py")
MESSAGES = 200


def _topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)]).values():
        fut.result(30)
    prod = Producer({"bootstrap.servers": bootstrap})
    for i in range(MESSAGES):
        prod.produce(name, key=f"k{i}".encode(), value=f"v{i}".encode())
    assert prod.flush(30) == 0


def _run(bootstrap: str, topic: str, mode: str, stall: float, wait: float, tmp: Path) -> tuple[bool, bool, str]:
    """Start a worker (a group of its own); whether it printed ``FIRST`` and ``SEEN`` within ``wait`` seconds of
    its first message, and its log."""
    log = tmp / f"worker-{mode}-{stall}.log"
    app_id = f"sw{uuid.uuid4().hex[:8]}"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, str(APP), bootstrap, app_id, topic, str(stall), mode, str(MESSAGES), "worker",
             "--without-web"],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60  # the start, to the first message
            first = False
            while time.monotonic() < deadline and proc.poll() is None:
                text = log.read_text(errors="replace")
                if not first and "FIRST" in text:
                    first, deadline = True, time.monotonic() + wait
                if re.search(rf"SEEN {MESSAGES}\b", text):
                    return first, True, text
                time.sleep(0.5)
            return first, False, log.read_text(errors="replace")
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.mark.parametrize("mode", ["drop", "skip"])
def test_a_partition_that_stopped_delivering_delivers_again_once_the_watch_seeks_it(
    kafka_bootstrap: str, tmp_path: Path, mode: str
) -> None:
    topic = f"sw{uuid.uuid4().hex[:8]}-in"
    _topic(kafka_bootstrap, topic)

    # the control: without the watch the rest of the partition never comes (the sabotage reproduces the stall)
    first, done, log = _run(kafka_bootstrap, topic, mode, stall=0, wait=15, tmp=tmp_path)
    assert first and not done, f"no stall without the watch: the test does not reproduce it\n{log[-3000:]}"

    first, done, log = _run(kafka_bootstrap, topic, mode, stall=3, wait=60, tmp=tmp_path)
    assert first and done, log[-5000:]
    assert "delivered none for 3 s" in log and "Consumer state" in log
