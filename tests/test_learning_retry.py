"""A crawl whose first pages cannot be learned from tries again on later pages.

The learning pipeline itself (a real Scrapy crawler, the shipped cross-site model, page
items built block by block as the capture script records them) is fed a site whose first
pages share no block style (DBSCAN finds only noise, so no model can be learned), then
ordinary posts. Before, the whole crawl was extracted without a model; now the site is
learned again once ``LEARN_MIN_PAGES`` more pages have come, and no page is lost or
delivered twice on the way.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from scrapy import Spider
from scrapy.settings import Settings
from scrapy.utils.reactor import install_reactor, is_reactor_installed
from scrapy.utils.test import get_crawler

from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.site_learner import LEARN_TRIES
from spidercrawl.pipelines.learning import SiteLearningPipeline
from tests.test_fallbacks import PageBuilder, post_page, sentence

SITE = "retry.example"
MIN_PAGES = 6


def odd_page(number: int) -> dict[str, Any]:
    """A page whose every block has a tag path and style of its own, found on no other page."""
    rng = random.Random(1000 + number)
    page = PageBuilder()
    for k, tag in enumerate(("p", "span", "li", "td", "h3", "em")):
        parents = [("section", "", (f"odd{number}x{k}",))] * (1 + (number + k) % 4)
        css = {"font-size": f"{9 + 3 * number + k}px", "color": f"#{number:02x}{k:02x}00"}
        page.add(parents, tag, sentence(rng, 12 + 7 * k), css)
    return {**page.page(number, f"Odd page {number}", f"odd {number}"), "site": SITE}


def post(number: int) -> dict[str, Any]:
    return {**post_page(number), "site": SITE}


def pipeline_for(tmp_path) -> tuple[SiteLearningPipeline, Any]:
    settings = Settings()
    settings.setmodule("spidercrawl.settings")
    settings.setdict(
        {
            "MODELS_DIR": str(tmp_path / "models"),
            "LEARN_MIN_PAGES": MIN_PAGES,
            "LEARN_MAX_WAIT_PAGES": MIN_PAGES,  # learn from the first pages, however odd
            "ARTICLES_ONLY": False,  # handmade pages: no page kind to judge
            "REDIS_URL": "",
        }
    )
    if not is_reactor_installed():  # no crawl runs it: the pipeline is driven by hand here
        install_reactor(settings["TWISTED_REACTOR"])
    crawler = get_crawler(Spider, settings.copy_to_dict())
    return SiteLearningPipeline.from_crawler(crawler), crawler


def run(pipeline: SiteLearningPipeline, pages: list[dict[str, Any]]) -> list[Any]:
    """Every page through the pipeline in order; held pages wait for those after them."""

    async def feed() -> list[Any]:
        return await asyncio.gather(*(pipeline.process_item(page) for page in pages))

    return asyncio.run(feed())


def test_odd_first_pages_cannot_be_learned_from() -> None:
    with pytest.raises(ValueError, match="only noise"):
        SiteModel().fit([odd_page(n) for n in range(MIN_PAGES)])


def test_a_failed_learning_is_tried_again_on_later_pages(tmp_path) -> None:
    pipeline, crawler = pipeline_for(tmp_path)
    pages = [odd_page(n) for n in range(MIN_PAGES)] + [post(n) for n in range(10, 30)]
    articles = run(pipeline, pages)

    assert [a["url"] for a in articles] == [p["url"] for p in pages]  # each once, in order
    state = pipeline.sites[SITE]
    assert crawler.stats.get_value("spidercrawl/learn/failed_tries") == 1
    assert state.model is not None and state.fallback_reason == ""
    assert (tmp_path / "models" / SITE / "model.json").exists()
    # The pages before the second try were extracted without a model, and say why.
    before = articles[: 2 * MIN_PAGES]
    assert all(a["method"] in ("unseen", "density") for a in before)
    assert "learning again after 6 more pages" in before[0]["method_note"]
    # The model learned on the second try extracts the posts after it itself.
    after = articles[2 * MIN_PAGES :]
    assert after and all(a["method"] in ("learned", "rules", "learned+consensus") for a in after)
    assert all("harbour" in a["text"] for a in after)


def test_tries_stop_after_learn_tries(tmp_path) -> None:
    pipeline, crawler = pipeline_for(tmp_path)
    pages = [odd_page(n) for n in range(MIN_PAGES * (LEARN_TRIES + 2))]
    articles = run(pipeline, pages)

    assert len(articles) == len(pages) and all(a["text"] for a in articles)
    assert crawler.stats.get_value("spidercrawl/learn/failed_tries") == LEARN_TRIES
    state = pipeline.sites[SITE]
    assert state.model is None and not state.retries.waiting
    assert not (tmp_path / "models" / SITE / "model.json").exists()
