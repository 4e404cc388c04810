"""Pages with several posts (a blog's front page, seed 004): one page item per post.

Post titles are found by :func:`spidercrawl.extract.titles.post_titles` (linked, title-like,
one shared style, two or more of them). Each post is its title block and the blocks after
it, in the title's column, down to the next title; the last post ends where the others'
length says a post ends. A post with too little unlinked text (a list of headlines) is not
a post, and a page needs two posts, holding at least half of its unlinked text, to be split
(an article's sidebar boxes and related stories are no posts), and none where the page has
its own headline above the post titles' style. Pages that declare
themselves a single article (og:type ``article``, JSON-LD ``Article`` types) are never
split.

Each post becomes a page item of its own: the title's link is its URL (else the page's URL
with ``#post-N``), ``post_of`` is the page's URL, and ``rendered_html`` is rebuilt from the
post's blocks, so learning and text density work on it like on any page.

:class:`MultiPostMiddleware` is the spider middleware that does it during a crawl
(``POSTS_SPLIT_ENABLED``, default True).
"""

from __future__ import annotations

import html as html_lib
import logging
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from itertools import pairwise
from typing import Any
from urllib.parse import urljoin

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from spidercrawl.document.blocks import Block, page_blocks
from spidercrawl.extract.metadata import best_title, metadata_titles
from spidercrawl.extract.titles import (
    body_font_size,
    headline_candidates,
    link_share,
    post_titles,
    style_score,
)

logger = logging.getLogger(__name__)

