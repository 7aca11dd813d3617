"""Ingest throughput of the embedded runtime with the LLM pass in the stream on, and off as the baseline, same run.

    .venv/bin/python bench/llm_stream.py                      # 12 sources x 3,000 rows, 3 turns, answer after 1 s
    .venv/bin/python bench/llm_stream.py --rows 10000 --delay 5

A synthetic drop (seeded: ids, names, categories, numbers, dates; generated into a temporary folder) is ingested
with ``esc ingest --embedded``'s runtime (hashing embedder), in turns: without an endpoint, then with
``ESC_LLM_BASE_URL`` pointing at the local OpenAI-compatible test server (``tests/fakes/openai_server.py``), which
answers each call after ``--delay`` seconds with a valid proposal (a categorical entity type). The numbers are
records per second of ``ingest_once`` (the best and the median of the turns); for the LLM turns also the jobs still
running when the ingest returned and the seconds until their version was written after it. Nothing is asserted:
the acceptance is that the two throughputs are the same within the machine's noise (the pass runs beside ingest).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from esc.agents.embedding import HashingEmbedder  # noqa: E402
from esc.settings import load  # noqa: E402
from esc.streams.runtime.inprocess import open_runtime  # noqa: E402
from esc.streams.runtime.inprocess_bus import InProcessBus  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Hang  # noqa: E402
from tests.unit.test_llm_stream import good  # noqa: E402  (a valid proposal from the request's catalog)

WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heath", "inlet", "juniper", "kestrel"]


def write_drop(folder: Path, sources: int, rows: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for s in range(sources):
        kinds = [rng.choice(WORDS) for _ in range(4)]
        lines = ["id,name,kind,amount,day,parent_id"]
        for i in range(1, rows + 1):
            name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}"
            lines.append(f"{i},{name},{rng.choice(kinds)},{rng.randint(1, 10_000) / 100},"
                         f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},{rng.randint(1, rows)}")  # fmt: skip
        (folder / f"table_{s:02d}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sources * rows


def one_run(drop: Path, state: Path, llm_url: str | None) -> dict[str, Any]:
    if llm_url:
        os.environ["ESC_LLM_BASE_URL"] = llm_url
    else:
        os.environ.pop("ESC_LLM_BASE_URL", None)
    settings = load().replace(state_dir=state, app_id="bench", topic_prefix="bench")
    runtime, close = open_runtime(settings, drop, embedder=HashingEmbedder(), bus=InProcessBus("bench"))
    try:
        t0 = time.perf_counter()
        summary = asyncio.run(runtime.ingest_once())
        seconds = time.perf_counter() - t0
        out: dict[str, Any] = {"records": summary.records, "seconds": seconds, "rate": summary.records / seconds,
                               "version": runtime.contract.version if runtime.contract else 0}  # fmt: skip
        llm = runtime.writer.llm
        if llm is not None:
            out["pending"] = llm.pending()
            t1 = time.perf_counter()
            llm.wait(600)
            asyncio.run(runtime.tick())
            out["llm_after"] = time.perf_counter() - t1
            out["llm_version"] = runtime.contract.version if runtime.contract else 0
            out["outcomes"] = [h["outcome"] for h in llm.history]
        return out
    finally:
        close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=int, default=12)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the test server waits before each answer")
    args = ap.parse_args()
    os.environ["ESC_LLM_TIMEOUT"] = str(max(30.0, 3 * args.delay))
    os.environ["ESC_LLM_RETRIES"] = "0"
    with tempfile.TemporaryDirectory(prefix="esc-bench-llm-") as tmp:
        drop = Path(tmp) / "drop"
        total = write_drop(drop, args.sources, args.rows)
        print(f"drop: {args.sources} sources x {args.rows} rows = {total} records; LLM answers after {args.delay} s")
        runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
        with FakeOpenAI([Hang(args.delay, "{}")]) as server:
            server.replies = [_delayed(args.delay)]
            for turn in range(args.turns):
                for mode in ("off", "on"):
                    r = one_run(drop, Path(tmp) / f"state-{mode}-{turn}", server.base_url if mode == "on" else None)
                    runs[mode].append(r)
                    extra = (f"; jobs running at the end of ingest {r['pending']}, LLM version v{r['llm_version']} "
                             f"{r['llm_after']:.2f} s later ({', '.join(r['outcomes'])})") if mode == "on" else ""  # fmt: skip
                    print(f"turn {turn + 1} LLM {mode:3}: {r['records']} records in {r['seconds']:.2f} s = "
                          f"{r['rate']:,.0f} rec/s, contract v{r['version']}{extra}")
            calls = len(server.requests)
        for mode in ("off", "on"):
            rates = [r["rate"] for r in runs[mode]]
            print(f"LLM pass {mode:3}: best {max(rates):,.0f} rec/s, median {statistics.median(rates):,.0f} rec/s")
        best_on, best_off = max(r["rate"] for r in runs["on"]), max(r["rate"] for r in runs["off"])
        print(f"on / off (best): {best_on / best_off:.3f}; chat calls served: {calls}")


def _delayed(delay: float) -> Any:
    def reply(request: dict[str, Any]) -> Any:
        time.sleep(delay)
        return good(request)

    return reply


if __name__ == "__main__":
    main()
