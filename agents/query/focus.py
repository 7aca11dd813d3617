"""What a question asks for: the element a schema mention names, resolved against the anchors (the other
end of a relationship, the head of a compound, the owner of a field), or, when nothing names it, what the
question word and the relationships imply (who -> a person or the doer of the verb, when -> a date, where -> a
place, how high -> a height, a plural noun in the type slot -> the type on the many side)."""

from __future__ import annotations

from esc.agents.query.checks import _is_noun
from esc.agents.query.interpret import Focus
from esc.agents.query.jobstate import AMBIGUOUS, STRUCTURAL
from esc.agents.query.measures import Measures
from esc.agents.query.paths import distance
from esc.agents.query.phrases import Element, Link
from esc.agents.query.reading import OpMention, SchemaMention
from esc.agents.query.words import DURATION_UNITS, DURATION_WORDS, PERSON_QUESTION, base

HOW_HINTS = {"high": "height", "far": "distance", "old": "age", "big": "size", "tall": "height", "heavy": "weight"}


class Focusing(Measures):
    # -- focus -----------------------------------------------------------------------------------------------
    def focus_from(self, m: SchemaMention, prefer_types: bool = False) -> Focus:
        """The element a schema mention asks for, resolved against the anchors."""
        anchors = self.anchor_entities()
        types = m.of("type")
        attrs = m.of("attr")
        rels = m.of("rel")
        best_type = max(types.values(), key=lambda lk: lk.score).score if types else 0.0
        best_attr = max(attrs.values(), key=lambda lk: lk.score).score if attrs else 0.0
        best_rel = max(rels.values(), key=lambda lk: lk.score).score if rels else 0.0
        if rels and best_rel >= max(best_type, best_attr) and (not types or best_rel > best_type or anchors):
            el, lk = self._pick_rel(rels)
            named = {t.entity for t in types}
            if el is not None and types and self._rel_end(el, lk, m)[0] not in named and named & {el.entity, el.target}:
                el = None  # "contacts" names the type the relationship points at, not the relationship's other end
            if el is not None and (not types or anchors):
                if attrs and best_rel - best_attr < 0.05:
                    self.penalize(0.7, f"'{self.r.text(m.start, m.end)}' names both a field and a relationship")
                target, inverse = self._rel_end(el, lk, m)
                return Focus(target, None, lk.score, m.start, el, el, inverse)
        if types and (best_type >= best_attr or prefer_types or not attrs):
            el, lk = max(types.items(), key=lambda kv: (kv[1].score, -self._dist_to_anchors(kv[0].entity)))
            # a type word that is also an attribute of the anchor ("city" of a customer) -> the attribute
            own = [e for e in attrs if e.entity in anchors and attrs[e].score >= 0.9]
            others = [x for x in self.free() if x.start != m.start and x.of("type")]
            if (
                own and not prefer_types and not others and el.entity not in anchors
                and distance(self.vocab, own[0].entity, el.entity) > 1
            ):
                return Focus(own[0].entity, own[0].name, attrs[own[0]].score, m.start, own[0])
            return Focus(el.entity, None, lk.score, m.start, el)
        el, lk = self._pick_attr(attrs, m)
        return Focus(el.entity, el.name, lk.score, m.start, el)

    def _pick_rel(self, rels: dict[Element, Link]) -> tuple[Element | None, Link]:
        anchors = set(self.anchor_entities())
        ranked = sorted(rels.items(), key=lambda kv: (kv[1].score, kv[0].entity in anchors or kv[0].target in anchors),
                        reverse=True)  # fmt: skip
        return ranked[0]

    def _rel_end(self, el: Element, lk: Link, m: SchemaMention) -> tuple[str, bool]:
        """Which end of a relationship the question asks for: the other end from the anchor; for a
        self-relationship, by the role noun ("manager" -> referenced, "direct reports" -> referencing) or by
        word order for verbs ("X reports to ?" vs "? reports to X")."""
        anchors = self.anchors
        if el.entity != el.target:
            if any(a.entity == el.entity for a in anchors):
                return el.target, False
            if any(a.entity == el.target for a in anchors):
                return el.entity, False
            return el.target, False
        return el.target, lk.inverse

    def self_directions(self) -> dict[str, str]:
        """Directions of self-relationships the question names (an anchor before a verb phrase is its
        subject: "Jane reports to ?" walks out; "? reports to Jane" walks in; "manager of X" walks out)."""
        fixed: dict[str, str] = {}
        for m in self.r.schema:
            for el, lk in m.of("rel").items():
                if el.entity != el.target:
                    continue
                if lk.inverse:
                    fixed[el.name] = "in"
                    continue
                words = [self.r.low(k) for k in m.tokens()]
                verb_phrase = (len(words) > 1 and words[-1] in ("to", "for", "under", "with", "by") and not _is_noun(
                    words[0], self.r.tokens[m.start].base
                )) or words[0] in ("reports", "report", "works", "work", "reporting", "working", "reported")
                anchor_before = any(a.end <= m.start for a in self.anchors)
                if not verb_phrase:
                    fixed[el.name] = "out"  # "manager (of)", "boss": the referenced end
                else:
                    fixed[el.name] = "out" if anchor_before or self._subject_before(m) else "in"
        return fixed

    def _subject_before(self, m: SchemaMention) -> bool:
        """"Who does Jane work for" -> Jane (an anchor) is the subject even if it comes later: the auxiliary
        "does/did" puts the subject after it."""
        aux = {"does", "did", "do"}
        return any(self.r.low(k) in aux for k in range(0, m.start)) and any(a.start < m.start for a in self.anchors)

    def _implied_counted(self, op: OpMention) -> Focus | None:
        """"How many are in the Seafood category" / "how many items ...": the one type that references the
        anchor's type (counting follows a relationship backwards)."""
        r = self.r
        anchors = self.anchor_entities()
        if not anchors:
            return None
        cands = [other for _r, d, other in self.vocab.neighbours(anchors[0]) if d == "in"]
        cands = sorted(set(cands))
        if len(cands) == 1 or (r.generic and cands):
            self.penalize(STRUCTURAL if len(cands) == 1 else 0.6, "counted type inferred from the relationships")
            return Focus(cands[0], None, 1.0, op.end)
        return None

    def stray_type(self, i: int) -> Focus | None:
        """A noun nothing matched, standing where the asked-for type goes ("how many *songs* does album X
        have", "show all *songs* on the album X"): the one type on the many side of the anchor's type, if there
        is exactly one and no anchor pins it. Weak evidence (the word itself matched nothing)."""
        if not 0 <= i < len(self.r.tokens) or not self.anchors:
            return None
        t = self.r.tokens[i]
        word = t.text
        if word not in self.stray_nouns or t.base == t.low or not t.low.endswith("s"):
            return None  # a plural noun only: "songs", not "salary" or "weather"
        base = self.anchors[0].entity
        many = sorted({o for _r, d, o in self.vocab.neighbours(base) if d == "in" and o != base})
        many = [m for m in many if not self._single(m) and not self._junction(m)]
        if len(many) != 1:
            return None
        self.stray_nouns.remove(word)
        self.r.used.add(i)
        self.penalize(0.6, f"'{word}' read as {many[0]} from the relationships")
        return Focus(many[0], None, 1.0, i, Element("type", many[0], many[0]))

    def _junction(self, entity: str) -> bool:
        """A type that only joins two others (all its fields are keys or references)."""
        info = self.vocab.types[entity]
        return bool(info.attrs) and all(a.identifier or a.reference or a.temporal for a in info.attrs.values())

    def _first_stray(self) -> int | None:
        r = self.r
        for i in r.unconsumed:
            if i not in r.used and r.tokens[i].text in self.stray_nouns:
                return i
        return None

    def _head(self, free: list[SchemaMention]) -> tuple[SchemaMention, set[str]]:
        """The head of a compound of adjacent mentions ("age rating" -> rating, "customer city" -> city on
        Customer): English compounds put the head last; a type before it restricts whose field it is."""
        m = free[0]
        owners: set[str] = set()
        k = 1
        while k < len(free) and free[k].start == m.end and free[k].of("attr"):
            owners = {e.entity for e in m.of("type")} or owners
            self.used_schema.add(m.start)
            m = free[k]
            k += 1
        return m, owners

    def _plain_focus(self, free: list[SchemaMention], qword: str | None) -> Focus | None:
        if qword == "when" and not any(m.of("attr") and any(
            self.vocab.types[e.entity].attrs[e.name].temporal for e in m.of("attr")) for m in free
        ):  # fmt: skip
            got = self._date_focus()  # "when was order X shipped": the date the verb names
            if got is not None:
                return got
        stray = self._first_stray()
        listing = stray is not None and self.r.low(stray + 1) in ("on", "in", "of", "by", "from", "for", "with")
        if stray is not None and listing and (not free or free[0].start > stray) and self.anchors:
            f0 = self.stray_type(stray)
            if f0 is not None:
                return f0
        if free:
            head, owners = self._head(free)
            if head is not free[0]:
                attrs = {e: lk for e, lk in head.of("attr").items() if not owners or e.entity in owners}
                if attrs:
                    el, lk = self._pick_attr(attrs, head)
                    return Focus(el.entity, el.name, lk.score, head.start, el)
            # the first thing named after the question word; a person question prefers relationships and people
            f = self.focus_from(free[0])
            if qword in PERSON_QUESTION and f.attr is not None and len(free) > 1:
                a = self._attr(f)
                if a is not None and not a.text_like:
                    f = self.focus_from(free[1])
            return f
        lead = self._leading_anchor()
        if lead is not None:
            return lead
        if qword in PERSON_QUESTION:
            return self._person_focus()
        if qword == "when":
            return self._date_focus()
        if qword == "where":
            return self._where_focus()
        words = {t.low for t in self.r.tokens} | {t.base for t in self.r.tokens}
        if words & (DURATION_WORDS | frozenset(DURATION_UNITS)) and self.anchors:
            got = self._duration_focus(free)
            if got is not None:
                return got
        if self.anchors:
            first = self.anchors[0]
            return Focus(first.entity, None, STRUCTURAL, first.start)
        return None

    def _leading_anchor(self) -> Focus | None:
        """"Which sales support agent is assigned to X": a category value right after the question word names
        the type asked for (and filters it)."""
        r = self.r
        for a in self.anchors:
            before = [r.low(k) for k in range(0, a.start)]
            lead = before and before[-1] in ("which", "what") and all(w in ("which", "what", "the", "a") for w in before)
            if lead and a.role == "category":
                return Focus(a.entity, None, 0.95, a.start, Element("type", a.entity, a.entity))
        return None

    def _agent_focus(self) -> Focus | None:
        """"Who made plane X" / "who bought order X": the doer of the question's verb, as WordNet derives it
        (make -> maker -> manufacturer, buy -> buyer -> customer), when the schema names it. Only fields and
        types reachable from the anchor count; relationships do not (a "director" is not a store manager)."""
        from esc.agents.query import wordnet, wordnet_relations

        r = self.r
        anchors = self.anchor_entities()
        best: tuple[float, Focus] | None = None
        for i in r.unconsumed:
            if i in r.used:
                continue
            t = r.tokens[i]
            for noun in wordnet_relations.agent_nouns(t.base):
                rel = wordnet.DERIVED
                links = dict(self.i.phrases.lookup((noun,)))
                for info in self.vocab.types.values():  # "buyer" is a kind of customer
                    head = info.words[-1] if info.words else ""
                    if head and wordnet_relations.is_a(noun, head):
                        links.setdefault(Element("type", info.name, info.name), Link(0.85, "wordnet"))
                for el, lk in links.items():
                    if el.kind == "rel":
                        continue
                    if anchors and min(distance(self.vocab, a, el.entity) for a in anchors) > 2:
                        continue
                    score = lk.score * rel
                    if best is None or score > best[0]:
                        f = Focus(el.entity, el.name if el.kind == "attr" else None, score, i, el)
                        best = (score, f)
                        r.used.add(i)
        return best[1] if best is not None else None

    def _hint_focus(self, hint: str) -> Focus | None:
        """"How high is X" -> X's field WordNet relates to "height" (altitude, elevation)."""
        ents = self.anchor_entities()
        best: tuple[float, Focus] | None = None
        for el, lk in self.i.phrases.lookup((hint,)).items():
            if el.kind != "attr" or (ents and el.entity not in ents):
                continue
            if not self.vocab.types[el.entity].attrs[el.name].numeric:
                continue
            if best is None or lk.score > best[0]:
                at = next((t.index for t in self.r.tokens if t.low in HOW_HINTS), 0)
                best = (lk.score, Focus(el.entity, el.name, lk.score, at, el))
        return best[1] if best is not None else None

    def _person_focus(self) -> Focus | None:
        """"Who ..." with no type word: the doer of the verb when the schema names it, else the person-like
        type one relationship away from the anchor."""
        if not self.anchors:
            return None
        agent = self._agent_focus()
        if agent is not None:
            return agent
        base = self.anchors[0].entity
        people = []
        for _r, d, other in self.vocab.neighbours(base):
            disp = self.vocab.types[other].display
            if d == "out" and len(disp) == 2:
                people.append(other)
        if len(people) == 1:
            self.penalize(STRUCTURAL, "the person was inferred from the relationships")
            return Focus(people[0], None, 1.0, -1)
        return None

    def _date_focus(self) -> Focus | None:
        """"When ..." asks for a date of the anchor's record: the one the question's verb names ("shipped" ->
        ShippedDate, "hired" -> HireDate), else its own-named date."""
        if not self.anchors:
            return None
        from esc.agents.query.anchors import date_attrs

        entity = self.anchors[0].entity
        dated = date_attrs(self.vocab, entity)
        if not dated:
            return None
        verbs = {t.base for t in self.r.tokens if t.index not in self.r.used or t.low.endswith(("ed", "ing"))}
        named = [a for a in dated if verbs & {base(w) for w in a.words}]
        if named:
            for m in self.r.schema:  # the verb's own reading ("shipped" -> Shipper) gives way
                if m.start not in self.used_schema and any(base(w) in verbs for w in self.r.text(m.start, m.end).split()):
                    self.used_schema.add(m.start)
            return Focus(entity, named[0].name, 1.0, -1, Element("attr", entity, named[0].name))
        if len(dated) > 1:
            self.penalize(AMBIGUOUS, "several dates")
        return Focus(entity, dated[0].name, 1.0, -1)

    def _where_focus(self) -> Focus | None:
        if not self.anchors:
            return None
        info = self.vocab.types[self.anchors[0].entity]
        for word in ("city", "country", "address", "location"):
            for a in info.attrs.values():
                if word in a.words:
                    return Focus(info.name, a.name, STRUCTURAL, -1)
        return None
