"""What learning and extraction both read off a page: its description and its headings.

Here, below both layers, so that the fast path (capture) and the rules (learn) need not
reach up into extraction for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import lxml.html
from lxml import etree
from rapidfuzz import fuzz


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


def headlines_naming_titles(
    h1s: Iterable[lxml.html.HtmlElement],
    lower_headings: Iterable[lxml.html.HtmlElement],
    titles: Sequence[str],
) -> list[str]:
    """The ``<h1>`` texts, and where none of them is the page's title, the first lower
    heading (``<h2>``, ``<h3>``) that is: a blog's post title is often an ``<h3>`` under
    an ``<h1>`` of the blog's name, and the article starts with it."""
    headlines = headline_texts(h1s)
    if any(names_title(headline, title) for headline in headlines for title in titles):
        return headlines
    for text in headline_texts(lower_headings, limit=50):
        if any(names_title(text, title) for title in titles):
            return [*headlines, text]
    return headlines


def title_key(text: str) -> str:
    """A title's letters and digits, lower-cased: what two spellings of it share."""
    return re.sub(r"\W+", "", text.lower())


def names_title(heading: str, title: str) -> bool:
    """Whether a heading's text is the title a page's metadata gives: nearly equal, or a
    good part of it ("Storm hits coast" in "News : Storm hits coast"), as metadata titles
    often carry a section and the site's name."""
    found, wanted = title_key(heading), title_key(title)
    if not found:
        return False
    return fuzz.ratio(found, wanted) >= 85 or (found in wanted and len(found) >= 0.4 * len(wanted))
