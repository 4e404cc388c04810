"""Pages with several posts (a blog's front page, seed 004): one page item per post.

Post titles are found by :func:`spidercrawl.extract.titles.post_titles` (linked, title-like,
one shared style, two or more of them). Each post is its title block and the blocks after
it, in the title's column, down to the next title; the last post ends where the others'
length says a post ends. A post with too little unlinked text (a list of headlines) is not
a post, and a page needs two posts to be split. Pages that declare themselves a single
article (og:type ``article``, JSON-LD ``Article`` types) are never split.

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

from spidercrawl.extract.titles import post_titles
from spidercrawl.learn.blocks import Block, page_blocks

logger = logging.getLogger(__name__)

MIN_POST_CHARS = 150  # unlinked characters of a post's body
_HREF = re.compile(r"""<a\b[^>]*?\bhref\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
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
    raw = page["texts"]
    url = str(page.get("url") or "")
    posts = []
    for number, (title, body) in enumerate(zip(titles, _post_bodies(blocks, titles), strict=True)):
        if sum(b.chars - b.link_chars for b in body) < MIN_POST_CHARS:
            continue
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
    return posts if len(posts) >= 2 else [dict(page)]


class MultiPostMiddleware:
    """Spider middleware: splits page items of pages with several posts."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("POSTS_SPLIT_ENABLED", True):
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
