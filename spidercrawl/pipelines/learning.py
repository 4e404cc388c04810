"""Page items in, article items out: each site learned from its first pages.

``SiteLearningPipeline`` connects the site learner (``SITE_LEARNER``,
:mod:`spidercrawl.learn.site_learner`: holds a site's first pages, learns its model,
notices drift and new layouts) to Scrapy: a held page's item waits on a future until its
site settles; the learner's events become stats and signals. Every article is made by the
extraction chain (:mod:`spidercrawl.extract.chain`): the site model where the site has one,
else the never-seen consensus; pages read in breadth mode (``RENDER=learning``) are
extracted at once from their raw HTML, not held.

Rendered pages that are not articles (home, section, tag pages; see
:mod:`spidercrawl.extract.page_kind`) are dropped with a log line and counted
(``ARTICLES_ONLY``); every other page becomes an article, none is dropped silently: an
extractor that raises is counted and the next one makes the article.

Settings (defaults in ``spidercrawl/settings.py``, meaning in ``docs/settings.md``):
``LEARN_ENABLED``, ``SITE_LEARNER``, ``MODELS_DIR``, ``MODEL_VERSIONS_KEPT``,
``UNSEEN_ENABLED``, ``UNSEEN_CONSENSUS``, ``CROSS_SITE_MODEL_DIR``, ``ARTICLES_ONLY``,
``RAW_CONSENSUS``, ``FAST_PATH_CHECK``, ``EXTRACT_TIME_BUDGET``, ``ARTICLE_HEADLINE_IN_TEXT``;
the learner's own in :mod:`spidercrawl.learn.site_learner`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.misc import load_object
from twisted.internet import task

from spidercrawl.document import language
from spidercrawl.document.captured import Page
from spidercrawl.extract.chain import ExtractionChain, describe_error
from spidercrawl.extract.item import article_item
from spidercrawl.extract.metadata import SiteTitles
from spidercrawl.extract.page_kind import page_kind
from spidercrawl.extract.readers import Peers
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.items import ArticleItem
from spidercrawl.learn.model import LearningError, SiteModel
from spidercrawl.learn.site_learner import HeldPage, SiteLearner
from spidercrawl.learn.store import ModelStore
from spidercrawl.signals import redis_lost, site_model_changed, site_needs_browser

logger = logging.getLogger(__name__)

# Methods by which a site model extracted a page itself (its layouts fit the page).
FITTED_METHODS = frozenset({"rules", "learned", "learned+consensus"})


class SiteLearningPipeline:
    """Page items in, article items out; one model per site, learned without labels.

    The learning itself (held pages, drift, new layouts, retries) is the site learner's
    (``SITE_LEARNER``, :mod:`spidercrawl.learn.site_learner`); this connects it to Scrapy
    (a future per held page, stats, signals) and makes the articles by the extraction
    chain (:mod:`spidercrawl.extract.chain`)."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("LEARN_ENABLED"):
            raise NotConfigured("LEARN_ENABLED is off: page items pass through unchanged")
        self.crawler = crawler
        self.headline_in_text = settings.getbool("ARTICLE_HEADLINE_IN_TEXT")
        self.articles_only = settings.getbool("ARTICLES_ONLY")
        self.unseen = _unseen_extractor(settings) if settings.getbool("UNSEEN_ENABLED") else None
        on_rendered = self.unseen is not None and settings.getbool("UNSEEN_CONSENSUS")
        on_raw = settings.getbool("RAW_CONSENSUS")
        self.chain = ExtractionChain(
            self.unseen,
            Peers() if on_rendered or on_raw else None,
            settings.getfloat("EXTRACT_TIME_BUDGET"),
            settings.getbool("FAST_PATH_CHECK"),
            peers_on_rendered=on_rendered,
            peers_on_raw=on_raw,
        )
        self.titles: dict[str, SiteTitles] = {}  # each site learns its own name
        store = ModelStore(Path(settings.get("MODELS_DIR")), settings.getint("MODEL_VERSIONS_KEPT"))
        learner_class = load_object(settings.get("SITE_LEARNER"))
        self.learner: SiteLearner = learner_class.from_settings(settings, store, self)
        self.watchdog = task.LoopingCall(self._settle_if_only_held_pages_left)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteLearningPipeline:
        pipeline = cls(crawler)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(pipeline.redis_lost, signal=redis_lost)
        return pipeline

    @property
    def sites(self) -> dict[str, Any]:
        """Each site's learning state (the learner's)."""
        return self.learner.sites

    # -- signals ----------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.watchdog.start(1.0, now=False)
        language.load_in_background()

    def spider_closed(self, spider: Spider) -> None:
        if self.watchdog.running:
            self.watchdog.stop()
        try:
            self.learner.settle_all("the crawl ended", final=True)
        except DropItem as error:  # Redis is gone: held pages stay in flight there
            self._let_go(error)

    def redis_lost(self, error: Exception) -> None:
        """Redis stopped answering: the held pages are let go at once (their sites cannot
        settle without it, and held they keep the engine from closing)."""
        from spidercrawl.distributed import RedisDownError

        self._let_go(RedisDownError(f"Redis stopped answering ({error})"))

    def _let_go(self, error: DropItem) -> None:
        """Fail every held page with ``error``: not delivered, it stays in flight in Redis
        and the next worker crawls it again."""
        held = [h for h in self.learner.take_all_held() if not h.waiter.done()]
        if held:
            logger.warning(
                "%d held pages not extracted (%s); they wait in Redis for the next worker",
                len(held), error,
            )  # fmt: skip
        for entry in held:
            entry.waiter.set_exception(error)

    # -- the learner's host -----------------------------------------------------------------
    def release(self, site: str, held: list[HeldPage]) -> None:
        """The site settled: its held pages become articles."""
        for entry in held:
            if not entry.waiter.done():
                entry.waiter.set_result(self._extract(entry.page))

    def model_changed(self, site: str, model: SiteModel | None) -> None:
        self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=model)

    def needs_browser(self, site: str, reason: str) -> None:
        self.crawler.signals.send_catch_log(signal=site_needs_browser, site=site, reason=reason)

    def count(self, stat: str) -> None:
        self.crawler.stats.inc_value(f"spidercrawl/{stat}")

    def with_consensus_articles(self, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.chain.peers is None or not self.chain.peers_on[False]:
            return pages
        return self.chain.consensus_articles(pages)

    # -- items ------------------------------------------------------------------------------
    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "texts" not in adapter:  # not a page item: not ours to change
            return item
        page = Page(dict(adapter.items()))  # shallow: the pipeline only reads nested values
        site = page.site
        state = self.learner.state(site)
        self.titles.setdefault(site, SiteTitles()).observe(page)
        if self.articles_only and page.get("texts"):
            try:
                self._drop_if_not_article(page, state.model)
            except DropItem:
                raise
            except Exception as error:  # taken for an article: delivered, not lost
                self._count_error(page, "the page-kind check", error)
        if state.settled:
            article, of_no_layout = self._extracted(page)
            fitted = article["method"] in FITTED_METHODS
            self.learner.observe(site, page.item, fitted, of_no_layout)
            return article
        if page.get("render_skipped"):  # breadth mode: read from its raw HTML now, not held
            self.count("learn/read_unlearned_from_raw_html")
            return self._extract(page)
        if state.before_drift is not None:
            known = self._extract(page, model=state.before_drift)
            if known["method"] in FITTED_METHODS:
                # A page of a layout the site still has (sent before the template changed,
                # or from its archive): extracted by it, and kept out of the new layout.
                self.count("learn/known_layout_while_relearning")
                return known
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        try:
            self.learner.hold(site, page.item, future)  # the item only: no blocks are held
        except DropItem:  # Redis is gone: the page is not held, but dropped (in flight)
            future.cancel()
            raise
        return await future

    def _drop_if_not_article(self, page: Page, model: SiteModel | None) -> None:
        """Home, section and tag pages are neither learned from nor delivered. A learned
        site's own shortest articles set the bar for prose."""
        learned_minimum = model.shortest_article_chars() if model is not None else None
        kind = page_kind(page, learned_minimum)
        self.count(f"pages/kind/{kind.kind}")
        if kind.is_article:
            return
        logger.info("Not an article (%s): %s (%s)", kind.kind, page.get("url"), kind.reason)
        raise DropItem(f"not an article ({kind.kind}): {page.get('url')}", log_level="DEBUG")

    def _settle_if_only_held_pages_left(self) -> None:
        """Settle waiting sites when the crawl has nothing else to do (else it would wait
        for them forever: held pages keep the engine from going idle). A shared learner
        first looks for a model another worker published."""
        try:
            self.learner.tick()
            held = self.learner.held_count()
            if held and _only_held_items_left(self.crawler, held):
                self.learner.settle_all("no more pages are coming")
        except DropItem as error:  # Redis is gone (RedisDownError): the worker is stopping
            logger.debug("Waiting sites not settled: %s", error)
        except Exception:  # a failure here must not stop the watchdog (held pages wait on it)
            logger.exception("Settling the waiting sites failed; trying again in a second")

    def _extract(self, page: Mapping[str, Any], model: SiteModel | None = None) -> ArticleItem:
        """The page's article item (see :meth:`_extracted`)."""
        return self._extracted(page, model)[0]

    def _extracted(
        self, page: Mapping[str, Any], model: SiteModel | None = None
    ) -> tuple[ArticleItem, bool]:
        """The page's article item, made by the extraction chain
        (:mod:`spidercrawl.extract.chain`), and whether the page is of no layout the site's
        model knows; ``model``: another model than the site's current one (the one before
        drift). The page's blocks are built once, for extraction and headline.
        An extractor that raised is counted (``spidercrawl/articles/extractor_errors``,
        and in the site's summary line) and logged; the next one made the article."""
        stats = self.crawler.stats
        page = Page.of(page)
        state = self.learner.state(page.site)
        model = model or state.model
        result = self.chain.extract(page, model, state.fallback_reason)
        for error in result.errors:
            self._count_error(page, error.stage, error.error)
        extraction, method, note = result.extraction, result.method, result.note
        stats.inc_value(f"spidercrawl/articles/{method}")
        if result.rules_check:  # how the fast path's article was checked
            stats.inc_value(f"spidercrawl/fast_path/check/{result.rules_check}")
        if not extraction.text:
            stats.inc_value("spidercrawl/articles/empty")
            logger.warning("No article text on %s (%s)", page.get("url"), note or method)
        names = self.titles.setdefault(page.site, SiteTitles()).names()
        try:
            item = article_item(page, extraction, method, model, note, names, self.headline_in_text)
        except Exception as error:  # metadata or headline: the text is delivered without
            self._count_error(page, "the article's metadata", error)
            item = article_item(
                {key: page.get(key) for key in ("url", "site", "crawled_at", "validators",
                                                 "page_digest")},
                extraction, method, None, f"{note}; metadata left out ({describe_error(error)})",
            )  # fmt: skip
        return item, result.of_no_layout

    def _count_error(self, page: Mapping[str, Any], stage: str, error: BaseException) -> None:
        """An extractor raised on a page: a stat (overall and for the site's summary line)
        and one warning with the traceback."""
        site = str(page.get("site") or "unknown")
        self.count("articles/extractor_errors")
        self.count(f"site/{site}/extractor_errors")
        logger.warning(
            "%s: %s failed on %s (%s); the next extractor makes the article",
            site, stage, page.get("url"), describe_error(error), exc_info=error,
        )  # fmt: skip


def _unseen_extractor(settings: Any) -> UnseenExtractor | None:
    """The extractor for sites without a model; None (text density then) if it cannot load."""
    folder = settings.get("CROSS_SITE_MODEL_DIR") or None
    try:
        return UnseenExtractor.load(Path(folder) if folder else None)
    except (OSError, LearningError, ValueError) as error:
        logger.warning(
            "No cross-site model (%s): sites without a model are extracted by text density",
            error,
        )
        return None


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
