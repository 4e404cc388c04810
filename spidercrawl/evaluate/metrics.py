"""Per-page text quality: word-sequence precision, recall and F1, CleanEval, difflib.

Definitions (seed 003, equations 1-4; seed 002 for the difflib variant and special cases):

* Tokens: :func:`tokenize`. Both texts are compared as token sequences, so order matters
  and a word counts as often as it occurs.
* ``precision = |LCS(R, G)| / |R|``, ``recall = |LCS(R, G)| / |G|`` and their harmonic
  mean, where R is the retrieved (extracted) text and G the gold text.
* ``cleaneval = 1 - levenshtein(R, G) / max(|R|, |G|)``: the word-level edit distance
  (insert, delete, substitute) normalised by the longer text, as CleanEval scored it.
* ``*_difflib``: the same ratios with the matched-token count of Python's difflib
  (``SequenceMatcher.get_matching_blocks``), the measure of seed 002. It can find fewer
  matches than the LCS: it greedily takes the longest matching runs first.
* Special cases (seed 002) are reported by name and left out of means: ``retrieved_empty``
  (gold has text, extraction none), ``gold_empty``, ``both_empty`` and ``no_overlap``
  (both have text, nothing in common).

LCS and Levenshtein come from rapidfuzz (C++), fast enough for pages of 10,000 words.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass

from rapidfuzz.distance import LCSseq, Levenshtein

from spidercrawl.text import tokenize

__all__ = ["SPECIAL_CASES", "PageScore", "score_text", "score_tokens", "tokenize"]

SPECIAL_CASES = ("retrieved_empty", "gold_empty", "both_empty", "no_overlap")


@dataclass(frozen=True)
class PageScore:
    """The scores of one extracted text against its gold text."""

    retrieved_tokens: int
    gold_tokens: int
    precision: float
    recall: float
    f1: float
    cleaneval: float
    precision_difflib: float
    recall_difflib: float
    f1_difflib: float
    special_case: str = ""  # one of SPECIAL_CASES, or "" for an ordinary page

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _ratios(matched: int, retrieved: int, gold: int) -> tuple[float, float, float]:
    precision = matched / retrieved if retrieved else 0.0
    recall = matched / gold if gold else 0.0
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def special_case(retrieved: int, gold: int, matched: int) -> str:
    if not retrieved and not gold:
        return "both_empty"
    if not retrieved:
        return "retrieved_empty"
    if not gold:
        return "gold_empty"
    if not matched:
        return "no_overlap"
    return ""


def score_tokens(retrieved: list[str], gold: list[str], with_difflib: bool = True) -> PageScore:
    """Score two token sequences (see the module docstring for the definitions)."""
    matched = int(LCSseq.similarity(retrieved, gold)) if retrieved and gold else 0
    precision, recall, f1 = _ratios(matched, len(retrieved), len(gold))
    longer = max(len(retrieved), len(gold))
    cleaneval = 1.0 - Levenshtein.distance(retrieved, gold) / longer if longer else 1.0
    if with_difflib and retrieved and gold:
        matcher = difflib.SequenceMatcher(None, retrieved, gold, autojunk=False)
        matched_difflib = sum(block.size for block in matcher.get_matching_blocks())
    else:
        matched_difflib = 0
    difflib_ratios = _ratios(matched_difflib, len(retrieved), len(gold))
    case = special_case(len(retrieved), len(gold), matched)
    if case == "both_empty":  # nothing to find and nothing found: perfect by convention
        precision = recall = f1 = 1.0
        difflib_ratios = (1.0, 1.0, 1.0)
    return PageScore(
        retrieved_tokens=len(retrieved),
        gold_tokens=len(gold),
        precision=precision,
        recall=recall,
        f1=f1,
        cleaneval=cleaneval,
        precision_difflib=difflib_ratios[0],
        recall_difflib=difflib_ratios[1],
        f1_difflib=difflib_ratios[2],
        special_case=case,
    )


def score_text(retrieved: str, gold: str, with_difflib: bool = True) -> PageScore:
    """Score an extracted text against its gold text."""
    return score_tokens(tokenize(retrieved or ""), tokenize(gold or ""), with_difflib)
