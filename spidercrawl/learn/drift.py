"""Whether a site's model still fits its pages (template drift, new layouts), and when to
learn again after a failed learning: decided without a crawler.

The learning pipeline tells :class:`DriftWatch` of each page a site model extracted:
whether the model fitted it (its classifier or its rules made the article) and whether
the page is of no layout the model knows. The watch keeps the last ``window`` verdicts and
the recent pages the model did not fit, and answers what to do:

- :attr:`FitVerdict.DRIFT`: at least ``max_failure_share`` of the last ``window`` pages
  failed: the site changed its template; learn it again from the recent misfits
  (:meth:`DriftWatch.take_misfits`).
- :attr:`FitVerdict.NEW_LAYOUT`: ``min_pages`` recent pages fitted no layout (or failed)
  while most pages still fit: a layout the training pages missed; learn it beside the
  others.
- :attr:`FitVerdict.KEEP`: nothing to do.

Pages of no known layout do not count as failures where layouts are collected
(``collects_layouts``): a new section is not a new template. Scrapy, stats and signals
stay in the pipeline (:mod:`spidercrawl.pipelines.learning`), which acts on the verdict.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from enum import Enum
from typing import Any


class FitVerdict(Enum):
    KEEP = "keep"
    NEW_LAYOUT = "new layout"
    DRIFT = "drift"


class DriftWatch:
    """The recent fit of one site's model (see the module doc)."""

    def __init__(self, window: int, max_failure_share: float, min_pages: int) -> None:
        self.window = max(1, window)
        self.max_failure_share = max_failure_share
        self.min_pages = max(1, min_pages)
        self.fits: deque[bool] = deque(maxlen=self.window)
        self.misfits: deque[Mapping[str, Any]] = deque(maxlen=self.min_pages)

    def observe(
        self,
        page: Mapping[str, Any],
        fitted: bool,
        of_no_layout: bool = False,
        collects_layouts: bool = True,
    ) -> FitVerdict:
        """Record one extracted page; what to do now. A rendered page the model did not fit
        is kept (a page without blocks cannot be learned from)."""
        if not fitted and of_no_layout and collects_layouts:
            self._keep_misfit(page)
            return self._new_layout_or_keep()
        self.fits.append(fitted)
        if not fitted:
            self._keep_misfit(page)
        if len(self.fits) >= self.window and self.failures >= self.max_failure_share * len(
            self.fits
        ):
            return FitVerdict.DRIFT
        return self._new_layout_or_keep()

    @property
    def failures(self) -> int:
        return self.fits.count(False)

    def take_misfits(self) -> list[Mapping[str, Any]]:
        """The recent pages the model did not fit (for a new model or layout), no longer
        kept here."""
        pages = list(self.misfits)
        self.misfits.clear()
        return pages

    def restart(self) -> None:
        """A new model is in use: its fit is watched from nothing."""
        self.fits.clear()
        self.misfits.clear()

    def _keep_misfit(self, page: Mapping[str, Any]) -> None:
        if page.get("texts"):
            self.misfits.append(page)

    def _new_layout_or_keep(self) -> FitVerdict:
        return FitVerdict.NEW_LAYOUT if len(self.misfits) >= self.min_pages else FitVerdict.KEEP


class LearningRetries:
    """After a failed learning, when to try again and from which pages, without a crawler.

    The failed try's pages are kept; once ``min_pages`` more rendered pages have come
    (extracted meanwhile as pages of a site never seen), :meth:`observe` hands back all of
    them (the newest ``max_pages``) to learn from, up to ``max_tries`` tries a crawl. One
    unlucky set of first pages no longer costs the whole crawl its model."""

    def __init__(self, min_pages: int, max_pages: int, max_tries: int) -> None:
        self.min_pages = max(1, min_pages)
        self.max_pages = max(self.min_pages, max_pages)
        self.max_tries = max_tries
        self.failed = 0  # tries that failed
        self.pages: list[Mapping[str, Any]] = []  # what the next try learns from
        self.since_failure = 0  # rendered pages since the last failure

    @property
    def waiting(self) -> bool:
        """Whether another try is planned."""
        return bool(self.pages)

    def failed_on(self, pages: list[Mapping[str, Any]], may_retry: bool = True) -> bool:
        """A try failed on ``pages``; whether another will be made (not past ``max_tries``,
        and not where ``may_retry`` is False: with Redis one worker learns, once)."""
        self.failed += 1
        self.pages, self.since_failure = [], 0
        if not may_retry or self.failed >= self.max_tries:
            return False
        self.pages = pages[-self.max_pages :]
        return True

    def succeeded(self) -> None:
        self.pages, self.since_failure = [], 0

    def observe(self, page: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
        """Count an extracted page towards the next try; the pages to learn from once it is
        due, else None."""
        if page.get("texts") and not page.get("render_failed"):
            self.pages = [*self.pages, page][-self.max_pages :]
            self.since_failure += 1
        return self.pages if self.since_failure >= self.min_pages else None
