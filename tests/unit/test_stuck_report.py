"""The report a timed-out integration test prints: where a stuck worker waits, without mode's locals."""

from __future__ import annotations

from pathlib import Path

from tests.integration.worker import stuck_report, wait_points

DUMP = """Thread 0x00007f (most recent call first):
  File "/x/asyncio/base_events.py", line 1884 in _run_once
Stack for <Task pending name='Task-56' coro=<Agent._execute_actor() running at /x/agent.py:698>> (most recent call last):
  File "/x/mode/services.py", line 878, in _execute_task
    await task
    self = <Agent*: records>
    task = <Task pending name='Task-56'>
"""


def test_a_dump_is_cut_to_its_headers_and_frames() -> None:
    assert wait_points(DUMP).splitlines() == [
        "Thread 0x00007f (most recent call first):",
        '  File "/x/asyncio/base_events.py", line 1884 in _run_once',
        "Stack for <Task pending name='Task-56' coro=<Agent._execute_actor() running at /x/agent.py:698>> (most "
        "recent call last):",
        '  File "/x/mode/services.py", line 878, in _execute_task',
    ]


def test_a_stopped_workers_log_is_shown_whole_as_its_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("contract v1 published\n" + DUMP)
    report = stuck_report(log)
    assert "contract v1 published" in report and "self = <Agent" in report  # not running: nothing was dumped now
    assert stuck_report(None) == "(no worker log)"


CHAINS = """Await chain of task Task-56:
  File "/w/esc/streams/runtime/faust_app.py", line 296, in records
  File "/w/esc/streams/runtime/write_behind.py", line 80, in submit
Await chain of task Task-9:
  File "/x/mode/services.py", line 878, in _execute_task
"""


def test_await_chains_through_our_code_come_last_and_others_are_left_out() -> None:
    lines = wait_points(CHAINS + DUMP).splitlines()
    assert lines[-3:] == [
        "Await chain of task Task-56:",
        '  File "/w/esc/streams/runtime/faust_app.py", line 296, in records',
        '  File "/w/esc/streams/runtime/write_behind.py", line 80, in submit',
    ]
    assert "Await chain of task Task-9:" not in lines and lines[0].startswith("Thread 0x")
