"""Normalized comparison of two records of identifying types: deterministic rules first, then a Fellegi-Sunter
score with general m/u probabilities (no data set's values or words), and the blocking keys that find candidates.

* E-mail: trimmed and case-folded. Phone: the national significant number (``phonenumbers`` when a country code
  is written; else the digits without trunk zeros), compared on the last 8 digits when a country code is only on
  one side. Names: transliterated to ASCII (``anyascii``: "Núñez" -> nunez), case-folded, "Last, First" turned
  around, compared as a bag of words (any order), with initials ("M. Keller") and typos (rapidfuzz).
* Rules: the same e-mail links unless the names disagree; the same phone links when the names agree.
* Otherwise every field both records have gives a Bayes factor m/u for its agreement level; the pair links when
  the posterior reaches ``THRESHOLD`` from a prior of ``PRIOR`` (a name alone, or a name and a city, never does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from anyascii import anyascii
from rapidfuzz import fuzz

from esc.contract.er_fields import TypeSpec

try:  # optional: parses international numbers; the digit rules below stand in without it
    import phonenumbers as _phonenumbers
except ImportError:  # pragma: no cover - depends on the install
    _phonenumbers = None  # type: ignore[assignment]
phonenumbers: Any = _phonenumbers

PRIOR = 1e-3
THRESHOLD = 0.95
PHONE_SUFFIX = 8
_WORD = re.compile(r"[a-z]+")
_DOTTED_END = re.compile(r"(?:\b[A-Za-z]\.){2,}\s*$")
_EXT = re.compile(r"(?:x|ext\.?|#)\s*\d+\s*$", re.IGNORECASE)
TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "mx", "jr", "sr"})
LEGAL_FORMS = frozenset({"inc", "incorporated", "corp", "corporation", "co", "ltd", "limited", "llc", "llp", "lp",
                         "plc", "gmbh", "mbh", "ag", "kg", "kgaa", "ohg", "ug", "se", "sa", "sas", "sarl", "sl", "bv",
                         "nv", "vof", "oy", "oyj", "ab", "as", "asa", "aps", "spa", "srl", "pty", "company"})  # fmt: skip
"""Legal forms of companies (a closed class of business words, any country): "Müller Metals GmbH" and "Müller
Metals" name the same company, so a name's trailing legal form is no part of what is compared."""
M_U: dict[str, dict[str, tuple[float, float]]] = {
    "name": {"exact": (0.80, 0.002), "high": (0.10, 0.004), "initials": (0.06, 0.01), "medium": (0.02, 0.03),
             "diff": (0.02, 0.954)},
    "email": {"exact": (0.85, 0.0005), "near": (0.05, 0.002), "diff": (0.10, 0.9975)},
    "phone": {"exact": (0.80, 0.0005), "diff": (0.20, 0.9995)},
    "city": {"exact": (0.80, 0.10), "diff": (0.20, 0.90)},
    "postal_code": {"exact": (0.80, 0.01), "diff": (0.20, 0.99)},
    "address": {"exact": (0.75, 0.001), "high": (0.10, 0.005), "diff": (0.15, 0.994)},
    "birth_date": {"exact": (0.90, 0.003), "diff": (0.10, 0.997)},
}  # fmt: skip
"""(m, u) per field and agreement level: how often true matches / non-matches agree that way. General priors."""


@dataclass(frozen=True)
class Norm:
    """The comparable part of one record."""

    email: str | None = None
    phone: str | None = None
    names: tuple[str, ...] = ()
    others: tuple[tuple[str, str], ...] = ()  # (role, normalized value): city, postal code, address, birth date

    def other(self, role: str) -> str | None:
        return next((v for r, v in self.others if r == role), None)


@dataclass(frozen=True)
class Match:
    matched: bool
    score: float  # posterior probability of the Fellegi-Sunter model
    rule: str  # "email", "phone", "probabilistic" or "none"
    evidence: dict[str, str] = field(default_factory=dict)  # field -> agreement level


def _text(v: Any) -> str:
    return " ".join(_WORD.findall(anyascii(str(v)).lower()))


def norm_email(v: Any) -> str | None:
    s = str(v).strip().casefold()
    return s if "@" in s and "." in s.rpartition("@")[2] else None


def norm_phone(v: Any) -> str | None:
    s = _EXT.sub("", str(v).strip())
    digits = re.sub(r"\D", "", s)
    if len(digits) < 6:
        return None
    if s.startswith(("+", "00")):
        if phonenumbers is not None:
            try:
                return str(phonenumbers.parse("+" + (digits[2:] if s.startswith("00") else digits)).national_number)
            except phonenumbers.NumberParseException:  # not a number phonenumbers knows: keep the digits
                pass
        return "+" + (digits[2:] if s.startswith("00") else digits)
    return digits.lstrip("0")


def _legal(text: str) -> bool:
    words = _WORD.findall(text.lower())
    return bool(words) and all(w in LEGAL_FORMS or len(w) == 1 for w in words)


