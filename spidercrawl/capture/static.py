"""Page metadata from raw HTML, for pages fetched without a browser (the fast path).

The same fields, with the same rules, as the metadata part of ``capture.js``; a page
fetched plainly has no text blocks (``texts`` is empty) and ``capture_mode`` says so.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from spidercrawl.document.deck import decks_in_document
from spidercrawl.document.html import UnusableDocumentError, parse_html
from spidercrawl.document.page import html_headlines
from spidercrawl.document.reservations import agent_robots_metas
from spidercrawl.document.structured import read_jsonld

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
    "tdm-reservation",
)


def _lower(attribute: str) -> str:
    """XPath for an attribute's value in lower case (HTML attribute values vary in case)."""
    return f"translate(@{attribute}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


# Compiled once: through parsel, each page paid for translating and wrapping every query.
_METAS = etree.XPath("//meta[@content]")
_TITLE_TEXT = etree.XPath("//title//text()")
_CANONICAL = etree.XPath(
    "//link[contains(concat(' ', translate(@rel, 'CANOIL', 'canoil'), ' '), ' canonical ')]/@href"
)
_JSONLD = etree.XPath(f"//script[{_lower('type')}='application/ld+json']/text()")
_LANG = etree.XPath("/html/@lang")
_TIME_DATETIMES = etree.XPath("//time/@datetime")


class MetaTags:
    """The page's ``<meta>`` contents by (attribute, lower-cased value), read in one pass
    (an XPath query per wanted name cost most of this module's time); the first wins.
    ``og`` keeps the ``og:*`` and ``article:*`` properties in page order (a repeated one
    becomes a list)."""

    ATTRIBUTES = ("name", "property", "http-equiv")

    def __init__(self, root: lxml.html.HtmlElement) -> None:
        self.contents: dict[tuple[str, str], str] = {}
        self.og: dict[str, Any] = {}
        for element in _METAS(root):
            attributes = element.attrib
            content = (attributes.get("content") or "").strip()
            if not content:
                continue
            for attribute in self.ATTRIBUTES:
                key = (attributes.get(attribute) or "").strip().lower()
                if key:
                    self.contents.setdefault((attribute, key), content)
            prop = attributes.get("property") or ""
            if prop.startswith(("og:", "article:")):
                prop = prop.strip()
                known = self.og.get(prop)
                if known is None:
                    self.og[prop] = content
                else:
                    self.og[prop] = [*(known if isinstance(known, list) else [known]), content]

    def get(self, attribute: str, value: str) -> str:
        return self.contents.get((attribute, value), "")


def static_capture(html: str | lxml.html.HtmlElement, url: str) -> dict[str, Any]:
    """The capture fields of a page that was not rendered (no blocks, no geometry), from
    its HTML or its already parsed document (read only)."""
    if isinstance(html, str):
        try:
            root = parse_html(html)
        except UnusableDocumentError:
            root = lxml.html.document_fromstring("<html></html>")
    else:
        root = html
    metas = MetaTags(root)
    title = " ".join(" ".join(_TITLE_TEXT(root)).split())
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
    meta = {name: v for name in META_NAMES if (v := metas.get("name", name))}
    named = (
        (key, value) for (attribute, key), value in metas.contents.items() if attribute == "name"
    )
    meta.update(agent_robots_metas(named))  # <meta name="GPTBot" content="noai">
    language = metas.get("http-equiv", "content-language")
    if language:
        meta["content-language"] = language
    canonical = next(iter(_CANONICAL(root)), "")
    lang = next(iter(_LANG(root)), "")
    jsonld, jsonld_types = read_jsonld(str(script) for script in _JSONLD(root))
    headlines = html_headlines(root)
    decks = decks_in_document(root, descriptions, [*titles, *headlines])
    return {
        "capture_mode": "http",
        "titles": titles,
        "descriptions": descriptions,
        "canonical_url": urljoin(url, str(canonical).strip()) if canonical else "",
        "lang": str(lang).strip(),
        "og": metas.og,
        "meta": meta,
        "time_datetimes": [str(value) for value in _TIME_DATETIMES(root)[:5]],
        "jsonld": jsonld,
        "jsonld_types": jsonld_types,
        "headlines": headlines,
        "texts": [],
        **({"decks": [deck.as_field() for deck in decks]} if decks else {}),
    }
