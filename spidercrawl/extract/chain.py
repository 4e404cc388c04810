"""The one extraction chain: a page's readers gathered, the one decision asked, the article
made. The crawl's pipeline, extraction without a crawl and the evaluation all call
:meth:`ExtractionChain.extract`, so what is scored is what is delivered.

Which readers a page has depends on the page and the run: the site's own where its site
has a model (:class:`~spidercrawl.extract.article.SiteReaders`), our cross-site blocks on a
rendered page where the cross-site model is here, text density always, and the peers
(readability, trafilatura) where installed and allowed (``peers``). Each runs at most once,
when :func:`~spidercrawl.extract.decision.decide` asks for it; the peers not past the page's
time budget (``time_budget`` seconds from the chain's start, ``EXTRACT_TIME_BUDGET`` in a
crawl). A reader that raises is an empty voice: the decision takes the next, the note
names the error, and :attr:`ChainResult.errors` lists it for the caller to count. Where
the decision itself raises, text density makes the article. Never empty where text
density finds text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.captured import Page
from spidercrawl.document.density import DensityResult
from spidercrawl.document.html import within_size, without_attribute_floods
from spidercrawl.extract.article import SiteReaders
from spidercrawl.extract.cold_start import cold_start_extraction
from spidercrawl.extract.decision import (
    SETTINGS,
    Decision,
    DecisionSettings,
    PageFacts,
    decide,
)
from spidercrawl.extract.metadata import publication_dates
from spidercrawl.extract.readers import (
    BLOCKS,
    DENSITY,
    PEER_MAX_CHARS,
    PEER_READINGS,
    READABILITY,
    TRAFILATURA,
    PageReadings,
    Peers,
    ReaderError,
    describe_error,
)
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
from spidercrawl.learn.model import SiteModel

logger = logging.getLogger(__name__)

__all__ = ["ChainResult", "ExtractionChain", "ReaderError", "describe_error"]


@dataclass
class ChainResult:
    """A page's article as the chain made it: the extraction, the method that made it, why
    (the note) and the readers' errors met."""

    extraction: Any
    method: str
    note: str
    errors: list[ReaderError] = field(default_factory=list)
    of_no_layout: bool = False  # a learned site's page of no layout its model knows
    # A page read without a browser (the fast path's, extract_html's): how its parser's
    # article was checked (``prose``, ``density``, ``doubted``); "" where no check ran.
    rules_check: str = ""


