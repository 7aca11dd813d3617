"""One question's planning: anchors -> focus -> operation -> path -> ``QueryPlan``, with the confidence of the
readings it rests on. ``Interpreter.plan`` runs a ``Job``; its parts live beside it: ``checks.py`` (what must be
declined or costs confidence), ``focus.py`` (what is asked), ``measures.py`` (what an aggregate runs over),
``filters.py`` (comparisons, dates, flags), ``joins.py`` (paths), ``superlatives.py`` (most / least / top N)."""

from __future__ import annotations

from esc.agents.query.anchors import flag_filters, key_anchors, literal_anchors, value_anchors
from esc.agents.query.checks import Checks
from esc.agents.query.filters import Filters
from esc.agents.query.focus import HOW_HINTS, Focusing
from esc.agents.query.interpret import Decline, Focus, Planned
from esc.agents.query.jobstate import AMBIGUOUS, STRUCTURAL
from esc.agents.query.joins import hops_of, route
from esc.agents.query.reading import OpMention
from esc.agents.query.vocabulary import DERIVED_VALUE
from esc.agents.query.words import QUANTITY_WORDS


class Job(Focusing, Checks, Filters):
    """The planning state of one question, and its entry point (``build``)."""

    # -- entry ------------------------------------------------------------------------------------------------
    def build(self) -> Planned:
        r = self.r
        if r.future:
            raise Decline("the question asks about the future; the data only records what has happened", False)
        if r.opinion:
            raise Decline("the question asks for an opinion or a recommendation, which the data cannot give", False)
        self._modifier_names()
        self.anchors = key_anchors(r, self.used_schema)
        self.anchors += value_anchors(r, self.vocab, self.used_schema)
        self.anchors += literal_anchors(r, self.vocab, self.used_schema)
        self.flags = flag_filters(r, self.vocab, self.used_schema)
        self._check_unknown()
        self._demote_ops()
        self._designating_strays()
        self._check_unconsumed()
        self._semantic_strays()
        op = self._operation()
        self._check_grouping(op)
        if op is not None and op.kind in ("most", "least", "recent"):
            from esc.agents.query.superlatives import extreme_value, superlative

            agg = extreme_value(self, op)
            if agg is not None:
                return agg
            return superlative(self, op)
        return self._direct(op)

    # -- operation ----------------------------------------------------------------------------------------------
    def _operation(self) -> OpMention | None:
        r = self.r
        sup = r.op("most", "least", "recent")
        agg = r.op("sum", "avg", "min", "max")
        count = r.op("count")
        if sup is not None and agg is not None and agg.kind in ("min", "max"):
            return agg if agg.start < sup.start else sup
        if count is not None and r.low(count.end) in QUANTITY_WORDS:
            return count  # "how many units ... in total": a sum of a quantity field (the count branch)
        if count is not None and agg is not None and agg.kind == "sum" and count.start < agg.start:
            return count  # "how many copies ... altogether": counting, "altogether" only stresses it
        if sup is not None and count is not None and count.start < sup.start:
            # "how many customers bought the most expensive track": counting is the question
            return count
        for cand in (sup, agg, count):
            if cand is not None:
                return cand
        return None

    # -- direct questions: lookup, list, count, aggregate ------------------------------------------------------
    def _direct(self, op: OpMention | None) -> Planned:
        r = self.r
        free = self.free()
        qword = next((t.low for t in r.tokens[:3] if t.low in ("who", "whom", "whose", "when", "where")), None)
        how = self._how_word()
        focus: Focus | None = None
        agg: str | None = None
        measure: Focus | None = None
        if op is not None and op.kind == "count" and self.r.low(op.end) in QUANTITY_WORDS:
            focus, agg = self._quantity_measure(op), "sum"  # "how many units of X were ordered"
        elif op is not None and op.kind == "count":
            after = [m for m in free if m.start >= op.end]
            counted = after[0] if after else None
            if (counted is None or counted.start > op.end) and op.end in self.r.unconsumed:
                slot = self.stray_type(op.end)  # "how many songs does album X have"
                if slot is not None:
                    focus, agg = slot, "count"
                    counted = None
            if counted is not None:
                f = self.focus_from(counted, prefer_types=True)
                a = self._attr(f)
                if a is not None and (a.numeric or a.measure):
                    if self._single(f.entity):
                        focus = f  # "how many seats does the plane N14228 have": its value
                    else:
                        focus, agg = f, "sum"  # "how many units are in stock in total"
                elif a is not None:
                    focus, agg = f, "count_distinct"
                else:
                    focus, agg = f, "count"
            elif focus is None:
                focus, agg = self._implied_counted(op), "count"
        elif op is not None and op.kind in ("sum", "avg", "min", "max"):
            agg = op.kind
            measure = self._measure(free, op)
            focus = measure
            if measure is not None and agg == "sum" and self._single(measure.entity):
                agg = None  # "the total of invoice 376": one record's field
        elif how == "much":
            measure = self._money_measure(free)
            focus = measure
            if measure is not None and not self._single(measure.entity):
                agg = "sum"
        elif how == "long":
            focus = self._duration_focus(free)
        elif how in HOW_HINTS and not free:
            focus = self._hint_focus(HOW_HINTS[how])
        else:
            focus = self._plain_focus(free, qword)
        implicit = focus is None or focus.start < 0 or focus.element is None
        self.check_strays(focus, implicit)
        if focus is None:
            raise Decline("the question names nothing to answer with (no type, field or relationship matches)")
        self.penalize(focus.score, "focus reading") if focus.score < 1.0 else None
        if agg in ("sum", "avg") and focus.attr is not None and focus.attr != DERIVED_VALUE:
            a = self.vocab.types[focus.entity].attrs[focus.attr]
            if not a.measure:
                raise Decline(f"'{focus.attr}' is not a quantity that can be summed or averaged")
        from esc.agents.query.build import build_plan

        return build_plan(self, focus, agg)

    def _how_word(self) -> str | None:
        r = self.r
        for i in range(len(r.tokens) - 1):
            if r.low(i) == "how" and r.low(i + 1) in ("long", "much", "old", "far", "high", "big"):
                return r.low(i + 1)
        return None


__all__ = ["AMBIGUOUS", "STRUCTURAL", "Job", "hops_of", "route"]
