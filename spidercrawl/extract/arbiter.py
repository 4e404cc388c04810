"""The arbiter of a never-seen page's raw HTML: which reader's article to deliver.

Three readers read raw HTML: text density (ours), readability-lxml and trafilatura. None
wins everywhere, and the page's own markup says which to trust. On the web of today
(responsive pages, structured data, lazy images: :func:`markup_evidence`) trafilatura's
reading is the best of the three wherever it finds an article, and the other two mostly
take boilerplate in or leave sub-headlines out; on older markup (tables, fonts, no
viewport) readability and text density read better, and where they agree closely text
density's reading stands (trafilatura is not asked: its reading could not change the
article). On today's markup trafilatura reads every page; on older markup it is the third
voice of the medoid where the two others disagree.

The arbiter decides page by page from gold-free evidence only: the markup, each reader's
length and their agreement (word-level LCS F1). Its constants were chosen leaving one
dataset out over the seven dev sets (docs/measurements.md, "The arbiter of raw HTML").
Readers are asked lazily, through :class:`Readers`: a reader the decision does not need
is never run, and one that fails gives an empty article (one voice less).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import LCSseq

from spidercrawl.text import tokenize

DENSITY = "density"
READABILITY = "readability"
TRAFILATURA = "trafilatura"
# trafilatura asked to keep more (``favor_recall``): read only where plain trafilatura
# found (almost) nothing on a page of today's markup.
TRAFILATURA_RECALL = "trafilatura-recall"

# A reading of fewer words is no article: the reader collapsed on the page.
MIN_ARTICLE_WORDS = 10


@dataclass(frozen=True)
class ArbiterSettings:
    """The arbiter's choices (``benchmarks/arbiter_choice.py`` chooses them again, leaving
    one dataset out). ``older_agreement``: on older markup, where readability's and text
    density's readings agree this much (word F1), ``older_agreeing_reader``'s stands (text
    density's keeps the page's structure: lists, tables, code); else the medoid of the three,
    trafilatura leading by ``older_traf_lead``. ``modern_traf_lead`` None: on today's
    markup trafilatura's reading is the article; a number: the medoid of the three there
    too, trafilatura leading by it. ``markers``: which of today's markers make a page
    modern (None: none does, every page is read as older markup)."""

    older_agreement: float = 0.9
    older_agreeing_reader: str = DENSITY
    older_traf_lead: float = 0.3
    modern_traf_lead: float | None = None
    markers: tuple[str, ...] | None = ("viewport", "json-ld", "lazy images")

    def reads_as_today(self, evidence: MarkupEvidence) -> bool:
        """Whether a page of ``evidence`` is read as today's markup."""
        return self.markers is not None and bool(set(evidence.markers) & set(self.markers))


SETTINGS = ArbiterSettings()

# Markers of today's markup, each a feature of pages made after about 2012.
_MODERN_MARKERS = {
    "viewport": re.compile(r"""<meta[^<>]{0,200}name\s*=\s*["']?viewport""", re.I),
    "json-ld": re.compile(r"""application/ld\+json""", re.I),
    "lazy images": re.compile(r"""loading\s*=\s*["']?lazy""", re.I),
}


@dataclass(frozen=True)
class MarkupEvidence:
    """What a page's raw HTML says of its age: the markers of today's markup found."""

    markers: tuple[str, ...] = ()

    @property
    def modern(self) -> bool:
        return bool(self.markers)

    def describe(self) -> str:
        return f"today's markup ({', '.join(self.markers)})" if self.markers else "older markup"


def markup_evidence(raw_html: str) -> MarkupEvidence:
    """The markers of today's markup in ``raw_html`` (a viewport, JSON-LD, lazy images)."""
    return MarkupEvidence(
        tuple(name for name, pattern in _MODERN_MARKERS.items() if pattern.search(raw_html))
    )


