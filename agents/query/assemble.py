"""One question's planning: anchors -> focus -> operation -> path -> ``QueryPlan``, with the confidence of the
readings it rests on. ``Interpreter.plan`` runs a ``Job``; ``superlatives.py`` handles "most / least / top N /
latest" questions.
"""

from __future__ import annotations

from typing import Any

from agents.query.anchors import (
    Anchor,
    date_filters,
    flag_filters,
    key_anchors,
    literal_anchors,
    value_anchors,
)
from agents.query.interpret import Decline, Focus, Interpreter, Planned
from agents.query.paths import Step, best_path, distance
from agents.query.phrases import Element, Link
from agents.query.plan import Filter, Hop, NodePattern, QueryPlan, ReturnItem
from agents.query.reading import CompareMention, OpMention, Reading, SchemaMention, ValueMention
from agents.query.vocabulary import DERIVED_VALUE, DERIVED_WORDS, AttrInfo
from agents.query.words import (
    DURATION_UNITS,
    DURATION_WORDS,
    FUNCTION_WORDS,
    LENGTH_UNITS,
    MONEY_WORDS,
    PERSON_QUESTION,
    QUANTITY_WORDS,
    base,
)

UNCONSUMED = 0.55
UNUSED = 0.6
MODIFIER = 0.85
STRUCTURAL = 0.8
AMBIGUOUS = 0.85
HOW_HINTS = {"high": "height", "far": "distance", "old": "age", "big": "size", "tall": "height", "heavy": "weight"}
LOCATION_WORDS = frozenset({"city", "country", "address", "state", "region", "place", "location"})
SUBJECT_WORDS = frozenset({"who", "which", "what", "that", "i", "we", "you", "they", "he", "she", "it", "does",
                           "do", "did", "will", "would", "can", "could", "has", "have", "had"})  # fmt: skip
OBJECT_LEADS = frozenset({"in", "on", "at", "to", "for", "from", "with", "by", "into", "the", "a", "an", "under",
                          "over", "up", "out", "off", "about", "as", "of"})  # fmt: skip
MEASURE_HINTS = DURATION_WORDS | MONEY_WORDS | QUANTITY_WORDS | frozenset(DURATION_UNITS)


