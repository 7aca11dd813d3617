"""Answers over canonical entities: the conflicts behind an answered field, what a count counted, and "as of".

* ``conflicts``: for each answered attribute whose linked records disagree, every value with the records that hold
  it and the newest one's time, the current value first (agents/reconcile/consolidate.py has the rule).
* ``note``: a count over a resolved type counted canonical entities (people), and says so.
* "as of DATE" (``split_as_of``): the phrase is taken out before planning; the answer is then the value the
  records held on that date (the newest value dated on or before it), from the field's conflicts. Where no
  history is recorded (the records agree, or the data keeps one value) the current answer is given with a note
  and a confidence below 0.8.
"""

from __future__ import annotations

import json
import re
from datetime import date

from esc.agents.query.answer import Answer, Citation, Conflict, ConflictValue
from esc.agents.query.plan import PlanRow
from esc.agents.reconcile.rewrite import Rewritten
from esc.agents.reconcile.view import ClusterView

_AS_OF = re.compile(
    r"\s*,?\s*\b(?:as of|as at|on)\s+(\d{4}-\d{2}-\d{2}|\d{1,2}\s+[A-Za-z]+\s+\d{4}|[A-Za-z]+\s+\d{1,2},?\s+\d{4})\b",
    re.IGNORECASE,
)
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                        "september", "october", "november", "december"], 1)}  # fmt: skip


PARTIAL = 0.75
"""Confidence at most, when an aggregate over linked records leaves out entities that hold no value for it."""


def _date(text: str) -> date | None:
    text = text.strip().replace(",", "")
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    parts = text.split()
    try:
        if len(parts) == 3 and parts[0].isdigit():
            return date(int(parts[2]), _MONTHS[parts[1].lower()], int(parts[0]))
        if len(parts) == 3:
            return date(int(parts[2]), _MONTHS[parts[0].lower()], int(parts[1]))
    except (KeyError, ValueError):
        return None
    return None


def split_as_of(question: str) -> tuple[str, date | None]:
    """The question without its "as of DATE" (and the date), or the question as it was."""
    m = _AS_OF.search(question)
    if m is None or not re.search(r"\bas (?:of|at)\b", m.group(0), re.IGNORECASE):
        return question, None
    when = _date(m.group(1))
    if when is None:
        return question, None
    rest = (question[: m.start()] + question[m.end() :]).strip()
    return rest, when


def conflicts_of(rw: Rewritten, rows: list[PlanRow], view: ClusterView, aliases: list[str]) -> list[Conflict]:
    out: list[Conflict] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        for alias in aliases:
            asked = rw.returned.get(alias)
            if asked is None:
                continue
            label, attr = asked
            field = view.canon(label, attr)
            for var in dict.fromkeys(rw.canonical_vars.values()):
                raw = row.values.get(f"_conflicts_{var}")
                cid = str(row.values.get(f"_cid_{var}"))
                if not raw or (cid, field) in seen:
                    continue
                for c in json.loads(raw):
                    if c.get("field") != field:
                        continue
                    seen.add((cid, field))
                    values = [ConflictValue(value=v.get("value"), as_of=v.get("as_of"),
                                            citations=[Citation(**x) for x in v.get("citations", [])])
                              for v in c.get("values", [])]  # fmt: skip
                    out.append(Conflict(field=attr, values=values))
    return out


def annotate(answer: Answer, rw: Rewritten, rows: list[PlanRow], view: ClusterView, aliases: list[str]) -> None:
    if answer.route == "abstain":
        return
    found = conflicts_of(rw, rows, view, aliases)
    if found:
        answer.conflicts = found
    if rw.counted:
        kinds = ", ".join(sorted(rw.counted))
        answer.note = (f"counted distinct real-world entities ({kinds} records linked across and within sources "
                       "count once), not records")  # fmt: skip
    if rw.missing and rw.coverage is not None:
        # an aggregate of a field another type holds, over entities some of which no record of that type was linked
        # to: the answer leaves them out, and may have missed a link
        answer.confidence = round(min(answer.confidence, PARTIAL), 3)
        answer.note = (f"{rw.missing} of the entities asked about hold no {rw.coverage[1]} in any linked record "
                       "and are left out")  # fmt: skip


def apply_as_of(answer: Answer, when: date) -> None:
    """The answer as the records had it on ``when`` (from the answered field's conflicts). Without a recorded
    history (no conflict: one value, or data that keeps no earlier values) the current answer is given with a note
    and a confidence below 0.8: nothing shows it held on that date."""
    if answer.route == "abstain":
        return
    day = when.isoformat()
    if not answer.conflicts:
        answer.note = f"no earlier value is recorded; the current answer is given for {day}"
        answer.confidence = round(min(answer.confidence, PARTIAL), 3)
        return
    c = answer.conflicts[0]
    dated = [v for v in c.values if v.as_of is not None and v.as_of[:10] <= day]
    if not dated:
        answer.note = f"no record holds {c.field} on or before {day}; the current value is given"
        answer.confidence = round(min(answer.confidence, PARTIAL), 3)
        return
    best = max(dated, key=lambda v: v.as_of or "")
    answer.answer = best.value
    answer.note = f"the value of {c.field} recorded on or before {day}"
