"""Each site's learning during a crawl, as plain Python: hold its first pages, learn its
model, try again after a failed learning, notice template drift and new layouts.

:class:`SiteLearner` is the state machine; it knows no Scrapy. Whoever runs it (the crawl's
:class:`~spidercrawl.pipelines.learning.SiteLearningPipeline`, or a test) is its
:class:`LearnerHost`: it is handed the pages to extract when a site settles, and told of
new models, sites that need the browser, and events worth a stat. The pipeline makes the
articles and connects this to Scrapy (futures for held pages, stats, signals).

One learner learns on this machine alone; :class:`~spidercrawl.learn.shared_learner.
SharedSiteLearner` learns once for every worker that shares a Redis. The crawl picks one by
the class named in ``SITE_LEARNER`` (the Redis add-on names the shared one).

- A site with a saved model (``MODELS_DIR/<site>/``) is settled at once. Otherwise its
  pages are held until ``LEARN_MIN_PAGES`` have come (more, up to ``LEARN_MAX_WAIT_PAGES``,
  while they mix templates with too few pages each); then a model is learned, saved, and
  the held pages released. A site that never gets there is settled when only held pages
  are left (``settle_all``): learned from ``LEARN_MIN_PAGES_AT_END`` pages or more, else
  its pages are extracted as pages of a site never seen.
- A failed learning is tried again after ``LEARN_MIN_PAGES`` more pages (``LEARN_TRIES``).
- Drift: when ``DRIFT_MAX_FAILURE_SHARE`` of the last ``DRIFT_WINDOW`` pages did not fit,
  the model is archived and the site learned again from recent pages; pages of no layout
  the model knows become a new layout beside the others (:mod:`spidercrawl.learn.drift`).

More in ``docs/site-models.md``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from spidercrawl.document.page import first_description
from spidercrawl.learn.drift import DriftWatch, FitVerdict, LearningRetries
from spidercrawl.learn.layouts import ready_to_learn
from spidercrawl.learn.model import MAX_LAYOUTS, SiteModel
from spidercrawl.learn.store import ModelStore

logger = logging.getLogger(__name__)

Page = dict[str, Any]  # a page item's fields (see spidercrawl.capture.page_item)

JS_PAGES_TO_RENDER_DIRECTLY = 3  # pages drawn by JavaScript before the fast path stops trying
NEW_LAYOUT_TRIES = 3  # per site and crawl: then pages of no layout stay pages never seen
LEARN_TRIES = 3  # per site and crawl: after a failed learning, tries on later pages too


@dataclass
class HeldPage:
    """A page waiting for its site's model; ``waiter`` is the host's (a future, say)."""

    page: Page
    waiter: Any


class LearnerHost(Protocol):
    """What the learner asks of whoever runs it."""

    def release(self, site: str, held: list[HeldPage]) -> None:
        """The site is settled: make these held pages' articles now."""

    def model_changed(self, site: str, model: SiteModel | None) -> None:
        """The site's model in use changed (None: it is being learned again)."""

    def needs_browser(self, site: str, reason: str) -> None:
        """The fast path cannot read the site's articles: render its pages directly."""

    def count(self, stat: str) -> None:
        """Count an event (a stat name under ``spidercrawl/``)."""

    def with_consensus_articles(self, pages: list[Page]) -> list[Page]:
        """The pages with the never-seen consensus's article marked (``LEARN_LABELS``)."""


