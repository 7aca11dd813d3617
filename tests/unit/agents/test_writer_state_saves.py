"""The contract writer's state saves: the drift reports entry is dumped only when an update may have changed it,
and an update arriving between ``state_changes`` and ``state_saved`` is saved by the next save (not lost)."""

from __future__ import annotations

from esc.agents.pipeline import REPORTS, ContractWriter


def _counting(writer: ContractWriter) -> list[int]:
    calls: list[int] = []
    dump = writer._dump_reports

    def counted() -> str:
        calls.append(1)
        return dump()

    writer._dump_reports = counted  # type: ignore[method-assign]
    return calls


def test_reports_are_dumped_once_per_update_and_written_when_changed() -> None:
    writer = ContractWriter()
    calls = _counting(writer)
    first = writer.state_changes()
    assert REPORTS in first and len(calls) == 1  # never saved: written
    writer.state_saved()
    assert len(calls) == 1  # state_saved reuses the dump
    for _ in range(3):  # pumps with no update: no dump, nothing to write
        assert REPORTS not in writer.state_changes()
        writer.state_saved()
    assert len(calls) == 1
    writer.on_updates([])
    assert REPORTS not in writer.state_changes()  # dumped again, unchanged: not written
    writer.state_saved()
    assert len(calls) == 2


def test_an_update_between_changes_and_saved_is_saved_next_time() -> None:
    writer = ContractWriter()
    writer.state_changes()
    writer.state_saved()
    calls = _counting(writer)
    writer.state_changes()
    writer.on_updates([])  # e.g. the Faust agent handled a batch while the state was being written
    writer.state_saved()
    writer.state_changes()
    assert len(calls) == 1  # the update after state_changes makes the next state_changes dump (state_saved did not)


def test_saved_without_a_dump_marks_nothing() -> None:
    writer = ContractWriter()
    writer.on_updates([])
    writer.state_saved()  # no state_changes before it: the reports were not written
    assert REPORTS in writer.state_changes()