def name_words(*parts: Any) -> tuple[str, ...]:
    """Words of a name in ASCII lower case; "Last, First" turned around; titles and a trailing legal form
    ("GmbH", "Ltd.", "S.A.", ", Inc.") dropped while two words are left."""
    out: list[str] = []
    for part in parts:
        if part is None:
            continue
        text = anyascii(str(part))
        if text.count(",") == 1:
            last, first = text.split(",")
            text = f"{last} {first}" if _legal(first) else f"{first} {last}"
        text = _DOTTED_END.sub(lambda m: m.group(0).replace(".", ""), text)  # "S.A." -> "SA"
        words = [w for w in _WORD.findall(text.lower()) if w not in TITLES]
        while len(words) > 2 and words[-1] in LEGAL_FORMS:
            words.pop()
        out.extend(words)
    return tuple(out)


def normalize(spec: TypeSpec, values: dict[str, Any]) -> Norm:
    r = spec.roles

    def get(role: str) -> Any:
        f = r.get(role)
        v = values.get(f) if f else None
        return None if v is None or (isinstance(v, str) and not v.strip()) else v

    email = get("email")
    phone = get("phone")
    names = name_words(get("name")) if "name" in r else name_words(get("given_name"), get("family_name"))
    others = []
    for role in ("city", "postal_code", "address", "birth_date"):
        v = get(role)
        if v is not None and _text(v):
            others.append((role, _text(v)))
    return Norm(
        email=norm_email(email) if email is not None else None,
        phone=norm_phone(phone) if phone is not None else None,
        names=names,
        others=tuple(others),
    )


def _phone_tail(p: str) -> str:
    return p.lstrip("+")[-PHONE_SUFFIX:]


def blocks(n: Norm) -> set[str]:
    """Keys a matching record shares with this one (e-mail, phone tail, name words)."""
    out: set[str] = set()
    if n.email:
        out.add("e:" + n.email)
    if n.phone:
        out.add("p:" + _phone_tail(n.phone)[-7:])
    words = [w for w in n.names if w]
    if len(words) >= 2:
        out.add("nf:" + " ".join(sorted(words)))
        for w in words:
            if len(w) >= 2:
                out.update("ni:" + w[:4] + u[0] for u in words if u is not w)
    return out


def _initials_fit(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < 2:
        return False
    left = list(long_)
    full = 0
    for t in short:
        hit = next((u for u in left if u == t or (len(t) == 1 and u.startswith(t)) or (len(u) == 1 and t.startswith(u))), None)
        if hit is None:
            return False
        left.remove(hit)
        full += len(t) > 1 and t == hit
    return full >= 1


def name_level(a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    if not a or not b:
        return None
    sa, sb = " ".join(sorted(a)), " ".join(sorted(b))
    if sa == sb:
        return "exact"
    if any(len(t) == 1 for t in (*a, *b)) and _initials_fit(a, b):
        return "initials"
    ratio = fuzz.token_sort_ratio(sa, sb)
    if ratio >= 90:
        return "high"
    return "medium" if ratio >= 80 else "diff"


def _phone_level(a: str, b: str) -> str:
    if a == b:
        return "exact"
    if (a.startswith("+") or b.startswith("+")) and _phone_tail(a) == _phone_tail(b):
        return "exact"
    return "diff"


def _email_level(a: str, b: str) -> str:
    if a == b:
        return "exact"
    return "near" if fuzz.ratio(a, b) >= 92 else "diff"


def compare(a: Norm, b: Norm) -> Match:
    """Do two records denote the same real-world thing? Deterministic rules first, then the score."""
    levels: dict[str, str] = {}
    name = name_level(a.names, b.names)
    if name is not None:
        levels["name"] = name
    if a.email and b.email:
        levels["email"] = _email_level(a.email, b.email)
    if a.phone and b.phone:
        levels["phone"] = _phone_level(a.phone, b.phone)
    for role in ("city", "postal_code", "address", "birth_date"):
        x, y = a.other(role), b.other(role)
        if x and y:
            if x == y:
                levels[role] = "exact"
            elif role == "address" and fuzz.token_sort_ratio(x, y) >= 90:
                levels[role] = "high"
            else:
                levels[role] = "diff"
    log_odds = math.log(PRIOR / (1 - PRIOR))
    for f, level in levels.items():
        m, u = M_U[f][level]
        log_odds += math.log(m / u)
    score = 1 / (1 + math.exp(-log_odds))
    if levels.get("email") == "exact" and name != "diff":
        return Match(True, score, "email", levels)
    if levels.get("phone") == "exact" and name in ("exact", "high", "initials"):
        return Match(True, score, "phone", levels)
    if score >= THRESHOLD and name in ("exact", "high", "initials", None):
        return Match(True, score, "probabilistic", levels)
    return Match(False, score, "none", levels)