@dataclass
class LearnerConfig:
    """The learner's settings (defaults and meaning in ``spidercrawl/settings.py``)."""

    min_pages: int
    min_pages_at_end: int
    max_wait_pages: int
    drift_window: int
    drift_share: float
    model_params: dict[str, Any]  # SiteModel's parameters
    every_template: bool = False  # the pages learned from are all there will be (an archive)

    @classmethod
    def from_settings(cls, settings: Any) -> LearnerConfig:
        min_pages = max(1, settings.getint("LEARN_MIN_PAGES"))
        eps = settings.get("LEARN_DBSCAN_EPS")
        return cls(
            min_pages=min_pages,
            min_pages_at_end=max(1, settings.getint("LEARN_MIN_PAGES_AT_END")),
            max_wait_pages=max(min_pages, settings.getint("LEARN_MAX_WAIT_PAGES")),
            drift_window=max(1, settings.getint("DRIFT_WINDOW")),
            drift_share=settings.getfloat("DRIFT_MAX_FAILURE_SHARE"),
            every_template=settings.getbool("LEARN_EVERY_TEMPLATE"),
            model_params={
                "similarity": settings.get("LEARN_SIMILARITY"),
                "eps": float(eps) if eps not in (None, "", "None") else None,
                "min_page_share": settings.getfloat("LEARN_DBSCAN_MIN_PAGE_SHARE"),
                "random_state": settings.getint("LEARN_SEED"),
                "layouts": settings.getbool("LEARN_LAYOUTS"),
                "labels": settings.get("LEARN_LABELS"),
            },
        )

    @property
    def layouts(self) -> bool:
        return bool(self.model_params["layouts"])


@dataclass
class SiteState:
    """What the learner knows of one site during a crawl."""

    model: SiteModel | None = None
    held: list[HeldPage] = field(default_factory=list)
    settled: bool = False  # a model is in use, or the site fell back to pages never seen
    fallback_reason: str = ""
    # Template drift and new layouts: the model's recent fit; the pages a relearning
    # starts from.
    fit: DriftWatch = field(default_factory=lambda: DriftWatch(1, 1.0, 1))
    relearning_from: list[Page] = field(default_factory=list)
    drawn_by_javascript: int = 0  # pages whose article only the browser's DOM holds
    layouts_not_learned: int = 0  # new layouts tried and given up (NEW_LAYOUT_TRIES)
    outgrown: str = ""  # the version drift retired (not to be taken back from Redis)
    before_drift: SiteModel | None = None  # its layouts join the model learned after drift
    waiting_for_other: bool = False  # with Redis: another worker holds the learning lock
    waited_for_layouts: bool = False  # more pages held: the first ones mixed templates
    # After a failed learning: how many tries failed, and the pages the next try learns
    # from (those of the failed try, then every rendered page since, the newest kept).
    retries: LearningRetries = field(default_factory=lambda: LearningRetries(1, 1, 0))

    def held_pages(self) -> list[Page]:
        """The held pages a model can learn from (those with blocks)."""
        return [held.page for held in self.held if held.page.get("texts")]


