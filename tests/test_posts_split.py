"""Which pages are split into posts: a blog's front page is; an article whose sidebar boxes or
related stories look like posts is not, and keeps its text (captured blocks, no browser)."""

from __future__ import annotations

import random

from spidercrawl.extract.posts import split_posts
from tests.test_fallbacks import PageBuilder, sentence

MAIN = [("div", "main", ())]
POST = [("div", "main", ()), ("div", "", ("post",))]
SIDE = [("div", "main", ()), ("div", "", ("box",))]
TEXT = {"font-size": "16px"}
POST_TITLE = {"font-size": "24px", "font-weight": "700"}
HEADLINE = {"font-size": "32px", "font-weight": "700"}


def teaser(builder: PageBuilder, rng: random.Random, title: str, paragraphs: int) -> None:
    """A linked title in the posts' style and the paragraphs under it."""
    builder.add(POST, "h2", title, POST_TITLE, link=True)
    for _ in range(paragraphs):
        builder.add(POST, "p", sentence(rng, 30), TEXT)


def test_a_front_page_of_posts_is_split_into_them() -> None:
    rng = random.Random(1)
    builder = PageBuilder()
    builder.add(MAIN, "h1", "Quayside notes", HEADLINE, link=True)  # the blog's name
    for title in ("Rebuilding the old ferry slip", "Counting seals on the sandbank"):
        teaser(builder, rng, title, paragraphs=3)
    page = builder.page(1, "Quayside notes", "")
    posts = split_posts(page)
    assert [post["titles"] for post in posts] == [
        ["Rebuilding the old ferry slip"],
        ["Counting seals on the sandbank"],
    ]
    assert all(post["post_of"] == page["url"] for post in posts)


def test_an_article_with_its_own_headline_is_not_split_by_its_sidebar_boxes() -> None:
    rng = random.Random(2)
    builder = PageBuilder()
    headline = "The harbour wall will be rebuilt in spring"
    builder.add(SIDE, "h2", "Purchase today", POST_TITLE, link=True)
    builder.add(MAIN, "h1", headline, HEADLINE)
    story = [sentence(rng, 40) for _ in range(6)]
    for paragraph in story:
        builder.add(SIDE, "p", paragraph, TEXT)  # in the same column, under the box
    teaser(builder, rng, "From the magazine", paragraphs=2)
    page = builder.page(2, headline, "")
    assert split_posts(page) == [page]
    # Without the headline the same boxes would be taken for posts, and the story lost.
    page["titles"] = ["Purchase today"]
    assert len(split_posts(page)) == 2


def test_an_article_is_not_split_by_its_related_stories() -> None:
    rng = random.Random(3)
    builder = PageBuilder()
    for _ in range(12):
        builder.add(MAIN, "p", sentence(rng, 40), TEXT)  # the story, no headline block
    for title in ("Ferry fares rise again", "Seals return to the sandbank"):
        teaser(builder, rng, title, paragraphs=1)  # a related story and its blurb
    page = builder.page(3, "Harbour news", "")
    assert split_posts(page) == [page]
