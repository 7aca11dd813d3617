"""Schema-routed retrieval over a tiny table + documents: rows found by question terms, documents kept by their
vector seats, one scope applied to both ours and the vector-only baseline."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from esc.agents.embedding import HashingEmbedder
from esc.agents.ingest import Ingestor
from esc.agents.query.agent import QueryAgent
from esc.agents.query.memstore import MemoryGraphStore
from esc.agents.query.retrieval import terms, vector_only
from esc.agents.stores.embedded import EmbeddedVectorStore
from esc.contract.evolve import evolve
from esc.contract.records import Record
from esc.streams.discover import discover
from esc.streams.events import envelope_for
from esc.streams.readers import read, scan_with_errors

DOC_A = (
    "Our revenue recognition policy explains how the Company books subscription fees over the contract term. "
    "Deferred revenue is released monthly as the service is delivered to customers across all regions."
)
DOC_B = (
    "The warehouse expansion in Rotterdam added cold storage capacity for perishable goods. "
    "Capital expenditure for the project was funded from operating cash flow during the fiscal year."
)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> QueryAgent:
    root = tmp_path_factory.mktemp("ret")
    (root / "alpha.csv").write_text(
        "Item,2019,2018\nDividend yield,4.5%,4.6%\nExpected volatility,28.3%,28.7%\nRisk-free rate,2.5%,2.1%\n",
        encoding="utf-8",
    )
    (root / "beta.csv").write_text(
        "Segment,2019,2018\nCold storage,1200,900\nDry goods,3400,3300\nLogistics fees,560,610\n",
        encoding="utf-8",
    )
    docs = root / "docs"
    docs.mkdir()
    (docs / "alpha.txt").write_text(DOC_A, encoding="utf-8")
    (docs / "beta.txt").write_text(DOC_B, encoding="utf-8")
    contract, _ = evolve(None, discover(root).contract)
    graph = MemoryGraphStore()
    vectors = EmbeddedVectorStore(tmp_path_factory.mktemp("retv") / "v.duckdb")
    embedder = HashingEmbedder()
    ingestor = Ingestor(graph, vectors, embedder, "T", contract)
    files, _ = scan_with_errors(root)
    for sf in files:
        ingestor.handle([envelope_for(r, sf.rel, "t") for r in read(sf) if isinstance(r, Record)])
    return QueryAgent(contract, graph, vectors, embedder, "T")


def test_terms_fold_stem_and_keep_numbers() -> None:
    assert terms("What was the Dividend Yields in 2019 ($1,496.5)?") == [
        "dividend",
        "yield",
        "2019",
        "1496.5",
    ]


def test_a_row_is_found_by_its_label_and_cited(agent: QueryAgent) -> None:
    found = agent.retrieve("What was the expected volatility?", k=3)
    rows = [e for e in found if "rows" in e.via]
    assert rows and "Expected volatility" in rows[0].text and "28.3%" in rows[0].text
    assert rows[0].source == "alpha.csv" and rows[0].record_id


def test_prose_questions_keep_their_document(agent: QueryAgent) -> None:
    found = agent.retrieve("how is deferred revenue from subscription fees recognised", k=3)
    assert any("Deferred revenue" in e.text for e in found)


def test_scope_limits_ours_and_the_baseline_alike(agent: QueryAgent) -> None:
    def only_beta(source: str, file: str) -> bool:
        return PurePath(source).stem == "beta" or PurePath(file.split(":", 1)[0]).stem == "beta"

    q = "What was the dividend yield and the cold storage capacity?"
    assert agent.vectors is not None and agent.embedder is not None and agent.collection
    for evidence in (
        agent.retrieve(q, k=5, scope=only_beta, pool=1000),
        vector_only(q, agent.vectors, agent.embedder, agent.collection, k=5, scope=only_beta, pool=1000),
    ):
        assert evidence and all(only_beta(e.source, e.file or e.location) for e in evidence)
        assert not any("Dividend" in e.text for e in evidence)
