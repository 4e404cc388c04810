"""Learn each site's article template from its first pages, then extract every page.

``SiteLearningPipeline`` turns page items into article items. For a site with a saved
model (``MODELS_DIR/<site>/``) it extracts at once. Otherwise it holds the site's pages
until ``LEARN_MIN_PAGES`` have arrived, learns a model from them (saved for later crawls),
and releases the held pages as articles; later pages are extracted as they come.

A site that never reaches the threshold is settled when nothing but held pages is left in
the crawl (and at the latest when the spider closes): learned from what there is if that
is at least ``LEARN_MIN_PAGES_AT_END`` pages, else extracted as a site never seen: the
consensus of the cross-site model with text density and two peers on the raw HTML
(``method: unseen``, :mod:`spidercrawl.extract.consensus`; ``CROSS_SITE_MODEL_DIR``, by
default the model shipped in ``models/_cross_site``), or text density alone (``density``)
when ``UNSEEN_ENABLED`` is off or that model cannot be loaded; where an extractor finds
nothing, text density on the page's HTML. Each article says which method made it and why.

Rendered pages that are not articles (home, section, tag pages; see
:mod:`spidercrawl.extract.page_kind`) are dropped with a log line and counted
(``ARTICLES_ONLY``); every other page becomes an article, none is dropped silently.

Pages that came by the fast path (plain HTTP, see :mod:`spidercrawl.extract.fast_path`) are
cut by the model's extraction rules (``method: rules``), checked against text density's
reading of the same raw HTML; pages read in breadth mode (``RENDER=learning``) are
extracted at once from their raw HTML, not held (:mod:`spidercrawl.extract.raw_consensus`).

Template drift: of the last ``DRIFT_WINDOW`` pages of a site with a model that route to
one of its layouts, the pipeline counts those the model did not fit (the fast path gave
them up, or the classifier found almost nothing). When that share reaches
``DRIFT_MAX_FAILURE_SHARE``, the site changed its template: the model in use is archived as
a dated version, the fast path stops for the site, and a new model is learned from the
recent rendered pages plus the next ones. Pages that route to no layout (their text is
not in tag paths any layout knows) are not drift: a layout the site added, or one the
training pages missed. They are collected, and ``LEARN_MIN_PAGES`` of them make a new
layout beside the others (with Redis, or with ``LEARN_LAYOUTS`` off, they count as drift).

Settings (defaults in ``spidercrawl/settings.py``): ``LEARN_ENABLED``, ``LEARN_MIN_PAGES``,
``LEARN_MIN_PAGES_AT_END``, ``MODELS_DIR``, ``MODEL_VERSIONS_KEPT``, ``LEARN_SIMILARITY``,
``LEARN_DBSCAN_EPS``, ``LEARN_DBSCAN_MIN_PAGE_SHARE``, ``LEARN_SEED``, ``DRIFT_WINDOW``,
``DRIFT_MAX_FAILURE_SHARE``, ``UNSEEN_ENABLED``, ``UNSEEN_CONSENSUS``, ``CROSS_SITE_MODEL_DIR``,
``ARTICLES_ONLY``, ``RAW_CONSENSUS``, ``FAST_PATH_CHECK``, ``LEARN_LABELS``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from twisted.internet import task

from spidercrawl.document import language
from spidercrawl.document.page import first_description
from spidercrawl.extract.article import learned_extraction
from spidercrawl.extract.chain import ExtractionChain, describe_error
from spidercrawl.extract.consensus import ConsensusExtractor
from spidercrawl.extract.item import article_item
from spidercrawl.extract.metadata import SiteTitles
from spidercrawl.extract.page_kind import PageKind, page_kind
from spidercrawl.extract.raw_consensus import RawHtmlConsensus
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.items import ArticleItem
from spidercrawl.learn.blocks import Block, page_blocks
from spidercrawl.learn.drift import DriftWatch, FitVerdict, LearningRetries
from spidercrawl.learn.layouts import ready_to_learn
from spidercrawl.learn.model import MAX_LAYOUTS, LearningError, SiteModel
from spidercrawl.learn.store import ModelStore
from spidercrawl.signals import site_model_changed, site_needs_browser

logger = logging.getLogger(__name__)

# Methods by which a site model extracted a page itself (its layouts fit the page).
FITTED_METHODS = frozenset({"rules", "learned", "learned+consensus"})
JS_PAGES_TO_RENDER_DIRECTLY = 3  # pages drawn by JavaScript before the fast path stops trying
NEW_LAYOUT_TRIES = 3  # per site and crawl: then pages of no layout stay pages never seen
LEARN_TRIES = 3  # per site and crawl: after a failed learning, tries on later pages too
SHARED_MODEL_CHECK_EVERY = 10  # watchdog ticks (seconds) between looks for a newer model


@dataclass
class SiteState:
    """What the pipeline knows of one site during a crawl."""

    model: SiteModel | None = None
    held: list[tuple[dict[str, Any], asyncio.Future]] = field(default_factory=list)
    settled: bool = False  # a model is in use, or the site fell back to text density
    fallback_reason: str = ""
    # Template drift and new layouts: the model's recent fit (learn/drift.py); the pages a
    # relearning starts from.
    fit: DriftWatch = field(default_factory=lambda: DriftWatch(1, 1.0, 1))
    relearning_from: list[dict[str, Any]] = field(default_factory=list)
    titles: SiteTitles = field(default_factory=SiteTitles)  # learns the site's own name
    drawn_by_javascript: int = 0  # pages whose article only the browser's DOM holds
    layouts_not_learned: int = 0  # new layouts tried and given up (NEW_LAYOUT_TRIES)
    outgrown: str = ""  # the version drift retired (not to be taken back from Redis)
    before_drift: SiteModel | None = None  # its layouts join the model learned after drift
    waiting_for_other: bool = False  # with Redis: another worker holds the learning lock
    waited_for_layouts: bool = False  # more pages held: the first ones mixed templates
    # After a failed learning: how many tries failed, and the pages the next try learns
    # from (those of the failed try, then every rendered page since, the newest kept).
    retries: LearningRetries = field(default_factory=lambda: LearningRetries(1, 1, 0))


class SiteLearningPipeline:
    """Page items in, article items out; one model per site, learned without labels."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("LEARN_ENABLED"):
            raise NotConfigured("LEARN_ENABLED is off: page items pass through unchanged")
        self.crawler = crawler
        self.min_pages = max(1, settings.getint("LEARN_MIN_PAGES"))
        self.min_pages_at_end = max(1, settings.getint("LEARN_MIN_PAGES_AT_END"))
        self.max_wait_pages = max(self.min_pages, settings.getint("LEARN_MAX_WAIT_PAGES"))
        self.headline_in_text = settings.getbool("ARTICLE_HEADLINE_IN_TEXT")
        self.articles_only = settings.getbool("ARTICLES_ONLY")
        self.store = ModelStore(
            Path(settings.get("MODELS_DIR")), settings.getint("MODEL_VERSIONS_KEPT")
        )
        self.drift_window = max(1, settings.getint("DRIFT_WINDOW"))
        self.drift_share = settings.getfloat("DRIFT_MAX_FAILURE_SHARE")
        eps = settings.get("LEARN_DBSCAN_EPS")
        self.model_params = {
            "similarity": settings.get("LEARN_SIMILARITY"),
            "eps": float(eps) if eps not in (None, "", "None") else None,
            "min_page_share": settings.getfloat("LEARN_DBSCAN_MIN_PAGE_SHARE"),
            "random_state": settings.getint("LEARN_SEED"),
            "layouts": settings.getbool("LEARN_LAYOUTS"),
            "labels": settings.get("LEARN_LABELS"),
        }
        self.unseen = _unseen_extractor(settings) if settings.getbool("UNSEEN_ENABLED") else None
        self.consensus = (
            ConsensusExtractor(self.unseen)
            if self.unseen is not None and settings.getbool("UNSEEN_CONSENSUS")
            else None
        )
        self.chain = ExtractionChain(
            self.unseen,
            self.consensus,
            settings.getfloat("EXTRACT_TIME_BUDGET"),
            RawHtmlConsensus() if settings.getbool("RAW_CONSENSUS") else None,
            settings.getbool("FAST_PATH_CHECK"),
        )
        self.sites: dict[str, SiteState] = {}
        self.watchdog = task.LoopingCall(self._settle_if_only_held_pages_left)
        self.shared = None  # with Redis: pages, lock and models shared by every worker
        self.refused_versions: set[tuple[str, str]] = set()  # published, but do not load
        self.ticks = 0
        if settings.get("REDIS_URL"):
            from spidercrawl.distributed.learning import SharedLearning

            self.shared = SharedLearning.from_settings(settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteLearningPipeline:
        pipeline = cls(crawler)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    # -- signals ----------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.watchdog.start(1.0, now=False)
        language.load_in_background()

    def spider_closed(self, spider: Spider) -> None:
        if self.watchdog.running:
            self.watchdog.stop()
        try:
            self._settle_all("the crawl ended", final=True)
        except DropItem as error:  # Redis is gone: held pages stay in flight there
            logger.warning("Held pages not extracted (%s); they are crawled again", error)
            for state in self.sites.values():
                held, state.held = state.held, []
                for _, future in held:
                    if not future.done():
                        future.set_exception(error)

    # -- items ------------------------------------------------------------------------------
    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "texts" not in adapter:  # not a page item: not ours to change
            return item
        page = dict(adapter.items())  # shallow: the pipeline only reads nested values
        site = str(page.get("site") or "unknown")
        state = self.sites.get(site)
        if state is None:
            state = self.sites[site] = SiteState(
                model=self._load_model(site),
                fit=DriftWatch(self.drift_window, self.drift_share, self.min_pages),
                retries=LearningRetries(self.min_pages, self.max_wait_pages, LEARN_TRIES),
            )
            state.settled = state.model is not None
            if state.model is not None:
                logger.info(
                    "%s: using the saved model %s from %s",
                    site, state.model.version_, self.store.folder(site),
                )  # fmt: skip
        state.titles.observe(page)
        blocks = None  # built once for the page kind and the headline, where both need them
        if self.articles_only and page.get("texts"):
            try:
                blocks = self._drop_if_not_article(page, state)
            except DropItem:
                raise
            except Exception as error:  # taken for an article: delivered, not lost
                self._count_error(page, "the page-kind check", error)
        if state.settled:
            article, of_no_layout = self._extracted(page, state, blocks)
            try:
                if state.retries.waiting:
                    self._learn_again(site, state, page)
                else:
                    self._watch_drift(site, state, page, article, of_no_layout)
            except Exception:  # the article is made: a fault in the bookkeeping keeps it
                logger.exception("%s: watching the model's fit failed on %s", site, page.get("url"))
            return article
        if page.get("render_skipped"):  # breadth mode: read from its raw HTML now, not held
            self.crawler.stats.inc_value("spidercrawl/learn/read_unlearned_from_raw_html")
            return self._extract(page, state, blocks)
        if state.before_drift is not None:
            known = self._extract(page, state, blocks, model=state.before_drift)
            if known["method"] in FITTED_METHODS:
                # A page of a layout the site still has (sent before the template changed,
                # or from its archive): extracted by it, and kept out of the new layout.
                self.crawler.stats.inc_value("spidercrawl/learn/known_layout_while_relearning")
                return known
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        state.held.append((page, future))
        if len(state.held) == 1:
            logger.info(
                "%s: no model yet; holding pages until %d have arrived", site, self.min_pages
            )
        if self.shared is not None:
            count = self.shared.add_page(site, page) if page.get("texts") else 0
            self._settle_shared(site, state, f"{count} pages arrived from every worker", count)
        elif (waiting := len(state.held) + len(state.relearning_from)) >= self.min_pages:
            if state.before_drift is not None:
                self._settle(site, state, f"{waiting} pages of no layout it knew")
            elif not self._templates_too_mixed(site, state, [page for page, _ in state.held]):
                self._settle(site, state, f"{len(state.held)} pages arrived")
        return await future

    def _templates_too_mixed(
        self, site: str, state: SiteState, pages: list[dict[str, Any]]
    ) -> bool:
        """Whether the ``pages`` waiting to be learned from mix templates with too few pages
        each to be learned on its own (:func:`ready_to_learn`), so that more are held first,
        up to ``LEARN_MAX_WAIT_PAGES``. Learned from such pages, the templates became one
        layout (the demo of four layouts crawled 240 pages: its live blogs scored F1 0.14)."""
        held = len(pages)
        if not self.model_params["layouts"] or held >= self.max_wait_pages:
            return False
        ready, share = ready_to_learn([page for page in pages if page.get("texts")])
        if ready:
            return False
        if not state.waited_for_layouts:
            logger.info(
                "%s: the %d pages held mix templates with too few pages each to learn on "
                "its own (%.0f%% of the pages in templates of enough pages); holding more "
                "pages, up to %d", site, held, 100 * share, self.max_wait_pages,
            )  # fmt: skip
            self.crawler.stats.inc_value("spidercrawl/learn/waited_for_layouts")
        state.waited_for_layouts = True
        return True

    def _load_model(self, site: str) -> SiteModel | None:
        model = self.store.load(site)
        if self.shared is not None:
            model = self._take_published(site, model, "") or model
        return model

    def _take_published(
        self, site: str, current: SiteModel | None, outgrown: str
    ) -> SiteModel | None:
        """The model another worker published for the site, if it is newer than ours."""
        assert self.shared is not None
        version = self.shared.published_version(site)
        # Versions are UTC timestamps: only a newer one than ours is taken.
        if not version or version == outgrown or (current and version <= current.version_):
            return None
        if (site, version) in self.refused_versions:
            return None
        model = self.store.install(site, self.shared.published_files(site))
        if model is not None:
            logger.info("%s: using the model %s published in Redis", site, model.version_)
        else:  # asked once per version, not on every page
            self.refused_versions.add((site, version))
            logger.warning(
                "%s: the model %s published in Redis does not load: %s", site, version,
                "keeping the model in use" if current else "the site is learned again here",
            )  # fmt: skip
        return model

    def _take_newer_model(self, site: str, state: SiteState) -> None:
        """Another worker relearned the site (its template drifted there): use that model
        here too, so that every worker extracts with the same version."""
        model = self._take_published(site, state.model, state.outgrown)
        if model is not None and state.model is not None:
            state.outgrown = state.model.version_
            state.model = model
            state.fit.restart()
            self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=model)

    def _settle_shared(self, site: str, state: SiteState, why: str, count: int = 0) -> bool:
        """With Redis: take the model another worker published, or learn it under the
        site's lock from the pages every worker shared. False: still waiting."""
        assert self.shared is not None
        model = self._take_published(site, state.model, state.outgrown)
        if model is not None:
            state.model = model
            self._release(site, state)
            self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=model)
            return True
        count = count or self.shared.count(site)
        if count < self.min_pages or not self.shared.lock(site):
            return False
        try:
            pages = self.shared.pages(site)
            if self._templates_too_mixed(site, state, pages):
                return False
            self._settle(site, state, why, pages=pages)
        finally:
            self.shared.unlock(site)
        return True

    def _drop_if_not_article(self, page: dict[str, Any], state: SiteState) -> list[Block]:
        """Home, section and tag pages are neither learned from nor delivered. Returns the
        page's blocks (without densities) when it is an article."""
        blocks = page_blocks(page, densities=False)
        kind = self._page_kind(page, state, blocks)
        self.crawler.stats.inc_value(f"spidercrawl/pages/kind/{kind.kind}")
        if kind.is_article:
            return blocks
        logger.info("Not an article (%s): %s (%s)", kind.kind, page.get("url"), kind.reason)
        raise DropItem(f"not an article ({kind.kind}): {page.get('url')}", log_level="DEBUG")

    @staticmethod
    def _page_kind(page: dict[str, Any], state: SiteState, blocks: list[Block]) -> PageKind:
        """The page's kind; a learned site's own shortest articles set the bar for prose."""
        check = getattr(getattr(state.model, "rules_", None), "check_", None) or {}
        learned_minimum = int(check.get("min_chars") or 0) or None
        return page_kind(page, blocks, learned_minimum)

    # -- learning ---------------------------------------------------------------------------
    def _settle(
        self, site: str, state: SiteState, why: str, pages: list[dict[str, Any]] | None = None
    ) -> None:
        """Learn from the held pages (or ``pages``; or fall back), release them as articles."""
        if pages is None:
            pages = [page for page, _ in state.held if page.get("texts")]
            pages = state.relearning_from + pages
        state.relearning_from = []
        state.settled = True
        if len(pages) >= min(self.min_pages, self.min_pages_at_end):
            self._learn(site, state, pages, why)
        else:
            state.fallback_reason = (
                f"only {len(pages)} pages (fewer than LEARN_MIN_PAGES_AT_END="
                f"{self.min_pages_at_end}) to learn from"
            )
        if state.model is None:
            logger.warning(
                "%s: %s; extracting its pages as pages of a site never seen%s", site,
                state.fallback_reason, "" if self.unseen else " (by text density)",
            )  # fmt: skip
            self.crawler.stats.inc_value("spidercrawl/learn/fallback_sites")
        self._release(site, state)

    def _learn(self, site: str, state: SiteState, pages: list[dict[str, Any]], why: str) -> None:
        """Fit the site's model on ``pages``, save it and put it in use; where that fails,
        say why (``fallback_reason``) and keep the pages for another try on later pages."""
        started = time.perf_counter()
        if self.model_params["labels"] != "relevance" and self.consensus is not None:
            pages = self.consensus.with_consensus_articles(pages)  # what the model learns from
        try:
            model = SiteModel(**self.model_params).fit(pages)
        except ValueError as error:
            state.fallback_reason = f"could not learn from {len(pages)} pages: {error}"
            self._keep_for_next_try(site, state, pages)
            return
        except Exception as error:  # a bug met on odd pages must not stop the crawl
            logger.exception("%s: learning from %d pages failed", site, len(pages))
            state.fallback_reason = (
                f"learning failed ({type(error).__name__}: {error}); see the log"
            )
            self._keep_for_next_try(site, state, pages)
            return
        if state.before_drift is not None:  # the old templates stay known
            model = state.before_drift.with_layout(model)
            state.before_drift = None
        state.model, state.fallback_reason = model, ""
        state.retries.succeeded()
        folder = self.store.save(site, model)
        layouts = [m.training_["pages"] for m in getattr(model, "layouts_", [])]
        logger.info(
            "%s: learned a model from %d pages (%s) in %.1f s%s; saved to %s",
            site, len(pages), why, time.perf_counter() - started,
            f", {len(layouts)} layouts of {', '.join(map(str, layouts))} pages"
            if layouts else "",
            folder,
        )  # fmt: skip
        if self.shared is not None:
            self.shared.publish(site, model.version_, self.store.files(site))
            logger.info("%s: model %s published for every worker", site, model.version_)
        self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=model)

    def _keep_for_next_try(self, site: str, state: SiteState, pages: list[dict[str, Any]]) -> None:
        """A learning failed: its pages are kept, and once ``LEARN_MIN_PAGES`` more have
        come (extracted meanwhile as pages of a site never seen), the site is learned
        again from all of them, up to ``LEARN_TRIES`` tries a crawl. One unlucky set of
        first pages (odd pages whose styles repeat nowhere, say) no longer costs the
        whole crawl its model. With Redis the site is learned once, by one worker: no
        second try there."""
        self.crawler.stats.inc_value("spidercrawl/learn/failed_tries")
        if not state.retries.failed_on(pages, may_retry=self.shared is None):
            if state.retries.failed > 1:
                logger.warning(
                    "%s: %d tries to learn the site failed; until the next crawl its pages "
                    "are extracted as pages of a site never seen", site, state.retries.failed,
                )  # fmt: skip
            return
        state.fallback_reason += f"; learning again after {self.min_pages} more pages"

    def _learn_again(self, site: str, state: SiteState, page: dict[str, Any]) -> None:
        """Count ``page`` (already extracted) towards the next try after a failed learning,
        and learn when ``LEARN_MIN_PAGES`` pages have come since the failure."""
        pages = state.retries.observe(page)
        if pages is None:
            return
        tries = state.retries.failed + 1
        self._learn(site, state, list(pages), f"try {tries}, after a failed one")
        if state.model is None:
            logger.warning("%s: %s", site, state.fallback_reason)

    def _release(self, site: str, state: SiteState) -> None:
        """The site is settled: its held pages become articles."""
        state.settled = True
        state.relearning_from = []
        held, state.held = state.held, []
        for page, future in held:
            if not future.done():
                future.set_result(self._extract(page, state))

    def _settle_all(self, why: str, final: bool = False) -> None:
        """Settle every waiting site; ``final``: the crawl is over, nothing may wait."""
        for site, state in self.sites.items():
            if not (state.held or state.relearning_from):
                continue
            if self.shared is None:
                self._settle(site, state, why)
            elif self.shared.lock(site):
                try:
                    self._settle(site, state, why, pages=self._pages_to_learn(site, state))
                finally:
                    self.shared.unlock(site)
            elif final:
                state.fallback_reason = "another worker was still learning the site"
                self._release(site, state)
            elif not state.waiting_for_other:  # its model comes soon; wait for it
                state.waiting_for_other = True
                logger.info("%s: another worker is learning the site; waiting for its model", site)

    def _pages_to_learn(self, site: str, state: SiteState) -> list[dict[str, Any]]:
        assert self.shared is not None
        pages = self.shared.pages(site)
        return pages or [page for page, _ in state.held if page.get("texts")]

    def _settle_if_only_held_pages_left(self) -> None:
        """Settle waiting sites when the crawl has nothing else to do (else it would wait
        for them forever: held pages keep the engine from going idle). With Redis, first
        look for a model another worker published."""
        try:
            self._settle_waiting_sites()
        except DropItem as error:  # Redis is gone (RedisDownError): the worker is stopping
            logger.debug("Waiting sites not settled: %s", error)
        except Exception:  # a failure here must not stop the watchdog (held pages wait on it)
            logger.exception("Settling the waiting sites failed; trying again in a second")

    def _settle_waiting_sites(self) -> None:
        if self.shared is not None:
            self.ticks += 1
            for site, state in self.sites.items():
                if state.held and not state.settled:
                    self._settle_shared(site, state, "pages arrived from every worker")
                elif state.settled and self.ticks % SHARED_MODEL_CHECK_EVERY == 0:
                    self._take_newer_model(site, state)
        held = sum(len(state.held) for state in self.sites.values())
        if held and _only_held_items_left(self.crawler, held):
            self._settle_all("no more pages are coming")

    # -- template drift ---------------------------------------------------------------------
    def _watch_drift(
        self,
        site: str,
        state: SiteState,
        page: dict[str, Any],
        article: ArticleItem,
        of_no_layout: bool = False,
    ) -> None:
        """Record whether the model fitted this page; learn anew when it keeps failing."""
        if state.model is None or page.get("render_failed"):
            return  # a page the browser failed on says nothing of the template
        # A page the fast path gave up on counts against the model whose rules did so only:
        # not pages rejected by an older model (still on their way at a relearning), nor
        # pages given up before any rules ran (too big, or while no model was in use), whose
        # version is "" (measured: with "" counted, pages in flight during a relearning
        # were taken for script-drawn articles and turned the fast path off).
        rejected = (
            page.get("fast_path_rejected") and page.get("fast_path_version") == state.model.version_
        )
        if rejected and self._drawn_by_javascript(site, state, page):
            rejected = False  # the template holds: the browser is needed, not a new model
        fitted = article["method"] in FITTED_METHODS and not rejected
        collects = self._collects_layouts(of_no_layout)
        if not fitted and collects:  # a new layout appearing, not drift
            self.crawler.stats.inc_value("spidercrawl/learn/pages_of_no_layout")
        verdict = state.fit.observe(page, fitted, of_no_layout, collects)
        if verdict is FitVerdict.NEW_LAYOUT:
            self._learn_new_layout(site, state)
        if verdict is not FitVerdict.DRIFT:
            return
        failures, watched = state.fit.failures, len(state.fit.fits)
        archived = self.store.archive(site)
        logger.warning(
            "%s: the model %s no longer fits the site (%d of the last %d pages failed): the "
            "template changed; learning again from recent pages (old model kept in %s)",
            site, state.model.version_, failures, watched, archived,
        )  # fmt: skip
        self.crawler.stats.inc_value("spidercrawl/learn/relearned_sites")
        state.outgrown = state.model.version_
        state.before_drift = state.model if self.model_params["layouts"] else None
        state.model, state.settled = None, False
        state.relearning_from = list(state.fit.take_misfits())
        state.fit.restart()
        self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=None)
        if self.shared is not None:  # the pages go where every worker learns from
            for misfit in state.relearning_from:
                self.shared.add_page(site, misfit)
            state.relearning_from = []
            self._settle_shared(site, state, "the template changed")
        elif len(state.relearning_from) >= self.min_pages:
            self._settle(site, state, "the template changed")

    def _collects_layouts(self, of_no_layout: bool) -> bool:
        """Whether a page of no layout the model knows (extracted as a site never seen) is
        collected into a new layout rather than counted as drift: not with layouts off or
        the model shared on Redis (where drift relearns the whole site)."""
        return of_no_layout and bool(self.model_params["layouts"]) and self.shared is None

    def _learn_new_layout(self, site: str, state: SiteState) -> None:
        """``LEARN_MIN_PAGES`` recent pages fitted no layout, though most pages still fit:
        a layout of the site's that the training pages missed (a section, a blog, an old
        template of the archive). It is learned from them and joins the model, if it fits
        most of them itself; otherwise they stay extracted as pages of a site never seen.
        Not drift: the layouts the model has are kept as they are."""
        pages, model = list(state.fit.take_misfits()), state.model
        if model is None or not self.model_params["layouts"] or self.shared is not None:
            return  # one layout per site (LEARN_LAYOUTS off); with Redis drift relearns
        if state.layouts_not_learned >= NEW_LAYOUT_TRIES:
            return  # pages that share no layout: said once, not learned again and again
        layouts = getattr(model, "layouts_", None) or [model]
        if len(layouts) >= MAX_LAYOUTS:
            logger.info(
                "%s: %d pages fit none of the model's %d layouts; it holds no more layouts, "
                "so they are extracted as pages of a site never seen", site, len(pages),
                len(layouts),
            )  # fmt: skip
            return
        try:
            layout = SiteModel(**self.model_params).fit(pages)
        except Exception as error:  # too little to learn from, or a bug on odd pages
            logger.info(
                "%s: %d pages fit none of the model's layouts; no layout can be learned from "
                "them (%s: %s)", site, len(pages), type(error).__name__, error,
            )  # fmt: skip
            self._layout_not_learned(site, state)
            return
        fitted = sum(learned_extraction(page, layout)[1] == "learned" for page in pages)
        if fitted < len(pages) / 2:
            logger.info(
                "%s: %d pages fit none of the model's layouts, and share none among them "
                "(a layout learned from them fits %d); they stay pages of a site never seen",
                site, len(pages), fitted,
            )  # fmt: skip
            self._layout_not_learned(site, state)
            return
        archived = self.store.archive(site)
        state.model = model.with_layout(layout)
        state.fit.restart()
        self.store.save(site, state.model)
        self.crawler.stats.inc_value("spidercrawl/learn/new_layouts")
        logger.info(
            "%s: %d recent pages fit none of the model's %d layouts: learned a new layout "
            "from them beside the others (model %s; previous kept in %s)",
            site, len(pages), len(layouts), state.model.version_, archived,
        )  # fmt: skip
        self.crawler.signals.send_catch_log(signal=site_model_changed, site=site, model=state.model)

    def _layout_not_learned(self, site: str, state: SiteState) -> None:
        state.layouts_not_learned += 1
        if state.layouts_not_learned == NEW_LAYOUT_TRIES:
            logger.info(
                "%s: %d tries to learn a layout from pages of no known layout failed; "
                "until the next crawl such pages are extracted as pages of a site never seen",
                site, NEW_LAYOUT_TRIES,
            )  # fmt: skip

    def _drawn_by_javascript(self, site: str, state: SiteState, page: dict[str, Any]) -> bool:
        """Whether a page the fast path gave up on is one whose article scripts draw: the
        model's rules fit the browser's DOM of it, not its raw HTML. After
        ``JS_PAGES_TO_RENDER_DIRECTLY`` such pages the site is rendered directly."""
        rules = getattr(state.model, "rules_", None)
        if rules is None or not page.get("texts") or not page.get("rendered_html"):
            return False
        rendered = rules.extract(page["rendered_html"])
        if not rules.check(rendered, first_description(page)).ok:
            return False
        self.crawler.stats.inc_value("spidercrawl/fast_path/drawn_by_javascript")
        state.drawn_by_javascript += 1
        if state.drawn_by_javascript == JS_PAGES_TO_RENDER_DIRECTLY:
            reason = (
                f"the rules find the article in the browser's DOM but not in the raw HTML of "
                f"{state.drawn_by_javascript} pages: scripts draw it"
            )
            self.crawler.signals.send_catch_log(signal=site_needs_browser, site=site, reason=reason)
        return True

    def _extract(
        self,
        page: dict[str, Any],
        state: SiteState,
        blocks: list[Block] | None = None,
        model: SiteModel | None = None,
    ) -> ArticleItem:
        """The page's article item (see :meth:`_extracted`)."""
        return self._extracted(page, state, blocks, model)[0]

    def _extracted(
        self,
        page: dict[str, Any],
        state: SiteState,
        blocks: list[Block] | None = None,
        model: SiteModel | None = None,
    ) -> tuple[ArticleItem, bool]:
        """The page's article item, made by the extraction chain
        (:mod:`spidercrawl.extract.chain`), and whether the page is of no layout the site's
        model knows; ``blocks``: its blocks (densities or not), if built; ``model``: another
        model than the site's current one (the one before drift).
        An extractor that raised is counted (``spidercrawl/articles/extractor_errors``,
        and in the site's summary line) and logged; the next one made the article."""
        stats = self.crawler.stats
        model = model or state.model
        result = self.chain.extract(page, model, blocks, state.fallback_reason)
        for error in result.errors:
            self._count_error(page, error.stage, error.error)
        extraction, method, note = result.extraction, result.method, result.note
        stats.inc_value(f"spidercrawl/articles/{method}")
        if not extraction.text:
            stats.inc_value("spidercrawl/articles/empty")
            logger.warning("No article text on %s (%s)", page.get("url"), note or method)
        try:
            item = article_item(
                page, extraction, method, model, note, state.titles.names(),
                self.headline_in_text, result.blocks,
            )  # fmt: skip
        except Exception as error:  # metadata or headline: the text is delivered without
            self._count_error(page, "the article's metadata", error)
            item = article_item(
                {key: page.get(key) for key in ("url", "site", "crawled_at", "validators",
                                                 "page_digest")},
                extraction, method, None, f"{note}; metadata left out ({describe_error(error)})",
            )  # fmt: skip
        return item, result.of_no_layout

    def _count_error(self, page: dict[str, Any], stage: str, error: BaseException) -> None:
        """An extractor raised on a page: a stat (overall and for the site's summary line)
        and one warning with the traceback."""
        site = str(page.get("site") or "unknown")
        self.crawler.stats.inc_value("spidercrawl/articles/extractor_errors")
        self.crawler.stats.inc_value(f"spidercrawl/site/{site}/extractor_errors")
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
