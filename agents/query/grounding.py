"""Live grounding for planners (AutoSchema's tools over the current contract version):

* ``schema_card``: types with counts, attributes with example values, relationships, and per type a few example
  queries that were actually run and returned rows. Cached per contract version by ``Grounding``.
* ``entity_search``: entities whose name-like or categorical values match a text (value dictionary first, then a
  case-insensitive containment search in the graph).
* ``neighbourhood``: an entity's properties and its direct neighbours along every contract relationship.

Search and expansion always hit the store live; only the card and the value dictionary are cached.
"""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path
from typing import Any

from esc.agents.query.phrases import PhraseIndex
from esc.agents.query.phrases import build as build_phrases
from esc.agents.query.plan import Filter, Hop, NodePattern, QueryPlan, ReturnItem
from esc.agents.query.semantic import SemanticMatcher
from esc.agents.query.vocabulary import (
    ValueHit,
    ValueIndex,
    Vocabulary,
    indexable,
    norm_value,
    profile_values,
    role_of,
)
from esc.agents.stores.base import GraphStore
from esc.contract.model import Contract

log = logging.getLogger(__name__)

CARD_EXAMPLES = 3
CARD_VALUES = 3
MAX_CARD_CHARS = 6000


def _distinct(contract: Contract, source: str, attr: str) -> int | None:
    src = contract.sources.get(source)
    spec = src.field(attr) if src else None
    return spec.distinct if spec else None


CACHE_FORMAT = 3  # bump when the phrases a contract gives change (lexicon, phrases.py)
"""Bumped whenever what the grounding cache holds changes shape."""
MAX_FIELD_VALUES = 50_000
"""Fields with more distinct values than this are not put in the value dictionary (comments, ids, free text):
reading them would cost more than a question may take, and nobody names a row by such a value."""


def graph_values(vocab: Vocabulary, graph: GraphStore | None) -> ValueIndex:
    """Value dictionary from every indexable attribute in the graph (plus first+last names), or from the profiles
    when there is no graph or it cannot answer. One distinct-values query per field (``GraphStore.distinct_values``),
    fields of more than ``MAX_FIELD_VALUES`` values skipped."""
    if graph is None:
        return profile_values(vocab)
    index = ValueIndex()
    try:
        for info in vocab.types.values():
            for attr in info.attrs.values():
                if not indexable(attr):
                    continue
                distinct = _distinct(vocab.contract, info.source, attr.name)
                if distinct is not None and distinct > MAX_FIELD_VALUES and attr.name not in info.display:
                    continue
                role = role_of(info, attr, distinct)
                for (v,) in graph.distinct_values(info.name, [attr.name], MAX_FIELD_VALUES + 1):
                    if isinstance(v, str) and v.strip():
                        index.add(v, ValueHit(info.name, ((attr.name, v),), role))
            if len(info.display) == 2:
                first, last = info.display
                for f, last_v in graph.distinct_values(info.name, [first, last], MAX_FIELD_VALUES + 1):
                    if isinstance(f, str) and isinstance(last_v, str):
                        index.add(f"{f} {last_v}", ValueHit(info.name, ((first, f), (last, last_v)), "display"))
    except Exception as exc:  # any store error: the profile's values serve until the next refresh
        log.warning("value dictionary from the graph failed (%s); using profile values", exc)
        return profile_values(vocab)
    return index


def schema_phrases(vocab: Vocabulary) -> PhraseIndex:
    """The phrase index of one contract version (types, attributes, relationships and their word variants)."""
    contract = vocab.contract
    names = {f.id: f.name for src in contract.sources.values() for f in src.fields}
    entities = [(e.name, e.source, [a.name for a in e.attributes]) for e in contract.entities]
    rels = [
        (r.name, r.from_entity, r.to_entity, [names.get(fid, fid) for fid in r.from_fields])
        for r in contract.relationships
    ]
    keys = {info.name: info.key[0] for info in vocab.types.values() if len(info.key) == 1 and info.key[0] in info.attrs}
    return build_phrases(entities, rels, keys=keys)


