"""The in-process bus and the durable records log: what Kafka gives the Faust runtime, in one process.

``InProcessBus`` holds topics in memory under their Kafka names (``streams.topics`` with ``ESC_TOPIC_PREFIX``)
with the same ``(key, value)`` bytes the Faust runtime sends; a ``None`` value is a tombstone. Every consumer
group has its own position per topic, like a Kafka consumer group: ``poll`` returns the next messages and
commits them. Messages every group has read are dropped (a compacted topic keeps its latest value per key;
others keep the last ``retain`` messages for inspection).

``RecordLog`` is the durable copy of the compacted records topic, one JSON-lines file per source: appends in
order, and ``replay`` yields the latest value of every key of the given sources (tombstoned keys omitted), which
is exactly what ``agents.pipeline.ReplayLog`` asks of the compacted ``esc.records`` topic.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from esc.agents.pipeline import KEY_SEP
from esc.streams import topics
from esc.streams.events import RecordEnvelope

RETAIN = 1000  # messages kept per non-compacted topic after every group read them (for inspection)
REPLAY_BATCH = 1000


@dataclass(frozen=True)
class BusMessage:
    offset: int
    key: bytes | None
    value: bytes | None


class _Topic:
    def __init__(self, name: str, compacted: bool, retain: int) -> None:
        self.name = name
        self.compacted = compacted
        self.retain = retain
        self.log: deque[BusMessage] = deque()
        self.next_offset = 0
        self.positions: dict[str, int] = {}
        self.latest: dict[bytes | None, bytes | None] = {}

    def append(self, key: bytes | None, value: bytes | None) -> int:
        offset = self.next_offset
        self.log.append(BusMessage(offset, key, value))
        self.next_offset += 1
        if self.compacted:
            self.latest[key] = value
        self._trim()
        return offset

    def poll(self, group: str, limit: int) -> list[BusMessage]:
        start = self.positions.setdefault(group, self.log[0].offset if self.log else self.next_offset)
        first = self.log[0].offset if self.log else self.next_offset
        i = max(start - first, 0)
        out = [self.log[j] for j in range(i, min(i + limit, len(self.log)))]
        if out:
            self.positions[group] = out[-1].offset + 1
            self._trim()
        return out

    def pending(self, group: str) -> int:
        return self.next_offset - self.positions.get(group, self.next_offset)

    def _trim(self) -> None:
        read_by_all = min(self.positions.values(), default=self.next_offset)
        keep_from = min(read_by_all, self.next_offset - self.retain)
        while self.log and self.log[0].offset < keep_from:
            self.log.popleft()


class InProcessBus:
    """Topics in memory under their Kafka names, with consumer groups."""

    def __init__(self, prefix: str = "esc", retain: int = RETAIN) -> None:
        self.prefix = prefix
        self.retain = retain
        self._topics: dict[str, _Topic] = {}
        self.counts: Counter[str] = Counter()

    def name(self, spec: topics.TopicSpec | str) -> str:
        """Full topic name: a spec from ``streams.topics``, or a logical name such as ``profiles``."""
        return spec.name(self.prefix) if isinstance(spec, topics.TopicSpec) else f"{self.prefix}.{spec}"

    def topic(self, spec: topics.TopicSpec | str) -> _Topic:
        name = self.name(spec)
        found = self._topics.get(name)
        if found is None:
            compacted = isinstance(spec, topics.TopicSpec) and spec.compacted
            # the records topic is compacted on Kafka too, but its durable copy is the RecordLog: keep nothing here
            retain = 0 if spec is topics.RECORDS else self.retain
            found = self._topics[name] = _Topic(name, compacted, retain)
        return found

    def subscribe(self, spec: topics.TopicSpec | str, group: str) -> None:
        """Register a consumer group now, so it reads every message published from here on."""
        t = self.topic(spec)
        t.positions.setdefault(group, t.log[0].offset if t.log else t.next_offset)

    def start_at(self, spec: topics.TopicSpec | str, offset: int) -> None:
        """Continue an (empty) topic's offsets where a previous process stopped."""
        t = self.topic(spec)
        if t.log or offset < t.next_offset:
            return
        t.next_offset = offset
        for group in t.positions:
            t.positions[group] = offset

    def end_offset(self, spec: topics.TopicSpec | str) -> int:
        return self.topic(spec).next_offset

    def publish(self, spec: topics.TopicSpec | str, key: bytes | None, value: bytes | None) -> int:
        t = self.topic(spec)
        self.counts[t.name] += 1
        return t.append(key, value)

    def poll(self, spec: topics.TopicSpec | str, group: str, limit: int) -> list[BusMessage]:
        return self.topic(spec).poll(group, limit)

    def pending(self) -> int:
        """Messages published but not yet read by some group, over every topic."""
        return sum(t.pending(g) for t in self._topics.values() for g in t.positions)

    def messages(self, spec: topics.TopicSpec | str) -> list[tuple[bytes | None, bytes | None]]:
        """What a reader from the beginning would see now: latest value per key on a compacted topic (no
        tombstones), else the retained messages."""
        t = self.topic(spec)
        if t.compacted:
            return [(k, v) for k, v in t.latest.items() if v is not None]
        return [(m.key, m.value) for m in t.log]