class Job:
    """The planning state of one question."""

    def __init__(self, interp: Interpreter, r: Reading) -> None:
        self.i = interp
        self.vocab = interp.vocab
        self.r = r
        self.used_schema: set[int] = set()
        self.anchors: list[Anchor] = []
        self.conf = 1.0
        self.notes: list[str] = []
        self.flags: list[tuple[Element, Filter, int]] = []
        self.consumed_measures: set[int] = set()

    # -- reporting --------------------------------------------------------------------------------------------
    def unmatched(self) -> list[str]:
        r = self.r
        out = [r.text(a, b) for a, b, _ in r.unknown]
        out += [r.tokens[i].text for i in r.unconsumed if i not in r.used]
        return out

    def penalize(self, factor: float, why: str) -> None:
        self.conf *= factor
        self.notes.append(f"{why} (x{factor:g})")

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
            from agents.query.superlatives import extreme_value, superlative

            agg = extreme_value(self, op)
            if agg is not None:
                return agg
            return superlative(self, op)
        return self._direct(op)

    def _check_grouping(self, op: OpMention | None) -> None:
        """"How many customers does each country have", "total sales per year": one answer per group, which
        an answer here (one value or one list) cannot carry; declined rather than answered with the total."""
        r = self.r
        if op is None or op.kind not in ("count", "sum", "avg", "min", "max"):
            return
        for i, t in enumerate(r.tokens):
            if t.low in ("each", "per", "every") and r.free(i):
                nxt = next((m for m in r.schema if m.start == i + 1), None)
                if nxt is not None and (nxt.of("type") or nxt.of("attr")) and not self._single_pinned(nxt):
                    raise Decline(f"the question asks for one {op.kind} per {r.text(nxt.start, nxt.end)}: "
                                  "answers per group are not supported yet", False)  # fmt: skip

    def _single_pinned(self, m: SchemaMention) -> bool:
        """"on average, how much did X pay per payment": the group is what the average runs over, not a
        grouping."""
        r = self.r
        return r.op("avg") is not None and any(e.kind == "type" for e in m.links) and m.end >= len(r.tokens) - 1

    def _modifier_names(self) -> None:
        """A lower-case word right before a type word that names, in part, a record of a related type:
        "united flights" (United Air Lines Inc.), "delta flights". Weaker than a capitalized name."""
        r = self.r
        for i in list(r.unconsumed):
            if i in r.used:
                continue
            nxt = next((m for m in r.schema if m.start == i + 1 and m.of("type")), None)
            if nxt is None:
                continue
            vm = self.i.values.partial(r.tokens[i].text)
            if vm is None:
                continue
            types = {e.entity for e in nxt.of("type")}
            near = {h for h in vm.hits if any(o in types for _rel, _d, o in self.vocab.neighbours(h.entity))}
            if near:
                r.values.append(ValueMention(i, i + 1, r.tokens[i].text, near, False, vm.score * 0.85, vm.how))
                r.used.add(i)

    def _demote_ops(self) -> None:
        """An operation word that is a field's name, used as a noun ("a total above $15", "the largest single
        invoice total"), is the field."""
        r = self.r
        for op in list(r.ops):
            if op.kind != "sum":
                continue
            key = tuple(r.tokens[k].base for k in range(op.start, op.end))
            links = {e: lk for e, lk in self.i.phrases.lookup(key).items() if e.kind == "attr"}
            if not links:
                continue
            before = r.low(op.start - 1)
            after_cmp = any(c.start == op.end for c in r.compares)
            after_type = any(m.end == op.start and m.of("type") for m in r.schema)
            after_sup = any(o.end == op.start and o.kind in ("most", "least", "max", "min") for o in r.ops)
            if before in ("a", "an") or after_cmp or after_type or after_sup:
                r.ops.remove(op)
                r.schema.append(SchemaMention(op.start, op.end, links))
                r.schema.sort(key=lambda m: m.start)

    def _designating_strays(self) -> None:
        """A noun right before a stored value ("the song 'So Cruel'", "the client Astrid Gruber") names the
        value's type, whatever word it uses: the value says which type it is."""
        r = self.r
        for a in self.anchors:
            k = a.start - 1
            if k >= 0 and r.low(k) in ("the", "a", "an"):
                continue
            if k >= 0 and k in r.unconsumed and k not in r.used and _is_noun(r.low(k), r.tokens[k].base):
                r.used.add(k)
                a.designated = True
                self.penalize(0.95, f"'{r.tokens[k].text}' read as the type of '{a.text}'")

    def unused_mentions(self, plan: QueryPlan) -> float:
        """A type, field or relationship the question names that the plan does not use ("how many products are
        out of *stock*" answered with a plain count) means the answer left part of the question out: each one
        costs confidence."""
        labels = {n.label for n in plan.vars()}
        var_label = {n.var: n.label for n in plan.vars()}
        props = {(n.label, f.prop) for n in plan.vars() for f in n.filters}
        for item in plan.returns:
            label = var_label.get(item.var, "")
            if item.prop is not None:
                props.add((label, item.prop))
            if item.expr is not None:
                props.update((label, p) for p in item.expr.props())
        if plan.order_by is not None and plan.order_by.prop is not None:
            props.add((var_label.get(plan.order_by.var, ""), plan.order_by.prop))
        rels = {h.rel_type for h in plan.hops}
        factor = 1.0
        for m in self.r.schema:
            if m.start in self.used_schema:
                continue  # consumed on purpose: a designator, a verb read as its date, a compound's modifier
            used = False
            for el in m.links:
                if el.kind == "type":
                    used = el.entity in labels
                elif el.kind == "attr":
                    used = (el.entity, el.name) in props or el.name == DERIVED_VALUE
                else:
                    used = el.name in rels
                if used:
                    break
            if not used:
                factor *= UNUSED
                self.notes.append(f"'{self.r.text(m.start, m.end)}' is named but the plan does not use it (x{UNUSED})")
        return factor

    # -- declining ----------------------------------------------------------------------------------------------
    def _check_unknown(self) -> None:
        r = self.r
        for a, b, quoted in r.unknown:
            text = r.text(a, b)
            kind = self._designated_type(a, b)
            what = f"no {kind} named {text!r}" if kind else f"nothing in the data is named {text!r}"
            raise Decline(what + (" (a quoted name must match a stored value)" if quoted else ""))

    def _designated_type(self, a: int, b: int) -> str | None:
        for m in self.r.schema:
            gap = [self.r.low(k) for k in range(m.end, a)]
            if (m.end <= a and all(w in ("the", "a", "an", "of", "named", "called") for w in gap)) or m.start == b:
                types = m.of("type")
                if types:
                    return " ".join(self.vocab.types[next(iter(types)).entity].words)
        return None

    def _check_unconsumed(self) -> None:
        """Content words nothing consumed. Right before a schema word a word only qualifies it ("job title",
        "street address"), right after one it is the head of a compound whose first word matched ("staff
        member", "shipping company"): a small cost. Any other noun is something the data may not have
        ("salary", "weather", "pilot"): the plan goes ahead only if the question names what to answer with
        some other way (``stray_nouns``, checked once the focus is known); other words cost more."""
        r = self.r
        self.stray_nouns: list[str] = []
        self.stray_pos: list[int] = []
        for i in r.unconsumed:
            if i in r.used:
                continue
            t = r.tokens[i]
            if t.low in MEASURE_HINTS or t.base in MEASURE_HINTS:
                continue  # "length", "spent", "units", "minutes": read by the measure logic
            nxt = next((m for m in r.schema if m.start == i + 1), None)
            prv = next((m for m in r.schema if m.end == i), None)
            noun = _is_noun(t.low, t.base) and not self._verb_context(i)
            if nxt is not None:
                self.penalize(MODIFIER, f"'{t.text}' only qualifies a schema word")
            elif prv is not None and noun and (prv.of("type") or prv.of("attr")):
                self.penalize(MODIFIER, f"'{t.text}' heads a compound with a schema word")
            elif noun:
                self.stray_nouns.append(t.text)
                self.stray_pos.append(i)
            else:
                self.penalize(UNCONSUMED, f"'{t.text}' was not used")

    def _verb_context(self, i: int) -> bool:
        """A word that can be a verb, between its subject (a question word, a pronoun, an auxiliary or a
        mention) and a preposition, article or mention: "movies *fall* in", "who *covers* the", "did X *gross* at"."""
        from agents.query.wordnet import wordnet

        r = self.r
        wn = wordnet()
        t = r.tokens[i]
        if wn is None or not wn.senses(t.base, "v"):
            return False
        prev = r.low(i - 1)
        ends = {m.end for m in r.schema} | {v.end for v in r.values} | {a.end for a in self.anchors}
        subject = i == 0 or prev in SUBJECT_WORDS or i in ends
        nxt = r.low(i + 1)
        starts = {m.start for m in r.schema} | {v.start for v in r.values} | {a.start for a in self.anchors}
        follows = i + 1 >= len(r.tokens) or nxt in OBJECT_LEADS or (i + 1) in starts
        return subject and follows

    def _semantic_strays(self) -> None:
        """Stray nouns (and runs of them: "staff member") matched by meaning (``semantic.py``): weak evidence
        that still lets a plan use them."""
        matcher = self.i.semantic
        if matcher is None or not self.stray_pos:
            return
        runs: list[list[int]] = []
        for i in self.stray_pos:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        for run in runs:
            a, b = run[0], run[-1] + 1
            got = matcher.match(self.r.text(a, b))
            if got is None:
                continue
            el, score = got
            self.r.schema.append(SchemaMention(a, b, {el: Link(score, "semantic")}))
            self.r.schema.sort(key=lambda m: m.start)
            self.r.used.update(range(a, b))
            for i in run:
                self.stray_nouns.remove(self.r.tokens[i].text)
                self.stray_pos.remove(i)

    def check_strays(self, focus: Focus | None, implicit: bool) -> None:
        if not self.stray_nouns:
            return
        word = self.stray_nouns[0]
        if focus is None or implicit:
            raise Decline(f"the data has nothing for '{word}' (no type, field or value matches it)")
        for w in self.stray_nouns:
            self.penalize(UNCONSUMED, f"'{w}' was not used")

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

    # -- mentions --------------------------------------------------------------------------------------------
    def free(self) -> list[SchemaMention]:
        return [m for m in self.r.schema if m.start not in self.used_schema and m.start not in self.consumed_measures]

    def anchor_entities(self) -> list[str]:
        return [a.entity for a in self.anchors]

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
            if el is not None and (not types or anchors):
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

    def _dist_to_anchors(self, entity: str) -> int:
        ents = self.anchor_entities()
        if not ents:
            return 0
        return min(distance(self.vocab, a, entity) for a in ents)

    def _pick_attr(self, attrs: dict[Element, Link], m: SchemaMention | None = None,
                   want: Any = None) -> tuple[Element, Link]:  # fmt: skip
        anchors = set(self.anchor_entities())
        named = {e.entity for mm in self.r.schema for e in mm.of("type")}

        def rank(kv: tuple[Element, Link]) -> tuple[float, ...]:
            e, lk = kv
            a = self.vocab.types[e.entity].attrs[e.name]
            fit = 1.0 if want is None or want(a) else 0.0
            return (fit, round(lk.score, 2), e.entity in anchors or e.entity in named,
                    -self._dist_to_anchors(e.entity), not a.reference)  # fmt: skip

        ranked = sorted(attrs.items(), key=rank, reverse=True)
        best = ranked[0]
        if len(ranked) > 1 and rank(ranked[1])[:4] == rank(best)[:4]:
            if ranked[1][0].entity != best[0].entity:
                self.penalize(AMBIGUOUS, f"'{best[0].name}' is on several types")
            else:
                self.penalize(0.7, f"'{best[0].name}' and '{ranked[1][0].name}' fit the words equally")
        return best

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
        from agents.query.build import build_plan

        return build_plan(self, focus, agg)

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

    def _how_word(self) -> str | None:
        r = self.r
        for i in range(len(r.tokens) - 1):
            if r.low(i) == "how" and r.low(i + 1) in ("long", "much", "old", "far", "high", "big"):
                return r.low(i + 1)
        return None

    def _attr(self, f: Focus) -> AttrInfo | None:
        if f.attr is None or f.attr == DERIVED_VALUE:
            return None
        return self.vocab.types[f.entity].attrs.get(f.attr)

    def _single(self, entity: str) -> bool:
        """Does an anchor pin exactly one entity of this type (a key, or a display name on the type itself)?"""
        return any(a.entity == entity and a.role in ("key", "display", "literal") for a in self.anchors)

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

    def _agent_focus(self) -> Focus | None:
        """"Who made plane X" / "who bought order X": the doer of the question's verb, as WordNet derives it
        (make -> maker -> manufacturer, buy -> buyer -> customer), when the schema names it. Only fields and
        types reachable from the anchor count; relationships do not (a "director" is not a store manager)."""
        from agents.query import wordnet

        r = self.r
        anchors = self.anchor_entities()
        best: tuple[float, Focus] | None = None
        for i in r.unconsumed:
            if i in r.used:
                continue
            t = r.tokens[i]
            for noun in wordnet.agent_nouns(t.base):
                rel = wordnet.DERIVED
                links = dict(self.i.phrases.lookup((noun,)))
                for info in self.vocab.types.values():  # "buyer" is a kind of customer
                    head = info.words[-1] if info.words else ""
                    if head and wordnet.is_a(noun, head):
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
        from agents.query.anchors import date_attrs

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


def _is_noun(low: str, base: str) -> bool:
    """Is a word (most likely) a noun here? An inflected verb form ("sold", "released", "bought") is not, even
    when its base is also a noun."""
    from agents.query.wordnet import wordnet

    wn = wordnet()
    if wn is None:
        return not low.endswith(("ed", "ing", "ly"))
    verb = bool(wn.senses(base, "v"))
    if base != low and verb and not low.endswith("s"):
        return bool(wn.senses(low, "n")) and not low.endswith(("ed", "ing"))
    return bool(wn.senses(low, "n") or (low.endswith("s") and wn.senses(base, "n")))


def _is_verb_like(low: str) -> bool:
    return low.endswith(("ed", "ing", "s"))


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


def hops_of(steps: list[Step], nodes: list[NodePattern]) -> list[Hop]:
    return [Hop(rel_type=s.rel, direction=s.direction, target=v) for s, v in zip(steps, nodes[1:], strict=True)]  # type: ignore[arg-type]


def route(job: Job, src: str, dst: str, prefer_many: bool = False, skip: frozenset[str] = frozenset()) -> list[Step]:
    named = {e.entity for m in job.r.schema for e in m.of("type")} - {src, dst}
    wanted = {e.name for m in job.r.schema for e in m.of("rel") if m.best >= 0.8} - skip
    fixed = {k: v for k, v in job.self_directions().items() if k not in skip}
    got = best_path(job.vocab, src, dst, wanted, named, fixed, prefer_many)
    if got is None and wanted:
        got = best_path(job.vocab, src, dst, set(), named, fixed, prefer_many)
    if got is None:
        raise Decline(f"no relationship path from {src} to {dst} in the contract")
    steps, margin = got
    if margin < 1.0:
        job.penalize(margin, "several join paths fit")
    return steps


__all__ = ["Job", "QueryPlan", "ReturnItem", "hops_of", "route"]
