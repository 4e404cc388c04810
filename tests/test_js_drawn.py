"""End to end: a site whose story bodies are drawn by JavaScript is not a template change.

Each demo page's story body is emptied in the HTML and filled by a script at load. A model
learned from such pages finds, on its training pages' raw HTML, none of the article its
rules find in the browser's DOM: it records the render decision, and its site is rendered
directly (no fast-path attempt, no relearning). A model learned while the articles were
in the HTML meets the script-drawn pages later: the fast path gives them up, that must not
look like template drift, and after a few such pages the site is rendered directly.
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
from tests.conftest import SITE, crawl_articles

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


@pytest.fixture(scope="module")
def turned_to_scripts(tmp_path_factory, learned_demo):
    """The demo learned as it is, then crawled again once scripts draw its stories."""
    root = tmp_path_factory.mktemp("js-later")
    site = drawn_by_javascript(DEMO_SITE, root / "site")
    assert learned_demo.result.returncode == 0, learned_demo.result.log[-3000:]
    models, _ = learned_demo.copy_to(root)
    with serving(site) as server:
        later = crawl_articles(server.base_url, root / "later.jsonl", models)
    return models, later


def test_a_model_learned_from_script_drawn_pages_renders_them_directly(crawled) -> None:
    models, first, second = crawled
    for result in (first, second):
        assert result.returncode == 0, result.log[-3000:]
        assert len(result.items) == 30 and all(item["text"] for item in result.items)
        assert "learning again" not in result.log
        assert "rendered directly, as the model" in result.log
        assert "scripts draw it" in result.log
    assert ModelStore(models).versions(SITE) == []
    summary = json.loads((models / SITE / "model.json").read_text())
    assert "scripts draw it" in summary["rules"]["render"], summary["rules"]
    for rules in summary["layouts"] or [summary["rules"]]:
        assert rules["raw_html"]["pages"] >= 2 and rules["raw_html"]["held"] == 0, rules
    # The second crawl never tries the rules on raw HTML: every page goes to the browser.
    assert second.log.count("instead (") == 0  # "rendering URL instead (why)"
    assert "'spidercrawl/fast_path/accepted'" not in second.log
    # Rendered, each page is cut by the layout's parser on the DOM the script filled.
    assert all(item["method"] == "rules" for item in second.items), [
        (item["method"], item["method_note"]) for item in second.items
    ]


def test_pages_turned_to_scripts_later_are_not_template_drift(turned_to_scripts) -> None:
    models, later = turned_to_scripts
    assert later.returncode == 0, later.log[-3000:]
    assert len(later.items) == 30 and all(item["text"] for item in later.items)
    assert "learning again" not in later.log
    assert "drawn_by_javascript" in later.log
    assert "fast path off for this crawl" in later.log
    assert ModelStore(models).versions(SITE) == []
    rejected = later.log.count("instead (")  # "rendering URL instead (why)"
    # JS_PAGES_TO_RENDER_DIRECTLY (3) pages, plus what was already in flight then
    # (CONCURRENT_REQUESTS, 8); the other pages of the 30 go to the browser directly.
    assert 3 <= rejected <= 3 + 8
    assert "'spidercrawl/fast_path/accepted'" not in later.log
