"""Value readings: quoted strings, capitalized names (exact, fuzzy when the whole run is misspelt, in part),
stored values in lower case (loose, accent-insensitive, fuzzy, in part), and names nothing holds."""

from __future__ import annotations

import re
from typing import Any

from esc.agents.query.mentions import GENERIC_NOUNS, Reading, ValueMention
from esc.agents.query.phrases import PhraseIndex
from esc.agents.query.value_index import ValueIndex, ValueMatch
from esc.agents.query.words import (
    FUNCTION_WORDS,
    OPENERS,
    Token,
    base,
)


def _quote_spans(text: str) -> list[list[tuple[int, int]]]:
    """Per opening quote, the candidate (start, end) character spans of the quoted text, longest first."""
    out = []
    for m in re.finditer(r"(?:(?<=[\s(])|^)(['\"‘“])", text):
        q = m.group(1)
        close = {"‘": "’", "“": "”"}.get(q, q)
        begin = m.end()
        cands = []
        for c in re.finditer(re.escape(close), text[begin:]):
            end = begin + c.start()
            after = text[end + 1 : end + 2]
            if end > begin and (after == "" or not after.isalnum()):
                cands.append((begin, end))
        if cands:
            out.append(sorted(cands, key=lambda s: s[0] - s[1]))
    return out


def _tokens_in(tokens: list[Token], start: int, end: int) -> tuple[int, int]:
    inside = [t.index for t in tokens if t.start >= start and t.end <= end]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def _accept(vm: ValueMatch | None, span_text: str) -> ValueMatch | None:
    """Short aliases ("US", "CAN", "UK") are also ordinary words: only written in capitals do they name a value."""
    if vm is not None and vm.how == "alias" and len(vm.key) <= 3 and not span_text.isupper():
        return None
    return vm


def read_quoted(r: Reading, index: ValueIndex) -> None:
    for cands in _quote_spans(r.question):
        chosen = None
        for s, e in cands:
            a, b = _tokens_in(r.tokens, s, e)
            if b <= a or not r.free(a, b):
                continue
            vm = _accept(index.match(r.question[s:e]), r.question[s:e])
            if vm is not None:
                chosen = (a, b, s, e, vm)
                break
        if chosen is None:
            s, e = cands[-1]
            a, b = _tokens_in(r.tokens, s, e)
            if b > a and r.free(a, b):
                r.unknown.append((a, b, True))
                r.used.update(range(a, b))
            continue
        a, b, s, e, vm = chosen
        r.values.append(ValueMention(a, b, r.question[s:e], set(vm.hits), True, vm.score, vm.how))
        r.used.update(range(a, b))


def read_capitalized(r: Reading, index: ValueIndex, phrases: PhraseIndex) -> None:
    """Runs starting with a capital (or digit) that name stored values exactly (maximal spans win). A run of
    two or more capitalized words is read whole first: with a typo ("Penelope Cronin"), or in part without the
    type word it ends with ("Seattle-Tacoma International Airport" -> "Seattle Tacoma Intl"), before any of
    its words alone ("International Airport" is also a name)."""
    for a, b in _runs(r, lambda t: t.capitalized and t.low not in FUNCTION_WORDS and not t.low.isdigit()):
        if b - a < 2 or (a == 0 and r.tokens[0].low in OPENERS):
            continue
        raw = r.text(a, b)
        vm = _accept(index.match(raw, fuzzy=True), raw)
        end = b
        if vm is None or (vm.how == "fuzzy" and vm.score < 0.8):
            while end - a > 1 and any(e.kind == "type" for e in phrases.lookup((r.tokens[end - 1].base,))):
                end -= 1  # the type word stays for the schema reading
            vm = index.partial(r.text(a, end)) if end - a >= 2 else None
        if vm is not None and (vm.how != "fuzzy" or vm.score >= 0.8):
            r.values.append(ValueMention(a, end, r.text(a, end), set(vm.hits), False, vm.score, vm.how))
            r.take(r.values[-1])
    n = len(r.tokens)
    found: list[ValueMention] = []
    for i in range(n):
        t = r.tokens[i]
        # a capitalized function word starts a name only inside the sentence ("the album Let There Be Rock")
        if not r.free(i) or not t.capitalized or (t.low in FUNCTION_WORDS and (i == 0 or not t.text[:1].isupper())):
            continue
        for j in range(min(n, i + index.max_words), i, -1):
            if not r.free(i, j):
                continue
            span = r.tokens[i:j]
            if span[-1].low in FUNCTION_WORDS and not span[-1].text[:1].isupper():
                continue
            if t.low in FUNCTION_WORDS and j - i < 2:
                continue
            raw = r.text(i, j)
            vm = _accept(index.match(raw, fuzzy=False), raw)
            if vm is not None and vm.how in ("exact", "ascii", "alias", "squeezed"):
                found.append(ValueMention(i, j, raw, set(vm.hits), False, vm.score, vm.how))
                break
    _keep_maximal(r, found)


