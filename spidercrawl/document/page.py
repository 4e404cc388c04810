"""What learning and extraction both read off a page: its description and its headings.

Here, below both layers, so that the fast path (capture) and the rules (learn) need not
reach up into extraction for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import lxml.html
from lxml import etree


def first_value(values: Iterable[Any]) -> str:
    """The first non-empty string among ``values`` (a list counts by its first item)."""
    for value in values:
        if isinstance(value, list):
            value = next((v for v in value if v), "")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def fetched_plainly(page: Mapping[str, Any]) -> bool:
    """Whether the page item comes from its raw HTML without blocks (the fast path, or a
    page the browser failed on or showed no text of): such a page is extracted from its
    HTML, never from blocks."""
    return page.get("capture_mode") == "http"


def first_description(page: Mapping[str, Any]) -> str:
    """The page's first non-empty description (meta, og, twitter), or ''."""
    return first_value(page.get("descriptions") or [])


_H1 = etree.XPath("//h1")


def html_headlines(html: str | lxml.html.HtmlElement, limit: int = 5) -> list[str]:
    """The ``<h1>`` texts of raw HTML, or of its parsed document (for pages fetched
    without a browser: no blocks)."""
    if isinstance(html, str):
        if not html.strip():
            return []
        try:
            html = lxml.html.document_fromstring(html)
        except (etree.ParserError, ValueError):
            return []
    return headline_texts(_H1(html), limit)


def headline_texts(headings: Iterable[lxml.html.HtmlElement], limit: int = 5) -> list[str]:
    """The texts of ``<h1>`` elements (in document order), the empty ones left out."""
    texts = (" ".join(" ".join(h.itertext()).split()) for h in headings)
    return [t for t in texts if t][:limit]
