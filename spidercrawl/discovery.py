"""Finding a news site's articles: sitemaps, feeds, and telling article pages from the rest.

The spider asks two questions: *where are the article URLs?* (sitemaps, feeds, links)
and *is this page an article?* (its metadata, else the shape of its URL). Both are
answered here from plain HTTP responses, so only articles need the browser.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from parsel import Selector
from scrapy.http import Response
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

ARTICLE_OG_TYPES = {"article", "news", "blog", "post"}
ARTICLE_JSONLD_TYPE = re.compile(r"(News|Blog|Report|Scholarly|Tech)?Article|BlogPosting|Posting")

_DATE_IN_PATH = re.compile(
    r"/(19|20)\d\d[/-](0?[1-9]|1[0-2])([/-](0?[1-9]|[12]\d|3[01]))?(/|-|$)|/(19|20)\d{6}(/|-|$)"
)
_NUMERIC_ID = re.compile(r"(^|[/_-])\d{5,}([/._-]|$)")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){3,}")
_NOT_ARTICLE = re.compile(
    r"/(tag|tags|category|categories|author|authors|topic|topics|section|sections|page|"
    r"search|feed|rss|login|signin|subscribe|about|contact|privacy|terms|archive)(/|$)",
    re.IGNORECASE,
)


_IGNORED_SUFFIXES = frozenset(f".{extension}" for extension in IGNORED_EXTENSIONS)


def absolute_links(base_url: str, hrefs: list[str]) -> list[str]:
    """The page links worth following, from the hrefs of a page already parsed: absolute,
    http(s), no fragment, not a file (Scrapy's ignored extensions), each once. What
    Scrapy's LinkExtractor does, without parsing the page a second time (the fast path's
    pages are parsed once, for everything)."""
    seen: dict[str, None] = {}
    for href in hrefs:
        href = href.strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
            continue
        try:
            url = urljoin(base_url, href).split("#", 1)[0]
            parts = urlsplit(url)
        except ValueError:  # a malformed href (a broken IPv6 literal...)
            continue
        if parts.scheme not in ("http", "https"):
            continue
        name = parts.path.rsplit("/", 1)[-1].lower()
        if "." in name and name[name.rindex(".") :] in _IGNORED_SUFFIXES:
            continue
        seen.setdefault(url, None)
    return list(seen)


def looks_like_article_url(url: str) -> bool:
    """Guess from the URL alone: a date, a long slug or a long numeric id in the path."""
    parts = urlsplit(url)
    path = parts.path.lower()
    if path in ("", "/") or _NOT_ARTICLE.search(path):
        return False
    return bool(_DATE_IN_PATH.search(path) or _SLUG.search(path) or _NUMERIC_ID.search(path))


def page_declares_article(selector: Selector) -> bool | None:
    """What the page says of itself: og:type or JSON-LD. None when it says nothing."""
    og_type = selector.css('meta[property="og:type"]::attr(content)').get("").strip().lower()
    if og_type:
        return og_type.split(".")[0] in ARTICLE_OG_TYPES
    for raw in selector.css('script[type="application/ld+json"]::text').getall():
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if any(ARTICLE_JSONLD_TYPE.fullmatch(t) for t in _jsonld_types(data)):
            return True
    return None


def _jsonld_types(data: object, depth: int = 0) -> list[str]:
    if depth > 5:
        return []
    if isinstance(data, list):
        return [t for item in data for t in _jsonld_types(item, depth + 1)]
    if not isinstance(data, dict):
        return []
    types = data.get("@type", [])
    found = [str(t) for t in (types if isinstance(types, list) else [types])]
    return found + _jsonld_types(data.get("@graph", []), depth + 1)


def is_article(response: Response) -> bool:
    """Decide whether a fetched page is an article: metadata first, then URL shape."""
    declared = page_declares_article(response.selector)
    return declared if declared is not None else looks_like_article_url(response.url)


def feed_urls(response: Response) -> list[str]:
    """RSS/Atom feeds a page links to with ``<link rel="alternate">``."""
    hrefs = response.css(
        'link[rel~="alternate"][type*="rss"]::attr(href), '
        'link[rel~="alternate"][type*="atom"]::attr(href)'
    ).getall()
    return [response.urljoin(h.strip()) for h in hrefs if h.strip()]


def feed_entry_urls(response: Response) -> list[str]:
    """Item links of an RSS 2.0, RSS 1.0 or Atom feed."""
    selector = Selector(text=response.text, type="xml")
    selector.remove_namespaces()
    links = selector.xpath("//item/link/text()").getall()
    links += selector.xpath("//entry/link[not(@rel) or @rel='alternate']/@href").getall()
    return [response.urljoin(link.strip()) for link in links if link.strip()]


@dataclass
class SitemapContent:
    """What one sitemap file holds: more sitemaps, or page URLs."""

    sitemaps: list[str]
    urls: list[str]
    is_news: bool


def read_sitemap(response: Response) -> SitemapContent | None:
    """Parse a sitemap (gzipped or not). None if the body is not a sitemap."""
    body = response.body
    if body[:2] == b"\x1f\x8b":
        try:
            body = gunzip(body, max_size=64 * 1024 * 1024)
        except (OSError, ValueError):
            return None
    try:
        sitemap = Sitemap(body)
    except Exception:  # lxml raises several types on garbage
        return None
    entries = list(sitemap)
    locs = [response.urljoin(e["loc"].strip()) for e in entries if e.get("loc")]
    if sitemap.type == "sitemapindex":
        return SitemapContent(sitemaps=locs, urls=[], is_news=False)
    if sitemap.type == "urlset":
        is_news = any("news" in e for e in entries)
        return SitemapContent(sitemaps=[], urls=locs, is_news=is_news)
    return None