def read_capitalized_loose(r: Reading, index: ValueIndex, phrases: PhraseIndex) -> None:
    """Capitalized runs no exact value took: the whole run fuzzily first ("Camembert Pierot", "Penelope
    Cronin"), else the longest sub-run whose words all belong to one stored value (a shortened name: "United",
    "Denver International"). A run that is itself a schema word ("Order date") is not a name."""
    for a, b in _runs(r, lambda t: t.capitalized and t.low not in FUNCTION_WORDS and not t.low.isdigit()):
        raw = r.text(a, b)
        letters = sum(len(t.low) for t in r.tokens[a:b])
        if b - a >= 2 and letters >= 6:
            vm = _accept(index.match(raw, fuzzy=True), raw)
            if vm is not None and vm.how == "fuzzy":
                r.values.append(ValueMention(a, b, raw, set(vm.hits), False, vm.score, vm.how))
                r.take(r.values[-1])
                continue
        done = False
        for size in range(b - a, 0, -1):
            for i in range(a, b - size + 1):
                if not r.free(i, i + size):
                    continue
                if phrases.lookup(tuple(t.base for t in r.tokens[i : i + size])):
                    continue
                if i == 0 and is_english_word(r.tokens[0].low):
                    continue  # the question's first word is capitalized anyway
                sub = r.text(i, i + size)
                vm = index.partial(sub)
                if vm is not None:
                    r.values.append(ValueMention(i, i + size, sub, set(vm.hits), False, vm.score, vm.how))
                    r.take(r.values[-1])
                    done = True
                    break
            if done:
                break


def _keep_maximal(r: Reading, found: list[ValueMention]) -> None:
    found.sort(key=lambda v: (v.start - v.end, v.start))
    for v in found:
        if r.free(v.start, v.end):
            r.values.append(v)
            r.take(v)


def read_lower_values(r: Reading, index: ValueIndex, min_words: int) -> None:
    """Exact (folded) stored values written in lower case, of at least ``min_words`` content words."""
    n = len(r.tokens)
    found: list[ValueMention] = []
    for i in range(n):
        if not r.free(i) or r.tokens[i].low in FUNCTION_WORDS:
            continue
        for j in range(min(n, i + index.max_words), i + min_words - 1, -1):
            if not r.free(i, j) or r.tokens[j - 1].low in FUNCTION_WORDS:
                continue
            raw = r.text(i, j)
            vm = _accept(index.match(raw, fuzzy=False), raw)
            if vm is not None and vm.how in ("exact", "ascii", "alias", "squeezed"):
                found.append(ValueMention(i, j, raw, set(vm.hits), False, vm.score * 0.97, vm.how))
                break
    _keep_maximal(r, found)


def _content(t: Token) -> bool:
    return t.low not in FUNCTION_WORDS and t.base not in FUNCTION_WORDS and not t.low.isdigit()


