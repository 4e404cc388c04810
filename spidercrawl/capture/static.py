"""Page metadata from raw HTML, for pages fetched without a browser (the fast path).

The same fields, with the same rules, as the metadata part of ``capture.js``; a page
fetched plainly has no text blocks (``texts`` is empty) and ``capture_mode`` says so.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

import lxml.html
import parsel

from spidercrawl.extract.titles import html_headlines

META_NAMES = (
    "author",
    "keywords",
    "date",
    "pubdate",
    "publishdate",
    "dc.date",
    "dc.date.issued",
    "dc.creator",
    "dc.language",
    "parsely-pub-date",
    "parsely-author",
    "sailthru.date",
    "sailthru.author",
    "byl",
    "news_keywords",
    "robots",
)
ARTICLE_TYPE = re.compile(r"Article|BlogPosting|NewsArticle|Report|Posting|WebPage")
_MAX_JSONLD_DEPTH = 6


def _lower(attribute: str) -> str:
    """XPath for an attribute's value in lower case (HTML attribute values vary in case)."""
    return f"translate(@{attribute}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


class MetaTags:
    """The page's ``<meta>`` contents by (attribute, lower-cased value), read in one pass
    (an XPath query per wanted name cost most of this module's time); the first wins."""

    ATTRIBUTES = ("name", "property", "http-equiv")

    def __init__(self, selector: parsel.Selector) -> None:
        self.contents: dict[tuple[str, str], str] = {}
        for element in selector.xpath("//meta[@content]"):
            attributes = element.attrib
            content = (attributes.get("content") or "").strip()
            if not content:
                continue
            for attribute in self.ATTRIBUTES:
                key = (attributes.get(attribute) or "").strip().lower()
                if key:
                    self.contents.setdefault((attribute, key), content)

    def get(self, attribute: str, value: str) -> str:
        return self.contents.get((attribute, value), "")


def _person_names(value: Any) -> list[str]:
    people = value if isinstance(value, list) else [value] if value else []
    names = [p if isinstance(p, str) else (p or {}).get("name", "") for p in people]
    return [n for n in names if isinstance(n, str) and n]


def _jsonld(selector: parsel.Selector) -> tuple[list[dict[str, Any]], list[str]]:
    """Article-like JSON-LD objects, and every @type seen."""
    found: list[dict[str, Any]] = []
    types_seen: list[str] = []
    stack: list[tuple[Any, int]] = []
    for script in selector.xpath(f"//script[{_lower('type')}='application/ld+json']/text()"):
        try:
            stack.append((json.loads(script.get()), 0))
        except ValueError:
            continue  # broken JSON-LD, as on many real pages
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_JSONLD_DEPTH:
            continue
        if isinstance(node, list):
            stack.extend((n, depth + 1) for n in reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        if "@graph" in node:
            stack.append((node["@graph"], depth + 1))
        raw_types = node.get("@type") or []
        types = [str(t) for t in (raw_types if isinstance(raw_types, list) else [raw_types])]
        types_seen += types
        if any(ARTICLE_TYPE.search(t) for t in types):
            found.append(
                {
                    "type": types,
                    "headline": node.get("headline") or node.get("name") or "",
                    "description": node.get("description") or "",
                    "datePublished": node.get("datePublished") or "",
                    "dateModified": node.get("dateModified") or "",
                    "author": _person_names(node.get("author")),
                    "url": node["url"] if isinstance(node.get("url"), str) else "",
                    "inLanguage": node["inLanguage"]
                    if isinstance(node.get("inLanguage"), str)
                    else "",
                }
            )
    return found, types_seen


def static_capture(html: str | lxml.html.HtmlElement, url: str) -> dict[str, Any]:
    """The capture fields of a page that was not rendered (no blocks, no geometry), from
    its HTML or its already parsed document (read only)."""
    if isinstance(html, str):
        selector = parsel.Selector(text=html or "<html></html>", type="html")
    else:
        selector = parsel.Selector(root=html, type="html")
    metas = MetaTags(selector)
    title = " ".join(" ".join(selector.xpath("//title//text()").getall()).split())
    titles = [t for t in [title, metas.get("property", "og:title")] if t]
    titles += [t for t in [metas.get("name", "twitter:title")] if t]
    descriptions = [
        d
        for d in (
            metas.get("name", "description"),
            metas.get("property", "og:description"),
            metas.get("name", "twitter:description"),
        )
        if d
    ]
    og: dict[str, Any] = {}
    for element in selector.xpath(
        "//meta[starts-with(@property, 'og:') or starts-with(@property, 'article:')]"
    ):
        key = (element.attrib.get("property") or "").strip()
        value = (element.attrib.get("content") or "").strip()
        if not value:
            continue
        if key in og:
            og[key] = [*(og[key] if isinstance(og[key], list) else [og[key]]), value]
        else:
            og[key] = value
    meta = {name: v for name in META_NAMES if (v := metas.get("name", name))}
    language = metas.get("http-equiv", "content-language")
    if language:
        meta["content-language"] = language
    canonical = selector.xpath(
        "//link[contains(concat(' ', translate(@rel, 'CANOIL', 'canoil'), ' '), ' canonical ')]"
        "/@href"
    ).get()
    jsonld, jsonld_types = _jsonld(selector)
    return {
        "capture_mode": "http",
        "titles": titles,
        "descriptions": descriptions,
        "canonical_url": urljoin(url, canonical.strip()) if canonical else "",
        "lang": (selector.xpath("/html/@lang").get() or "").strip(),
        "og": og,
        "meta": meta,
        "time_datetimes": selector.xpath("//time/@datetime").getall()[:5],
        "jsonld": jsonld,
        "jsonld_types": jsonld_types,
        "headlines": html_headlines(selector),
        "texts": [],
    }
