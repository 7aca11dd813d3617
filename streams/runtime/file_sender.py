"""The second pass of a drop-folder scan for a file profiled whole, in the profiling child: its records sent to
``esc.records`` from the table the columnar reader reads (``streams/csv_envelopes.py``), through a librdkafka
producer of the child's own.

The first pass profiles each CSV/TSV file whole in the child (``agents/file_profile.py``); the second used to read
the file again record by record in the worker and build, serialize and produce every row's envelope there (~35 us
a row, about a sixth of the worker's interpreter time in a TPC-H load, taken from the consumer and the planner
that share that interpreter). Here the child does it, from columns (a few us a row), and returns the keys it sent,
once all of them are delivered; the worker only records them. The messages, their keys and their order are the
record path's, headers included (``PROFILED_HEADER``: workers extract them without profiling them again).
"""

from __future__ import annotations

from datetime import UTC, datetime

from confluent_kafka import KafkaException

from esc.streams.connectors.file_profiles import PROFILED_HEADER, PROFILED_VALUE
from esc.streams.csv_envelopes import csv_envelopes
from esc.streams.readers import SourceFile
from esc.streams.readers.csv_table import read_csv_table
from esc.streams.runtime.record_producer import RecordProducer


def send_file(sf: SourceFile, digest: str, bootstrap: str, topic: str, max_fields: int | None) -> list[bytes] | str:
    """Send every record of the file to ``topic`` and wait until Kafka has them all: their keys in order, or why
    the columnar reader declines the file (nothing was sent; the caller reads it record by record). A delivery
    failure raises (the caller reads the file record by record; keys sent twice are written idempotently). The
    producer lives for one file: an idle one would log a failed connection every second of a Kafka outage."""
    got = read_csv_table(sf, max_fields=max_fields)
    if isinstance(got, str):
        return got
    producer = RecordProducer(bootstrap)
    try:
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        messages = csv_envelopes(sf.source, sf.rel, sf.format, digest, got.table, now)
        return producer.send_all(topic, messages, [(PROFILED_HEADER, PROFILED_VALUE)])
    except KafkaException as exc:  # librdkafka's exception does not pickle: the worker got a PicklingError instead
        raise ConnectionError(f"records not delivered from the profiling process: {exc}") from None
    finally:
        producer.close()
