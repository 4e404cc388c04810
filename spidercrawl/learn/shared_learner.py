"""Learning each site once for every worker that shares a Redis.

:class:`SharedSiteLearner` is the :class:`~spidercrawl.learn.site_learner.SiteLearner` of a
distributed crawl (the Redis add-on names it in ``SITE_LEARNER``). The pages of a site
without a model go to Redis, where every worker adds its own; the first worker to take the
site's lock once there are enough learns the model and publishes it; the others install
the published model and use it, so every worker extracts with one version. A relearning
after drift goes the same way. One learner per site: no second try after a failed
learning, and no new layouts beside the others (drift relearns the whole site). The Redis
side is :class:`~spidercrawl.distributed.learning.SharedLearning`.
"""

from __future__ import annotations

import logging
from typing import Any

from spidercrawl.distributed.learning import SharedLearning
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.site_learner import (
    LearnerConfig,
    LearnerHost,
    Page,
    SiteLearner,
    SiteState,
)
from spidercrawl.learn.store import ModelStore

logger = logging.getLogger(__name__)

SHARED_MODEL_CHECK_EVERY = 10  # ticks (seconds) between looks for a newer model in Redis


class SharedSiteLearner(SiteLearner):
    """Learns each site once for every worker (see the module doc)."""

    retries_after_failure = False
    collects_new_layouts = False

    def __init__(
        self, config: LearnerConfig, store: ModelStore, host: LearnerHost, shared: SharedLearning
    ) -> None:
        self.shared = shared
        self.refused_versions: set[tuple[str, str]] = set()  # published, but do not load
        self.ticks = 0
        super().__init__(config, store, host)

    @classmethod
    def from_settings(
        cls, settings: Any, store: ModelStore, host: LearnerHost
    ) -> SharedSiteLearner:
        return cls(
            LearnerConfig.from_settings(settings), store, host,
            SharedLearning.from_settings(settings),
        )  # fmt: skip

    def tick(self) -> None:
        """Settle waiting sites from the pages every worker shared; now and then, look for
        a model another worker learned anew."""
        self.ticks += 1
        for site, state in self.sites.items():
            if state.held and not state.settled:
                self._settle_shared(site, state, "pages arrived from every worker")
            elif state.settled and self.ticks % SHARED_MODEL_CHECK_EVERY == 0:
                self._take_newer_model(site, state)

    def _load_model(self, site: str) -> SiteModel | None:
        model = self.store.load(site)
        return self._take_published(site, model, "") or model

    def _on_held(self, site: str, state: SiteState, page: Page) -> None:
        count = self.shared.add_page(site, page) if page.get("texts") else 0
        self._settle_shared(site, state, f"{count} pages arrived from every worker", count)

    def _settle_waiting(self, site: str, state: SiteState, why: str, final: bool) -> None:
        if self.shared.lock(site):
            try:
                pages = self.shared.pages(site) or state.held_pages()
                self._settle(site, state, why, pages=pages)
            finally:
                self.shared.unlock(site)
        elif final:
            state.fallback_reason = "another worker was still learning the site"
            self._release(site, state)
        elif not state.waiting_for_other:  # its model comes soon; wait for it
            state.waiting_for_other = True
            logger.info("%s: another worker is learning the site; waiting for its model", site)

    def _learned(self, site: str, model: SiteModel) -> None:
        self.shared.publish(site, model.version_, self.store.files(site))
        logger.info("%s: model %s published for every worker", site, model.version_)

    def _after_drift(self, site: str, state: SiteState) -> None:
        for misfit in state.relearning_from:  # the pages go where every worker learns from
            self.shared.add_page(site, misfit)
        state.relearning_from = []
        self._settle_shared(site, state, "the template changed")

    # -- the published model ----------------------------------------------------------------
    def _take_published(
        self, site: str, current: SiteModel | None, outgrown: str
    ) -> SiteModel | None:
        """The model another worker published for the site, if it is newer than ours."""
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
            self.host.model_changed(site, model)

    def _settle_shared(self, site: str, state: SiteState, why: str, count: int = 0) -> bool:
        """Take the model another worker published, or learn it under the site's lock from
        the pages every worker shared. False: still waiting."""
        model = self._take_published(site, state.model, state.outgrown)
        if model is not None:
            state.model = model
            self._release(site, state)
            self.host.model_changed(site, model)
            return True
        count = count or self.shared.count(site)
        if count < self.config.min_pages or not self.shared.lock(site):
            return False
        try:
            pages = self.shared.pages(site)
            if self._templates_too_mixed(site, state, pages):
                return False
            self._settle(site, state, why, pages=pages)
        finally:
            self.shared.unlock(site)
        return True
