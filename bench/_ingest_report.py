"""``bench/ingest.py``: the human-readable report of a run's results."""

from __future__ import annotations

from typing import Any

from bench._ingest_metrics import show
from bench._ingest_phases import SAMPLE_EVERY


def _cpu_line(writer: dict[str, Any]) -> None:
    if writer.get("cpu_seconds"):  # (an older result has none)
        print("    CPU during it " + ", ".join(f"{k} {v} s" for k, v in writer["cpu_seconds"].items()))


def _report_baselines(r: dict[str, Any]) -> None:
    if "baseline" in r:
        b = r["baseline"]
        print(f"  baseline (UNWIND)   {b['records_per_s']:>10.1f} records/s  ({b['seconds']} s; nodes only)")
        _cpu_line(b)
        if "ratio" in r:
            print(f"  ratio ours/baseline {r['ratio']:>10.3f}   (target >= 0.5)")
    for key, when in (("graph_baseline_before", " (before ESC)"), ("graph_baseline", "")):
        if key not in r:
            continue
        g = r[key]
        print(f"  baseline, same graph{g['records_per_s']:>10.1f} records/s  ({g['seconds']} s{when}; nodes, SourceRecord + "
              "DERIVED_FROM, FK edges; " + ", ".join(f"{t} {x['seconds']}s" for t, x in g["tables"].items()) + ")")
        _cpu_line(g)
    if "ratio_graph" in r:
        print(f"  ratio ours/same-graph baseline {r['ratio_graph']:.3f}   (what the streaming pipeline costs on top)")
    if "ratio_graph_before" in r:
        print(f"  ratio ours/same-graph baseline before ESC {r['ratio_graph_before']:.3f}")


def steady_lines(s: dict[str, Any]) -> list[str]:
    sf, sm = s["freshness"], s["sampled"]
    out = [f"  freshness, steady   p50 {show(sf, 'p50')} s  p95 {show(sf, 'p95')} s  ({sf['count']} upserts incl. any "
           f"replay; {s['records']} pushed at {s['rate_per_s']}/s)   (target p95 <= 1 s)",
           f"    sampled directly  p50 {sm['p50_s']} s  p95 {sm['p95_s']} s  max {sm['max_s']} s  (send -> node "
           f"readable in Neo4j, every {SAMPLE_EVERY}th record, n={sm['n']})"]
    if s.get("sampled_by_send_time"):
        out.append("    by send time      " + ", ".join(f"{w['from_s']:g} s: p95 {w['p95_s']} max {w['max_s']}"
                                                     for w in s["sampled_by_send_time"]))
    if s.get("delay_s"):
        out.append(f"    (pushed {s['delay_s']} s after the load)")
    return out


def backfill_line(b: dict[str, Any]) -> str:
    if "error" in b:
        return f"  freshness, backfill ! {b['error']}"
    bs = b["sampled"]
    during = "yes" if b["backfill_running_after_push"] else "NO: the figure is not one during a backfill"
    return (f"  freshness, backfill p50 {bs['p50_s']} s  p95 {bs['p95_s']} s  max {bs['max_s']} s  ({b['records']} "
            f"pushed at {b['rate_per_s']}/s while {b['source']} replayed: started {b['backfill_started_after_s']} s "
            f"after the probe, took {b['backfill_seconds']} s; still running after the push: {during})"
            "   (target p95 <= 5 s)")


def report(r: dict[str, Any]) -> None:
    print(f"TPC-H SF {r['sf']}: {sum(r['rows'].values())} rows, {r['cpus']} CPUs, run {r['run_id']}")
    if "load" not in r:
        _report_baselines(r)
        print("  peak RSS (VmHWM)    " + ", ".join(f"{k} {v['peak_mib']} MiB" for k, v in r["rss"].items()
                                                  if isinstance(v, dict) and "peak_mib" in v))
        return
    load, fr = r["load"], r["load"]["freshness"]
    print(f"  ours (end to end)   {load['records_per_s']:>10.1f} records/s  ({load['seconds']} s; tables done at "
          + ", ".join(f"{t} {s}s" for t, s in load["table_done_at_s"].items()) + ")")
    if load.get("cpu_seconds"):
        print("  CPU during the load " + ", ".join(f"{k} {v} s" for k, v in load["cpu_seconds"].items())
              + f"  ({r['cpus']} CPUs x {load['seconds']} s = {round(r['cpus'] * load['seconds'])} CPU-s available)")
    v = load.get("vectors") or {}
    if v:
        print(f"  vectors caught up   at {v['caught_up_at_s']} s  ({v['records_with_text']} records with text embedded "
              "behind the graph)")
        e = r.get("embedder") or {}
        if e.get("sentences_per_s"):
            ours = v.get("tail_per_s") or v.get("overall_per_s")
            ratio = f"{ours / e['sentences_per_s']:.2f}x" if ours else "n/a"
            print(f"  vectors/s           overall {v.get('overall_per_s')}  after the load {v.get('tail_per_s')} "
                  f"({v.get('tail_chunks')} in {v.get('tail_seconds')} s)  vs the {e['embedder']} embedder alone "
                  f"{e['sentences_per_s']} sentences/s (batch {e.get('batch')}, {e['sentences']} inputs as the lane "
                  f"embeds them: text values with their field line): {ratio}  (goal >= 0.67x)")
            raw = r.get("embedder_raw_comments") or {}
            if raw.get("sentences_per_s"):
                print(f"  (the embedder on {raw['sentences']} raw comments of every table, short ones included, which "
                      f"the lane does not embed: {raw['sentences_per_s']} sentences/s)")
    _report_baselines(r)
    print(f"  freshness, load     p50 {show(fr, 'p50')} s  p95 {show(fr, 'p95')} s  ({fr['count']} upserts; from histogram "
          "buckets)")
    if "steady" in r:
        print("\n".join(steady_lines(r["steady"])))
    if "backfill" in r:
        print(backfill_line(r["backfill"]))
    if "schema_diff" in r:
        d = r["schema_diff"]
        print(f"  schema-diff latency p50 {d['p50_s']} s  p95 {d['p95_s']} s  max {d['max_s']} s  "
              f"({d['received']}/{d['trials']} received)   (target p95 <= 0.5 s)")
    print("  writes per row      " + ", ".join(f"{t} {x}" for t, x in load["writes_per_row"].items())
          + "  (backfill replays as the contract evolves)")
    print(f"  neo4j writes {load['neo4j_writes']} for {load['records']} rows; extraction batches: "
          + "; ".join(f"{k} n={v['count']} sum={v['sum_s']}s p50={v['p50_s']} p95={v['p95_s']}"
                      for k, v in r["extraction_batches"].items()))
    rss = r["rss"]
    w = rss.get("worker") or {}
    parts = [f"worker {w.get('peak_mib')} MiB (tree {w.get('tree_peak_mib')})", f"bench {rss['bench']['peak_mib']} MiB"]
    if "baseline" in rss:
        parts.append(f"baseline {rss['baseline']['peak_mib']} MiB")
    parts += [f"{svc} {v['peak_mib']} MiB" for svc, v in rss["servers_since_start"].items() if v]
    print("  peak RSS (VmHWM)    " + ", ".join(parts) + "  (servers: since they started)")
    for e in r["cleanup_errors"]:
        print(f"  ! {e}")
