"""A page of several posts (a blog's front page) yields one article per post."""

from __future__ import annotations

from pathlib import Path

import pytest

from spidercrawl.serve import serving
from tests.conftest import run_crawl

pytestmark = pytest.mark.browser
HOST = "quayside.example"
POSTS = [
    ("Rebuilding the old ferry slip, one stone at a time", "ferry slip"),
    ("Why the tide tables were wrong all winter", "tide tables"),
    ("A year of counting seals on the north sandbank", "seal count"),
]


def post_body(topic: str) -> str:
    return " ".join(
        f"<p>Paragraph {n} about the {topic}: volunteers met every Saturday, took notes, and "
        f"argued about the {topic} until the light went, then wrote it all up here.</p>"
        for n in range(3)
    )


def front_page() -> str:
    posts = "".join(
        f'<article class="post"><h2 class="entry-title"><a href="/{n}/{topic.replace(" ", "-")}/">'
        f'{title}</a></h2><div class="entry-meta">Posted by Ana Silva</div>'
        f'<div class="entry">{post_body(topic)}</div></article>'
        for n, (title, topic) in enumerate(POSTS)
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Quayside notes"
        "</title><meta property='og:type' content='website'></head><body style='margin:0'>"
        "<header><h1><a href='/'>Quayside notes</a></h1></header>"
        "<div style='display:flex'><main style='width:900px'>"
        f"{posts}</main><aside style='width:300px'><h3>Archives</h3><ul>"
        "<li><a href='/2025/'>2025</a></li><li><a href='/2024/'>2024</a></li></ul></aside>"
        "</div><footer>Made by the quayside volunteers.</footer></body></html>"
    )


def make_blog(root: Path) -> Path:
    site = root / HOST
    (site / "pages").mkdir(parents=True)
    (site / "pages" / "front.html").write_text(front_page(), "utf-8")
    (site / "index.tsv").write_text(f"front\thttps://{HOST}/blog/\n", "utf-8")
    return site


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("posts")
    with serving(make_blog(root)) as server:
        return run_crawl(
            HOST,
            server.base_url,
            root / "articles.jsonl",
            "-a", "render=all",
            "-s", f"MODELS_DIR={root / 'models'}",
            pages=False,
        )  # fmt: skip


def test_each_post_of_a_front_page_becomes_an_article(crawled) -> None:
    assert crawled.returncode == 0, crawled.log[-3000:]
    posts = [item for item in crawled.items if item.get("post_of", "").endswith("/blog/")]
    assert [post["title"] for post in posts] == [title for title, _ in POSTS]
    for post, (_, topic) in zip(posts, POSTS, strict=True):
        assert post["url"].endswith(f"/{topic.replace(' ', '-')}/")
        assert f"Paragraph 2 about the {topic}" in post["text"]
        others = [t for _, t in POSTS if t != topic]
        assert not any(f"about the {other}" in post["text"] for other in others)
        assert "Archives" not in post["text"]
    assert "holds 3 posts" in crawled.log


def test_the_generated_home_page_is_not_an_article(crawled) -> None:
    # render=all renders the server's home page too (a list of links): a listing, dropped.
    assert all(item.get("post_of") for item in crawled.items), [i["url"] for i in crawled.items]
    assert "Not an article (" in crawled.log
