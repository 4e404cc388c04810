"""Sites never seen: the article three extractors agree on most.

On a page of today's markup, trafilatura's reading of the raw HTML where it finds an
article: the first step of the arbiter of raw HTML (:func:`~spidercrawl.extract.arbiter.
todays_reading`), which on today's pages reads better than our blocks. Otherwise a site
with no model is extracted three ways: our cross-site extractor on the rendered
page's blocks (:mod:`spidercrawl.extract.unseen`), and two well-kept peers on the page's
raw HTML, trafilatura (Apache-2.0) and readability-lxml (Apache-2.0). Each is right where
the others fail in their own way (the blocks see the rendered layout and CSS; trafilatura
and readability see the markup's tag and class names), so the output is the *medoid*: the
candidate whose words agree most with the other two (word-level LCS F1, the measure the
evaluation uses), the blocks' candidate winning ties by ``own_bonus``. A candidate that two
others contradict is a candidate that went wrong.

Measured (``python -m spidercrawl.evaluate ../shared/datasets --methods
unseen,trafilatura,readability-lxml``, leave one dataset out: the cross-site model and
``own_bonus`` of each row were chosen without that row's dataset), F1 per page:
see the README's "Measured quality". Without the peers installed, or without the page's
raw HTML, the blocks' candidate is the article.

The peers read the raw HTML, not the browser's DOM: on the rendered DOM they scored about
a point lower on two of the three datasets (scripts' additions, hidden elements).
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.structure import lines_html
from spidercrawl.extract.arbiter import (
    Readers,
    markup_evidence,
    todays_reading,
    word_f1,
)
from spidercrawl.extract.arbiter import medoid as medoid_of_words
from spidercrawl.extract.article import LearnedArticle
from spidercrawl.extract.cold_start import cold_start_extraction
from spidercrawl.extract.reading import trafilatura_reader
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
from spidercrawl.learn.model import Extraction
from spidercrawl.text import tokenize

logger = logging.getLogger(__name__)

OWN = "blocks"
# A site never seen: our blocks' lead in the vote, and how closely the quicker peer must
# agree to settle it. The evaluation's rule (of the settings within one standard error of
# the best F1, the fastest; ``choose_unseen_bonus``) chose 0.3 for each dataset held out
# and chooses it on all three dev datasets together; 0.1 scored the same within a fifth of
# a point and ran the slower peer more often (docs/measurements.md).
OWN_BONUS = 0.3
# A site model's own article against the peers (:meth:`ConsensusExtractor.confirm`),
# measured with the learned path's 4 folds.
CONFIRM_BONUS = 0.1
# Where our blocks' article and text density's agree this much (word F1), neither peer is
# run: the two read the same rendered page in different ways, and where they agree the
# peers seldom overrule them. None: the peers always vote. Offered off, 0.95, 0.9, 0.8,
# 0.7 and 0.6, the evaluation's rule chose 0.6 for each dataset held out and on all three
# together (there, mean F1 0.9524
# against a bar of 0.9522, the best setting's 0.9553 less its standard error: inside by a
# hair; the next, 0.7, scores 0.9542 and is 3% slower on dragnet). Between 0.6 and 0.9 the
# peers changed 9 of the 1,036 pages' articles (-0.7 F1 in sum on each of dragnet and
# l3s-gn1) and cost a tenth of dragnet's never-seen time (58.5 -> 64.9 pages/s in the
# grid). 0.6 is the grid's lowest setting; lower ones were not tried. See "The
# text-density gate" in docs/measurements.md.
DENSITY_AGREEMENT: float | None = 0.6
PEERS = ("trafilatura", "readability")
FIRST_PEER = "readability"  # the quicker of the two peers on our pages

PeerExtractor = Callable[[str], str]
# A learned site's articles the peers may overrule: the site model's own, and text
# density's, its last resort (see :meth:`ConsensusExtractor.confirm_learned`).
CONFIRMED_METHODS = ("learned", "learned+density-fallback")
# A learned site's articles made as on a site never seen: the peers vote on them as on a
# never-seen site's page (see :meth:`ConsensusExtractor.confirm_learned`).
VOTED_METHODS = ("learned+unseen",)


@dataclass
class PeerExtraction:
    """The article as a peer extractor gave it: its text (a paragraph a line), and clean
    HTML made from its lines when asked for (:attr:`html`): each line takes the kind of
    the page's own paragraph of the same text (``page_html``, the page the peer read), so
    that a sub-headline stays a heading and a list item an item."""

    text: str
    confidence: float
    source: str
    lines: list[str] = field(default_factory=list)
    page_html: str = field(default="", repr=False)
    _html: str | None = field(default=None, repr=False)
    error: str = ""  # what the peer raised, where it failed (its text is then empty)

    @classmethod
    def of_text(
        cls, text: str, confidence: float, source: str, page_html: str = ""
    ) -> PeerExtraction:
        lines = [" ".join(line.split()) for line in text.splitlines()]
        lines = [line for line in lines if line]
        return cls("\n\n".join(lines), confidence, source, lines, page_html)

    @property
    def html(self) -> str:
        """Made once, on first use: most peer articles are only voted on."""
        if self._html is None:
            self._html = lines_html(self.lines, self.page_html)
        return self._html


# The elements whose text readability's article gives a line of its own: paragraphs,
# headings, list items, table cells and the blocks around them.
_READABILITY_BLOCKS = (
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "br", "div", "pre",
    "td", "th", "tr", "table", "ul", "ol", "dl", "dt", "dd", "figcaption", "section",
    "article", "header", "footer", "aside", "figure", "address",
)  # fmt: skip


_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _writable(text: str | None) -> str:
    """``text`` as lxml writes it back: it reads control characters from HTML but refuses
    to set them (and empties the text it was setting)."""
    return _CONTROL_CHARACTERS.sub(" ", text or "")


def _readability() -> PeerExtractor:
    import lxml.html
    import readability.readability as readability_module
    from readability import Document

    # readability-lxml's cleaner also takes javascript: links and on* attributes out of
    # every element: a quarter of its time on the datasets' pages, and no text changes (the
    # same output on 346 of them). Our peer cleans without that step, swapping the cleaner
    # in only for its own calls.
    shipped_cleaner = getattr(readability_module, "html_cleaner", None)
    text_cleaner = copy.copy(shipped_cleaner)
    if text_cleaner is not None:
        text_cleaner.javascript = False

    def extract(html: str) -> str:
        readability_module.html_cleaner = text_cleaner
        try:
            summary = Document(html).summary(html_partial=True)
        finally:
            readability_module.html_cleaner = shipped_cleaner
        if not summary.strip():
            return ""
        root = lxml.html.fromstring(summary)
        for block in root.iter(*_READABILITY_BLOCKS):  # paragraphs on lines of their own
            if block.tag != "br":  # not glued to the text before it (a list in an item)
                block.text = "\n" + _writable(block.text)
            block.tail = "\n" + _writable(block.tail)
        return root.text_content()

    return extract


PEER_FACTORIES: dict[str, Callable[[], PeerExtractor]] = {
    "trafilatura": trafilatura_reader,
    "readability": _readability,
}
# Readings a peer gives with other settings, named by the arbiter of raw HTML: made where
# their peer is installed.
PEER_VARIANTS: dict[str, tuple[str, Callable[[], PeerExtractor]]] = {
    "trafilatura-recall": ("trafilatura", lambda: trafilatura_reader(favor_recall=True)),
}


def available_peers() -> list[str]:
    """The peers installed here (``pip install -r requirements.txt`` installs both)."""
    return [name for name in PEERS if importlib.util.find_spec(name) is not None]  # as imported


def _call_peer(name: str, peer: PeerExtractor, raw: str, url: object = None) -> tuple[str, str]:
    """``peer``'s text of ``raw`` and "", or "" and what it raised: its failure is not ours,
    and is one vote less."""
    try:
        return peer(raw), ""
    except Exception as error:
        logger.debug("%s failed on %s: %s", name, url, error)
        return "", f"{type(error).__name__}: {str(error)[:120]}".rstrip(": ")


def peer_text(name: str, peer: PeerExtractor, raw: str, url: object = None) -> str:
    """``peer``'s text of ``raw``, empty where the peer fails."""
    return _call_peer(name, peer, raw, url)[0]