def source_of_key(key: bytes | None) -> str:
    text = (key or b"").decode("utf-8", errors="replace")
    return text.partition(KEY_SEP)[0]


class RecordLog:
    """The records topic on disk: one JSON-lines file per source, ``{"k": key, "v": value or null}`` per line.

    ``append`` buffers; ``flush`` writes (the runtime flushes before any consumer reads the batch)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._buffer: dict[str, list[str]] = defaultdict(list)
        self.batch = REPLAY_BATCH

    def _path(self, source: str) -> Path:
        safe = re.sub(r"[^0-9A-Za-z_.-]", "_", source)[:80]
        return self.folder / f"{safe}-{hashlib.sha1(source.encode()).hexdigest()[:10]}.jsonl"

    def append(self, key: bytes | None, value: bytes | None) -> None:
        line = json.dumps(
            {"k": (key or b"").decode("utf-8"), "v": None if value is None else value.decode("utf-8")},
            ensure_ascii=False,
        )
        self._buffer[source_of_key(key)].append(line)

    def flush(self) -> None:
        for source, lines in self._buffer.items():
            with self._path(source).open("a", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
        self._buffer.clear()

    def latest(self, source: str) -> dict[str, str]:
        """Key -> latest value of one source (compaction on read; tombstoned keys are gone). A log with many
        superseded lines is rewritten compacted."""
        path = self._path(source)
        if not path.exists():
            return {}
        values: dict[str, str] = {}
        lines = 0
        with path.open(encoding="utf-8") as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                lines += 1
                item = json.loads(raw)
                if item["v"] is None:
                    values.pop(item["k"], None)
                else:
                    values.pop(item["k"], None)  # re-insert: a changed record moves to its latest position
                    values[item["k"]] = item["v"]
        if lines > 2 * len(values) + 100:
            self._rewrite(path, values)
        return values

    def _rewrite(self, path: Path, values: dict[str, str]) -> None:
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            for k, v in values.items():
                out.write(json.dumps({"k": k, "v": v}, ensure_ascii=False) + "\n")
        tmp.replace(path)

    async def replay(self, sources: set[str]) -> AsyncIterator[list[bytes | RecordEnvelope]]:
        """The latest value of every record of ``sources``, in batches (``agents.pipeline.ReplayLog``)."""
        self.flush()
        batch = self.batch
        chunk: list[bytes | RecordEnvelope] = []
        for source in sorted(sources):
            for value in self.latest(source).values():
                chunk.append(value.encode("utf-8"))
                if len(chunk) >= batch:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk
