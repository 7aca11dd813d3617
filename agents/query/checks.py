"""Checks a plan must pass before and after it is built: names the data does not hold, content words nothing
consumed (modifiers, compound heads, stray nouns), per-group questions, operation words used as field names,
nouns right before values, partial names in lower case, and schema words the finished plan leaves unused."""

from __future__ import annotations

from esc.agents.query.interpret import Decline, Focus
from esc.agents.query.jobstate import MODIFIER, UNCONSUMED, UNUSED, JobState
from esc.agents.query.phrases import Link
from esc.agents.query.plan import QueryPlan
from esc.agents.query.reading import OpMention, SchemaMention, ValueMention
from esc.agents.query.vocabulary import DERIVED_VALUE
from esc.agents.query.words import DURATION_UNITS, DURATION_WORDS, MONEY_WORDS, QUANTITY_WORDS, Token

SUBJECT_WORDS = frozenset({"who", "which", "what", "that", "i", "we", "you", "they", "he", "she", "it", "does",
                           "do", "did", "will", "would", "can", "could", "has", "have", "had"})  # fmt: skip
OBJECT_LEADS = frozenset({"in", "on", "at", "to", "for", "from", "with", "by", "into", "the", "a", "an", "under",
                          "over", "up", "out", "off", "about", "as", "of"})  # fmt: skip
MEASURE_HINTS = DURATION_WORDS | MONEY_WORDS | QUANTITY_WORDS | frozenset(DURATION_UNITS)


class Checks(JobState):
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
        self.stray_nouns = []
        self.stray_pos = []
        for i in r.unconsumed:
            if i in r.used:
                continue
            t = r.tokens[i]
            if (t.low in MEASURE_HINTS or t.base in MEASURE_HINTS) and not self._money_without_money(t):
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

    def _money_without_money(self, t: Token) -> bool:
        """"price", "cost" where no field of any type holds money: nothing to read it with, so it is a word the
        data lacks ("the price of Mars" answered with Mars's name was confident and wrong)."""
        if not (t.low in MONEY_WORDS or t.base in MONEY_WORDS) or t.low in ("value", "amount"):
            return False
        return not any(a.money for info in self.vocab.types.values() for a in info.attrs.values())

    def _verb_context(self, i: int) -> bool:
        """A word that can be a verb, between its subject (a question word, a pronoun, an auxiliary or a
        mention) and a preposition, article or mention: "movies *fall* in", "who *covers* the", "did X *gross* at"."""
        from esc.agents.query.wordnet import wordnet

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


def _is_noun(low: str, base: str) -> bool:
    """Is a word (most likely) a noun here? An inflected verb form ("sold", "released", "bought") is not, even
    when its base is also a noun."""
    from esc.agents.query.wordnet import wordnet

    wn = wordnet()
    if wn is None:
        return not low.endswith(("ed", "ing", "ly"))
    verb = bool(wn.senses(base, "v"))
    if base != low and verb and not low.endswith("s"):
        return bool(wn.senses(low, "n")) and not low.endswith(("ed", "ing"))
    return bool(wn.senses(low, "n") or (low.endswith("s") and wn.senses(base, "n")))