def medoid(candidates: Mapping[str, str], bonus: Mapping[str, float]) -> tuple[str, float]:
    """The candidate text that agrees most with the others, and its mean agreement with
    them (:func:`~spidercrawl.extract.arbiter.medoid` of their words)."""
    return medoid_of_words({name: tokenize(text) for name, text in candidates.items()}, bonus)


def deadline_passed(deadline: float | None) -> bool:
    """Whether the page's time budget, ending at ``deadline`` (``time.monotonic()``; None:
    no budget), is spent: then no peer starts."""
    return deadline is not None and time.monotonic() > deadline


# The peers read pages up to this size (as the fast path's FAST_PATH_MAX_BYTES, 4 MB).
PEER_MAX_CHARS = 4 * 2**20


class PeerReaders:
    """The peers an extractor asks (``peers``: their names; None: every one installed),
    the quicker first, each failure one vote less. The never-seen consensus and the
    raw-HTML consensus (:mod:`spidercrawl.extract.raw_consensus`) both ask them so."""

    def __init__(self, peers: Sequence[str] | None = None) -> None:
        names = available_peers() if peers is None else list(peers)
        self.peers: dict[str, PeerExtractor] = {name: PEER_FACTORIES[name]() for name in names}

    @property
    def first_peer(self) -> str:
        """The peer run first: the quicker one (``FIRST_PEER``) where installed."""
        return FIRST_PEER if FIRST_PEER in self.peers else next(iter(self.peers))

    def _peer(
        self,
        name: str,
        raw: str,
        page: Mapping[str, Any],
        extractor: PeerExtractor | None = None,
    ) -> PeerExtraction:
        """One peer's article of ``raw`` (empty where the peer fails); ``extractor``: the
        peer's reading with other settings, in place of its own."""
        text, error = _call_peer(name, extractor or self.peers[name], raw, page.get("url"))
        extraction = PeerExtraction.of_text(text, 0.0, name, raw)
        extraction.error = error
        return extraction

    @staticmethod
    def _empty(name: str) -> PeerExtraction:
        """The article of a reader not asked."""
        return PeerExtraction.of_text("", 0.0, name)


