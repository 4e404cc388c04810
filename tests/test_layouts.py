"""Sites of several templates: one model that knows each layout, no relearning loop."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from tests.conftest import SITE, crawl_articles
from tests.test_template_drift import redesign


def mixed_site(root: Path, every: int = 2) -> Path:
    """The demo with one page in ``every`` in the redesigned template (an archive beside
    new pages, as real sites have)."""
    redesigned = redesign(DEMO_SITE, root / f"redesigned-{every}")
    site = root / f"mixed-{every}" / SITE
    shutil.copytree(DEMO_SITE, site)
    for number, page in enumerate(sorted((site / "pages").glob("*.html"))):
        if number % every == every - 1:
            shutil.copy(redesigned / "pages" / page.name, page)
    return site


@pytest.fixture(scope="module")
def two_crawls(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("layouts")
    settings = ("INCREMENTAL_ENABLED=False", f"STATE_DIR={root / 'state'}")
    with serving(mixed_site(root)) as server:
        first = crawl_articles(server.base_url, root / "first.jsonl", root / "models", *settings)
        again = crawl_articles(server.base_url, root / "again.jsonl", root / "models", *settings)
    return root, first, again


def test_a_site_of_two_templates_is_learned_once_with_two_layouts(two_crawls) -> None:
    root, first, again = two_crawls
    assert first.returncode == 0 and again.returncode == 0, first.log[-3000:]
    logs = first.log + again.log
    assert logs.count("learned a model from") == 1
    # The first 10 pages to arrive, half of each template as a rule: 6 and 4 when the
    # browser finishes them in another order.
    split = re.search(r"learned a model from 10 pages .*, 2 layouts of (\d+), (\d+) pages", logs)
    assert split is not None and int(split[1]) + int(split[2]) == 10 and int(split[2]) >= 3
    assert "no longer fits the site" not in logs  # no drift, no relearning loop
    meta = json.loads((root / "models" / SITE / "model.json").read_text("utf-8"))
    assert [layout["pages"] for layout in meta["layouts"]] == [int(split[1]), int(split[2])]
    assert not (root / "models" / SITE / "versions").exists()


def test_every_page_of_both_templates_takes_the_fast_path(two_crawls) -> None:
    _, first, again = two_crawls
    assert len(first.items) == len(again.items) == 30
    assert {item["method"] for item in again.items} == {"rules"}  # none rendered
    assert "Launching browser" not in again.log  # so Chromium was never started
    # Each article's check counted: most by the page's prose, none left unchecked.
    checked = {
        k: int(v) for k, v in re.findall(r"'spidercrawl/fast_path/check/(\w+)': (\d+)", again.log)
    }
    assert sum(checked.values()) == 30 and checked.get("prose", 0) >= 15, checked
    assert "Starting Playwright's driver" not in again.log  # nor Playwright's driver
    assert "Launching browser" in first.log
    assert first.log.count("Starting Playwright's driver") == 1
    short = [
        (item["url"], item["method"], len(item["text"].split()), item.get("note"))
        for item in first.items
        if len(item["text"].split()) <= 100
    ]
    learning = [line for line in first.log.splitlines() if "learn" in line.split("]")[0]]
    assert not short, "\n".join(map(str, short + learning))


def test_pages_of_one_template_stay_one_layout() -> None:
    from spidercrawl.learn.layouts import group_layouts

    pages = [
        {"texts": [
            {"text": "Harbour news " * 40, "selector": [{"name": "body"},
                {"name": "article", "classes": ["story", f"post-{n}"]}, {"name": "p"}]},
            {"text": "Menu", "selector": [{"name": "body"}, {"name": "nav", "id": f"n{n}"}]},
        ]}
        for n in range(8)
    ]  # fmt: skip
    assert group_layouts(pages) == [list(range(8))]  # ids and numbered classes ignored
    other = [
        {"texts": [{"text": "Harbour news " * 40, "selector": [{"name": "body"},
                    {"name": "div", "classes": ["entry-content"]}, {"name": "p"}]}]}
        for _ in range(4)
    ]  # fmt: skip
    assert group_layouts(pages + other) == [list(range(8)), list(range(8, 12))]
    # Two pages of another template are too few to learn: the template is learned alone.
    assert group_layouts(pages + other[:2]) == [list(range(8))]
    # Unless the strays are as many as the template's pages: then all are learned as one.
    third = [
        {"texts": [{"text": "Harbour photos " * 40, "selector": [{"name": "body"},
                    {"name": "section", "classes": ["gallery"]}, {"name": "p"}]}]}
        for _ in range(2)
    ]  # fmt: skip
    assert group_layouts(pages[:3] + other[:2] + third) == [list(range(7))]
    # Pages that are all the site will have (an archive): each template of two pages or
    # more is a layout of its own; a single page is no template: out beside one layout,
    # joined to its nearest beside two.
    odd = [{"texts": [{"text": "Harbour video " * 40, "selector": [{"name": "body"},
                       {"name": "figure", "classes": ["player"]}, {"name": "p"}]}]}]  # fmt: skip
    assert group_layouts(pages + odd, every_template=True) == [list(range(8))]
    assert group_layouts(pages + other[:2], every_template=True) == [list(range(8)), [8, 9]]
    near_other = [{"texts": [{**other[0]["texts"][0], "text": "Harbour news " * 10}]
                   + odd[0]["texts"]}]  # fmt: skip
    assert group_layouts(pages + other[:2] + near_other, every_template=True) == [
        list(range(8)),
        [8, 9, 10],
    ]
    assert group_layouts(pages + other + third, every_template=True) == [
        list(range(8)),
        list(range(8, 12)),
        [12, 13],
    ]


def test_pages_of_one_template_from_two_deploys_are_one_layout() -> None:
    """Classes a CSS-in-JS library hashed are renamed by each deploy: pages of one
    template crawled before and after one are still one layout."""
    from spidercrawl.learn.layouts import group_layouts

    def page(box: str, line: str) -> dict:
        return {"texts": [{"text": "Harbour news " * 40, "selector": [{"name": "body"},
            {"name": "div", "classes": ["content-area", *box.split()]},
            {"name": "p", "classes": [line]}]}]}  # fmt: skip

    pages = [page("sc-gicCDI hngCMv", "czqpjL")] * 4 + [page("sc-osfUn fobYxZ", "kzaFDA")] * 4
    assert group_layouts(pages) == [list(range(8))]


def test_pages_mixing_templates_too_rare_to_learn_are_not_ready() -> None:
    from spidercrawl.learn.layouts import ready_to_learn

    def pages(container: str, count: int) -> list[dict]:
        return [
            {"texts": [{"text": f"{container} news " * 40, "selector": [{"name": "body"},
                        {"name": "div", "classes": [container]}, {"name": "p"}]}]}
            for _ in range(count)
        ]  # fmt: skip

    # Four templates in ten pages, the largest with four: 40% in learnable templates.
    mixed = pages("story", 4) + pages("archive", 2) + pages("live", 2) + pages("gallery", 2)
    assert ready_to_learn(mixed) == (False, pytest.approx(0.4))
    # Three templates of three pages and one of two, on its way: not yet.
    forming = pages("story", 3) + pages("archive", 3) + pages("live", 3) + pages("gallery", 2)
    assert ready_to_learn(forming) == (False, pytest.approx(9 / 11))
    assert ready_to_learn(forming + pages("gallery", 1))[0]
    # A single odd page is no template: nine pages of one and an error page are ready.
    assert ready_to_learn(pages("story", 9) + pages("error", 1)) == (True, pytest.approx(0.9))
    assert ready_to_learn(pages("story", 10)) == (True, 1.0)
    assert ready_to_learn(mixed[:5]) == (True, 1.0)  # too few pages to tell


@pytest.fixture(scope="module")
def four_templates_at_once(tmp_path_factory, chromium_path):
    """A site whose pages cycle through four templates from the first page on."""
    import sys

    from spidercrawl.runner import PROJECT_ROOT

    sys.path.insert(0, str(PROJECT_ROOT / "tools"))
    from build_layouts_site import build

    root = tmp_path_factory.mktemp("four")
    site = build(root / "site", 24, cycle=("story", "archive", "live", "gallery"))
    settings = ("INCREMENTAL_ENABLED=False", f"STATE_DIR={root / 'state'}", "LEARN_MIN_PAGES=8")
    with serving(site) as server:
        first = crawl_articles(server.base_url, root / "first.jsonl", root / "models", *settings)
    return root, site, first


def test_a_crawl_whose_first_pages_mix_templates_holds_more_and_learns_each(
    four_templates_at_once,
) -> None:
    from urllib.parse import urlsplit

    from spidercrawl.evaluate.metrics import score_text

    root, site, first = four_templates_at_once
    assert first.returncode == 0, first.log[-3000:]
    # Eight pages, two of each template: more pages are held before anything is learned.
    assert "pages held mix templates" in first.log
    assert first.log.count("learned a model from") == 1, first.log[-3000:]
    meta = json.loads((root / "models" / SITE / "model.json").read_text("utf-8"))
    assert len(meta["layouts"]) >= 3, meta["layouts"]  # each learned on its own
    assert len(first.items) == 24 and all(item["text"] for item in first.items)
    kinds = json.loads((site / "layouts.json").read_text("utf-8"))
    ids = {
        urlsplit(line.split("\t")[1]).path: line.split("\t")[0]
        for line in (site / "index.tsv").read_text("utf-8").splitlines()
    }
    live = []
    for item in first.items:
        page_id = ids[urlsplit(item["url"]).path]
        if kinds[page_id] == "live":
            gold = (site / "gold" / f"{page_id}.txt").read_text("utf-8")
            live.append(score_text(item["text"], gold, with_difflib=False).f1)
    # Learned with the other templates' pages as one layout, live blogs scored 0.12-0.97.
    assert len(live) == 6 and min(live) >= 0.9, live
