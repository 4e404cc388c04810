"""Breadth mode (RENDER=learning): a site not learned yet is read from its raw HTML by
consensus; only the pages its model learns from are rendered; then the fast path."""

from __future__ import annotations

import re

import pytest

from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from tests.conftest import SITE, crawl_articles

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def breadth(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("breadth")
    with serving(DEMO_SITE) as server:
        crawl = crawl_articles(
            server.base_url, root / "articles.jsonl", root / "models", "RENDER=learning"
        )
        small = crawl_articles(
            server.base_url, root / "small.jsonl", root / "other-models", "RENDER=learning",
            max_pages=4,
        )  # fmt: skip
    return crawl, small, root


def stat(log: str, name: str) -> int:
    found = re.search(rf"'spidercrawl/{name}': (\d+)", log)
    return int(found.group(1)) if found else 0


def test_only_the_pages_a_model_learns_from_are_rendered(breadth) -> None:
    crawl, _, root = breadth
    assert crawl.returncode == 0, crawl.log[-2000:]
    urls = [item["url"] for item in crawl.items]
    assert len(urls) == len(set(urls)) == 30  # every demo article, once
    plain = [item for item in crawl.items if "breadth mode" in item["method_note"]]
    assert stat(crawl.log, "breadth/rendered_to_learn") == stat(crawl.log, "pages/rendered") == 10
    # The first 10 plainly, and those asked for while the model was being learned.
    assert len(plain) == stat(crawl.log, "breadth/plain") >= 10
    assert all(item["method"] in ("density", "raw-consensus") for item in plain)
    assert all(item["text"] and item["model_version"] == "" for item in plain)
    assert (root / "models" / SITE / "model.npz").is_file()
    learned = [item for item in crawl.items if item["model_version"]]
    assert len(learned) + len(plain) == 30 and len(learned) >= 10
    assert "learned a model from 10 pages" in crawl.log


def test_a_site_of_a_few_pages_is_never_rendered(breadth) -> None:
    _, small, root = breadth
    assert small.returncode == 0, small.log[-2000:]
    assert len(small.items) == 4 and all(item["text"] for item in small.items)
    assert stat(small.log, "pages/rendered") == 0
    assert "breadth mode" in small.items[0]["method_note"]
    assert not (root / "other-models" / SITE).exists()  # nothing rendered to learn from


def test_a_render_mode_of_no_meaning_is_one_clear_line(tmp_path) -> None:
    from tests.conftest import run_crawl

    result = run_crawl(SITE, "http://127.0.0.1:9/", tmp_path / "out.jsonl", "-s", "RENDER=fast")
    assert result.returncode == 2
    assert "error: -s RENDER=fast: takes one of always, learning" in result.log
    assert "Traceback" not in result.log


def test_the_pages_to_learn_from_come_after_the_first_and_again_after_drift(tmp_path) -> None:
    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from spidercrawl.extract.breadth import BreadthMiddleware

    settings = {"RENDER": "learning", "LEARN_MIN_PAGES": 2, "MODELS_DIR": str(tmp_path)}
    middleware = BreadthMiddleware.from_crawler(get_crawler(settings_dict=settings))

    def rendered(n: int) -> bool:
        request = Request(f"http://a.test/{n}", meta={"render": True, "site": "a.test"})
        middleware.process_request(request)
        middleware.process_request(request)  # back after its raw fetch: decided once
        return request.meta["render"]

    assert [rendered(n) for n in range(6)] == [False, False, True, True, False, False]
    middleware.model_changed("a.test", object())  # learned: the fast path's from now on
    assert rendered(6) is True
    middleware.model_changed("a.test", None)  # retired by drift: learned again
    assert [rendered(n) for n in range(7, 10)] == [True, True, False]
