"""What an aggregate runs over: a numeric field named after the operation word, an operation word that is a
field's name ("the total of invoice 376"), a field the question implies (money words, durations, quantities), or
price x quantity on a line-like type ("value", "revenue"); and the duration units of fields."""

from __future__ import annotations

from esc.agents.query.interpret import Focus
from esc.agents.query.jobstate import AMBIGUOUS, STRUCTURAL, JobState
from esc.agents.query.paths import distance
from esc.agents.query.phrases import Element
from esc.agents.query.reading import OpMention, SchemaMention
from esc.agents.query.vocabulary import DERIVED_VALUE, DERIVED_WORDS, AttrInfo
from esc.agents.query.words import DURATION_UNITS, DURATION_WORDS, MONEY_WORDS


class Measures(JobState):
    def derived_measure(self) -> Focus | None:
        """"value / revenue / sales": price x quantity (x (1 - discount)) on the line-like type nearest the
        anchors, when the contract has one."""
        words = {t.low for t in self.r.tokens} | {t.base for t in self.r.tokens}
        if not (words & DERIVED_WORDS) or not self.vocab.derived:
            return None
        ents = sorted(self.vocab.derived, key=lambda e: (self._dist_to_anchors(e), e))
        for m in self.r.schema:  # "after discounts": the discount is part of the value
            if any(e.entity == ents[0] for e in m.of("attr")):
                self.consumed_measures.add(m.start)
        return Focus(ents[0], DERIVED_VALUE, 0.9, -1)

    def _measure(self, free: list[SchemaMention], op: OpMention) -> Focus | None:
        """The attribute an aggregate runs over: the first numeric field named after the operation word, else
        one the question implies (money words for sums, duration words for lengths)."""
        derived = self.derived_measure()
        if derived is not None:
            return derived
        after = [m for m in free if m.start >= op.end] + [m for m in free if m.start < op.start]
        for m in after:
            attrs = m.of("attr")
            numeric = {e: lk for e, lk in attrs.items() if self._is_numeric(e)}
            if numeric:
                el, lk = self._pick_attr(numeric, m)
                self.consumed_measures.add(m.start)
                return Focus(el.entity, el.name, lk.score, m.start, el)
        own = self._op_as_attr(op)
        if own is not None:
            return own
        implied = self._implied_measure(op)
        if implied is not None:
            return implied
        # "the total of invoices": a type followed by its one money field
        for m in after:
            for el in m.of("type"):
                money = [a for a in self.vocab.types[el.entity].attrs.values() if a.money and a.measure]
                if len(money) == 1:
                    self.consumed_measures.add(m.start)
                    return Focus(el.entity, money[0].name, STRUCTURAL, m.start)
        return None

    def _op_as_attr(self, op: OpMention) -> Focus | None:
        """An operation word that is also a field's name ("the total of invoice 376": Invoice.Total)."""
        key = tuple(self.r.tokens[k].base for k in range(op.start, op.end))
        links = {e: lk for e, lk in self.i.phrases.lookup(key).items() if e.kind == "attr" and self._is_numeric(e)}
        if not links:
            return None
        el, lk = self._pick_attr(links)
        return Focus(el.entity, el.name, lk.score, op.start, el)

    def _is_numeric(self, e: Element) -> bool:
        if e.name == DERIVED_VALUE:
            return True
        a = self.vocab.types[e.entity].attrs[e.name]
        return a.numeric or a.temporal

    def _implied_measure(self, op: OpMention) -> Focus | None:
        r = self.r
        words = {t.low for t in r.tokens} | {t.base for t in r.tokens}
        if words & MONEY_WORDS:
            return self._money_measure(self.free())
        if words & DURATION_WORDS:
            return self._duration_focus(self.free())
        return None

    def _money_measure(self, free: list[SchemaMention]) -> Focus | None:
        """The money field a "how much / spent / paid / cost" question means: one named, else the money measure
        nearest the anchors (a line item's price x quantity when there is one)."""
        for m in free:
            money = {e: lk for e, lk in m.of("attr").items() if self.vocab.types[e.entity].attrs[e.name].money}
            if money:
                el, lk = self._pick_attr(money, m)
                self.consumed_measures.add(m.start)
                return Focus(el.entity, el.name, lk.score, m.start, el)
        anchors = self.anchor_entities()
        cands: list[tuple[int, int, str, str]] = []
        named = {e.entity for m in free for e in m.of("type")}
        for info in self.vocab.types.values():
            for a in info.attrs.values():
                if a.money and a.measure:
                    d = min((distance(self.vocab, x, info.name) for x in anchors), default=0)
                    cands.append((0 if info.name in named else 1, d, info.name, a.name))
        if not cands:
            return None
        cands.sort()
        best = cands[0]
        if best[0] == 1 and best[1] > 0:
            # a money field on a type reachable from the anchor: the "top" level (an invoice's total) beats a
            # line's unit price when both are as near
            near = [c for c in cands if c[:2] == best[:2]]
            if len(near) > 1:
                self.penalize(AMBIGUOUS, "several money fields are as near")
        self.penalize(STRUCTURAL, "money field inferred")
        return Focus(best[2], best[3], 1.0, -1)

    def _duration_focus(self, free: list[SchemaMention]) -> Focus | None:
        anchors = self.anchor_entities()
        ents = anchors or [e.entity for m in free for e in m.of("type")]
        best: tuple[float, str, str] | None = None
        for ent in ents or list(self.vocab.types):
            for a in self.vocab.types[ent].attrs.values():
                if not a.measure:
                    continue
                score = _duration_fit(a)
                if score > 0 and (best is None or score > best[0]):
                    best = (score, ent, a.name)
        if best is None:
            return None
        return Focus(best[1], best[2], min(1.0, best[0]), -1)

    def _quantity_measure(self, op: OpMention) -> Focus | None:
        """The quantity field "how many units" means: a count-like measure (quantity / units / qty), on a type
        with many rows per anchor (a sum over the one pinned record says nothing), the one whose words the
        question shares most."""
        r = self.r
        words = {t.base for t in r.tokens if t.index != op.end} | {t.low for t in r.tokens if t.index != op.end}
        cands = []
        for info in self.vocab.types.values():
            for a in info.attrs.values():
                if not a.measure or not ({"quantity", "qty", "units", "unit", "count"} & set(a.words)):
                    continue
                single = self._single(info.name)
                overlap = len((set(a.words) | set(info.words)) & words)
                cands.append((single, -overlap, self._dist_to_anchors(info.name), info.name, a.name))
        if not cands:
            return None
        cands.sort()
        best = cands[0]
        for m in r.schema:
            if m.start == op.end:
                self.consumed_measures.add(m.start)
        if len(cands) > 1 and cands[1][:3] == best[:3]:
            self.penalize(AMBIGUOUS, "several quantity fields fit")
        return Focus(best[3], best[4], 0.9, op.end)


def _unit_seconds(a: AttrInfo) -> float | None:
    for w in a.words:
        if w in DURATION_UNITS:
            return DURATION_UNITS[w]
    return None


def _guess_unit(a: AttrInfo) -> float:
    """Seconds per unit of an unnamed duration field, from its values: whole numbers under 1,000 read as
    minutes, larger ones as milliseconds when that gives minutes to hours, else seconds."""
    try:
        hi = float(a.maximum) if a.maximum is not None else None
    except (TypeError, ValueError):
        hi = None
    if hi is None or hi < 1000:
        return 60.0
    if 60 <= hi * 0.001 <= 86400 * 2:
        return 0.001
    return 1.0


def _duration_fit(a: AttrInfo) -> float:
    words = set(a.words)
    if "length" in words or "duration" in words:
        return 0.9 / max(1, len(a.words)) ** 0.3
    if words & {"milliseconds", "millisecond", "seconds", "minutes", "runtime", "ms"}:
        return 0.85 / max(1, len(a.words)) ** 0.3
    if "time" in words:
        return 0.5
    return 0.0
