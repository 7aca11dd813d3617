"""Every ``except Exception`` / ``except BaseException`` in the product code says why it must be broad.

A broad handler is allowed where the callee raises too many kinds to list (a third-party parser on hostile
input, a store client during an outage) or where the handler only cleans up and re-raises; it must then carry a
comment on its ``except`` line giving the reason, or re-raise. Anything else is narrowed to the types expected.
"""

from __future__ import annotations

import re

from tests.paths import REPO

PACKAGES = ("contract", "agents", "streams", "esc")
_BROAD = re.compile(r"^(\s*)except\s+(?:Exception|BaseException)\b[^:]*:(.*)$")


def broad_handlers_without_reason(text: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = _BROAD.match(line)
        if not m:
            continue
        indent, tail = len(m.group(1)), m.group(2)
        if "#" in tail and len(tail.split("#", 1)[1].strip()) >= 10:
            continue  # the reason is on the except line
        body = []
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt.strip())
        if any(b == "raise" or b.startswith("raise ") for b in body):
            continue  # cleans up and re-raises (or raises a typed error with the cause)
        found.append((i + 1, line.strip()))
    return found


def test_broad_excepts_say_why() -> None:
    hits = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            if pkg == "esc" and path.resolve() != path:
                continue  # esc/contract etc. are links, scanned under their own names
            for no, line in broad_handlers_without_reason(path.read_text("utf-8")):
                hits.append(f"{path.relative_to(REPO)}:{no}: {line}")
    assert hits == [], "narrow these handlers or say on the except line why they must be broad:\n" + "\n".join(hits)


def test_the_check_tells_a_reason_from_none() -> None:
    bad = "try:\n    f()\nexcept Exception:\n    pass\n"
    reasoned = "try:\n    f()\nexcept Exception:  # the parser raises a dozen kinds on corrupt input\n    pass\n"
    reraised = "try:\n    f()\nexcept BaseException:\n    undo()\n    raise\n"
    assert broad_handlers_without_reason(bad) == [(3, "except Exception:")]
    assert broad_handlers_without_reason(reasoned) == [] and broad_handlers_without_reason(reraised) == []
