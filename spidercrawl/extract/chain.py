"""The one extraction chain: which extractor makes a page's article, in which order, and
what happens when one fails. The crawl's pipeline, extraction without a crawl and the
evaluation all call :meth:`ExtractionChain.extract`, so what is scored is what is
delivered.

Stages, in order:

1. A page fetched without a browser (the fast path, ``extract_html``, a page whose render
   failed): the site model's extraction rules where they pass their check
   (:func:`~spidercrawl.extract.item.plain_rules`) and an independent reading of the same
   raw HTML agrees with them (first the page's prose on the tree the rules parsed,
   :mod:`spidercrawl.document.prose`; where it does not agree, text density's), else the
   consensus of the readers of raw HTML (text density, readability, trafilatura, and the
   rules' article where it was doubted: :mod:`spidercrawl.extract.raw_consensus`);
   without the peers, text density.
2. A rendered page of a learned site: the layout's parser on the DOM where it serves the
   layout and passes its check, else the site model (its layout's classifier; the
   cross-site extractor less the site's template, the article container or text density
   where the model does not fit the page:
   :func:`~spidercrawl.extract.article.learned_extraction`), then the peers' check where
   the model is not sure (:meth:`~spidercrawl.extract.consensus.ConsensusExtractor.
   confirm_learned`).
3. A rendered page of a site with no model: the consensus of our blocks and the peers
   (:mod:`spidercrawl.extract.consensus`); without the peers, our blocks alone; without
   the cross-site model, text density.
   Stages 1 to 3 run the peers last, and only within the page's time budget
   (``time_budget`` seconds from the chain's start, ``EXTRACT_TIME_BUDGET`` in a crawl):
   past it, our own article stands and the note says so.
4. Where the extractor of stage 1-3 raises, the next makes the article: the consensus
   (when a site model raised on a rendered page: its parser or its classifier), then
   text density; the note names the error, and :attr:`ChainResult.errors` lists it for
   the caller to count.
5. Never empty where text density finds text.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.density import DensityResult
from spidercrawl.extract.article import learned_extraction
from spidercrawl.extract.cold_start import cold_start_extraction
from spidercrawl.extract.consensus import ConsensusExtractor, deadline_passed
from spidercrawl.extract.item import plain_rules
from spidercrawl.extract.raw_consensus import DENSITY, RULES, RawHtmlConsensus
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.page import Page

# What a learned site's fallback took instead of the model's own article, for the note.
_INSTEAD = {
    "learned+container": "the site's article container",
    "learned+unseen": "what a site never seen gets",
}


@dataclass
class ExtractorError:
    """An extractor that raised on a page, and what it raised."""

    stage: str
    error: BaseException

    def describe(self) -> str:
        return describe_error(self.error)


def describe_error(error: BaseException) -> str:
    """An exception as its type and first line, for a note or a log line."""
    first = (str(error).strip().splitlines() or [""])[0][:160]
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


@dataclass
class ChainResult:
    """A page's article as the chain made it: the extraction, the method that made it, why
    (the note) and the errors met."""

    extraction: Any
    method: str
    note: str
    errors: list[ExtractorError] = field(default_factory=list)
    of_no_layout: bool = False  # a learned site's page of no layout its model knows
    # A page read without a browser (the fast path's, extract_html's): how its rules'
    # article was checked: which reading confirmed it (``prose``, ``density``), or
    # ``doubted`` (text density disagreed and the readers of raw HTML decided, maybe for
    # the rules); "" where no check ran.
    rules_check: str = ""


class ExtractionChain:
    """The stages of the module doc, with the extractors a run has (each may be None: no
    cross-site model, no peers on rendered pages, no peers on raw HTML)."""

    def __init__(
        self,
        unseen: UnseenExtractor | None = None,
        consensus: ConsensusExtractor | None = None,
        time_budget: float | None = None,
        raw: RawHtmlConsensus | None = None,
        check_rules: bool = True,
    ) -> None:
        self.unseen = unseen
        self.consensus = consensus
        self.time_budget = time_budget
        self.raw = raw  # the readers of raw HTML (None: text density alone)
        self.check_rules = check_rules  # the fast path's independent check (needs ``raw``)

    def extract(
        self,
        page: Mapping[str, Any],
        model: SiteModel | None,
        fallback_reason: str = "",
    ) -> ChainResult:
        """The article of ``page`` with the site's ``model`` (None: a site never seen, or
        one not learned yet; ``fallback_reason`` says why). A :class:`Page` keeps the
        blocks built here, for the headline."""
        page = Page.of(page)
        errors: list[ExtractorError] = []
        deadline = None if self.time_budget is None else time.monotonic() + self.time_budget
        try:
            result = self._first(page, model, fallback_reason, deadline)
        except Exception as error:  # a bug met on an odd page must not lose the page
            result = ChainResult(*self._after_error(page, model, error, errors))
        result.errors = errors
        # Never empty where text density finds text.
        if not result.extraction.text and result.method != "density":
            fallback = cold_start_extraction(page)
            if fallback.text:
                found_nothing = f"{result.method} found nothing; text density"
                result.note = "; ".join(filter(None, [result.note, found_nothing]))
                result.extraction, result.method = fallback, "density"
        return result

    def _first(
        self,
        page: Page,
        model: SiteModel | None,
        fallback_reason: str,
        deadline: float | None = None,
    ) -> ChainResult:
        """Stages 1 to 3 (the article, its method and note, whether the page is of no layout
        the site's model knows); the peers only before ``deadline`` (``time.monotonic()``)."""
        note = page.get("fast_path_rejected") or ""
        if note:
            note = f"rendered: the fast path failed ({note})"
        if page.plain:
            plain = self._plain(page, model, deadline)
            if page.get("render_failed"):
                failed = page["render_failed"]
                plain.note = f"the browser failed ({failed}); {plain.note or 'the rules'}"
            elif page.get("render_skipped"):
                plain.note = "; ".join(filter(None, [page["render_skipped"], plain.note]))
            return plain
        if model is not None:
            learned = learned_extraction(page, model, self.unseen)
            if self.consensus is not None and not deadline_passed(deadline):
                learned, peer = self.consensus.confirm_learned(page, learned)
                note = "; ".join(filter(None, [note, peer]))
            elif self.consensus is not None:
                note = "; ".join(filter(None, [note, self._over_budget()]))
            if learned.reason:
                instead = _INSTEAD.get(learned.method, "text density")
                note = "; ".join(filter(None, [note, f"{learned.reason}; {instead} instead"]))
            return ChainResult(
                learned.extraction, learned.method, note, of_no_layout=learned.of_no_layout
            )
        if self.consensus is not None:
            own = self.consensus.unseen.extract(page)  # as ConsensusExtractor.extract
            if deadline_passed(deadline):
                how = self._over_budget()
            else:
                own, how = self.consensus.vote(page, own)
            return ChainResult(own, "unseen", "; ".join(filter(None, [fallback_reason, how])))
        if self.unseen is not None:
            return ChainResult(self.unseen.extract(page), "unseen", fallback_reason)
        extraction = cold_start_extraction(page)
        note = fallback_reason
        if not extraction.text and extraction.reason:
            note = f"{note}; {extraction.reason}" if note else extraction.reason
        return ChainResult(extraction, "density", note)

    def _plain(
        self, page: Page, model: SiteModel | None, deadline: float | None = None
    ) -> ChainResult:
        """Stage 1: the rules' article, checked; else the raw-HTML consensus or density
        (the peers only before ``deadline``)."""
        rules, why = plain_rules(page, model)
        if rules is not None and (self.raw is None or not self.check_rules):
            return ChainResult(rules, "rules", "")
        if rules is not None and rules.prose.agrees_with(len(rules.text.split())):
            return ChainResult(rules, "rules", "", rules_check="prose")  # no more asked
        density = cold_start_extraction(page)
        check = ""
        if rules is not None:
            choice = self.raw.check_rules(page, rules, density, deadline)
            check = "density" if choice.source == RULES and not choice.note else "doubted"
        elif self.raw is not None:
            choice = self.raw.extract(page, density, deadline)
        else:
            return ChainResult(density, "density", f"{why}: text density on the raw HTML")
        method = choice.source if choice.source in (RULES, DENSITY) else "raw-consensus"
        note = "; ".join(filter(None, [why, choice.note]))
        return ChainResult(choice.extraction, method, note, rules_check=check)

    def _over_budget(self) -> str:
        return f"the page's time budget ({self.time_budget:g} s) was spent: the peers not asked"

    def _after_error(
        self,
        page: Page,
        model: SiteModel | None,
        error: Exception,
        errors: list[ExtractorError],
    ) -> tuple[Any, str, str]:
        """Stage 4: the consensus where the site model (its parser or its classifier)
        raised, else text density; an empty article only where density raises too."""
        errors.append(ExtractorError("extraction", error))
        note = f"{errors[-1].describe()} in the first extractor"
        if model is not None and not page.plain and self.consensus is not None:
            try:
                extraction, how = self.consensus.extract(page)
                return extraction, "unseen", f"{note}; {how}"
            except Exception as second:
                errors.append(ExtractorError("the never-seen consensus", second))
                note = f"{note}; {errors[-1].describe()} in the never-seen consensus"
        try:
            return cold_start_extraction(page), "density", f"{note}; text density"
        except Exception as last:
            errors.append(ExtractorError("text density", last))
            reason = f"{note}; {errors[-1].describe()} in text density"
            return DensityResult("cectd-ds", reason=reason), "density", reason
