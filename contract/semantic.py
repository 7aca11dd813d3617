"""Physical type of one value (strings included) and the semantic type of a field from its name and profile.

Physical detection is per value and deterministic: ``"17"`` is an int, ``"17.50"`` a decimal, ``"1e5"`` a float,
``"2009-01-01"`` a date, ``"2009-01-01 00:00:00"`` a datetime, ``"true"`` a bool, ``"01581"`` a string (a
leading zero marks a code). A string is ``text`` when it is long or multi-sentence. The semantic type of a
field is decided from name tokens, value hints counted while profiling (emails, URLs, phones, percents,
currency amounts, years) and the field's statistics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from esc.contract.sketches import DEC_RE, INT_RE
from esc.contract.typing import PhysicalType, SemanticType

FLOAT_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
YEAR_MONTH_RE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])")
DATETIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
BOOL_WORDS = {"true", "false", "yes", "no", "t", "f", "y", "n"}
EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
URL_RE = re.compile(r"(?:https?://|www\.)\S+|#?https?://\S+#?", re.IGNORECASE)
PHONE_RE = re.compile(r"\+?[\d\s().\-/]{6,24}(?:\s*(?:x|ext\.?)\s*\d+)?", re.IGNORECASE)
PERCENT_RE = re.compile(r"-?\d+(?:\.\d+)?\s?%")
MONEY_RE = re.compile(r"(?:[$€£¥]\s?-?[\d,]+(?:\.\d+)?|-?[\d,]+(?:\.\d+)?\s?(?:USD|EUR|GBP|[$€£]))")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")

TEXT_CHARS = 200
"""A string this long is ``text``; so is a multi-line or multi-sentence string of 60+ characters."""


def physical_of(v: Any) -> PhysicalType:
    """Physical type of one value as a reader delivers it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, Decimal):
        return "decimal"
    if isinstance(v, dict | list | tuple):
        return "json"
    s = str(v)
    if INT_RE.fullmatch(s):
        return "int"
    if DEC_RE.fullmatch(s):
        return "decimal"
    if len(s) < 40:
        if FLOAT_RE.fullmatch(s) and not s.startswith(("0", "-0")) and any(c in s for c in ".eE"):
            return "float"
        if s.lower() in BOOL_WORDS:
            return "bool"
        if DATE_RE.fullmatch(s):
            return "date"
        if DATETIME_RE.fullmatch(s):
            return "datetime"
    return "text" if is_text(s) else "string"


def is_text(s: str) -> bool:
    if len(s) >= TEXT_CHARS:
        return True
    if len(s) < 60:
        return False
    return "\n" in s.strip() or len(_SENTENCE_END.findall(s)) >= 2


def canonical(v: Any) -> Any:
    """The value as shown in top values and examples: numbers written as text become numbers, integral floats
    become ints; the rest stays as it is (JSON-able)."""
    if isinstance(v, str):
        if INT_RE.fullmatch(v):
            return int(v)
        if DEC_RE.fullmatch(v):
            v = float(v)
        else:
            return v
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float) and math.isfinite(v) and v == math.floor(v) and abs(v) < 2**53:
        return int(v)
    return v


def string_hints(s: str) -> tuple[str, ...]:
    """Value-level semantic hints of one string."""
    out: list[str] = []
    if "@" in s and EMAIL_RE.fullmatch(s):
        out.append("email")
    if URL_RE.fullmatch(s):
        out.append("url")
    if PERCENT_RE.fullmatch(s):
        out.append("percent")
    if MONEY_RE.fullmatch(s):
        out.append("money")
    if (
        any(c in s for c in "+-() ")
        and PHONE_RE.fullmatch(s)
        and sum(c.isdigit() for c in s) >= 6
        and not DATE_RE.match(s)
        and not YEAR_MONTH_RE.fullmatch(s)  # "2021-03" is a month, not a phone number
    ):
        out.append("phone")
    return tuple(out)


def is_year(n: float) -> bool:
    return 1800 <= n <= 2100 and n == math.floor(n)


# --------------------------------------------------------------------------------------------------------------
# names

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(name: str) -> list[str]:
    """Lower-case words of a field or source name: ``SupportRepId`` -> support, rep, id; ``l_orderkey`` -> l,
    orderkey."""
    return list(_tokens(name))


