"""A learned site that adds a template: the new pages become a layout beside the old one,
whether they are half the site or a third of it, and the next crawl takes every page by
the fast path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spidercrawl.serve import serving
from tests.conftest import SITE, LearnedDemo, crawl_articles
from tests.test_layouts import mixed_site


def learned_then_mixed(root: Path, demo: LearnedDemo, every: int, *later: str) -> tuple:
    """The demo crawled once (its model learned: ``demo``), then twice with one page in
    ``every`` in the redesigned template (``later``: settings of those two crawls)."""
    models, state = demo.copy_to(root)
    settings = ("INCREMENTAL_ENABLED=False", f"STATE_DIR={state}")
    learned = demo.result
    with serving(mixed_site(root, every)) as server:
        added = crawl_articles(server.base_url, root / "added.jsonl", models, *settings, *later)
        after = crawl_articles(server.base_url, root / "after.jsonl", models, *settings, *later)
    return models, learned, added, after


@pytest.fixture(scope="module")
def template_added(tmp_path_factory, learned_demo):
    """The site is learned with one template; then half its pages come in a new one."""
    return learned_then_mixed(tmp_path_factory.mktemp("added"), learned_demo, 2)


def test_a_new_template_is_added_as_a_layout_beside_the_old_one(template_added) -> None:
    models, learned, added, after = template_added
    assert all(r.returncode == 0 for r in (learned, added, after)), added.log[-3000:]
    # The new pages route to no layout of the model: a new layout, not drift.
    assert "no longer fits the site" not in added.log
    assert added.log.count("learned a new layout from them") == 1, added.log[-3000:]
    meta = json.loads((models / SITE / "model.json").read_text("utf-8"))
    assert len(meta["layouts"]) == 2  # the new template's and the old one's
    assert "entry-content" in meta["layouts"][0]["container"]
    assert "story-body" in meta["layouts"][1]["container"]
    assert len(added.items) == 30 and all(item["text"] for item in added.items)
    # Both templates fit now: the next crawl has no drift and takes every page plainly.
    assert "no longer fits the site" not in after.log
    assert {item["method"] for item in after.items} == {"rules"} and len(after.items) == 30


@pytest.fixture(scope="module")
def minority_layout(tmp_path_factory, learned_demo):
    """The site is learned with one template; then a third of its pages come in another.
    A window of 20 pages: a third failing never looks like drift, however the pages the
    fast path sends to the browser bunch up."""
    root = tmp_path_factory.mktemp("minority")
    return learned_then_mixed(root, learned_demo, 3, "LEARN_MIN_PAGES=5", "DRIFT_WINDOW=20")


def test_pages_of_no_known_layout_are_collected_into_a_new_layout(minority_layout) -> None:
    models, learned, added, after = minority_layout
    assert all(r.returncode == 0 for r in (learned, added, after)), added.log[-3000:]
    assert "no longer fits the site" not in added.log  # a new layout is not drift
    assert added.log.count("learned a new layout from them") == 1, added.log[-3000:]
    assert len(added.items) == 30 and all(item["text"] for item in added.items)
    meta = json.loads((models / SITE / "model.json").read_text("utf-8"))
    assert len(meta["layouts"]) == 2
    assert "entry-content" in meta["layouts"][0]["container"]
    # Both layouts known: the next crawl takes every page by the fast path, learns nothing.
    assert "new layout" not in after.log and "no longer fits the site" not in after.log
    assert {item["method"] for item in after.items} == {"rules"} and len(after.items) == 30
