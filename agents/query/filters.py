"""Comparisons, dates and yes/no fields as filters on the types of a plan: the numeric field named next to a
comparison or implied by its unit or word (durations converted to the field's unit), the date field a verb names."""

from __future__ import annotations

from esc.agents.query.anchors import date_filters
from esc.agents.query.jobstate import JobState
from esc.agents.query.measures import _duration_fit, _guess_unit, _unit_seconds
from esc.agents.query.plan import Filter
from esc.agents.query.reading import CompareMention
from esc.agents.query.vocabulary import AttrInfo
from esc.agents.query.words import FUNCTION_WORDS, LENGTH_UNITS


class Filters(JobState):
    # -- compares, dates, flags --------------------------------------------------------------------------------
    def compare_filter(self, c: CompareMention, entity: str) -> tuple[Filter, float] | None:
        """A comparison as a filter on ``entity``: the numeric field named next to it, else the one its unit or
        word implies (duration -> a length field, money -> a price field)."""
        info = self.vocab.types[entity]
        named = self._compare_attr_named(c, entity)
        if named is not None:
            a = info.attrs[named[0]]
            return Filter(prop=a.name, op=c.op, value=self._convert(a, c)), named[1]  # type: ignore[arg-type]
        kind = "duration" if c.number.seconds is not None else "money" if c.number.unit == "money" else c.hint
        hints = [kind] if kind is not None else []
        if c.number.unit in LENGTH_UNITS:
            hints += [h for h in ("height", "altitude", "elevation", "distance", "length") if h != kind]
        cands: list[tuple[float, AttrInfo]] = []
        for a in info.attrs.values():
            if not a.measure:
                continue
            if kind == "duration":
                s = _duration_fit(a)
            elif kind == "money":
                s = 1.0 if a.money else 0.0
            else:
                s = max((lk.score for h in hints for e, lk in self.i.phrases.lookup((h,)).items()
                         if e.kind == "attr" and e.entity == entity and e.name == a.name), default=0.0)  # fmt: skip
            if s > 0:
                cands.append((s, a))
        if not cands:
            return None
        cands.sort(key=lambda x: -x[0])
        s, a = cands[0]
        if len(cands) > 1 and cands[1][0] == s:
            return None
        return Filter(prop=a.name, op=c.op, value=self._convert(a, c)), min(1.0, s)  # type: ignore[arg-type]

    def _compare_attr_named(self, c: CompareMention, entity: str) -> tuple[str, float] | None:
        """A field named right before the comparison ("a total above $15", "length longer than") or right after
        its number ("more than 300 seats")."""
        for m in self.r.schema:
            if m.end == c.start or m.start == c.end or (m.end + 1 == c.start and self.r.low(m.end) in ("of", "is", "are", "was")):
                for e, lk in m.of("attr").items():
                    if e.entity == entity and self.vocab.types[entity].attrs[e.name].numeric:
                        self.used_schema.add(m.start)
                        return e.name, lk.score
                if m.start == c.end:
                    self.used_schema.add(m.start)
        return None

    def _convert(self, a: AttrInfo, c: CompareMention) -> float:
        """A duration in the question's unit converted to the field's unit (named in the field, else guessed
        from its values)."""
        if c.number.seconds is None:
            return c.number.value
        unit = _unit_seconds(a)
        if unit is None:
            self.penalize(0.85, f"the unit of '{a.name}' was guessed")
            unit = _guess_unit(a)
        return c.number.seconds / unit

    def extra_filters(self, entity: str, exclude: set[int]) -> list[Filter]:
        """Filters on ``entity`` from comparisons, dates and flags that belong to it."""
        out: list[Filter] = []
        r = self.r
        for c in r.compares:
            if id(c) in exclude:
                continue
            got = self.compare_filter(c, entity)
            if got is not None:
                f, s = got
                out.append(f)
                exclude.add(id(c))
                if s < 1.0:
                    self.penalize(s, "comparison field reading")
        for d in r.dates:
            if id(d) in exclude:
                continue
            verb = self._verb_near(d.start)
            got2 = date_filters(self.vocab, entity, d, verb)
            if got2 is not None:
                fs, s = got2
                out.extend(fs)
                exclude.add(id(d))
                if s < 1.0:
                    self.penalize(s, "date field reading")
        for el, f, pos in self.flags:
            if el.entity == entity and pos not in exclude:
                out.append(f)
                exclude.add(pos)
        return out

    def _verb_near(self, pos: int) -> str | None:
        """The verb before a date ("placed in 2017", "shipped", "hired in"), as a base form."""
        for k in range(pos - 1, max(-1, pos - 4), -1):
            t = self.r.tokens[k]
            if t.low not in FUNCTION_WORDS and t.base != t.low and t.low.endswith("ed"):
                return t.base
        return None
