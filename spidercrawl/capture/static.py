"""Page metadata from raw HTML, for pages fetched without a browser (the fast path).

The same fields, with the same rules, as the metadata part of ``capture.js``; a page
fetched plainly has no text blocks (``texts`` is empty) and ``capture_mode`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from spidercrawl.document.deck import decks_in_document
from spidercrawl.document.html import UnusableDocumentError, parse_html
from spidercrawl.document.page import headlines_naming_titles
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


# Compiled once: through parsel, each page paid for translating and wrapping every query.
_LANG = etree.XPath("/html/@lang")
# The elements the capture reads, gathered in one walk of the tree: an XPath query of the
# whole document for each (metas, title, canonical link, JSON-LD, times, headings) walked
# it six times (docs/measurements.md, "The datatrove step on records without a model").
_READ_TAGS = ("meta", "title", "link", "script", "time", "h1", "h2", "h3")
# What XPath's translate() in the queries these walks replace folds: ASCII letters only.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_CANONICAL_LOWER = str.maketrans("CANOIL", "canoil")


@dataclass
class ReadElements:
    """The page's elements of each tag the capture reads, in document order."""

    by_tag: dict[str, list[lxml.html.HtmlElement]]

    @classmethod
    def of(cls, root: lxml.html.HtmlElement) -> ReadElements:
        by_tag: dict[str, list[lxml.html.HtmlElement]] = {tag: [] for tag in _READ_TAGS}
        for element in root.iter(*_READ_TAGS):
            by_tag[element.tag].append(element)
        return cls(by_tag)

    def metas(self) -> list[lxml.html.HtmlElement]:
        """``//meta[@content]``."""
        return [meta for meta in self.by_tag["meta"] if meta.get("content") is not None]

    def title_texts(self) -> list[str]:
        """``//title//text()``: each text once, a title inside another title's read once."""
        titles = self.by_tag["title"]
        outermost = [
            t for t in titles if len(titles) == 1 or next(t.iterancestors("title"), None) is None
        ]
        return [text for title in outermost for text in title.itertext()]

    def canonical(self) -> str:
        """The first ``href`` of a ``<link>`` whose ``rel`` holds ``canonical`` (its letters
        in any case), as the query ``//link[contains(concat(' ', translate(@rel,
        'CANOIL', 'canoil'), ' '), ' canonical ')]/@href`` finds it; "" for none."""
        for link in self.by_tag["link"]:
            rel, href = link.get("rel"), link.get("href")
            if href is not None and " canonical " in f" {(rel or '').translate(_CANONICAL_LOWER)} ":
                return href
        return ""

    def jsonld_texts(self) -> list[str]:
        """The texts of the ``<script>`` elements of type ``application/ld+json`` (in any
        ASCII case): ``//script[translate(@type, ...)='application/ld+json']/text()``."""
        texts: list[str] = []
        for script in self.by_tag["script"]:
            kind = script.get("type")
            if kind is None or kind.translate(_ASCII_LOWER) != "application/ld+json":
                continue
            texts += [text for text in [script.text, *(child.tail for child in script)] if text]
        return texts

    def time_datetimes(self) -> list[str]:
        """``//time/@datetime``."""
        return [
            value for time in self.by_tag["time"] if (value := time.get("datetime")) is not None
        ]


class MetaTags:
    """The page's ``<meta>`` contents by (attribute, lower-cased value), read in one pass
    (an XPath query per wanted name cost most of this module's time); the first wins.
    ``og`` keeps the ``og:*`` and ``article:*`` properties in page order (a repeated one
    becomes a list)."""

    ATTRIBUTES = ("name", "property", "http-equiv")

    def __init__(self, metas: Iterable[lxml.html.HtmlElement]) -> None:
        self.contents: dict[tuple[str, str], str] = {}
        self.og: dict[str, Any] = {}
        for element in metas:
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
    elements = ReadElements.of(root)
    metas = MetaTags(elements.metas())
    title = " ".join(" ".join(elements.title_texts()).split())
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
    canonical = elements.canonical()
    lang = next(iter(_LANG(root)), "")
    jsonld, jsonld_types = read_jsonld(elements.jsonld_texts())
    lower_headings = [*elements.by_tag["h2"], *elements.by_tag["h3"]]
    headlines = headlines_naming_titles(elements.by_tag["h1"], lower_headings, titles)
    decks = decks_in_document(root, descriptions, [*titles, *headlines])
    return {
        "capture_mode": "http",
        "titles": titles,
        "descriptions": descriptions,
        "canonical_url": urljoin(url, str(canonical).strip()) if canonical else "",
        "lang": str(lang).strip(),
        "og": metas.og,
        "meta": meta,
        "time_datetimes": elements.time_datetimes()[:5],
        "jsonld": jsonld,
        "jsonld_types": jsonld_types,
        "headlines": headlines,
        "texts": [],
        **({"decks": [deck.as_field() for deck in decks]} if decks else {}),
    }
