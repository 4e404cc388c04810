"""The site learner as plain Python: no crawler, no Scrapy, a host that records.

Handmade blog posts (``tests.test_fallbacks``) are held until enough have come, learned
from, released; a later crawl finds the saved model; a site too small falls back; a
failed learning is tried again; drift retires the model; the Redis add-on picks the
shared learner, which, on a real ``redis-server``, learns a site once for two workers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from spidercrawl.distributed import RedisAddon
from spidercrawl.distributed.learning import SharedLearning
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.shared_learner import SharedSiteLearner
from spidercrawl.learn.site_learner import HeldPage, LearnerConfig, SiteLearner
from spidercrawl.learn.store import ModelStore
from tests.test_consensus_labels import CONSENSUS_FIELD, ConsensusArticle, feature_page
from tests.test_learning_retry import odd_page

SITE = "retry.example"  # the site of tests.test_learning_retry's odd pages
MIN_PAGES = 6


@dataclass
class RecordingHost:
    """Records what the learner asks; "extracts" a released page by noting its URL."""

    released: list[str] = field(default_factory=list)
    models: list[SiteModel | None] = field(default_factory=list)
    browser: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)

    def release(self, site: str, held: list[HeldPage]) -> None:
        for entry in held:
            self.released.append(entry.page["url"])
            entry.waiter.append("released")

    def model_changed(self, site: str, model: SiteModel | None) -> None:
        self.models.append(model)

    def needs_browser(self, site: str, reason: str) -> None:
        self.browser.append(site)

    def count(self, stat: str) -> None:
        self.counts[stat] += 1

    def with_consensus_articles(self, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return pages


def post(number: int) -> dict[str, Any]:
    from tests.test_fallbacks import post_page

    return {**post_page(number), "site": SITE}


def learner_for(tmp_path, host: RecordingHost, **config: Any) -> SiteLearner:
    settings = Settings()
    settings.setmodule("spidercrawl.settings")
    settings.setdict({"LEARN_MIN_PAGES": MIN_PAGES, "LEARN_MAX_WAIT_PAGES": MIN_PAGES, **config})
    return SiteLearner(LearnerConfig.from_settings(settings), ModelStore(tmp_path / "m"), host)


def hold(learner: SiteLearner, pages: list[dict[str, Any]]) -> list[list[str]]:
    waiters: list[list[str]] = []
    for page in pages:
        waiters.append([])
        learner.hold(SITE, page, waiters[-1])
    return waiters


def test_pages_are_held_until_enough_then_learned_and_released(tmp_path) -> None:
    host = RecordingHost()
    learner = learner_for(tmp_path, host)
    pages = [post(n) for n in range(MIN_PAGES)]
    waiters = hold(learner, pages[:-1])
    assert host.released == [] and not learner.state(SITE).settled
    assert learner.held_count() == MIN_PAGES - 1

    waiters += hold(learner, pages[-1:])

    state = learner.state(SITE)
    assert state.settled and state.model is not None
    assert host.released == [page["url"] for page in pages]  # every page once, in order
    assert all(waiter == ["released"] for waiter in waiters)
    assert host.models == [state.model]
    assert learner.held_count() == 0
    # The next crawl starts from the saved model: settled on its first page.
    again = learner_for(tmp_path, RecordingHost())
    assert again.state(SITE).settled
    assert again.state(SITE).model.version_ == state.model.version_


def test_a_site_too_small_to_learn_falls_back_at_the_end(tmp_path) -> None:
    host = RecordingHost()
    learner = learner_for(tmp_path, host, LEARN_MIN_PAGES_AT_END=3)
    hold(learner, [post(1), post(2)])

    learner.settle_all("the crawl ended", final=True)

    state = learner.state(SITE)
    assert state.settled and state.model is None
    assert "LEARN_MIN_PAGES_AT_END=3" in state.fallback_reason
    assert host.released == [post(1)["url"], post(2)["url"]]
    assert host.counts["learn/fallback_sites"] == 1


def test_a_failed_learning_is_tried_again_after_more_pages(tmp_path) -> None:
    host = RecordingHost()
    learner = learner_for(tmp_path, host)
    hold(learner, [odd_page(n) for n in range(MIN_PAGES)])  # DBSCAN finds only noise
    state = learner.state(SITE)
    assert state.settled and state.model is None and state.retries.waiting
    assert host.counts["learn/failed_tries"] == 1
    assert "learning again after" in state.fallback_reason

    for number in range(10, 10 + MIN_PAGES):  # extracted as never seen meanwhile
        learner.observe(SITE, post(number), fitted=False, of_no_layout=False)

    assert state.model is not None and not state.retries.waiting
    assert host.models == [state.model]


def test_drift_retires_the_model_and_learns_again_from_recent_pages(tmp_path) -> None:
    host = RecordingHost()
    learner = learner_for(tmp_path, host, DRIFT_WINDOW=4, DRIFT_MAX_FAILURE_SHARE=0.5)
    hold(learner, [post(n) for n in range(MIN_PAGES)])
    old = learner.state(SITE).model
    assert old is not None

    for number in range(20, 22):  # two of four pages fail: the template changed
        learner.observe(SITE, post(number), fitted=True, of_no_layout=False)
        learner.observe(SITE, post(100 + number), fitted=False, of_no_layout=False)

    state = learner.state(SITE)
    assert host.models == [old, None]
    assert not state.settled and state.model is None
    assert state.before_drift is old  # its layouts join the next model
    assert host.counts["learn/relearned_sites"] == 1
    assert len(learner.store.versions(SITE)) == 1  # the old model archived
    # The two misfits and four new pages make the next model, the old layout beside it.
    hold(learner, [post(n) for n in range(30, 30 + MIN_PAGES - 2)])
    assert state.settled and state.model is not None and state.model is not old
    assert len(state.model.layout_models()) == 2
    assert host.released[MIN_PAGES:] == [post(n)["url"] for n in range(30, 30 + MIN_PAGES - 2)]


def test_settings_name_the_learner_and_redis_names_the_shared_one() -> None:
    settings = Settings()
    settings.setmodule("spidercrawl.settings")
    assert load_object(settings["SITE_LEARNER"]) is SiteLearner
    settings.set("REDIS_URL", "redis://127.0.0.1:1/0")
    RedisAddon().update_settings(settings)
    assert load_object(settings["SITE_LEARNER"]) is SharedSiteLearner
    chosen = Settings()  # a learner named on the command line stays
    chosen.setmodule("spidercrawl.settings")
    chosen.setdict({"REDIS_URL": "redis://127.0.0.1:1/0", "SITE_LEARNER": "my.Learner"}, "cmdline")
    RedisAddon().update_settings(chosen)
    assert chosen["SITE_LEARNER"] == "my.Learner"


def test_on_redis_two_workers_learn_a_site_once(tmp_path, redis_url) -> None:
    settings = Settings()
    settings.setmodule("spidercrawl.settings")
    settings.setdict({"LEARN_MIN_PAGES": MIN_PAGES, "LEARN_MAX_WAIT_PAGES": MIN_PAGES,
                      "REDIS_URL": redis_url})  # fmt: skip
    hosts = [RecordingHost(), RecordingHost()]
    workers = [
        SharedSiteLearner.from_settings(settings, ModelStore(tmp_path / f"w{n}"), host)
        for n, host in enumerate(hosts)
    ]
    pages = [post(n) for n in range(MIN_PAGES)]
    for number, page in enumerate(pages):  # the site's pages reach both workers in turn
        workers[number % 2].hold(SITE, page, [])

    learned = [worker.state(SITE).model for worker in workers]
    assert sum(model is not None for model in learned) == 1  # one learned it, under the lock
    waiting = next(worker for worker in workers if worker.state(SITE).model is None)
    assert waiting.held_count() == MIN_PAGES // 2

    waiting.tick()  # the other worker takes the published model and releases its pages

    versions = {worker.state(SITE).model.version_ for worker in workers}
    assert len(versions) == 1
    assert sorted(hosts[0].released + hosts[1].released) == sorted(p["url"] for p in pages)
    shared = SharedLearning.from_settings(settings)
    assert shared.published_version(SITE) == versions.pop()
    assert shared.count(SITE) == 0  # the pages learned from are gone from Redis


@dataclass
class ReadingHost(RecordingHost):
    """A host whose never-seen reading of a page is known (the feature pages' article):
    it records which pages it read for the learner."""

    read: list[str] = field(default_factory=list)

    def with_consensus_articles(self, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for page in pages:
            self.read.append(page["url"])
            number = page.get("feature")
            if number is not None:  # a feature page: its reading is its boxed body
                article = ConsensusArticle(feature_page(number)[1], 0.9).as_field()
                page = {**page, CONSENSUS_FIELD: article}
            out.append(page)
        return out


def feature(number: int) -> dict[str, Any]:
    page = feature_page(number)[0]
    return {**page, "site": SITE, "url": f"https://{SITE}/feature-{number}", "feature": number}


def test_pages_of_no_known_layout_are_read_and_learned_from(tmp_path) -> None:
    """With labels from the never-seen reading (``LEARN_LABELS=voted``), pages of no layout
    the model knows (the chain read them as a site never seen) become a new layout learned
    from that reading: the boxed feature body, which relevance to the description misses."""
    host = ReadingHost()
    learner = learner_for(tmp_path, host, LEARN_LABELS="voted", DRIFT_WINDOW=50)
    hold(learner, [post(n) for n in range(MIN_PAGES)])
    assert host.read == [post(n)["url"] for n in range(MIN_PAGES)]  # the first model too
    features = [feature(n) for n in range(MIN_PAGES)]
    for number, page in enumerate(features):
        learner.observe(SITE, post(40 + number), fitted=True, of_no_layout=False)
        learner.observe(SITE, page, fitted=False, of_no_layout=True)
    model = learner.state(SITE).model
    assert host.counts["learn/new_layouts"] == 1
    assert host.read[MIN_PAGES:] == [page["url"] for page in features]
    bases = [layout.clustering_["label_basis"] for layout in model.layout_models()]
    assert any(basis.startswith(f"voted on {MIN_PAGES} of {MIN_PAGES}") for basis in bases), bases
    unseen_page, _, body = feature_page(99)
    assert model.finds_article(unseen_page)
    assert all(paragraph in model.extract(unseen_page).text for paragraph in body)
