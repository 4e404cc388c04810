"""A paragraph the article repeats again and again is kept once.

A reader keeps what a page shows, and some pages show the same paragraph many times in
the story's place: a consent placeholder where each embed would stand ("External content
not available. Your privacy settings prevent ..."), an advertisement's label, a
responsive page's copies of one box. A story does not say the same paragraph three
times; a song's chorus or a quoted letter may say one twice, so a paragraph seen twice
stays. Its first copy stays too: where the repeat is the page's own text (a refrain),
the words are still there once.
"""

from __future__ import annotations

from collections import Counter

import lxml.html
from lxml import etree

from spidercrawl.document.html import clean_html_fragments

# A paragraph of at least this many words, seen at least this many times, is a repeat
# (docs/measurements.md, "Repeated paragraphs kept once").
MIN_REPEAT_WORDS = 4
MIN_REPEATS = 3


def _key(paragraph: str) -> str:
    return " ".join(paragraph.split()).lower()


def repeated_paragraphs(text: str) -> set[str]:
    """The paragraphs of ``text`` (separated by blank lines) that are repeats, as keys
    (their words in lower case, single-spaced)."""
    counts = Counter(
        key for key in map(_key, text.split("\n\n")) if len(key.split()) >= MIN_REPEAT_WORDS
    )
    return {key for key, seen in counts.items() if seen >= MIN_REPEATS}


def without_repeats(text: str, html: str) -> tuple[str, str, int]:
    """``text`` and its clean ``html`` with each repeated paragraph kept once (its first
    copy), and how many copies went."""
    repeats = repeated_paragraphs(text)
    if not repeats:
        return text, html, 0
    seen: set[str] = set()
    kept: list[str] = []
    for paragraph in text.split("\n\n"):
        key = _key(paragraph)
        if key in repeats:
            if key in seen:
                continue
            seen.add(key)
        kept.append(paragraph)
    removed = text.count("\n\n") + 1 - len(kept)
    return "\n\n".join(kept), _html_without_repeats(html, repeats), removed


def _html_without_repeats(html: str, repeats: set[str]) -> str:
    """``html`` less every element after the first whose whole text is one repeat (the
    outermost such element: a ``<div>`` holding only its ``<p>`` goes whole)."""
    if not html:
        return html
    try:
        parts = clean_html_fragments(html)
    except (etree.ParserError, ValueError):
        return html
    seen: set[str] = set()
    kept: list[str] = []
    for part in parts:
        if isinstance(part, str):
            kept.append(part)
            continue
        if _drop_later_copies(part, repeats, seen):
            continue
        kept.append(lxml.html.tostring(part, encoding="unicode"))
    return "".join(kept)


def _drop_later_copies(root: lxml.html.HtmlElement, repeats: set[str], seen: set[str]) -> bool:
    """Walk ``root`` in document order: the first element of a repeat's text is kept (and
    not looked into), a later one dropped. True where ``root`` itself is a later copy (its
    caller drops it). A walk with a stack of its own: clean HTML may nest deep."""
    stack = [root]
    while stack:
        element = stack.pop()
        key = _key(element.text_content())
        if key in repeats:
            if key not in seen:
                seen.add(key)
            elif element is root:
                return True
            else:
                element.drop_tree()
            continue
        stack.extend(child for child in reversed(element) if isinstance(child.tag, str))
    return False
