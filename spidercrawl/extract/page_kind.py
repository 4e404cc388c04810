"""Is a rendered page an article, a listing of other pages, or neither?

With ``-a render=all`` (and on sites whose URLs say little) home pages, section pages and
tag pages are rendered too; they must not come out as articles. A page of several posts is
split into its posts before it gets here (:mod:`spidercrawl.extract.posts`), so what is left
is decided from the page's own blocks:

- a page that declares itself an article (og:type, JSON-LD) or is one post of a page of
  several posts is an article;
- otherwise it is an article when it has a *run of prose*: consecutive unlinked blocks,
  interrupted by nothing that is mostly links, of at least ``min_prose_chars`` characters
  (80 for an article-shaped URL, 400 for the home page, 150 otherwise; a learned site uses
  a quarter of its shortest training article instead, what its rules' check learned);
- a page without one is a *listing* when it carries many links (home, section, tag and
  archive pages: teasers are short and each is cut by its linked title), else *other*
  (an error page, a form, a login wall).

Chinese, Japanese and Thai put more meaning in a character, so their characters count
double (``CJK_WEIGHT``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from spidercrawl.discovery import looks_like_article_url
from spidercrawl.document.blocks import Block
from spidercrawl.document.captured import Page
from spidercrawl.document.page import fetched_plainly
from spidercrawl.extract.posts import declares_single_article
from spidercrawl.text import cjk_share

ARTICLE, LISTING, OTHER = "article", "listing", "other"
# Measured on the 1,036 dataset article pages and the 284 generated home and section pages
# of their snapshots: at 150/400 four real articles were dropped (a gallery's 95-character
# caption run, short blog posts of 196-315 characters under a long sidebar); at 80/150
# none, and every generated listing still is one (their longest run: 7-25 characters).
MIN_PROSE_CHARS_ARTICLE_URL = 80
MIN_PROSE_CHARS_OTHER_URL = 150
MIN_PROSE_CHARS_HOME = 400  # a site's home page: teasers are longest there
MIN_LISTING_LINKS = 8
CJK_WEIGHT = 2.0


@dataclass(frozen=True)
class PageKind:
    """What a page is, and why (for the log and the stats)."""

    kind: str
    reason: str

    @property
    def is_article(self) -> bool:
        return self.kind == ARTICLE


def _weighted_chars(block: Block) -> float:
    return block.chars * (1.0 + (CJK_WEIGHT - 1.0) * cjk_share(block.text))


def longest_prose_run(blocks: Sequence[Block]) -> float:
    """Characters of the longest run of unlinked blocks not cut by a block of links."""
    best = current = 0.0
    for block in blocks:
        if block.mostly_links:
            current = 0.0
            continue
        current += _weighted_chars(block) - block.link_chars
        best = max(best, current)
    return best


def page_kind(page: Mapping[str, Any], min_prose_chars: int | None = None) -> PageKind:
    """Decide whether ``page`` (a rendered page item) is an article (its blocks built once,
    when it is a :class:`~spidercrawl.document.captured.Page`)."""
    if page.get("post_of"):
        return PageKind(ARTICLE, "a post of a page of several posts")
    if declares_single_article(page):
        return PageKind(ARTICLE, "the page declares itself an article")
    if fetched_plainly(page):
        return PageKind(ARTICLE, "the site's rules found its article")
    url = str(page.get("url") or "")
    if min_prose_chars is None:
        if urlsplit(url).path in ("", "/", "/index.html", "/index.htm"):
            min_prose_chars = MIN_PROSE_CHARS_HOME
        elif looks_like_article_url(url):
            min_prose_chars = MIN_PROSE_CHARS_ARTICLE_URL
        else:
            min_prose_chars = MIN_PROSE_CHARS_OTHER_URL
    blocks = Page.of(page).blocks_without_densities()
    run = longest_prose_run(blocks)
    if run >= min_prose_chars:
        return PageKind(ARTICLE, f"a run of {run:.0f} characters of prose")
    links = sum(block.link_count for block in blocks)
    detail = f"no run of prose of {min_prose_chars} characters (longest {run:.0f}), {links} links"
    return PageKind(LISTING if links >= MIN_LISTING_LINKS else OTHER, detail)
