"""bench/ingest.py helpers (bench/_ingest_metrics.py): quantiles from cumulative histogram buckets (Prometheus histogram_quantile rules)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import _baselines as baselines
from bench import _ingest_metrics as ingest  # the helpers of bench/ingest.py
from bench import _ingest_phases as phases
from bench import _ingest_report as rep
from bench import ingest as bench

INF = math.inf


def test_quantile_interpolates_inside_the_bucket() -> None:
    # 10 observations in (0, 1], 10 in (1, 2]: the median is the top of the first bucket, p75 halfway in the second.
    cum = [(1.0, 10.0), (2.0, 20.0), (INF, 20.0)]
    assert ingest.quantile(0.5, cum) == pytest.approx(1.0)
    assert ingest.quantile(0.75, cum) == pytest.approx(1.5)
    assert ingest.quantile(0.05, cum) == pytest.approx(0.1)


def test_quantile_in_the_inf_bucket_is_the_last_finite_bound() -> None:
    cum = [(1.0, 1.0), (300.0, 2.0), (INF, 10.0)]
    assert ingest.quantile(0.95, cum) == 300.0
    assert ingest.summary(cum)["p95_beyond_last_bucket"] is True


def test_empty_histogram_has_no_quantile() -> None:
    assert ingest.quantile(0.5, []) is None
    assert ingest.quantile(0.5, [(1.0, 0.0), (INF, 0.0)]) is None


def test_phase_difference_of_snapshots() -> None:
    before = [(1.0, 5.0), (2.0, 5.0), (INF, 5.0)]
    after = [(1.0, 5.0), (2.0, 9.0), (INF, 9.0)]
    delta = ingest.minus(after, before)
    assert delta == [(1.0, 0.0), (2.0, 4.0), (INF, 4.0)]
    assert ingest.quantile(0.5, delta) == pytest.approx(1.5)


def test_buckets_pick_the_labelled_series() -> None:
    m = {
        "h": [
            ("h_bucket", {"store": "neo4j", "le": "1.0"}, 3.0),
            ("h_bucket", {"store": "neo4j", "le": "+Inf"}, 4.0),
            ("h_bucket", {"store": "weaviate", "le": "1.0"}, 7.0),
            ("h_count", {"store": "neo4j"}, 4.0),
        ]
    }
    assert ingest.buckets(m, "h", store="neo4j") == [(1.0, 3.0), (INF, 4.0)]
    assert ingest.total(m, "h", "h_count", store="neo4j") == 4.0


def test_the_backfill_line_says_whether_the_figure_is_one_during_a_backfill() -> None:
    b = {"records": 100, "rate_per_s": 50.0, "source": "escbench_lineitem", "backfill_started_after_s": 1.2,
         "backfill_seconds": 80.0, "backfill_running_after_push": True,
         "sampled": {"n": 4, "p50_s": 0.3, "p95_s": 1.1, "max_s": 1.4}}
    line = rep.backfill_line(b)
    assert "p95 1.1 s" in line and "still running after the push: yes" in line and "target p95 <= 5 s" in line
    assert "NO" in rep.backfill_line({**b, "backfill_running_after_push": False})
    assert "no backfill" in rep.backfill_line({"error": "no backfill of escbench_lineitem within 120 s"})


def test_the_ingest_bench_takes_the_backfill_phase_option() -> None:
    assert bench.parse_args(["--backfill-records", "500"]).backfill_records == 500
    assert bench.parse_args([]).backfill_records == 0


def test_the_same_graph_writer_before_esc_is_reported_beside_the_one_after(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.parse_args(["--graph-baseline", "--graph-baseline-first"]).graph_baseline_first
    assert not bench.parse_args(["--graph-baseline"]).graph_baseline_first
    writer = {"records_per_s": 4000.0, "seconds": 200.0, "tables": {"lineitem": {"seconds": 150.0}}}
    after = {**writer, "cpu_seconds": {"writer": 61.5, "neo4j": 180.2}}  # (an older result has no CPU figures)
    rep._report_baselines({"graph_baseline_before": {**writer, "records_per_s": 3000.0}, "graph_baseline": after,
                           "ratio_graph": 0.6, "ratio_graph_before": 0.8})
    out = capsys.readouterr().out.splitlines()
    assert "3000.0 records/s" in out[0] and "before ESC" in out[0] and "4000.0 records/s" in out[1]
    assert out[2].strip() == "CPU during it writer 61.5 s, neo4j 180.2 s"
    assert out[3].endswith("0.600   (what the streaming pipeline costs on top)") and out[4].endswith("before ESC 0.800")


def _busy_writer(uri: str, tpch: str, labels: dict[str, str], out: object) -> None:
    """A stand-in writer (spawned): 0.3 CPU-s of work, then its result."""
    import time

    while time.process_time() < 0.3:
        pass
    out.put({"records_per_s": 1.0, "seconds": 0.3})  # type: ignore[attr-defined]


def test_a_writer_s_own_cpu_seconds_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = baselines.run_baseline("bolt://unused", Path("."), {}, _busy_writer)
    assert result["records_per_s"] == 1.0 and 0.3 <= result["writer_cpu_s"] < 5.0
    stack = SimpleNamespace(state_dir=tmp_path, neo4j_uri="bolt://unused")  # no server pid files: the writer only
    nodes_only = bench._run_writer(stack, Path("."), {}, _busy_writer)
    assert "writer_cpu_s" not in nodes_only and list(nodes_only["cpu_seconds"]) == ["writer"]
    assert 0.3 <= nodes_only["cpu_seconds"]["writer"] < 5.0
    rep._report_baselines({"baseline": {**nodes_only, "cpu_seconds": {"writer": 2.5}}})
    assert capsys.readouterr().out.splitlines()[1].strip() == "CPU during it writer 2.5 s"


def test_the_steady_samples_are_grouped_by_when_they_were_sent() -> None:
    assert bench.parse_args(["--steady-delay", "90"]).steady_delay == 90.0 and bench.parse_args([]).steady_delay == 0.0
    windows = phases.by_send_time({1: 0.1, 2: 1.9, 3: 2.0, 4: 5.5}, {1: 0.3, 2: 1.5, 3: 0.2, 4: 0.4})
    assert [(w["from_s"], w["n"], w["max_s"]) for w in windows] == [(0.0, 2, 1.5), (2.0, 1, 0.2), (4.0, 1, 0.4)]
    steady = {"records": 4, "rate_per_s": 2.0, "sampled": {"n": 4, "p50_s": 0.3, "p95_s": 1.5, "max_s": 1.5},
              "freshness": {"count": 4, "p50_s": 0.3, "p95_s": 1.4}, "sampled_by_send_time": windows, "delay_s": 90.0}
    out = "\n".join(rep.steady_lines(steady))
    assert "0 s: p95 1.5 max 1.5, 2 s: p95 0.2 max 0.2, 4 s: p95 0.4 max 0.4" in out and "pushed 90.0 s after" in out
