"""The sources of one folder scan settle together: keys and foreign keys do not depend on the order files are read
in (agents/scan_groups.py). Sakila's film_category read before film was keyed on film_id alone."""

from __future__ import annotations

from collections import Counter

from esc.agents.contract_agent import ContractAgent, SourceComplete
from esc.agents.profiler import Watermark, profile_batch
from esc.agents.scan_groups import ScanComplete
from esc.contract.model import Contract
from esc.contract.records import Record
from esc.streams.events import RecordEnvelope, envelope_for
from esc.streams.readers import read, scan
from tests.paths import RELATIONAL

SAKILA = RELATIONAL / "sakila" / "drop"


def files() -> dict[str, list[RecordEnvelope]]:
    out: dict[str, list[RecordEnvelope]] = {}
    for sf in scan(SAKILA):
        out[sf.rel] = [envelope_for(r, sf.rel, "h-" + sf.rel) for r in read(sf) if isinstance(r, Record)]
    return out


def stream(order: list[str], by_file: dict[str, list[RecordEnvelope]], scan_id: str | None) -> Contract:
    """Each file's records, then its end-of-file, one file at a time (a source settles as soon as it may)."""
    agent, offset, now = ContractAgent(), -1, 0.0
    members = 0
    for rel in order:
        envs = by_file[rel]
        offset += len(envs)
        counts = Counter(e.source for e in envs)
        done = SourceComplete.for_file(rel, counts, "h-" + rel, scan_id)
        members += len(done)
        now += 1
        agent.apply(profile_batch(envs, Watermark(stream="r/0", offset=offset)), done, now=now)
    if scan_id is not None:
        agent.apply((), (), now=now + 1, scans=[ScanComplete(scan=scan_id, members=members)])
    return agent.contract


def shape(c: Contract) -> tuple[dict[str, list[str]], set[tuple[str, tuple[str, ...], str]]]:
    keys = {s: list(spec.identity_key) for s, spec in c.sources.items()}
    fks = {(fk.from_.source, tuple(fk.from_.fields), fk.to.source) for fk in c.foreign_keys}
    return keys, fks


def test_one_scan_gives_the_same_contract_whatever_the_file_order() -> None:
    by_file = files()
    names = sorted(by_file)
    small_first = sorted(names, key=lambda r: len(by_file[r]))  # the connector's delivery order
    forward, backward = stream(names, by_file, "s1"), stream(small_first[::-1], by_file, "s2")
    smallest = stream(small_first, by_file, "s3")
    assert shape(forward) == shape(backward) == shape(smallest)
    assert forward.sources["film_category"].identity_key == ["film_id", "category_id"]


def test_without_a_scan_the_order_decided_the_key() -> None:
    """Why scans exist: file by file, film_category settles before film when it is read first."""
    by_file = files()
    first = ["film_category.jsonl", *[r for r in sorted(by_file) if r != "film_category.jsonl"]]
    assert stream(first, by_file, None).sources["film_category"].identity_key == ["film_id"]
    assert stream(first, by_file, "s").sources["film_category"].identity_key == ["film_id", "category_id"]


def test_an_open_scan_holds_its_sources_and_state_keeps_it() -> None:
    by_file = files()
    agent = ContractAgent()
    envs = by_file["category.jsonl"]
    agent.apply(
        profile_batch(envs, Watermark(stream="r/0", offset=len(envs) - 1)),
        SourceComplete.for_file("category.jsonl", {"category": len(envs)}, "h-category.jsonl", "s9"),
        now=1.0,
    )
    assert "category" not in agent.settled  # its scan is still open
    agent = ContractAgent.from_state(agent.to_state())
    agent.apply((), (), now=2.0, scans=[ScanComplete(scan="s9", members=1)])
    assert "category" in agent.settled and agent.contract.sources["category"].identity_key == ["category_id"]
