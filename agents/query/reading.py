"""What a question mentions, where, and how sure each reading is: the mention lattice the interpreter builds a
plan from.

Mentions, read in this order (a token belongs to at most one mention):

1. quoted values (``'So Cruel'``), looked up in the value index exactly, accent-insensitively, by alias or fuzzily;
   a quoted string nothing holds is kept as an unknown name;
2. closed-class readings: operation words (count, sum, average, min/max, superlatives, top N, most recent),
   comparisons with their number and unit ("longer than 5 minutes", "above $15", "more than 300"), dates ("in
   2021", "March 2022", "January 1, 2013", "before 2010"), clock times ("at 9 am"), negations;
3. capitalized runs that name stored values exactly ("Frank Ralston", "USA", "Rock");
4. schema phrases (types, attributes, relationships) from the contract's phrase index, longest first, with
   "<type> <number or code>" read as a key ("invoice 244", "store 1");
5. the remaining content words matched loosely against stored values (lower case, accents, typos:
   "luis goncalves", "aerosmtih", "led zepelin"); a capitalized or quoted run that still matches nothing is an
   unknown name ("Peter Parker"), and every other content word left over is reported as unconsumed.
"""

from __future__ import annotations

from typing import Any

from esc.agents.query.closed_class import read_closed_class, read_numbers
from esc.agents.query.mentions import (
    GENERIC_NOUNS,
    TYPO_CUTOFF,
    CompareMention,
    DateMention,
    KeyMention,
    NumberMention,
    OpMention,
    Reading,
    SchemaMention,
    Span,
    ValueMention,
)
from esc.agents.query.phrases import PhraseIndex
from esc.agents.query.schema_reading import read_keys, read_schema, read_truncations
from esc.agents.query.value_index import ValueIndex
from esc.agents.query.values_reading import (
    is_english_word,
    read_capitalized,
    read_capitalized_loose,
    read_loose,
    read_lower_values,
    read_quoted,
    read_unknown,
)
from esc.agents.query.words import COMPARATIVES, Token, base, tokenize


def repair_typos(r: Reading, known: set[str], is_word: Any) -> None:
    """Words that are neither English nor the data's get read as the closest schema or operation word
    ("averge" -> average, "arival" -> arrival)."""
    from rapidfuzz import fuzz, process

    for t in r.tokens:
        if len(t.low) < 5 or not t.low.isalpha() or t.low in known or t.base in known or is_word(t.low):
            continue
        best = process.extractOne(t.low, known, scorer=fuzz.ratio, score_cutoff=TYPO_CUTOFF)
        if best is not None:
            r.typos[t.index] = best[0]


def read(question: str, phrases: PhraseIndex, index: ValueIndex, key_of: Any, is_word: Any) -> Reading:
    tokens = tokenize(question)
    r = Reading(question, tokens)
    read_quoted(r, index)
    repair_typos(r, phrases.words | _OPERATION_WORDS, is_word)
    if r.typos:
        # the repaired words take part in the closed-class reading ("averge" -> average)
        r.tokens = [_retyped(t, r.typos.get(t.index)) for t in r.tokens]
    read_closed_class(r)
    read_capitalized(r, index, phrases)
    read_lower_values(r, index, 2)
    read_schema(r, phrases)
    read_capitalized_loose(r, index, phrases)
    read_numbers(r)
    read_keys(r, key_of)
    read_loose(r, index, is_word)
    read_truncations(r, phrases)
    read_unknown(r)
    return r


def _retyped(t: Token, word: str | None) -> Token:
    if word is None:
        return t
    return Token(t.text, word, t.start, t.end, t.index, base(word), frozenset({word, base(word)}), t.hyphen_next)


_OPERATION_WORDS = frozenset(
    {"average", "total", "maximum", "minimum", "highest", "lowest", "largest", "smallest", "longest", "shortest",
     "number", "count", "latest", "earliest", "recent", "fewest", "cheapest", "before", "after", "between"}
    | set(COMPARATIVES)
)  # fmt: skip


__all__ = [
    "GENERIC_NOUNS",
    "CompareMention",
    "DateMention",
    "KeyMention",
    "NumberMention",
    "OpMention",
    "Reading",
    "SchemaMention",
    "Span",
    "ValueMention",
    "is_english_word",
    "read",
]