def _example_plans(vocab: Vocabulary, entity: str) -> list[QueryPlan]:
    info = vocab.types[entity]
    plans = [
        QueryPlan(
            kind="list",
            start=NodePattern(var="n0", label=entity),
            returns=[ReturnItem(var="n0", prop=p, alias=p) for p in info.display],
            limit=1,
        )
    ]
    for r, direction, other in vocab.neighbours(entity)[:2]:
        plans.append(
            QueryPlan(
                kind="count",
                start=NodePattern(var="n0", label=entity),
                hops=[Hop(rel_type=r.name, direction=direction, target=NodePattern(var="n1", label=other))],  # type: ignore[arg-type]
                returns=[ReturnItem(var="n1", agg="count", alias="n")],
            )
        )
    return plans


class Grounding:
    """Schema card and value dictionary for one contract version; entity search and expansion live."""

    def __init__(
        self,
        contract: Contract,
        graph: GraphStore | None,
        values: ValueIndex | None = None,
        phrases: PhraseIndex | None = None,
    ) -> None:
        self.contract = contract
        self.graph = graph
        self.vocab = Vocabulary(contract)
        self.values = values if values is not None else graph_values(self.vocab, graph).warm()
        self.phrases = phrases if phrases is not None else schema_phrases(self.vocab)
        self.semantic = SemanticMatcher(self.vocab)
        self._card: dict[str, Any] | None = None

    # -- a cache across processes (esc ask in a new process each time) ------------------------------------------
    @classmethod
    def cached(cls, contract: Contract, graph: GraphStore | None, folder: Path | None) -> Grounding:
        """The grounding of this contract version and this state of the graph, read from ``folder`` when an
        earlier process wrote it there, else built (and written). Only for graphs that can say when their data
        changed (``GraphStore.generation``); the file name carries the contract's content hash and that number,
        so a stale file is never read."""
        gen = graph.generation() if graph is not None else None
        if folder is None or gen is None:
            return cls(contract, graph)
        name = f"grounding-v{contract.version}-{contract.content_hash[:16] or 'nohash'}-g{gen}-f{CACHE_FORMAT}.pickle"
        path = folder / name
        if path.is_file():
            try:
                with path.open("rb") as fh:
                    values, phrases = pickle.load(fh)
                if isinstance(values, ValueIndex) and isinstance(phrases, PhraseIndex):
                    return cls(contract, graph, values, phrases)
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError) as exc:
                log.info("grounding cache %s unreadable (%s); rebuilding", path, exc)
        built = cls(contract, graph)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("grounding-*.pickle"):
                old.unlink(missing_ok=True)
            tmp = path.with_suffix(".tmp")
            with tmp.open("wb") as fh:
                pickle.dump((built.values, built.phrases), fh, protocol=pickle.HIGHEST_PROTOCOL)
            tmp.replace(path)
        except OSError as exc:
            log.info("grounding cache not written to %s: %s", folder, exc)
        return built

    @property
    def version(self) -> int:
        return self.contract.version

    # -- schema card ------------------------------------------------------------------------------------------
    def schema_card(self) -> dict[str, Any]:
        if self._card is None:
            self._card = self._build_card()
        return self._card

    def _build_card(self) -> dict[str, Any]:
        from esc.agents.query.cypher import compile_plan

        types = []
        for info in self.vocab.types.values():
            count = None
            if self.graph is not None:
                try:
                    count = self.graph.count(info.name)
                except Exception:  # any store error: the schema card shows no count
                    count = None
            attrs = []
            for a in info.attrs.values():
                spec = self.contract.sources.get(info.source)
                fs = spec.field(a.name) if spec else None
                examples = [v for v in (fs.examples if fs else [])[:CARD_VALUES]]
                attrs.append({"name": a.name, "type": a.type, "semantic": a.semantic, "examples": examples})
            queries = []
            if self.graph is not None:
                for plan in _example_plans(self.vocab, info.name):
                    try:
                        rows = self.graph.run_plan(plan)
                    except Exception:  # any store error: the card leaves that example out
                        continue
                    if rows and any(v not in (None, 0) for r in rows for v in r.values.values()):
                        cypher, params = compile_plan(plan)
                        queries.append({"cypher": cypher, "params": params, "rows": len(rows)})
                    if len(queries) >= CARD_EXAMPLES:
                        break
            types.append(
                {"type": info.name, "count": count, "key": info.key, "name": info.display,
                 "attributes": attrs, "example_queries": queries}
            )  # fmt: skip
        rels = [
            {"type": r.name, "from": r.from_entity, "to": r.to_entity, "kind": r.kind} for r in self.vocab.rels
        ]
        return {"contract_version": self.contract.version, "types": types, "relationships": rels}

    def card_text(self, limit: int = MAX_CARD_CHARS) -> str:
        """The card as compact text for a prompt (observed evidence: absence is not proof of absence)."""
        card = self.schema_card()
        lines = [f"contract version {card['contract_version']} (observed evidence; not exhaustive)"]
        for t in card["types"]:
            attrs = ", ".join(
                f"{a['name']}:{a['type']}" + (f"={json.dumps(a['examples'][:2], default=str)}" if a["examples"] else "")
                for a in t["attributes"]
            )
            lines.append(f"(:{t['type']}) count={t['count']} key={t['key']} name={t['name']} {{{attrs}}}")
            for q in t["example_queries"][:1]:
                lines.append(f"  e.g. {q['cypher'][:300]}  params={json.dumps(q['params'], default=str)}")
        for r in card["relationships"]:
            lines.append(f"(:{r['from']})-[:{r['type']}]->(:{r['to']})")
        text = "\n".join(lines)
        return text if len(text) <= limit else text[: limit - 20] + "\n... (truncated)"

    # -- entity search and expansion -------------------------------------------------------------------------
    def entity_search(self, text: str, limit: int = 10) -> list[dict[str, Any]]:
        """Entities a text names: exact dictionary hits first, then containment over name-like attributes."""
        out: list[dict[str, Any]] = []
        for hit in sorted(self.values.lookup(text), key=lambda h: (h.role != "display", h.entity)):
            out.append({"type": hit.entity, "match": dict(hit.values), "role": hit.role})
        if len(out) >= limit or self.graph is None:
            return out[:limit]
        needle = norm_value(text)
        if not needle:
            return out
        for info in self.vocab.types.values():
            for prop in info.display[:1]:
                if info.attrs[prop].type not in ("string", "text"):
                    continue
                plan = QueryPlan(
                    kind="list",
                    start=NodePattern(var="n0", label=info.name, filters=[Filter(prop=prop, op="contains", value=text)]),
                    returns=[ReturnItem(var="n0", prop=prop, alias="v")],
                    limit=limit,
                )
                try:
                    rows = self.graph.run_plan(plan)
                except Exception:  # any store error: entity search skips that field
                    continue
                for row in rows:
                    out.append({"type": info.name, "match": {prop: row.values.get("v")}, "role": "contains"})
                    if len(out) >= limit:
                        return out
        return out

    def neighbourhood(self, entity: str, filters: dict[str, Any], limit: int = 10) -> dict[str, Any]:
        """Properties of the matching entity and its neighbours (display names) along each relationship."""
        if self.graph is None or entity not in self.vocab.types:
            return {"type": entity, "found": False}
        info = self.vocab.types[entity]
        fs = [Filter(prop=k, value=v) for k, v in filters.items() if k in info.attrs]
        base = NodePattern(var="n0", label=entity, filters=fs)
        rows = self.graph.run_plan(
            QueryPlan(
                kind="lookup", start=base, cite=["n0"], limit=1,
                returns=[ReturnItem(var="n0", prop=a, alias=a) for a in info.attrs],
            )
        )  # fmt: skip
        if not rows:
            return {"type": entity, "found": False}
        result: dict[str, Any] = {"type": entity, "found": True, "properties": rows[0].values, "neighbours": []}
        for r, direction, other in self.vocab.neighbours(entity):
            shown = self.vocab.types[other].display
            plan = QueryPlan(
                kind="traverse", start=base, limit=limit,
                hops=[Hop(rel_type=r.name, direction=direction, target=NodePattern(var="n1", label=other))],  # type: ignore[arg-type]
                returns=[ReturnItem(var="n1", prop=p, alias=p) for p in shown],
            )  # fmt: skip
            try:
                found = self.graph.run_plan(plan)
            except Exception:  # any store error: the neighbourhood leaves that relationship out
                continue
            if found:
                result["neighbours"].append(
                    {"rel": r.name, "direction": direction, "type": other, "items": [x.values for x in found]}
                )
        return result
