"""splink 5 (Fellegi-Sunter on DuckDB) over the resolver's normalized records, for bench/reconcile.py.

Standalone: reads ``[{"unique_id", "name", "email", "phone", "city"}, ...]`` as JSON on stdin and prints
``{"clusters": {unique_id: cluster_id}, "seconds": ...}``, so it can run under any interpreter that has
``splink`` (it is not a dependency of ESC): ``python bench/reconcile.py --splink-python /path/to/python``.
Model: dedupe over all sources together; name by Jaro-Winkler (0.92 / 0.8), e-mail, phone and city exact; the
prior estimated from the e-mail rule, u by random sampling, m by expectation maximisation on e-mail and phone
blocks; links at match probability >= 0.95 (ESC's threshold), clusters by connected components.
"""

from __future__ import annotations

import json
import logging
import sys
import time


def main() -> None:
    import pyarrow as pa
    import splink.comparison_library as cl
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    logging.disable(logging.WARNING)
    rows = json.load(sys.stdin)
    started = time.perf_counter()
    db = DuckDBAPI()
    sdf = db.register(pa.Table.from_pylist(rows))
    settings = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[cl.JaroWinklerAtThresholds("name", [0.92, 0.8]), cl.ExactMatch("email"),
                     cl.ExactMatch("phone"), cl.ExactMatch("city")],
        blocking_rules_to_generate_predictions=[block_on("email"), block_on("phone"), block_on("name"),
                                                block_on("name_key")],
    )
    linker = Linker(sdf, settings)
    linker.training.estimate_probability_two_random_records_match([block_on("email")], recall=0.8)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e5)
    for rule in (block_on("email"), block_on("phone")):
        linker.training.estimate_parameters_using_expectation_maximisation(rule)
    pred = linker.inference.predict(threshold_match_probability=0.5)
    clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(pred, 0.95)
    out = {r["unique_id"]: str(r["cluster_id"]) for r in clusters.as_record_list()}
    print(json.dumps({"clusters": out, "seconds": round(time.perf_counter() - started, 3)}))


if __name__ == "__main__":
    main()