class ConsensusExtractor(PeerReaders):
    """The medoid of our blocks' article and the peers' articles of the raw HTML."""

    def __init__(
        self,
        unseen: UnseenExtractor,
        peers: Sequence[str] | None = None,
        own_bonus: float = OWN_BONUS,
        density_agreement: float | None = DENSITY_AGREEMENT,
        confirm_bonus: float = CONFIRM_BONUS,
    ) -> None:
        self.unseen = unseen
        self.own_bonus = own_bonus
        self.confirm_bonus = confirm_bonus
        self.density_agreement = density_agreement
        super().__init__(peers)
        if len(self.peers) < 2:
            logger.warning(
                "Sites never seen: %s not installed; the cross-site extractor alone decides",
                " and ".join(sorted(set(PEERS) - set(self.peers))),
            )

    def peer_input(self, page: Mapping[str, Any]) -> str:
        """The page's raw HTML for the peers to read; "" where they cannot vote (no raw
        HTML, fewer than both peers installed, or a page over ``PEER_MAX_CHARS``, on which
        the peers' time has no bound we set: a 30 MB page took them minutes)."""
        raw = (page.get("raw_html") or "") if len(self.peers) >= 2 else ""
        if len(raw) > PEER_MAX_CHARS:
            logger.info(
                "%s: %d characters of raw HTML, more than the peers read (%d): our "
                "extractor alone decides", page.get("url"), len(raw), PEER_MAX_CHARS,
            )  # fmt: skip
            return ""
        return raw

    def peer_candidates(
        self, page: Mapping[str, Any], names: Sequence[str] | None = None
    ) -> dict[str, PeerExtraction]:
        """The peers' articles of ``page``'s raw HTML ({} without it, or without the peers),
        of the peers ``names`` (all of them by default)."""
        raw = self.peer_input(page)
        if not raw:
            return {}
        wanted = self.peers if names is None else names
        return {name: self._peer(name, raw, page) for name in wanted}

    def candidates(self, page: Mapping[str, Any]) -> dict:
        """Every extractor's article of ``page``: ours (``OWN``) and the peers'."""
        return {OWN: self.unseen.extract(page), **self.peer_candidates(page)}

    def choose(
        self, found: Mapping[str, Any], own_bonus: float | None = None
    ) -> tuple[Extraction | PeerExtraction, str]:
        """The medoid of ``found`` and a note on how it was chosen ("" for ours alone)."""
        own = found[OWN]
        if len(found) < 3:
            return own, ""
        texts = {name: extraction.text for name, extraction in found.items()}
        bonus = self.own_bonus if own_bonus is None else own_bonus
        name, agreement = medoid(texts, {OWN: bonus})
        if not name:
            return own, ""
        chosen = found[name]
        chosen.confidence = round(agreement, 3)
        return chosen, f"consensus of 3 extractors: {name}'s text (agreement {agreement:.2f})"

    def confirm(self, page: Mapping[str, Any], extraction: Any) -> tuple[Any, str]:
        """A site model's article, or a peer's where the two peers agree with each other
        more than with it (and a note saying so; "" when the model's article stands).

        Measured on the three datasets (4 folds, cross-site models held out with each
        dataset): learned 0.968 / 0.930 / 0.944 without, 0.970 / 0.937 / 0.948 with it.

        The quicker peer (``FIRST_PEER``, readability) runs first; where the model's article
        and its article already agree to within ``confirm_bonus`` (word F1 above 1 -
        confirm_bonus), the slower peer is not run and the model's article stands. This is
        a shortcut, not an identity: the slower peer could outvote both only by agreeing
        with readability more than the model's article does by over ``confirm_bonus``,
        which two nearly equal texts leave little room for. On cleanportaleval
        (``learned``, 4 folds, 69 pages) it changed no page's F1 and cut the extractor's
        time from 14.1 s to 10.0 s."""
        confidence = getattr(extraction, "confidence", 0.0)
        raw = self.peer_input(page)
        if not raw:
            return extraction, ""
        bonus = self.confirm_bonus
        found, agreement = self._quicker_peer(page, raw, extraction, bonus)
        if agreement is not None:
            return extraction, ""
        chosen, how = self.choose(self._all_peers(page, raw, extraction, found), bonus)
        if chosen is extraction:
            extraction.confidence = confidence
            return extraction, ""
        return chosen, how

    def confirm_learned(
        self, page: Mapping[str, Any], learned: LearnedArticle
    ) -> tuple[LearnedArticle, str]:
        """:meth:`confirm` of a site model's own article (``method: learned``) and of text
        density's, which a site model falls back to where neither it nor the cross-site
        extractor found anything (``learned+density-fallback``): where the peers' medoid
        replaces it, the method becomes ``learned+consensus`` and the note says so. The
        other fallbacks' articles are returned unchanged.

        Text density's last resort is confirmed too: a page where our blocks found nothing
        is a page for the peers.

        A page extracted as on a site never seen (``learned+unseen``: of no known layout,
        or where the site model found almost nothing) gets the vote a never-seen site's
        page gets (:meth:`vote`), without text density's gate and with the learned path's
        ``confirm_bonus``: that gate saves the peers' time on every page of a site never
        seen, and these pages are a few of a learned site's. Its method and reason stay,
        so the crawl still collects pages of no known layout into a new layout. The
        figures behind each choice: docs/measurements.md."""
        if learned.sure:
            return learned, ""
        if learned.method in VOTED_METHODS:
            bonus = self.confirm_bonus  # a learned site's page: the learned path's constant
            extraction, how = self.vote(page, learned.extraction, gate=False, own_bonus=bonus)
            return learned._replace(extraction=extraction), how
        if learned.method not in CONFIRMED_METHODS:
            return learned, ""
        extraction, peer = self.confirm(page, learned.extraction)
        if not peer:
            return learned, ""
        return LearnedArticle(extraction, "learned+consensus"), peer

    @staticmethod
    def agreement_with_density(page: Mapping[str, Any], extraction: Any) -> float:
        """Word F1 of ``extraction``'s text with text density's article of the rendered page
        (0 when either is empty). Text density is computed once per page and shared with
        the blocks' extraction, which uses it as a feature."""
        density = cold_start_extraction(page)
        return word_f1(tokenize(extraction.text), tokenize(density.text))

    def settled(self, extraction: Any, first: Any, own_bonus: float | None = None) -> float | None:
        """The agreement of ``extraction`` with the first peer's article ``first`` where it
        settles the medoid without the slower peer (word F1 above 1 - ``own_bonus``), else
        None."""
        bonus = self.own_bonus if own_bonus is None else own_bonus
        if bonus <= 0:
            return None
        agreement = word_f1(tokenize(extraction.text), tokenize(first.text))
        return agreement if agreement > 1 - bonus else None

    def _quicker_peer(
        self,
        page: Mapping[str, Any],
        raw: str,
        extraction: Any,
        own_bonus: float | None = None,
        found: dict[str, PeerExtraction] | None = None,
    ) -> tuple[dict[str, PeerExtraction], float | None]:
        """The peers' articles read so far (``found``) with the first peer's, and
        :meth:`settled` of ``extraction`` by it."""
        first = self.first_peer
        found = dict(found or {})
        if first not in found:
            found[first] = self._peer(first, raw, page)
        return found, self.settled(extraction, found[first], own_bonus)

    def _all_peers(
        self, page: Mapping[str, Any], raw: str, extraction: Any, found: dict[str, PeerExtraction]
    ) -> dict[str, Any]:
        """``extraction`` and every peer's article (those in ``found`` not run again)."""
        for name in self.peers:
            if name not in found:
                found[name] = self._peer(name, raw, page)
        return {OWN: extraction, **{name: found[name] for name in self.peers}}

    def extract(self, page: Mapping[str, Any]) -> tuple[Extraction | PeerExtraction, str]:
        """The article of ``page`` and how it was chosen ("" when the blocks' alone).

        Where text density agrees with the blocks' article (``density_agreement``), no
        peer runs. Otherwise, as in :meth:`confirm`, the quicker peer runs first; where it
        agrees with the blocks' article to within ``own_bonus``, the slower peer is not
        run: it cannot win then (its lead over the blocks' text would be its agreement with
        the quicker peer less theirs less the bonus, under 1 - (1 - own_bonus) - own_bonus =
        0), and only the quicker peer's near-copy could have. Measured in
        docs/measurements.md ("Sites never seen"): the same F1 to the third decimal, and the
        time of the consensus cut."""
        return self.vote(page, self.unseen.extract(page))

    def with_consensus_articles(
        self, pages: Sequence[Mapping[str, Any]]
    ) -> list[Mapping[str, Any]]:
        """``pages`` (rendered training pages), each with its article as a site never seen
        gets it, the extractors' agreement on it and each reader's own article
        (``consensus_article``): the votes a site model's parser is induced from
        (:mod:`spidercrawl.learn.parser`), and its labels where they come from the consensus
        (:mod:`spidercrawl.learn.consensus_labels`). A page the readers fail on goes
        without (the site model's mask alone reads it)."""
        out: list[Mapping[str, Any]] = []
        for page in pages:
            if CONSENSUS_FIELD in page or not page.get("texts"):
                out.append(page)
                continue
            try:
                found = self.candidates(page)
                extraction, how = self.vote(page, found[OWN])
            except Exception as error:  # one odd page: read by the site model alone
                logger.info("No consensus article of %s to learn from: %s", page.get("url"), error)
                out.append(page)
                continue
            agreement = float(getattr(extraction, "confidence", 0.0) or 0.0) if how else 0.0
            readings = [candidate.text for candidate in found.values()]
            article = ConsensusArticle(extraction.text, agreement, readings)
            out.append({**page, CONSENSUS_FIELD: article.as_field()})
        return out

    def vote(
        self, page: Mapping[str, Any], own: Any, gate: bool = True, own_bonus: float | None = None
    ) -> tuple[Any, str]:
        """The article of ``page`` among ``own`` (our blocks' article) and the peers' of its
        raw HTML, and how it was chosen. On today's markup, trafilatura's reading where it
        found an article (the arbiter's first step, :func:`~spidercrawl.extract.arbiter.
        todays_reading`); otherwise the medoid of ``own`` and the peers' articles, the peers
        run only where text density (unless ``gate`` is False) and then the quicker peer
        leave it open (see :meth:`extract`). ``own_bonus``: ours' lead (this extractor's
        ``own_bonus`` by default)."""
        raw = self.peer_input(page)
        if not raw:
            return own, ""
        readers = Readers(lambda name: self._peer(name, raw, page))
        verdict = todays_reading(readers, markup_evidence(raw), set(self.peers))
        if verdict is not None:  # its confidence: how far our blocks agree with it
            chosen = readers[verdict.source]
            chosen.confidence = round(word_f1(readers.words(verdict.source), tokenize(own.text)), 3)
            return chosen, f"consensus: {verdict.why}"
        found: dict[str, PeerExtraction] = dict(readers.found)  # any reading made: one vote
        if gate and self.density_agreement is not None:
            agreement = self.agreement_with_density(page, own)
            if agreement >= self.density_agreement:
                own.confidence = round(agreement, 3)
                return own, f"consensus: the blocks' text, text density agreeing ({agreement:.2f})"
        found, agreement = self._quicker_peer(page, raw, own, own_bonus, found)
        first = self.first_peer
        if agreement is not None:
            own.confidence = round(agreement, 3)
            return own, f"consensus: the blocks' text, {first} agreeing ({agreement:.2f})"
        return self.choose(self._all_peers(page, raw, own, found), own_bonus)
