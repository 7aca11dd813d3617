"""A replay's watermark query (streams/runtime/replay_reader.py): a partition without a leader for a moment is
asked again; any other error is raised at once."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from esc.streams.runtime import replay_reader
from esc.streams.runtime.replay_reader import _watermarks


class _Consumer:
    def __init__(self, errors: list[int]) -> None:
        self.errors = errors
        self.calls = 0

    def get_watermark_offsets(self, tp: TopicPartition, timeout: float) -> tuple[int, int]:
        self.calls += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return 3, 17


@pytest.fixture(autouse=True)
def _no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_watermarks.retry, "sleep", lambda _s: None)  # type: ignore[attr-defined]


def test_a_partition_without_a_leader_for_a_moment_is_asked_again() -> None:
    c = _Consumer([KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE])
    assert _watermarks(c, TopicPartition("t", 0)) == (3, 17)
    assert c.calls == 3


@pytest.mark.parametrize("code", [KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError._TIMED_OUT, KafkaError._TRANSPORT])
def test_an_error_that_does_not_pass_is_raised_at_once(code: int) -> None:
    """Refused, or a broker that does not answer (an outage: raised after the query's own timeout, as before)."""
    c = _Consumer([code])
    with pytest.raises(KafkaException):
        _watermarks(c, TopicPartition("t", 0))
    assert c.calls == 1


def test_a_leader_that_never_comes_back_is_raised_after_the_tries() -> None:
    c: Any = _Consumer([KafkaError.NOT_LEADER_FOR_PARTITION] * 50)
    with pytest.raises(KafkaException):
        _watermarks(c, TopicPartition("t", 0))
    assert c.calls == replay_reader.WATERMARK_TRIES
