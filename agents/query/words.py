"""General English for reading questions: tokens with their base forms, function words, the words of operations
(count, sum, average, minimum/maximum, superlatives, comparisons), units, months, and the cue words of questions
no data set can answer (the future, opinions).

Nothing here names a data set's domain: these are closed-class words of English and of quantities, the same for a
music shop, a film rental or an airline.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from esc.contract.lexicon import lemma as _lemma

TOKEN_PATTERN = r"\w+(?:'(?!s\b)\w+)*"
_TOKEN = re.compile(TOKEN_PATTERN, re.UNICODE)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:\.\d+)?")


def fold(text: str) -> str:
    """Case- and width-folded text (accents kept)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _rule_singular(w: str) -> str:
    if len(w) <= 3 or not w.endswith("s") or w.endswith(("ss", "us", "is", "os")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return w[:-2]
    return w[:-1]


@lru_cache(maxsize=65536)
def forms(word: str) -> frozenset[str]:
    """The base forms a word may stand for: itself, its base form, a rule singular ("movies" -> movie)."""
    low = fold(word)
    out = {low, base(low), _rule_singular(low)}
    return frozenset(w for w in out if w)


@lru_cache(maxsize=65536)
def base(word: str) -> str:
    """One canonical base form from WordNet's morphology (no dictionary load, microseconds a word): irregular
    verbs ("was" -> be, "sang" -> sing), then suffix rules whose result WordNet lists (verbs before nouns for
    -s: "does" -> do, "customers" -> customer; -ed/-ing with doubled consonants: "shipped" -> ship), then
    irregular nouns ("children" -> child), else the word, or its rule singular when WordNet does not know it.
    Question words and schema phrases go through the same function, so their forms meet."""
    from esc.agents.query.wordnet import wordnet
    from esc.agents.query.wordnet_morphology import exception, has_sense

    low = fold(word)
    if len(low) <= 2 or not low.replace("-", "").isalpha():
        return low
    if wordnet() is None:
        lem = _lemma(low)
        return lem if lem != low else _rule_singular(low)
    got = exception(low, "v")
    if got is not None:
        return got
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        for pos, rules in (("v", _S_VERB), ("n", _S_NOUN)):
            for suffix, repl in rules:
                cand = low[: len(low) - len(suffix)] + repl
                if low.endswith(suffix) and len(cand) >= 2 and has_sense(cand, pos):
                    return cand
    for suffix in ("ed", "ing"):
        if low.endswith(suffix) and len(low) > len(suffix) + 2:
            stem = low[: -len(suffix)]
            for cand in (stem + "e", stem, stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else "",
                         stem[:-1] + "y" if stem.endswith("i") else ""):  # fmt: skip
                if cand and has_sense(cand, "v"):
                    return cand
    got = exception(low, "n") or exception(low, "a")
    if got is not None:
        return got
    if has_sense(low, "n") or has_sense(low, "v") or has_sense(low, "a"):
        return low
    return _rule_singular(low)


_S_VERB = (("ies", "y"), ("s", ""), ("es", ""))
_S_NOUN = (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("xes", "x"), ("ses", "s"), ("zes", "z"), ("s", ""))


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    start: int
    end: int
    index: int
    base: str
    forms: frozenset[str]
    hyphen_next: bool = False  # written "e-mail": joined to the next token by a hyphen

    @property
    def capitalized(self) -> bool:
        return self.text[:1].isupper() or self.text[:1].isdigit()

    @property
    def number(self) -> float | None:
        if not _NUMBER.fullmatch(self.text):
            return None
        try:
            return float(self.text.replace(",", ""))
        except ValueError:
            return None


def tokenize(text: str) -> list[Token]:
    out: list[Token] = []
    matches = list(_TOKEN.finditer(text))
    for i, m in enumerate(matches):
        nxt = matches[i + 1] if i + 1 < len(matches) else None
        hyphen = nxt is not None and text[m.end() : nxt.start()] == "-"
        low = fold(m.group(0))
        out.append(Token(m.group(0), low, m.start(), m.end(), i, base(low), forms(low), hyphen))
    return _join_numbers(text, out)


def _join_numbers(text: str, tokens: list[Token]) -> list[Token]:
    """'5,000' and '62.5' are one number, not three tokens."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        j = i
        while (
            j + 1 < len(tokens)
            and tokens[j].text.isdigit()
            and tokens[j + 1].text.isdigit()
            and text[tokens[j].end : tokens[j + 1].start] in (",", ".")
            and (text[tokens[j].end : tokens[j + 1].start] == "." or len(tokens[j + 1].text) == 3)
        ):
            j += 1
        if j > i:
            raw = text[t.start : tokens[j].end]
            t = Token(raw, raw, t.start, tokens[j].end, len(out), raw, frozenset({raw}))
        else:
            t = Token(t.text, t.low, t.start, t.end, len(out), t.base, t.forms, t.hyphen_next)
        out.append(t)
        i = j + 1
    return out


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


FUNCTION_WORDS = _set(
    """a an the of in on at to by for from with as is are was were be been being am has have had having do does
    did done doing which what who whom whose how where when why there their they them it its this that these those
    i me my mine we us our ours you your yours he him his she her hers one ones someone anyone anybody something
    can could would should will shall may might must show tell give find get gets got display return see know want
    need like please help look list name names some any all each every both either neither only just also ever
    altogether exactly single different distinct various other another same such than then so up out about into
    onto through without within along among via here now currently kindly if whether while because again further
    above below beneath behind beside besides near next per toward towards upon
    once whole entire overall exact s t d ll ve re and or nor but per across there's what's who's that's let let's
    sure recorded listed catalog catalogue directly credited appear appears appeared included represented held
    kept located based live lives living lived sit sits stored registered available number count full altogether
    ever anything everything thing things record records entry entries row rows item items data database table"""
)
"""Words a question may leave unused without losing meaning. Any other word no mention consumes is content the
answer did not take into account."""

QUESTION_WORDS = _set("what which who whom whose how where when why")
PERSON_QUESTION = _set("who whom whose")
OPENERS = _set(
    "what which who whom whose how where when why list show give tell name find is are was were do does did can "
    "could please i top"
)

COUNT_CUES: tuple[tuple[str, ...], ...] = (("how", "many"), ("number", "of"), ("count", "of"), ("count",))
SUM_CUES: tuple[tuple[str, ...], ...] = (("in", "total"), ("total",), ("sum", "of"), ("sum",), ("altogether",),
                                          ("combined",), ("overall",), ("all", "together"))  # fmt: skip
AVG_CUES: tuple[tuple[str, ...], ...] = (("on", "average"), ("average",), ("avg",), ("mean",), ("typical",))
SUPERLATIVES: dict[str, tuple[str, str | None]] = {
    # word -> (direction, what it implies about the measure: None, "duration", "time", "money", "age", "size")
    "most": ("desc", None), "highest": ("desc", None), "largest": ("desc", "size"), "biggest": ("desc", "size"),
    "greatest": ("desc", None), "maximum": ("desc", None), "max": ("desc", None), "top": ("desc", None),
    "longest": ("desc", "duration"), "latest": ("desc", "time"), "newest": ("desc", "time"),
    "youngest": ("desc", "birth"), "tallest": ("desc", "height"), "heaviest": ("desc", "weight"),
    "furthest": ("desc", "distance"), "farthest": ("desc", "distance"), "priciest": ("desc", "money"),
    "oldest": ("asc", "time"), "earliest": ("asc", "time"), "cheapest": ("asc", "money"),
    "fewest": ("asc", None), "least": ("asc", None), "lowest": ("asc", None), "smallest": ("asc", "size"),
    "shortest": ("asc", "duration"), "minimum": ("asc", None), "min": ("asc", None),
    "worst": ("desc", "judged"), "best": ("desc", "judged"),
}  # fmt: skip
LENGTH_UNITS = _set("feet foot ft meters metres meter metre m miles mile mi kilometers kilometres km yards yd "
                    "inches inch")  # fmt: skip
RECENT = (("most", "recent"), ("most", "recently"), ("last",))
OPINION_WORDS = _set("favourite favorite nicest coolest recommend recommended")
FUTURE_WORDS = _set("will tomorrow forecast forecasts predict predicted prediction projected expect expected "
                    "upcoming future")  # fmt: skip
NEXT_WORDS = _set("next coming")
TIME_UNITS = _set("day week month quarter year monday tuesday wednesday thursday friday saturday sunday "
                  "weekend season decade century")  # fmt: skip

COMPARATIVES: dict[str, tuple[str, str | None]] = {
    # word -> (operator, measure kind it implies)
    "more": ("gt", None), "greater": ("gt", None), "higher": ("gt", "height"), "larger": ("gt", "size"),
    "bigger": ("gt", "size"), "over": ("gt", None), "above": ("gt", None), "exceeding": ("gt", None),
    "longer": ("gt", "duration"), "later": ("gt", "time"), "after": ("gt", "time"), "since": ("gte", "time"),
    "heavier": ("gt", "weight"), "taller": ("gt", "height"), "costlier": ("gt", "money"),
    "pricier": ("gt", "money"), "older": ("gt", "age"), "newer": ("lt", "age"), "younger": ("lt", "age"),
    "less": ("lt", None), "fewer": ("lt", None), "lower": ("lt", "height"), "smaller": ("lt", "size"),
    "under": ("lt", None), "below": ("lt", None), "shorter": ("lt", "duration"), "cheaper": ("lt", "money"),
    "earlier": ("lt", "time"), "before": ("lt", "time"), "until": ("lte", "time"), "lighter": ("lt", "weight"),
}  # fmt: skip
AT_LEAST = (("at", "least"), ("no", "less", "than"), ("or", "more"))
AT_MOST = (("at", "most"), ("no", "more", "than"), ("or", "less"), ("or", "fewer"), ("up", "to"))
NEGATIONS = _set("not no non never without n't isn't aren't wasn't weren't don't doesn't didn't")

DURATION_UNITS: dict[str, float] = {  # -> seconds
    "millisecond": 0.001, "milliseconds": 0.001, "ms": 0.001, "msec": 0.001, "second": 1.0, "seconds": 1.0,
    "sec": 1.0, "secs": 1.0, "s": 1.0, "minute": 60.0, "minutes": 60.0, "min": 60.0, "mins": 60.0,
    "hour": 3600.0, "hours": 3600.0, "hr": 3600.0, "hrs": 3600.0, "h": 3600.0, "day": 86400.0, "days": 86400.0,
}  # fmt: skip
DURATION_WORDS = _set("long length duration time runtime running lasting last lasts lasted")
MONEY_WORDS = _set("cost costs price prices priced pay paid spend spent spending charge charged money amount "
                   "revenue sales sale earned earn earnings income invoiced billed worth value dollars dollar "
                   "euros euro expensive cheap fee fees")  # fmt: skip
MONEY_SYMBOLS = "$€£¥"
QUANTITY_WORDS = _set("units unit quantity quantities pieces")

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")]
    )
    for m in names
}  # fmt: skip
ORDINAL_SUFFIX = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)$")
YEAR = re.compile(r"^(1[5-9]\d\d|2[01]\d\d)$")
CLOCK = re.compile(r"^(\d{1,2})(?::(\d\d))?$")

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50,
    "hundred": 100, "thousand": 1000, "dozen": 12,
}  # fmt: skip
