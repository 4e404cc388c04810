"""Learn each site's article template from its first pages, then extract every page.

``SiteLearningPipeline`` turns page items into article items. For a site with a saved
model (``MODELS_DIR/<site>/``) it extracts at once. Otherwise it holds the site's pages
until ``LEARN_MIN_PAGES`` have arrived, learns a model from them (saved for later crawls),
and releases the held pages as articles; later pages are extracted as they come.

A site that never reaches the threshold is settled when nothing but held pages is left in
the crawl (and at the latest when the spider closes): learned from what there is if that
is at least ``LEARN_MIN_PAGES_AT_END`` pages, else extracted by text density. Each article
says which method made it and why, so no page is dropped silently.

Settings (defaults in ``spidercrawl/settings.py``): ``LEARN_ENABLED``, ``LEARN_MIN_PAGES``,
``LEARN_MIN_PAGES_AT_END``, ``MODELS_DIR``, ``LEARN_SIMILARITY``, ``LEARN_DBSCAN_EPS``,
``LEARN_DBSCAN_MIN_PAGE_SHARE``, ``LEARN_SEED``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from spidercrawl.extract.article import cold_start_extraction, learned_extraction
from spidercrawl.items import ArticleItem
from spidercrawl.learn.model import SiteModel

logger = logging.getLogger(__name__)

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def model_folder(models_dir: Path, site: str) -> Path:
    """``MODELS_DIR/<site>``, with the site name made safe as a folder name."""
    return models_dir / (_UNSAFE_NAME.sub("_", site).strip("._") or "site")


@dataclass
class SiteState:
    """What the pipeline knows of one site during a crawl."""

    model: SiteModel | None = None
    held: list[tuple[dict[str, Any], asyncio.Future]] = field(default_factory=list)
    settled: bool = False  # a model is in use, or the site fell back to text density
    fallback_reason: str = ""


def article_item(
    page: Mapping[str, Any], extraction: Any, method: str, model: SiteModel | None, note: str = ""
) -> ArticleItem:
    """The article item of one page, from whichever extraction was used."""
    og = page.get("og") or {}
    titles = [t for t in [og.get("og:title"), *(page.get("titles") or [])] if t]
    descriptions = [d for d in page.get("descriptions") or [] if d]
    text = extraction.text if extraction is not None else ""
    return ArticleItem(
        url=page.get("url"),
        canonical_url=page.get("canonical_url") or page.get("url"),
        site=page.get("site"),
        title=titles[0] if titles else "",
        description=descriptions[0] if descriptions else "",
        text=text,
        html=extraction.html if extraction is not None else "",
        lang=page.get("lang") or "",
        method=method,
        method_note=note,
        model_version=model.version_ if model is not None else "",
        confidence=getattr(extraction, "confidence", 0.5 if text else 0.0),
        word_count=len(text.split()),
        crawled_at=page.get("crawled_at"),
    )


class SiteLearningPipeline:
    """Page items in, article items out; one model per site, learned without labels."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("LEARN_ENABLED"):
            raise NotConfigured("LEARN_ENABLED is off: page items pass through unchanged")
        self.crawler = crawler
        self.min_pages = max(1, settings.getint("LEARN_MIN_PAGES"))
        self.min_pages_at_end = max(1, settings.getint("LEARN_MIN_PAGES_AT_END"))
        self.models_dir = Path(settings.get("MODELS_DIR"))
        eps = settings.get("LEARN_DBSCAN_EPS")
        self.model_params = {
            "similarity": settings.get("LEARN_SIMILARITY"),
            "eps": float(eps) if eps not in (None, "", "None") else None,
            "min_page_share": settings.getfloat("LEARN_DBSCAN_MIN_PAGE_SHARE"),
            "random_state": settings.getint("LEARN_SEED"),
        }
        self.sites: dict[str, SiteState] = {}
        self.watchdog = task.LoopingCall(self._settle_if_only_held_pages_left)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteLearningPipeline:
        pipeline = cls(crawler)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    # -- signals ----------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.watchdog.start(1.0, now=False)

    def spider_closed(self, spider: Spider) -> None:
        if self.watchdog.running:
            self.watchdog.stop()
        self._settle_all("the crawl ended")

    # -- items ------------------------------------------------------------------------------
    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "texts" not in adapter:  # not a page item: not ours to change
            return item
        page = adapter.asdict()
        site = str(page.get("site") or "unknown")
        state = self.sites.get(site)
        if state is None:
            state = self.sites[site] = SiteState(model=self._saved_model(site))
            state.settled = state.model is not None
        if state.settled:
            return self._extract(page, state)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        state.held.append((page, future))
        if len(state.held) == 1:
            logger.info(
                "%s: no model yet; holding pages until %d have arrived", site, self.min_pages
            )
        if len(state.held) >= self.min_pages:
            self._settle(site, state, f"{len(state.held)} pages arrived")
        return await future

    # -- learning ---------------------------------------------------------------------------
    def _saved_model(self, site: str) -> SiteModel | None:
        folder = model_folder(self.models_dir, site)
        if not SiteModel.exists(folder):
            return None
        try:
            model = SiteModel.load(folder)
        except Exception as error:  # a broken or old model file: learn again
            logger.warning(
                "%s: cannot load the model in %s (%s); learning anew", site, folder, error
            )
            return None
        logger.info("%s: using the saved model %s from %s", site, model.version_, folder)
        return model

    def _settle(self, site: str, state: SiteState, why: str) -> None:
        """Learn from the held pages (or fall back) and release them as articles."""
        pages = [page for page, _ in state.held]
        state.settled = True
        if len(pages) >= min(self.min_pages, self.min_pages_at_end):
            started = time.perf_counter()
            try:
                state.model = SiteModel(**self.model_params).fit(pages)
            except ValueError as error:
                state.fallback_reason = f"could not learn from {len(pages)} pages: {error}"
            else:
                folder = state.model.save(model_folder(self.models_dir, site))
                logger.info(
                    "%s: learned a model from %d pages (%s) in %.1f s; saved to %s",
                    site, len(pages), why, time.perf_counter() - started, folder,
                )  # fmt: skip
        else:
            state.fallback_reason = (
                f"only {len(pages)} pages (fewer than LEARN_MIN_PAGES_AT_END="
                f"{self.min_pages_at_end}) to learn from"
            )
        if state.model is None:
            logger.warning("%s: %s; extracting by text density", site, state.fallback_reason)
            self.crawler.stats.inc_value("spidercrawl/learn/fallback_sites")
        held, state.held = state.held, []
        for page, future in held:
            if not future.done():
                future.set_result(self._extract(page, state))

    def _settle_all(self, why: str) -> None:
        for site, state in self.sites.items():
            if state.held:
                self._settle(site, state, why)

    def _settle_if_only_held_pages_left(self) -> None:
        """Settle waiting sites when the crawl has nothing else to do (else it would wait
        for them forever: held pages keep the engine from going idle)."""
        held = sum(len(state.held) for state in self.sites.values())
        if held and _only_held_items_left(self.crawler, held):
            self._settle_all("no more pages are coming")

    def _extract(self, page: dict[str, Any], state: SiteState) -> ArticleItem:
        stats = self.crawler.stats
        if state.model is not None:
            extraction, method = learned_extraction(page, state.model)
            note = "" if method == "learned" else "the model found almost nothing on this page"
        else:
            extraction, method, note = cold_start_extraction(page), "density", state.fallback_reason
            if not extraction.text and extraction.reason:
                note = f"{note}; {extraction.reason}" if note else extraction.reason
        stats.inc_value(f"spidercrawl/articles/{method}")
        if not extraction.text:
            stats.inc_value("spidercrawl/articles/empty")
            logger.warning("No article text on %s (%s)", page.get("url"), note or method)
        return article_item(page, extraction, method, state.model, note)


def _only_held_items_left(crawler: Crawler, held: int) -> bool:
    """True when the engine waits for nothing but the pages this pipeline holds.

    Reads Scrapy's engine state (the same checks as ``ExecutionEngine.spider_is_idle``,
    which cannot be used itself because held items count as work in progress).
    """
    engine = crawler.engine
    if engine is None or engine.scraper.slot is None:
        return False
    if len(engine.scraper.slot.active) > held or engine.downloader.active:
        return False
    scheduler = engine.scheduler
    scheduler_empty = scheduler is None or not scheduler.has_pending_requests()
    starting = getattr(engine, "_start", None) is not None  # start requests not all read
    return (scheduler_empty and not starting) or engine.needs_backout()
