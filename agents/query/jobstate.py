"""The state one question's planning shares across its parts (checks, focus, measures, filters), and the
helpers every part uses: confidence costs, the anchors' types, the free mentions, picking a field among several."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from esc.agents.query.anchors import Anchor
from esc.agents.query.paths import distance
from esc.agents.query.phrases import Element, Link
from esc.agents.query.plan import Filter
from esc.agents.query.reading import Reading, SchemaMention
from esc.agents.query.vocabulary import DERIVED_VALUE, AttrInfo

if TYPE_CHECKING:
    from esc.agents.query.interpret import Focus, Interpreter

UNCONSUMED = 0.55
UNUSED = 0.6
MODIFIER = 0.85
STRUCTURAL = 0.8
AMBIGUOUS = 0.85


class JobState:
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
        self.stray_nouns: list[str] = []  # nouns nothing matched (set by the unconsumed-word check)
        self.stray_pos: list[int] = []

    # -- reporting --------------------------------------------------------------------------------------------
    def unmatched(self) -> list[str]:
        r = self.r
        out = [r.text(a, b) for a, b, _ in r.unknown]
        out += [r.tokens[i].text for i in r.unconsumed if i not in r.used]
        return out

    def penalize(self, factor: float, why: str) -> None:
        self.conf *= factor
        self.notes.append(f"{why} (x{factor:g})")

    # -- mentions --------------------------------------------------------------------------------------------
    def free(self) -> list[SchemaMention]:
        return [m for m in self.r.schema if m.start not in self.used_schema and m.start not in self.consumed_measures]

    def anchor_entities(self) -> list[str]:
        return [a.entity for a in self.anchors]

    def _attr(self, f: Focus) -> AttrInfo | None:
        if f.attr is None or f.attr == DERIVED_VALUE:
            return None
        return self.vocab.types[f.entity].attrs.get(f.attr)

    def _single(self, entity: str) -> bool:
        """Does an anchor pin exactly one entity of this type (a key, or a display name on the type itself)?"""
        return any(a.entity == entity and a.role in ("key", "display", "literal") for a in self.anchors)

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

    def _dist_to_anchors(self, entity: str) -> int:
        ents = self.anchor_entities()
        if not ents:
            return 0
        return min(distance(self.vocab, a, entity) for a in ents)
