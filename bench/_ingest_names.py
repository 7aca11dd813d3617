"""Names shared by the parts of ``bench/ingest.py``: where the bench drops its files and how its labels read."""

SUBDIR = "esc_bench_tpch"
PREFIX = "escbench_"
"""Files are dropped as ``escbench_<table>.csv``: sources ``escbench_orders`` ..., labels ``EscbenchOrder`` ...
The graph is shared, and plain TPC-H labels (``Customer``, ``Order``, ``Part``) collide with other data sets'."""
BASELINE_SUFFIX = "_baseline"
SERVICES = ("kafka", "neo4j", "weaviate", "prometheus")
