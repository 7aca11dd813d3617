"""Questions answered from prose through mentions (no LLM): what the text says about an entity, and attribute
values that only the text gives (a query-scoped extension, ESC paper §3.4, deterministic).

``ProseRoute(grounding)`` finds the entities a question names with the same dictionary the mention linker uses
(``agents.mention_dictionary``), then reads the chunks that mention them (``ChunkStore.mentioning``):

* **a value only the text gives**: the attribute the question asks for is an attribute of the entity's type that
  has no stored value for it, or words no field matched ("shoe size"). For this question only the contract is
  extended with that attribute, derived from the chunks by ``agents.prose_facts`` (mention + the attribute's words
  + a value of its type in one sentence); the answer is the value the most sentences state, cited by chunk, with
  ``extension`` saying what was added, from where, and that it was reverted (nothing is stored, the contract is
  untouched; the extension is logged). Stored values are never overridden: this runs only when the structured
  plan found none. Confidence stays below 0.8 (a candidate read from text).
* **what the text says about an entity**: when the question names a type that holds prose ("notes", a text
  attribute's words), the sentences of the mentioning chunks that name the entity, best first, each cited.

``mention_ids(question)`` gives the chunks that mention what the question names, so vector search can be filtered
to them.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from typing import Any

from esc.agents.chunk_graph import ChunkStore, chunk_store
from esc.agents.mention_dictionary import build_surfaces
from esc.agents.mentions import Mention, MentionAutomaton
from esc.agents.prose_facts import CandidateFact, FieldForm, extract, sentences
from esc.agents.query.answer import Answer, Citation
from esc.agents.query.chunk_index import text_attributes
from esc.agents.query.grounding import Grounding
from esc.agents.query.plan import Filter, NodePattern, QueryPlan, ReturnItem
from esc.agents.query.words import FUNCTION_WORDS, tokenize

log = logging.getLogger(__name__)

FACT_CONFIDENCE = 0.7
PASSAGE_CONFIDENCE = 0.6
MAX_CHUNKS = 50
MAX_SENTENCES = 5
ASSERTED = 0.4


def _location(row: dict[str, Any], start: int, end: int) -> str:
    base = str(row.get("location") or row.get("file") or "")
    offset = int(row.get("start") or 0)
    return f"{base}:chars={offset + start}-{offset + end}"


class ProseRoute:
    def __init__(self, grounding: Grounding) -> None:
        self.g = grounding
        self.store: ChunkStore | None = chunk_store(grounding.graph) if grounding.graph is not None else None
        self._automaton: MentionAutomaton | None = None
        self._has_chunks: bool | None = None
        texts = text_attributes(grounding)
        self.text_types = {info.name for info, _, _ in texts}
        self.text_words = {w for info, names, _ in texts for w in [*info.words, *info.source.lower().split("_"),
                           *(x for n in names for x in info.attrs[n].words)]} - {"text"}  # fmt: skip

    # -- entities ------------------------------------------------------------------------------------------------
    def available(self) -> bool:
        if self.store is None:
            return False
        if self._has_chunks is None:
            self._has_chunks = bool(self.store.chunk_rows("", 1))
        return self._has_chunks

    def automaton(self) -> MentionAutomaton:
        if self._automaton is None:
            assert self.g.graph is not None
            self._automaton = MentionAutomaton(build_surfaces(self.g.contract, self.g.graph))
        return self._automaton

    def entities(self, question: str) -> list[Mention]:
        if not self.available():
            return []
        found = [m for m in self.automaton().find(question) if m.entity.label not in self.text_types]
        return [m for m in found if m.score >= ASSERTED]

    def mention_ids(self, question: str) -> set[str]:
        ids: set[str] = set()
        if self.store is None:
            return ids
        for m in self.entities(question):
            ids |= {str(r["id"]) for r in self.store.mentioning(m.entity.label, m.entity.key, MAX_CHUNKS)}
        return ids

    # -- answers -------------------------------------------------------------------------------------------------
    def answer(self, question: str, unmatched: list[str] | None = None) -> Answer | None:
        """An answer from prose, or None when the question names no entity that text mentions."""
        ents = self.entities(question)
        if not ents or self.store is None:
            return None
        version = self.g.version
        tokens = tokenize(question)
        named = {t.low for m in ents for t in tokenize(m.surface)}
        forms = self._forms(question, ents, tokens, named, unmatched or [])
        rows_by_entity = {m.entity: self.store.mentioning(m.entity.label, m.entity.key, MAX_CHUNKS) for m in ents}
        if forms:
            fact = self._fact(ents, forms, rows_by_entity)
            if fact is not None:
                return fact
        if self.text_words & {w for t in tokens for w in (t.low, t.base)}:
            return self._passages(ents, rows_by_entity, version)
        return None

    def _forms(self, question: str, ents: list[Mention], tokens: list[Any], named: set[str],
               unmatched: list[str]) -> list[FieldForm]:  # fmt: skip
        words = {w for t in tokens for w in (t.low, t.base)}
        forms: list[FieldForm] = []
        for label in sorted({m.entity.label for m in ents}):
            info = self.g.vocab.types.get(label)
            if info is None:
                continue
            for a in info.attrs.values():
                if a.words and set(a.words) <= words and not set(a.words) <= named and a.name not in info.display:
                    forms.append(FieldForm(a.name, tuple(a.words), a.type, a.semantic, label))
        if forms:
            return forms
        # words no field matched, in question order, as one phrase (the attribute the contract lacks)
        left = {w.lower() for w in unmatched} - named - FUNCTION_WORDS - self.text_words
        run = [t.low for t in tokens if t.low in left and t.low.isalpha()]
        if not run:
            return []
        phrase = tuple(run)
        return [FieldForm(" ".join(phrase), phrase, "float"), FieldForm(" ".join(phrase), phrase, "string")]

    def _stored(self, label: str, key: str, field: str) -> Any:
        """The structured value of one attribute of one entity (None when absent)."""
        graph = self.g.graph
        if graph is None or field not in self.g.vocab.types.get(label, _NO_TYPE).attrs:
            return None
        k = json.loads(key)
        plan = QueryPlan(kind="lookup", start=NodePattern(var="n0", label=label, filters=[
            Filter(prop=p, op="eq", value=v) for p, v in k.items()]), returns=[ReturnItem(var="n0", prop=field, alias="v")])  # fmt: skip
        try:
            rows = graph.run_plan(plan)
        except Exception:  # any store error: no stored value to compare with, the prose answer stands alone
            return None
        vals = [r.values.get("v") for r in rows if r.values.get("v") not in (None, "")]
        return vals[0] if vals else None

    def _fact(self, ents: list[Mention], forms: list[FieldForm],
              rows_by_entity: dict[Any, list[dict[str, Any]]]) -> Answer | None:  # fmt: skip
        automaton = self.automaton()
        adhoc = all(not f.label for f in forms)  # a phrase no field matched: a number first, else a name
        for group in ([f] for f in forms) if adhoc else [forms]:
            found: list[tuple[CandidateFact, dict[str, Any]]] = []
            for m in ents:
                for form in group:
                    if form.label and form.label != m.entity.label:
                        continue
                    if self._stored(m.entity.label, m.entity.key, form.field) is not None:
                        continue  # never instead of a stored value: the structured plan answers that
                    for row in rows_by_entity.get(m.entity, []):
                        text = str(row.get("text") or "")
                        facts = extract(text, automaton.find(text), [form])
                        found.extend((f, row) for f in facts if f.entity == m.entity and f.score >= ASSERTED)
            if found:
                return self._fact_answer(found)
        return None

    def _fact_answer(self, found: list[tuple[CandidateFact, dict[str, Any]]]) -> Answer:
        votes = Counter(json.dumps(f.value, default=str) for f, _ in found)
        best = votes.most_common(1)[0][0]
        chosen = [(f, r) for f, r in found if json.dumps(f.value, default=str) == best]
        fact, _ = chosen[0]
        value = fact.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        cites = _unique([Citation(source=str(r["source"]), record_id=str(r["record_id"]),
                                  location=_location(r, f.start, f.end)) for f, r in chosen])  # fmt: skip
        extension = {"scope": "query", "added": {"type": fact.entity.label, "attribute": fact.field},
                     "derived_from": "prose", "how": "mention + field words + a value of its type in one sentence",
                     "entity": json.loads(fact.entity.key), "candidates": len(found), "agreeing": len(chosen),
                     "other_values": sorted(v for v in votes if v != best)[:5], "evidence": fact.sentence,
                     "reverted": True}  # fmt: skip
        log.info("query-scoped extension: %s.%s derived from prose for %s (%d candidates, %d agree), reverted",
                 fact.entity.label, fact.field, fact.entity.key, len(found), len(chosen))  # fmt: skip
        conf = FACT_CONFIDENCE * (len(chosen) / len(found)) * min(1.0, fact.score)
        return Answer(answer=value, citations=cites, route="vector", confidence=round(conf, 3),
                      contract_version=self.g.version, extension=extension,
                      text=f"{value} (a candidate read from the text, not in the data: \"{fact.sentence}\")")  # fmt: skip

    def _passages(self, ents: list[Mention], rows_by_entity: dict[Any, list[dict[str, Any]]], version: int) -> Answer:
        picked: list[tuple[float, str, Citation]] = []
        for m in ents:
            for row in rows_by_entity.get(m.entity, []):
                text = str(row.get("text") or "")
                a = int(row.get("m_start") or 0)  # the mention inside the chunk
                for s_start, s_end in sentences(text):
                    if s_start <= a < s_end:
                        sentence = re.sub(r"^#+\s.*\n+", "", text[s_start:s_end].strip()).strip()
                        cite = Citation(source=str(row["source"]), record_id=str(row["record_id"]),
                                        location=_location(row, s_start, s_end))  # fmt: skip
                        picked.append((float(row.get("score") or 0.0), sentence, cite))
                        break
        if not picked:
            names = ", ".join(repr(m.surface) for m in ents)
            return Answer.abstain(f"no text mentions {names}", version)
        picked.sort(key=lambda x: (-x[0], x[2].source, x[2].record_id, x[2].location))
        out: list[tuple[str, Citation]] = []
        for _, sentence, cite in picked:
            if len(out) < MAX_SENTENCES and all(sentence != s for s, _ in out):
                out.append((sentence, cite))
        top = picked[0][0]
        return Answer(answer=[s for s, _ in out], citations=_unique([c for _, c in out]), route="vector",
                      confidence=round(min(PASSAGE_CONFIDENCE, PASSAGE_CONFIDENCE * top), 3),
                      contract_version=version)  # fmt: skip


class _NoType:
    def __init__(self) -> None:
        self.attrs: dict[str, Any] = {}


_NO_TYPE: Any = _NoType()


def _unique(cites: list[Citation]) -> list[Citation]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for c in cites:
        k = (c.source, c.record_id, c.location)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out
