"""Well-known aliases of values, from maintained libraries: country names, official names, common names and
ISO codes (``pycountry``), plus the handful of everyday English short forms ISO does not list ("UK", "Russia",
"America"). A stored value that names a country becomes reachable by every alias of that country.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from anyascii import anyascii

EVERYDAY = {
    "GB": ("uk", "u k", "britain", "great britain", "england"),
    "US": ("us", "u s", "usa", "u s a", "america", "united states", "the united states", "the us", "the usa"),
    "RU": ("russia",),
    "KR": ("south korea", "korea"),
    "KP": ("north korea",),
    "CZ": ("czech republic", "czechia"),
    "NL": ("holland", "the netherlands"),
    "AE": ("uae", "emirates"),
    "VN": ("vietnam",),
    "IR": ("iran",),
    "SY": ("syria",),
    "TW": ("taiwan",),
    "TZ": ("tanzania",),
    "VE": ("venezuela",),
    "BO": ("bolivia",),
    "MD": ("moldova",),
    "LA": ("laos",),
    "CD": ("congo kinshasa", "dr congo", "drc"),
    "VA": ("vatican", "holy see"),
    "PS": ("palestine",),
}


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", anyascii(text).casefold()))


@functools.lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """alias key -> ISO alpha-2 code."""
    names: dict[str, str] = {}
    try:
        import pycountry
    except ImportError:  # the library is a dependency; without it only the everyday forms remain
        countries: list[object] = []
    else:
        countries = list(pycountry.countries)
    for c in countries:
        name = str(getattr(c, "name", ""))
        forms = [name, getattr(c, "alpha_3", None), getattr(c, "official_name", None), getattr(c, "common_name", None)]
        forms.append(re.split(r"[,(]", name)[0].strip())
        for f in forms:
            if f:
                names.setdefault(_key(str(f)), str(getattr(c, "alpha_2", "")))
    for code, everyday in EVERYDAY.items():
        for f in everyday:
            names[_key(f)] = code
    return names


def country_aliases(keys: Iterable[str], norm: Callable[[str], str]) -> dict[str, set[str]]:
    """alias key -> the stored value keys that name the same country. Short aliases ("US", "CAN") are words too:
    the question reader accepts an alias of three letters or fewer only when it is written in capitals."""
    names = _country_names()
    by_code: dict[str, set[str]] = {}
    for key in keys:
        code = names.get(_key(key))
        if code is not None and len(key) > 1:
            by_code.setdefault(code, set()).add(key)
    if not by_code:
        return {}
    out: dict[str, set[str]] = {}
    for alias, code in names.items():
        if code in by_code:
            out.setdefault(alias, set()).update(by_code[code])
    return out
