"""End to end: `scrapy crawl news` learns the demo site's template and writes articles."""

from __future__ import annotations

import json

import pytest

from spidercrawl.evaluate.metrics import score_text
from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot
from tests.conftest import SITE, LearnedDemo, crawl_articles

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def learned(tmp_path_factory, learned_demo: LearnedDemo):
    """The run's learning crawl of the demo (``first``, archived), then a later crawl with
    its model and one of a site too small to learn, both from the demo's server."""
    root = tmp_path_factory.mktemp("learn")
    models, _ = learned_demo.copy_to(root)
    first = learned_demo.result
    with serving(DEMO_SITE) as server:
        again = crawl_articles(
            server.base_url, root / "again.jsonl", models, f"WARC_DIR={root / 'warc-again'}",
            max_pages=4,
        )  # fmt: skip
        small = crawl_articles(
            server.base_url, root / "small.jsonl", root / "empty-models", max_pages=2
        )
    return models, first, again, small


def test_every_page_becomes_an_article_of_the_learned_model(learned) -> None:
    models, first, _, _ = learned
    assert first.returncode == 0, first.log[-3000:]
    assert len(first.items) == 30
    methods = [item["method"] for item in first.items]
    fallbacks = {"learned+container", "learned+unseen", "learned+density-fallback"}
    assert set(methods) <= {"learned", "rules", *fallbacks}
    # Pages after the first ten come by the fast path (plain HTTP and the model's rules).
    assert methods.count("rules") >= 10, methods
    assert "fast path on" in first.log
    meta = json.loads((models / SITE / "model.json").read_text())
    assert meta["training"]["pages"] == 10  # LEARN_MIN_PAGES
    assert {item["model_version"] for item in first.items} == {meta["version"]}
    assert "learned a model from 10 pages" in first.log


def test_articles_match_the_gold_text(learned) -> None:
    _, first, _, _ = learned
    snapshot = SiteSnapshot(DEMO_SITE)
    by_path = {path: page_id for page_id, path in snapshot.path_of.items()}
    scores = []
    for item in first.items:
        page_id = by_path["/" + item["url"].split("/", 3)[3]]
        gold = snapshot.gold_path(page_id).read_text("utf-8")
        scores.append(score_text(item["text"], gold).f1)
    assert sum(scores) / len(scores) > 0.6, scores  # measured: see the README
    assert all(item["title"] and item["html"].startswith("<") for item in first.items)
    # The demo pages show their headline: the article starts with it (as gold text does).
    assert all(item["text"].startswith(item["title"]) for item in first.items)


def test_a_later_crawl_loads_the_saved_model(learned) -> None:
    _, _, again, _ = learned
    assert again.returncode == 0, again.log[-3000:]
    assert len(again.items) == 4
    assert "using the saved model" in again.log
    assert "holding pages" not in again.log


def test_a_site_too_small_to_learn_is_extracted_as_unseen(learned) -> None:
    _, _, _, small = learned
    assert small.returncode == 0, small.log[-3000:]
    assert len(small.items) == 2
    assert {item["method"] for item in small.items} == {"unseen"}
    assert all("only 2 pages" in item["method_note"] for item in small.items)
    assert all(item["text"] for item in small.items)


def test_the_crawl_is_archived_and_its_archive_gives_the_same_articles(
    learned, learned_demo: LearnedDemo
) -> None:
    """The first crawl's WARC holds what was fetched (requests, responses as the server
    sent them) and the DOM of each rendered page (a conversion referring to its response);
    the extract command on the later crawl's WARC, with the site's model, gives the
    articles that crawl delivered, text for text."""
    import subprocess
    import sys

    from warcio.archiveiterator import ArchiveIterator

    from spidercrawl.runner import PROJECT_ROOT, read_jsonl

    models, _, again, _ = learned
    root = models.parent
    (archive,) = learned_demo.warc.glob(f"{SITE}-*.warc.gz")
    with archive.open("rb") as file:
        records = list(ArchiveIterator(file))
        kinds = [r.rec_type for r in records]
        ids = {r.rec_headers.get_header("WARC-Record-ID") for r in records}
        refers = [
            r.rec_headers.get_header("WARC-Refers-To")
            for r in records
            if r.rec_type == "conversion"
        ]
        # As Common Crawl's: readers that look no further take the pages for HTML.
        identified = [
            (
                (r.http_headers.get_header("Content-Type") or "").split(";")[0],
                r.rec_headers.get_header("WARC-Identified-Payload-Type"),
            )
            for r in records
            if r.rec_type == "response"
        ]
    assert kinds[0] == "warcinfo" and "request" in kinds and "response" in kinds
    pages = [payload for sent, payload in identified if sent == "text/html"]
    assert len(pages) >= 30 and set(pages) == {"text/html"}, identified
    assert ("text/plain", "text/plain") in identified  # robots.txt
    assert len(refers) >= 10 and all(ref in ids for ref in refers)  # the rendered pages

    (later,) = (root / "warc-again").glob(f"{SITE}-*.warc.gz")
    out = root / "from-warc.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", "--no-progress", "--model",
         str(models / SITE), str(later), "-o", str(out)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    again_by_url = {item["url"]: item for item in read_jsonl(out)}
    delivered = [item for item in again.items if item["method"] == "rules"]
    assert len(delivered) >= 3, [item["method"] for item in again.items]
    for item in delivered:
        assert again_by_url[item["url"]]["text"] == item["text"]