def _runs(r: Reading, ok: Any) -> list[tuple[int, int]]:
    """Maximal runs of free tokens passing ``ok``, allowing function words inside (not at the edges)."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(r.tokens)
    while i < n:
        if not r.free(i) or not ok(r.tokens[i]):
            i += 1
            continue
        j, last = i + 1, i + 1
        while j < n and r.free(j) and (ok(r.tokens[j]) or r.tokens[j].low in ("of", "the", "de", "la", "le", "and", "&", "y", "di", "von", "van", "der", "du", "del")):
            if ok(r.tokens[j]):
                last = j + 1
            j += 1
        out.append((i, last))
        i = last
    return out


def is_english_word(word: str) -> bool:
    """A word of the English dictionary (WordNet, through its base form): "united" and "delta" are, "jetblue"
    and "aerosmtih" are not."""
    from esc.agents.query.wordnet import wordnet
    from esc.agents.query.wordnet_morphology import common_word

    if wordnet() is None:
        from esc.contract.lexicon import is_english_word as lexicon_word

        return lexicon_word(word)
    low = word.lower()
    return low.isalpha() and (common_word(low) or common_word(base(low)))


def _single_word_value(t: Token, vm: ValueMatch, is_word: Any) -> bool:
    """A lone lower-case word names a stored value only when it is not an ordinary English word (a band written
    "acdc", a misspelt "aerosmtih"), or when it is exactly a category ("jazz", "drama"); an inflected word
    ("belong", "released") is a verb of the question, not a name."""
    if t.capitalized:
        return True
    if not is_word(t.low):
        return True
    if t.base != t.low or vm.how not in ("exact", "ascii"):
        return False
    return all(h.role == "category" for h in vm.hits)


def _qualifies_own_type(r: Reading, i: int, vm: ValueMatch) -> bool:
    """"cancelled orders", "closed tickets": an inflected word that is exactly a category of the type named right
    after it is that category, not a verb of the question."""
    if vm.how not in ("exact", "ascii") or not all(h.role == "category" for h in vm.hits):
        return False
    nxt = next((m for m in r.schema if m.start == i + 1), None)
    return nxt is not None and {h.entity for h in vm.hits} <= {e.entity for e in nxt.of("type")}


def _loose_span(r: Reading, a: int, b: int, index: ValueIndex, is_word: Any) -> None:
    """The longest sub-span of tokens[a:b] that names a value loosely (accent, alias, fuzzy), then the rest."""
    for size in range(min(b - a, index.max_words + 1), 0, -1):
        for i in range(a, b - size + 1):
            span = r.tokens[i : i + size]
            if span[0].low in FUNCTION_WORDS or span[-1].low in FUNCTION_WORDS:
                continue
            raw = r.text(i, i + size)
            letters = sum(len(t.low) for t in span)
            loose = letters >= (7 if size == 1 else 6) or (size == 1 and letters >= 5 and span[0].capitalized)
            vm = _accept(index.match(raw, fuzzy=loose), raw)
            if vm is not None and size == 1 and letters < 7 and vm.how == "fuzzy" and vm.score < 0.8:
                vm = None  # a short word only matches a very close spelling
            if vm is None:
                continue
            if size == 1 and not _single_word_value(span[0], vm, is_word) and not _qualifies_own_type(r, i, vm):
                continue
            r.values.append(ValueMention(i, i + size, raw, set(vm.hits), False, vm.score * 0.97, vm.how))
            r.used.update(range(i, i + size))
            if i > a:
                _loose_span(r, a, i, index, is_word)
            if i + size < b:
                _loose_span(r, i + size, b, index, is_word)
            return


def read_loose(r: Reading, index: ValueIndex, is_word: Any) -> None:
    for a, b in _runs(r, _content):
        _loose_span(r, a, b, index, is_word)
    # a shortened name in lower case ("kennedy airport", "jetblue"): words no dictionary knows
    for a, b in _runs(r, lambda t: _content(t) and not is_english_word(t.low)):
        for size in range(b - a, 0, -1):
            hit = None
            for i in range(a, b - size + 1):
                if not r.free(i, i + size):
                    continue
                raw = r.text(i, i + size)
                vm = index.partial(raw)
                if vm is not None:
                    known = all(is_english_word(t.low) for t in r.tokens[i : i + size])
                    hit = ValueMention(i, i + size, raw, set(vm.hits), False, vm.score * (0.85 if known else 0.95),
                                       vm.how)  # fmt: skip
                    break
            if hit is not None:
                r.values.append(hit)
                r.take(hit)
                break


def _legal_form_after_name(r: Reading, a: int, b: int) -> bool:
    """Tokens a..b are a company's legal form ("LLC", "GmbH", "S.A.") right after a name the data holds."""
    from esc.contract.er_match import LEGAL_FORMS

    glued = "".join(r.tokens[k].low for k in range(a, b))
    named = any(v.end == a and any(h.role == "display" for h in v.hits) for v in r.values)
    return named and (glued in LEGAL_FORMS or all(r.tokens[k].low in LEGAL_FORMS for k in range(a, b)))


def read_unknown(r: Reading) -> None:
    """Capitalized runs (not the question's first word) nothing consumed: names the data does not hold."""
    for a, b in _runs(r, lambda t: _content(t) and t.capitalized and not t.low.isdigit()):
        if a == 0 and r.tokens[0].low in OPENERS:
            a += 1
        if b > a and _legal_form_after_name(r, a, b):
            r.used.update(range(a, b))  # "Lindgren Glass LLC" where the data writes "Lindgren Glass"
            continue
        if b > a:
            r.unknown.append((a, b, False))
            r.used.update(range(a, b))
    r.generic = [t.index for t in r.tokens if r.free(t.index) and t.low in GENERIC_NOUNS]
    r.used.update(r.generic)
    r.unconsumed = [t.index for t in r.tokens if r.free(t.index) and _content(t)]
