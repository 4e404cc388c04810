"""End to end: a site whose story bodies are drawn by JavaScript is not a template change.

Each demo page's story body is emptied in the HTML and filled by a script at load. The
model learned from rendered pages has rules that fit the browser's DOM; on the raw HTML
they find nothing, so the fast path gives the pages up. That must not look like template
drift (no relearning loop), and after a few such pages the site is rendered directly.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lxml.html
import pytest

from spidercrawl.learn.store import ModelStore
from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from tests.test_learning_e2e import SITE, crawl_articles

pytestmark = pytest.mark.browser


def drawn_by_javascript(source: Path, target: Path) -> Path:
    """A copy of the demo whose story bodies a script writes into the page."""
    shutil.copytree(source, target)
    for path in (target / "pages").glob("*.html"):
        root = lxml.html.fromstring(path.read_bytes())
        body = root.find_class("story-body")[0]
        inner = "".join(lxml.html.tostring(child, encoding="unicode") for child in body)
        for child in list(body):
            body.remove(child)
        body.text = None
        script = lxml.html.fromstring(
            "<script>document.querySelector('.story-body').innerHTML = "
            f"{json.dumps(inner)};</script>"
        )
        body.addnext(script)
        path.write_bytes(lxml.html.tostring(root, doctype="<!DOCTYPE html>", encoding="utf-8"))
    return target


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("js")
    site = drawn_by_javascript(DEMO_SITE, root / "site")
    models = root / "models"
    with serving(site) as server:
        first = crawl_articles(server.base_url, root / "first.jsonl", models)
        second = crawl_articles(server.base_url, root / "second.jsonl", models,
                                "INCREMENTAL_ENABLED=False")  # fmt: skip
    return models, first, second


def test_pages_drawn_by_javascript_are_not_template_drift(crawled) -> None:
    models, first, second = crawled
    for result in (first, second):
        assert result.returncode == 0, result.log[-3000:]
        assert len(result.items) == 30 and all(item["text"] for item in result.items)
        assert "learning again" not in result.log
        assert "drawn_by_javascript" in result.log
        assert "fast path off for this crawl" in result.log
    assert ModelStore(models).versions(SITE) == []


def test_after_a_few_such_pages_the_site_is_rendered_directly(crawled) -> None:
    _, _, second = crawled
    rejected = second.log.count("instead (")  # "rendering URL instead (why)"
    # JS_PAGES_TO_RENDER_DIRECTLY (3) pages, plus what was already in flight then
    # (CONCURRENT_REQUESTS, 8); the other pages of the 30 go to the browser directly.
    assert 3 <= rejected <= 3 + 8
    assert "'spidercrawl/fast_path/accepted'" not in second.log