@dataclass
class Readers:
    """The readers' articles of one page, each made on first use and kept (``read``: a
    reader's name -> its article, empty where it fails); ``found`` holds the articles at
    hand before any reader runs (text density's, made by the chain)."""

    read: Callable[[str], Any]
    found: dict[str, Any] = field(default_factory=dict)
    _words: dict[str, list[str]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        if name not in self.found:
            self.found[name] = self.read(name)
        return self.found[name]

    def words(self, name: str) -> list[str]:
        if name not in self._words:
            self._words[name] = tokenize(self[name].text)
        return self._words[name]

    def agreement(self, first: str, second: str) -> float:
        return word_f1(self.words(first), self.words(second))

    def agreement_with_density(self, name: str) -> float:
        """How far ``name``'s article agrees with text density's, where that is at hand
        (0.0 where not): the confidence of a reading taken without a vote."""
        return self.agreement(name, DENSITY) if DENSITY in self.found else 0.0


@dataclass
class Verdict:
    """The reader whose article the arbiter delivers, its agreement with the others (the
    article's confidence; with text density's alone where no vote was needed) and why, in
    words for the item's note."""

    source: str
    agreement: float
    why: str


def word_f1(first: Sequence[str], second: Sequence[str]) -> float:
    """Word-level LCS F1 of two token sequences (0 when either is empty)."""
    if not first or not second:
        return 0.0
    return 2 * LCSseq.similarity(first, second) / (len(first) + len(second))


def medoid(words: Mapping[str, Sequence[str]], lead: Mapping[str, float]) -> tuple[str, float]:
    """The candidate (name -> its words) that agrees most with the others, plus its
    ``lead``, and its mean agreement with them; "" where none has words. A candidate that
    the others contradict is one that went wrong."""
    best, best_score, best_agreement = "", float("-inf"), 0.0
    for name, own in words.items():
        if not own:
            continue
        others = [word_f1(own, words[other]) for other in words if other != name]
        score = sum(others) + lead.get(name, 0.0)
        if score > best_score:
            mean = sum(others) / len(others) if others else 1.0
            best, best_score, best_agreement = name, score, mean
    return best, best_agreement


def medoid_of(readers: Readers, names: list[str], lead: Mapping[str, float]) -> tuple[str, float]:
    """:func:`medoid` of the articles of the readers ``names``."""
    return medoid({name: readers.words(name) for name in names}, lead)


def todays_reading(
    readers: Readers,
    evidence: MarkupEvidence,
    installed: set[str],
    settings: ArbiterSettings = SETTINGS,
) -> Verdict | None:
    """trafilatura's reading of a page of today's markup where it found an article; None
    where the markup is older or trafilatura found almost nothing (the others decide).
    The first step of :func:`arbitrate`, and of the rendered never-seen page's vote, where
    our blocks are one more reader (:meth:`~spidercrawl.extract.consensus.
    ConsensusExtractor.vote`)."""
    if not settings.reads_as_today(evidence) or TRAFILATURA not in installed:
        return None
    if len(readers.words(TRAFILATURA)) < MIN_ARTICLE_WORDS:
        return None
    markup = evidence.describe()
    lead = settings.modern_traf_lead
    if lead is None:
        agreement = readers.agreement_with_density(TRAFILATURA)
        return Verdict(TRAFILATURA, agreement, f"{markup}: trafilatura's reading")
    names = [n for n in (DENSITY, READABILITY, TRAFILATURA) if n in installed | {DENSITY}]
    name, agreement = medoid_of(readers, names, {TRAFILATURA: lead})
    return Verdict(name, agreement, f"{markup}: consensus of {len(names)} readers")


def arbitrate(
    readers: Readers,
    evidence: MarkupEvidence,
    installed: set[str],
    settings: ArbiterSettings = SETTINGS,
) -> Verdict:
    """The article of a never-seen page's raw HTML (see the module doc); ``installed``:
    the readers that can run here (text density always can)."""
    installed = installed | {DENSITY}
    markup = evidence.describe()
    verdict = todays_reading(readers, evidence, installed, settings)
    if verdict is not None:
        return verdict
    if settings.reads_as_today(evidence) and TRAFILATURA in installed:
        recall = TRAFILATURA_RECALL in installed
        if recall and len(readers.words(TRAFILATURA_RECALL)) >= MIN_ARTICLE_WORDS:
            why = "trafilatura found almost nothing; its reading that keeps more"
            agreement = readers.agreement_with_density(TRAFILATURA_RECALL)
            return Verdict(TRAFILATURA_RECALL, agreement, f"{markup}: {why}")
        names = [n for n in (DENSITY, READABILITY, TRAFILATURA_RECALL) if n in installed]
        name, agreement = medoid_of(readers, names, {})
        why = "trafilatura found almost nothing; the medoid of the others"
        return Verdict(name, agreement, f"{markup}: {why}")
    if READABILITY in installed and readers.words(READABILITY):
        agreement = readers.agreement(DENSITY, READABILITY)
        if agreement >= settings.older_agreement:
            reader = settings.older_agreeing_reader
            why = f"readability agrees with text density ({agreement:.2f}): {reader}'s reading"
            return Verdict(reader, agreement, f"{markup}: {why}")
    names = [n for n in (DENSITY, READABILITY, TRAFILATURA) if n in installed]
    name, agreement = medoid_of(readers, names, {TRAFILATURA: settings.older_traf_lead})
    return Verdict(name, agreement, f"{markup}: consensus of {len(names)} readers of the raw HTML")