MIN_POST_CHARS = 150  # unlinked characters of a post's body
# A page is split only where its posts hold at least this share of its unlinked text. An
# article with linked, title-like box headings in its sidebar ("From the magazine",
# "Purchase today": newstatesman.com in dragnet) or a list of related stories with their
# blurbs (efluxmedia.com in L3S-GN1) looked like a page of posts, and its article, outside
# every "post", was lost: 8 of the datasets' 1,036 pages. Chosen beforehand, not swept.
MIN_POSTS_SHARE = 0.5
# Attributes end at ``<`` as well as ``>``: on markup of ``<a`` never closed, ``[^>]*?``
# read on to the end from every ``<a``.
_HREF = re.compile(r"""<a\b[^<>]*?\bhref\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_SINGLE_ARTICLE_TYPES = re.compile(r"Article|BlogPosting|Report|Posting", re.IGNORECASE)


def declares_single_article(page: Mapping[str, Any]) -> bool:
    og_type = str((page.get("og") or {}).get("og:type") or "").lower()
    types = [str(t) for t in page.get("jsonld_types") or []]
    return og_type == "article" or any(_SINGLE_ARTICLE_TYPES.search(t) for t in types)


def _same_column(block: Block, title: Block) -> bool:
    return block.left < title.right and block.right > title.left


def _post_bodies(blocks: list[Block], titles: list[Block]) -> list[list[Block]]:
    """The blocks of each post, title excluded."""
    bodies: list[list[Block]] = []
    spans = [nxt.top - title.top for title, nxt in pairwise(titles)]
    longest = max(spans, default=0.0)
    for number, title in enumerate(titles):
        following = titles[number + 1] if number + 1 < len(titles) else None
        bottom = following.top if following else title.top + 1.5 * longest
        end = following.index if following else None
        bodies.append(
            [
                b
                for b in blocks
                if b.index > title.index
                and (end is None or b.index < end)
                and b.top < bottom
                and _same_column(b, title)
            ]
        )
    return bodies


def _post_html(raw_blocks: list[dict[str, Any]]) -> str:
    """A small document of the post's blocks, marked like the capture script marks them."""
    parts = []
    for number, raw in enumerate(raw_blocks):
        name = str((raw.get("element") or {}).get("name") or "div").lower()
        name = name if re.fullmatch(r"[a-z][a-z0-9]*", name) else "div"
        inner = raw.get("html") or html_lib.escape(" ".join(raw.get("text") or []))
        parts.append(f'<{name} data-sc-block="{number}">{inner}</{name}>')
    return "<html><body>" + "\n".join(parts) + "</body></html>"


def split_posts(page: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One page item per post of a page of several posts; ``[page]`` for any other page."""
    if declares_single_article(page) or not page.get("texts"):
        return [dict(page)]
    blocks = page_blocks(page, densities=False)
    titles = post_titles(page, blocks)
    if len(titles) < 2:
        return [dict(page)]
    if headline := _own_headline(page, blocks, titles):
        logger.debug("%s has its own headline %r: not split", page.get("url"), headline)
        return [dict(page)]
    raw = page["texts"]
    url = str(page.get("url") or "")
    posts = []
    in_posts = 0  # unlinked characters of the posts kept, titles included
    for number, (title, body) in enumerate(zip(titles, _post_bodies(blocks, titles), strict=True)):
        if sum(b.chars - b.link_chars for b in body) < MIN_POST_CHARS:
            continue
        in_posts += _unlinked([title, *body])
        link = _HREF.search(raw[title.index].get("html") or "")
        post_url = (
            urljoin(url, html_lib.unescape(link.group(1))) if link else f"{url}#post-{number}"
        )
        post_blocks = [raw[title.index], *(raw[b.index] for b in body)]
        posts.append(
            {
                **page,
                "url": post_url,
                "canonical_url": post_url,
                "titles": [title.text],
                "descriptions": [],
                "og": {},
                "jsonld": [],
                "texts": post_blocks,
                "rendered_html": _post_html(post_blocks),
                "post_of": url,
            }
        )
    if len(posts) < 2:
        return [dict(page)]
    on_page = _unlinked(blocks)
    if in_posts < MIN_POSTS_SHARE * on_page:
        logger.debug(
            "%s: %d post-like boxes hold %.0f%% of the page's text: one article, not split",
            url,
            len(posts),
            100 * in_posts / max(on_page, 1),
        )
        return [dict(page)]
    return posts


def _own_headline(page: Mapping[str, Any], blocks: list[Block], titles: list[Block]) -> str:
    """The page's own headline, if it has one that outranks the post titles: an unlinked
    block its metadata title names, styled more like a title than they are; '' if none.

    A single article's headline is unlinked; box headings in its sidebar can look like the
    linked titles of posts (newstatesman.com: "Purchase today" and "From the magazine",
    h2 links, under the story's h1). A blog's front page names the blog, not a post."""
    headlines = headline_candidates(page, blocks)
    headline = best_title(metadata_titles(page), headlines)
    if headline not in headlines:
        return ""
    body_size = body_font_size(page)
    bar = max(style_score(title, body_size) for title in titles)
    own = [b for b in blocks if b.text == headline and link_share(b) <= 0.5]
    return headline if any(style_score(b, body_size) > bar for b in own) else ""


def _unlinked(blocks: Iterable[Block]) -> int:
    """Characters of the blocks outside links."""
    return sum(max(b.chars - b.link_chars, 0) for b in blocks)


class MultiPostMiddleware:
    """Spider middleware: splits page items of pages with several posts."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("POSTS_SPLIT_ENABLED"):
            raise NotConfigured("POSTS_SPLIT_ENABLED is off")
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MultiPostMiddleware:
        return cls(crawler)

    def _split(self, item: Any) -> list[Any]:
        if not ItemAdapter.is_item(item):  # a request
            return [item]
        adapter = ItemAdapter(item)
        if not adapter.get("texts") or adapter.get("post_of"):  # no blocks: nothing to split
            return [item]
        posts = split_posts(dict(adapter.items()))
        if len(posts) == 1:
            return [item]
        logger.info("%s holds %d posts: one item each", adapter.get("url"), len(posts))
        self.crawler.stats.inc_value("spidercrawl/posts/pages_split")
        self.crawler.stats.inc_value("spidercrawl/posts/posts", len(posts))
        return [type(item)(**post) for post in posts]

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterator[Any]:
        for element in result:
            yield from self._split(element)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for element in result:
            for part in self._split(element):
                yield part