class SiteLearner:
    """Learns each site on this machine alone (see the module doc)."""

    retries_after_failure = True  # a failed learning is tried again on later pages
    collects_new_layouts = True  # pages of no known layout become a new layout, not drift

    def __init__(self, config: LearnerConfig, store: ModelStore, host: LearnerHost) -> None:
        self.config = config
        self.store = store
        self.host = host
        self.sites: dict[str, SiteState] = {}

    @classmethod
    def from_settings(cls, settings: Any, store: ModelStore, host: LearnerHost) -> SiteLearner:
        return cls(LearnerConfig.from_settings(settings), store, host)

    # -- what the host calls ----------------------------------------------------------------
    def state(self, site: str) -> SiteState:
        """The site's state; on its first page, with its saved model if it has one."""
        state = self.sites.get(site)
        if state is None:
            config = self.config
            state = self.sites[site] = SiteState(
                model=self._load_model(site),
                fit=DriftWatch(config.drift_window, config.drift_share, config.min_pages),
                retries=LearningRetries(config.min_pages, config.max_wait_pages, LEARN_TRIES),
            )
            state.settled = state.model is not None
            if state.model is not None:
                logger.info(
                    "%s: using the saved model %s from %s",
                    site, state.model.version_, self.store.folder(site),
                )  # fmt: skip
        return state

    def hold(self, site: str, page: Page, waiter: Any) -> None:
        """Hold a page of a site not settled until its model is learned (or the site falls
        back); the host's ``release`` gets it then, perhaps at once."""
        state = self.state(site)
        state.held.append(HeldPage(page, waiter))
        if len(state.held) == 1:
            logger.info(
                "%s: no model yet; holding pages until %d have arrived",
                site, self.config.min_pages,
            )  # fmt: skip
        self._on_held(site, state, page)

    def observe(self, site: str, page: Page, fitted: bool, of_no_layout: bool) -> None:
        """A page of a settled site was extracted: ``fitted``, by the site model itself;
        ``of_no_layout``, of no layout it knows. Counts towards the next try after a failed
        learning, or towards drift and new layouts."""
        state = self.state(site)
        try:
            if state.retries.waiting:
                self._learn_again(site, state, page)
            else:
                self._watch_drift(site, state, page, fitted, of_no_layout)
        except Exception:  # the article is made: a fault in the bookkeeping keeps it
            logger.exception("%s: watching the model's fit failed on %s", site, page.get("url"))

    def held_count(self) -> int:
        return sum(len(state.held) for state in self.sites.values())

    def tick(self) -> None:
        """Called every second while the crawl runs (the shared learner looks to Redis)."""

    def settle_all(self, why: str, final: bool = False) -> None:
        """Settle every waiting site; ``final``: the crawl is over, nothing may wait."""
        for site, state in self.sites.items():
            if state.held or state.relearning_from:
                self._settle_waiting(site, state, why, final)

    def take_all_held(self) -> list[HeldPage]:
        """Every held page, given up (the host fails them: they are crawled again)."""
        taken: list[HeldPage] = []
        for state in self.sites.values():
            taken += state.held
            state.held = []
        return taken

    # -- what a shared learner does otherwise -----------------------------------------------
    def _load_model(self, site: str) -> SiteModel | None:
        return self.store.load(site)

    def _on_held(self, site: str, state: SiteState, page: Page) -> None:
        """A page was held: learn once enough are."""
        waiting = len(state.held) + len(state.relearning_from)
        if waiting < self.config.min_pages:
            return
        if state.before_drift is not None:
            self._settle(site, state, f"{waiting} pages of no layout it knew")
        elif not self._templates_too_mixed(site, state, [held.page for held in state.held]):
            self._settle(site, state, f"{len(state.held)} pages arrived")

    def _settle_waiting(self, site: str, state: SiteState, why: str, final: bool) -> None:
        self._settle(site, state, why)

    def _learned(self, site: str, model: SiteModel) -> None:
        """A model was learned and saved here."""

    def _after_drift(self, site: str, state: SiteState) -> None:
        """The model was retired for drift: learn again once enough recent pages are in."""
        if len(state.relearning_from) >= self.config.min_pages:
            self._settle(site, state, "the template changed")

    # -- learning ---------------------------------------------------------------------------
    def _templates_too_mixed(self, site: str, state: SiteState, pages: list[Page]) -> bool:
        """Whether the ``pages`` waiting to be learned from mix templates with too few pages
        each to be learned on its own (:func:`ready_to_learn`), so that more are held first,
        up to ``LEARN_MAX_WAIT_PAGES``: learned from such pages, the templates became one
        layout."""
        held = len(pages)
        if not self.config.layouts or held >= self.config.max_wait_pages:
            return False
        ready, share = ready_to_learn([page for page in pages if page.get("texts")])
        if ready:
            return False
        if not state.waited_for_layouts:
            logger.info(
                "%s: the %d pages held mix templates with too few pages each to learn on "
                "its own (%.0f%% of the pages in templates of enough pages); holding more "
                "pages, up to %d", site, held, 100 * share, self.config.max_wait_pages,
            )  # fmt: skip
            self.host.count("learn/waited_for_layouts")
        state.waited_for_layouts = True
        return True

    def _settle(
        self, site: str, state: SiteState, why: str, pages: list[Page] | None = None
    ) -> None:
        """Learn from the held pages (or ``pages``; or fall back), release them as articles."""
        if pages is None:
            pages = state.relearning_from + state.held_pages()
        state.relearning_from = []
        state.settled = True
        config = self.config
        if len(pages) >= min(config.min_pages, config.min_pages_at_end):
            self._learn(site, state, pages, why)
        else:
            state.fallback_reason = (
                f"only {len(pages)} pages (fewer than LEARN_MIN_PAGES_AT_END="
                f"{config.min_pages_at_end}) to learn from"
            )
        if state.model is None:
            logger.warning(
                "%s: %s; extracting its pages as pages of a site never seen",
                site, state.fallback_reason,
            )  # fmt: skip
            self.host.count("learn/fallback_sites")
        self._release(site, state)

    def _learn(self, site: str, state: SiteState, pages: list[Page], why: str) -> None:
        """Fit the site's model on ``pages``, save it and put it in use; where that fails,
        say why (``fallback_reason``) and keep the pages for another try on later pages."""
        started = time.perf_counter()
        pages = self._with_readings(pages)
        try:
            model = SiteModel(**self.config.model_params).fit(
                pages, every_template=self.config.every_template
            )
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
        layouts = [m.training_["pages"] for m in model.layout_models()]
        layouts = layouts if len(layouts) > 1 else []
        logger.info(
            "%s: learned a model from %d pages (%s) in %.1f s%s; saved to %s",
            site, len(pages), why, time.perf_counter() - started,
            f", {len(layouts)} layouts of {', '.join(map(str, layouts))} pages"
            if layouts else "",
            folder,
        )  # fmt: skip
        for line in model.read_by_arbiter():
            logger.info("%s: %s", site, line)
        self._learned(site, model)
        self.host.model_changed(site, model)

    def _with_readings(self, pages: list[Page]) -> list[Page]:
        """The pages a model learns from, each with its never-seen readings: the votes its
        parser is induced from (:mod:`.parser`), and its labels where ``LEARN_LABELS`` takes
        them from the reading; a site's first model, a model learned again after drift and
        a new layout alike."""
        return self.host.with_consensus_articles(pages)

    def _keep_for_next_try(self, site: str, state: SiteState, pages: list[Page]) -> None:
        """A learning failed: its pages are kept, and once ``LEARN_MIN_PAGES`` more have
        come (extracted meanwhile as pages of a site never seen), the site is learned
        again from all of them, up to ``LEARN_TRIES`` tries a crawl: one unlucky set of
        first pages no longer costs the whole crawl its model."""
        self.host.count("learn/failed_tries")
        if not state.retries.failed_on(pages, may_retry=self.retries_after_failure):
            if state.retries.failed > 1:
                logger.warning(
                    "%s: %d tries to learn the site failed; until the next crawl its pages "
                    "are extracted as pages of a site never seen", site, state.retries.failed,
                )  # fmt: skip
            return
        state.fallback_reason += f"; learning again after {self.config.min_pages} more pages"

    def _learn_again(self, site: str, state: SiteState, page: Page) -> None:
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
        """The site is settled: its held pages go to the host to become articles."""
        state.settled = True
        state.relearning_from = []
        held, state.held = state.held, []
        if held:
            self.host.release(site, held)

    # -- template drift and new layouts -----------------------------------------------------
    def _watch_drift(
        self, site: str, state: SiteState, page: Page, fitted: bool, of_no_layout: bool
    ) -> None:
        """Record whether the model fitted this page; learn anew when it keeps failing."""
        if state.model is None or page.get("render_failed"):
            return  # a page the browser failed on says nothing of the template
        # A page the fast path gave up on counts against the model whose rules did so only:
        # not pages rejected by an older model (still on their way at a relearning), nor
        # pages given up before any rules ran (too big, or while no model was in use).
        rejected = (
            page.get("fast_path_rejected") and page.get("fast_path_version") == state.model.version_
        )
        if rejected and self._drawn_by_javascript(site, state, page):
            rejected = False  # the template holds: the browser is needed, not a new model
        fitted = fitted and not rejected
        collects = of_no_layout and self.config.layouts and self.collects_new_layouts
        if not fitted and collects:  # a new layout appearing, not drift
            self.host.count("learn/pages_of_no_layout")
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
        self.host.count("learn/relearned_sites")
        state.outgrown = state.model.version_
        state.before_drift = state.model if self.config.layouts else None
        state.model, state.settled = None, False
        state.relearning_from = list(state.fit.take_misfits())
        state.fit.restart()
        self.host.model_changed(site, None)
        self._after_drift(site, state)

    def _learn_new_layout(self, site: str, state: SiteState) -> None:
        """``LEARN_MIN_PAGES`` recent pages fitted no layout, though most pages still fit:
        a layout the training pages missed (a section, a blog, an old template of the
        archive). It is learned from them and joins the model, if it fits most of them
        itself; otherwise they stay extracted as pages of a site never seen."""
        pages, model = list(state.fit.take_misfits()), state.model
        if model is None or not self.config.layouts or not self.collects_new_layouts:
            return
        if state.layouts_not_learned >= NEW_LAYOUT_TRIES:
            return  # pages that share no layout: said once, not learned again and again
        layouts = model.layout_models()
        if len(layouts) >= MAX_LAYOUTS:
            logger.info(
                "%s: %d pages fit none of the model's %d layouts; it holds no more layouts, "
                "so they are extracted as pages of a site never seen", site, len(pages),
                len(layouts),
            )  # fmt: skip
            return
        try:
            layout = SiteModel(**self.config.model_params).fit(self._with_readings(pages))
        except Exception as error:  # too little to learn from, or a bug on odd pages
            logger.info(
                "%s: %d pages fit none of the model's layouts; no layout can be learned from "
                "them (%s: %s)", site, len(pages), type(error).__name__, error,
            )  # fmt: skip
            self._layout_not_learned(site, state)
            return
        fitted = sum(layout.finds_article(page) for page in pages)
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
        self.host.count("learn/new_layouts")
        logger.info(
            "%s: %d recent pages fit none of the model's %d layouts: learned a new layout "
            "from them beside the others (model %s; previous kept in %s)",
            site, len(pages), len(layouts), state.model.version_, archived,
        )  # fmt: skip
        self.host.model_changed(site, state.model)

    def _layout_not_learned(self, site: str, state: SiteState) -> None:
        state.layouts_not_learned += 1
        if state.layouts_not_learned == NEW_LAYOUT_TRIES:
            logger.info(
                "%s: %d tries to learn a layout from pages of no known layout failed; "
                "until the next crawl such pages are extracted as pages of a site never seen",
                site, NEW_LAYOUT_TRIES,
            )  # fmt: skip

    def _drawn_by_javascript(self, site: str, state: SiteState, page: Page) -> bool:
        """Whether a page the fast path gave up on is one whose article scripts draw: the
        model's rules fit the browser's DOM of it, not its raw HTML. After
        ``JS_PAGES_TO_RENDER_DIRECTLY`` such pages the site is rendered directly."""
        rules = state.model.extraction_rules() if state.model is not None else None
        if rules is None or not page.get("texts") or not page.get("rendered_html"):
            return False
        rendered = rules.extract(page["rendered_html"])
        if not rules.check(rendered, first_description(page)).ok:
            return False
        self.host.count("fast_path/drawn_by_javascript")
        state.drawn_by_javascript += 1
        if state.drawn_by_javascript == JS_PAGES_TO_RENDER_DIRECTLY:
            reason = (
                f"the rules find the article in the browser's DOM but not in the raw HTML of "
                f"{state.drawn_by_javascript} pages: scripts draw it"
            )
            self.host.needs_browser(site, reason)
        return True
