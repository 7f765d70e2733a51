"""Natural orders of ordered categories: education levels, Likert scales, frequency and quality ladders,
or a number leading every value.

Ordered grouping merges neighbours, so its default order decides which values share a node: an
alphabetical order puts {PhD, Some college} together. ``natural_order`` returns the column's values in
their natural order when one is recognised, else None (the caller keeps its own default):

1. every value starts with a number (``1 - Never``, ``10th``, ``5th-6th``, ``<10k``, ``65+``): ascending
   by that number, ties by the text;
2. every value is a rung of one known ladder (compared without case or punctuation, ``-`` and
   ``_`` read as spaces): the ladder's order; values that are synonyms of one rung, by their text.

At least two distinct values are needed. A ladder is a list of rungs, each a set of spellings.
"""

from __future__ import annotations

import re
from typing import Sequence

_LADDERS: tuple[tuple[tuple[str, ...], ...], ...] = (
    # education: ISCED-like levels, the US school grades and degrees (Adult's labels among them)
    (("no schooling", "none", "no formal education", "preschool", "pre school", "kindergarten"),
     ("1st 4th", "primary", "primary school", "primary education", "elementary", "elementary school"),
     ("5th 6th",),
     ("7th 8th", "lower secondary", "middle school", "junior high", "junior high school"),
     ("9th",), ("10th",), ("11th",), ("12th",),
     ("upper secondary", "high school", "high school graduate", "hs grad", "secondary", "secondary school",
      "ged", "a levels"),
     ("post secondary", "post secondary non tertiary", "vocational", "assoc voc", "trade school"),
     ("some college", "some college no degree", "some university"),
     ("assoc acdm", "associate", "associate degree", "associates degree", "associates"),
     ("bachelor", "bachelors", "bachelors degree", "bachelor degree", "undergraduate", "ba", "bsc", "bs",
      "college graduate", "university degree"),
     ("master", "masters", "masters degree", "master degree", "ma", "msc", "ms", "postgraduate", "graduate degree"),
     ("prof school", "professional degree", "professional school"),
     ("doctorate", "phd", "doctoral degree", "doctorate degree", "doctoral")),
    # agreement (Likert)
    (("strongly disagree", "completely disagree"), ("disagree", "mostly disagree"),
     ("somewhat disagree", "slightly disagree", "tend to disagree"),
     ("neither agree nor disagree", "neutral", "undecided", "neither"),
     ("somewhat agree", "slightly agree", "tend to agree"), ("agree", "mostly agree"),
     ("strongly agree", "completely agree")),
    # satisfaction
    (("very dissatisfied", "extremely dissatisfied"), ("dissatisfied", "somewhat dissatisfied"),
     ("neither satisfied nor dissatisfied", "neutral"), ("satisfied", "somewhat satisfied"),
     ("very satisfied", "extremely satisfied")),
    # frequency
    (("never",), ("rarely", "seldom", "almost never"), ("sometimes", "occasionally"),
     ("often", "frequently", "usually"), ("very often", "almost always"), ("always",)),
    # quality / health
    (("very poor", "very bad", "terrible"), ("poor", "bad"), ("fair", "average", "ok", "moderate"),
     ("good",), ("very good",), ("excellent",)),
    # intensity
    (("none", "not at all"), ("very low", "minimal"), ("low", "mild", "slight", "a little"),
     ("medium", "moderate", "somewhat"), ("high", "severe", "a lot"), ("very high", "very severe", "extreme")),
    # importance and likelihood
    (("not at all important", "not important"), ("slightly important", "of little importance"),
     ("moderately important", "somewhat important"), ("important",), ("very important",),
     ("extremely important",)),
    (("very unlikely",), ("unlikely",), ("neither likely nor unlikely",), ("likely",), ("very likely",)),
)

# (?:[<>]\s*)?, not [<>]?\s*: two \s* side by side backtrack quadratically on a run of blanks (10.8 s
# for 16,000); the same strings in linear time
_LEADING_NUMBER = re.compile(r"^\s*(?:[<>≤≥~]\s*)?([-+]?\d+(?:[.,]\d+)?)")


def _key(value: str) -> str:
    text = value.casefold().replace("'", "").replace("’", "").replace(".", "")
    text = re.sub(r"[-_/,()]+", " ", text)
    return " ".join(text.split())


def _ranks() -> list[dict[str, int]]:
    return [{spelling: rank for rank, rung in enumerate(ladder) for spelling in rung} for ladder in _LADDERS]


_RANKS = _ranks()


def ladder_order(values: Sequence[str]) -> list[str] | None:
    """The values in the order of the first known ladder that holds every one of them, else None."""
    keys = [_key(v) for v in values]
    for ranks in _RANKS:
        if all(k in ranks for k in keys):
            return [v for _, v in sorted(zip(keys, values), key=lambda p: (ranks[p[0]], p[1]))]
    return None


def leading_number_order(values: Sequence[str]) -> list[str] | None:
    """The values by the number each starts with, when each does (and not all are plain numbers)."""
    numbers = []
    for v in values:
        m = _LEADING_NUMBER.match(v)
        if not m:
            return None
        numbers.append(float(m.group(1).replace(",", ".")))
    return [v for _, v in sorted(zip(numbers, values), key=lambda p: (p[0], p[1].startswith(">"), p[1]))]


def natural_order(values: Sequence[str]) -> list[str] | None:
    """The distinct values in their natural order (a leading number, then a known ladder), or None."""
    distinct = list(dict.fromkeys(str(v) for v in values))
    if len(distinct) < 2:
        return None
    return leading_number_order(distinct) or ladder_order(distinct)