class ExtractionChain:
    """The readers a run has and the decision's settings: ``cross_site`` (our blocks'
    model; None: none here), ``peers`` (None: no peers, our readers alone; asked on pages
    fetched without a browser, on rendered pages, as ``peers_on_raw`` and
    ``peers_on_rendered`` say), ``check_rules`` (the fast path's independent check of the
    parser's article)."""

    def __init__(
        self,
        cross_site: UnseenExtractor | None = None,
        peers: Peers | None = None,
        time_budget: float | None = None,
        check_rules: bool = True,
        settings: DecisionSettings = SETTINGS,
        peers_on_rendered: bool = True,
        peers_on_raw: bool = True,
    ) -> None:
        self.cross_site = cross_site
        self.peers = peers
        self.peers_on = {True: peers_on_raw, False: peers_on_rendered}  # by page.plain
        self.time_budget = time_budget
        self.check_rules = check_rules
        self.settings = settings
        if peers is not None and not peers.enough:
            logger.warning(
                "%s not installed: our readers alone decide",
                " and ".join(sorted({READABILITY, TRAFILATURA} - set(peers.names()))),
            )

    def readings(
        self, page: Page, model: SiteModel | None, deadline: float | None = None
    ) -> tuple[PageReadings, PageFacts]:
        """The page's readers, bound to it, and what the decision knows of it."""
        readers: dict[str, Any] = {DENSITY: lambda: cold_start_extraction(page)}
        site = SiteReaders(page, model, self.cross_site) if model is not None else None
        if site is not None:
            readers.update(site.readers())
        if self.cross_site is not None and not page.plain:
            readers[BLOCKS] = lambda: self.cross_site.extract(page)
        raw, without = self._peer_input(page)
        if raw:
            for name in self.peers.names():
                readers[name] = lambda name=name: self.peers.read(name, raw)
        facts = PageFacts(
            plain=page.plain,
            raw_html=raw,
            peers_read=bool(raw),
            without_peers=without,
            check_rules=self.check_rules and self.peers is not None and self.peers_on[True],
            familiarity=site.familiarity if site is not None and not page.plain else None,
            enough_chars=site.enough_chars if site is not None and not page.plain else None,
            sure=site.sure if site is not None and not page.plain else None,
            descriptions=tuple(d for d in page.get("descriptions") or () if isinstance(d, str)),
            published=lambda: publication_dates(page)[0],
        )
        return PageReadings(readers, deadline, page.get("url")), facts

    def _peer_input(self, page: Page) -> tuple[str, str]:
        """The raw HTML the peers read (without its attribute floods), or "" and why they
        cannot: no peers, a page over ``PEER_MAX_CHARS`` even without its scripts' and
        styles' content (on which their time has no bound we set)."""
        if self.peers is None or not self.peers_on[page.plain]:
            return "", ""  # asked for none
        if not self.peers.enough:
            return "", "no peers installed"
        raw = page.get("raw_html") or (page.get("rendered_html") if page.plain else "") or ""
        bounded = within_size(raw, PEER_MAX_CHARS)
        if bounded is None:
            logger.info(
                "%s: %d characters of raw HTML, more than the peers read (%d) even without "
                "its scripts and styles: our readers alone decide",
                page.get("url"), len(raw), PEER_MAX_CHARS,
            )  # fmt: skip
            return "", "raw HTML over the peers' size"
        return without_attribute_floods(bounded), ""  # they parse with libxml2

    def extract(
        self, page: Mapping[str, Any], model: SiteModel | None, fallback_reason: str = ""
    ) -> ChainResult:
        """The article of ``page`` with the site's ``model`` (None: a site never seen, or
        one not learned yet; ``fallback_reason`` says why). A :class:`Page` keeps the
        blocks built here, for the headline."""
        page = Page.of(page)
        deadline = None if self.time_budget is None else time.monotonic() + self.time_budget
        readings, facts = self.readings(page, model, deadline)
        try:
            decision = decide(readings, facts, self.settings)
            result = self._result(page, readings, facts, decision, model, fallback_reason)
        except Exception as error:  # a bug met on an odd page must not lose the page
            readings.errors.append(ReaderError("the decision", error))
            result = self._after_error(readings, error)
        # A peer's failure is one voice less, not ours to count (the note names it).
        result.errors = [error for error in readings.errors if error.stage not in PEER_READINGS]
        if not result.extraction.text and result.method != DENSITY:  # never empty
            fallback = readings[DENSITY]
            if fallback.text:
                found_nothing = f"{result.method} found nothing; text density"
                result.note = "; ".join(filter(None, [result.note, found_nothing]))
                result.extraction, result.method = fallback, DENSITY
        return result

    def _result(
        self,
        page: Page,
        readings: PageReadings,
        facts: PageFacts,
        decision: Decision,
        model: SiteModel | None,
        fallback_reason: str,
    ) -> ChainResult:
        extraction = readings[decision.source]
        if decision.agreement is not None:
            extraction.confidence = decision.agreement
        notes = [decision.why]
        if model is None and not page.plain:
            notes.insert(0, fallback_reason)
        rejected = page.get("fast_path_rejected")
        if rejected and not page.plain:
            notes.insert(0, f"rendered: the fast path failed ({rejected})")
        if readings.late and "time budget" not in decision.why:
            notes.append(self._over_budget())
        if readings.errors and "failed (" not in decision.why:
            notes.append("; ".join(f"{e.describe()} in {e.stage}" for e in readings.errors))
        if page.plain and page.get("render_failed"):
            notes.insert(0, f"the browser failed ({page['render_failed']})")
            notes.append("" if decision.why else "the rules")
        elif page.plain and page.get("render_skipped"):
            notes.insert(0, page["render_skipped"])
        note = "; ".join(filter(None, notes))
        return ChainResult(
            extraction, decision.method or decision.source, note,
            of_no_layout=decision.of_no_layout, rules_check=decision.rules_check,
        )  # fmt: skip

    def _over_budget(self) -> str:
        return f"the page's time budget was spent ({self.time_budget:g} s): the peers not asked"

    def _after_error(self, readings: PageReadings, error: Exception) -> ChainResult:
        """Text density's article where the decision raised; an empty one only where
        density fails too."""
        note = f"{describe_error(error)} in the decision"
        density = readings[DENSITY]
        if getattr(density, "error", ""):
            note = f"{note}; {density.error} in text density"
            return ChainResult(DensityResult("cectd-ds", reason=note), DENSITY, note)
        return ChainResult(density, DENSITY, f"{note}; text density")

    def consensus_articles(self, pages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """``pages`` (rendered training pages), each with its article as a site never seen
        gets it, the readers' agreement on it and each reader's own article
        (``consensus_article``): the votes a site model's parser is induced from
        (:mod:`spidercrawl.learn.parser`), and its labels where they come from the consensus
        (:mod:`spidercrawl.learn.consensus_labels`). A page the readers fail on goes
        without (the site model's mask alone reads it)."""
        if self.cross_site is None:
            return list(pages)
        out: list[Mapping[str, Any]] = []
        for item in pages:
            if CONSENSUS_FIELD in item or not item.get("texts"):
                out.append(item)
                continue
            page = Page.of(item)
            readings, facts = self.readings(page, None)
            try:
                decision = decide(readings, facts, self.settings)
                chosen = readings[decision.source]
                read = [readings.text(name) for name in (BLOCKS, TRAFILATURA, READABILITY)
                        if facts.peers_read or name == BLOCKS]  # fmt: skip
            except Exception as error:  # one odd page: read by the site model alone
                logger.info("No consensus article of %s to learn from: %s", item.get("url"), error)
                out.append(item)
                continue
            agreement = decision.agreement if decision.why and decision.agreement else 0.0
            article = ConsensusArticle(chosen.text, float(agreement), read)
            out.append({**item, CONSENSUS_FIELD: article.as_field()})
        return out
