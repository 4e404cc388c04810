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

from spidercrawl.document.html import DROP, KEEP, LOOK_INSIDE, html_without_elements

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
    seen: set[str] = set()

    def judge(text: str) -> str:
        key = _key(text)
        if key not in repeats:
            return LOOK_INSIDE
        if key in seen:
            return DROP
        seen.add(key)
        return KEEP

    return html_without_elements(html, judge)