@lru_cache(maxsize=1 << 16)
def _tokens(name: str) -> tuple[str, ...]:
    # cached: foreign-key inference asks the words of every column once per candidate target source (a folder of
    # 500 small sources: a million times)
    return tuple(t.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for t in _CAMEL.findall(part))


ID_SUFFIXES = ("id", "key", "code", "no", "num", "nr", "number", "ref", "fk", "pk", "sk", "uuid", "guid")


@lru_cache(maxsize=1 << 16)
def id_word(name: str) -> str | None:
    """The id-like word a name ends with (``AlbumId`` -> id, ``c_custkey`` -> key, ``TerritoryID`` -> id,
    ``l_linenumber`` -> number), else None."""
    toks = tokens(name)
    if not toks:
        return None
    last = toks[-1]
    if last in ID_SUFFIXES:
        return last
    for suf in ("key", "id", "code", "number", "num", "no"):
        if last.endswith(suf) and len(last) > len(suf) + 2:
            return suf
    return None


_MONEY_WORDS = {
    "price",
    "cost",
    "amount",
    "total",
    "freight",
    "balance",
    "acctbal",
    "salary",
    "fee",
    "revenue",
    "payment",
    "extendedprice",
    "retailprice",
    "supplycost",
    "totalprice",
    "charge",
    "tax",
    "subtotal",
}
_PERCENT_WORDS = {"percent", "pct", "percentage", "discount", "ratio"}
_NAME_WORDS = {"name", "title", "firstname", "lastname", "surname", "company", "companyname", "contactname"}
_PHONE_WORDS = {"phone", "fax", "tel", "telephone", "mobile", "cell", "homephone"}
_EMAIL_WORDS = {"email", "mail", "e"}
_URL_WORDS = {"url", "homepage", "website", "link", "uri", "path"}
_YEAR_WORDS = {"year", "yr"}


@dataclass(frozen=True)
class FieldStats:
    """What :func:`semantic_of` needs to know of a field's profile."""

    physical: PhysicalType
    nonnull: int
    distinct: float
    hints: Mapping[str, int]
    max_length: int | None
    mean_length: float | None
    mean_words: float | None
    num_min: float | None
    num_max: float | None


def semantic_of(name: str, st: FieldStats) -> SemanticType | None:
    """Semantic type of a field, or None when nothing was observed."""
    if st.nonnull == 0:
        return None
    toks = set(tokens(name))
    phys = st.physical

    def share(hint: str) -> float:
        return st.hints.get(hint, 0) / st.nonnull

    if phys == "bool":
        return "boolean"
    if share("email") >= 0.8:
        return "email"
    if share("url") >= 0.8:
        return "url"
    numeric = phys in ("int", "float", "decimal")
    if id_word(name) is not None and phys in ("int", "string"):
        return "identifier"
    if toks & _PHONE_WORDS and phys in ("string", "int"):
        return "phone"
    if share("phone") >= 0.9 and phys == "string":
        return "phone"
    if share("percent") >= 0.8 or (toks & _PERCENT_WORDS and numeric):
        return "percent"
    if share("money") >= 0.8 or (toks & _MONEY_WORDS and phys in ("float", "decimal", "int")):
        return "money"
    if toks & _YEAR_WORDS and (phys in ("int", "string") and share("year") >= 0.9):
        return "year"
    if phys in ("date", "datetime"):
        return "date"
    if toks & _EMAIL_WORDS and share("email") >= 0.5:
        return "email"
    if toks & _URL_WORDS and share("url") >= 0.5:
        return "url"
    if phys == "text" or (phys == "string" and (st.mean_words or 0) >= 8):
        return "free_text"
    if phys == "string" and toks & _NAME_WORDS:
        return "name"
    if numeric:
        if phys == "int" and st.distinct <= 20 and st.nonnull >= 4 * max(st.distinct, 1):
            return "category"
        return "measure"
    if phys == "string":
        if st.distinct <= 50 or st.distinct <= 0.1 * st.nonnull:
            return "category"
        return "other"
    return "other"
