"""Title blocks: which text blocks look like a headline (seed 004's features).

A title is big for its page (font size against the body's), short, often bold or a heading
element, without sentence punctuation at its end, and sits in the page's main column. On a
single article it is unlinked; on a page of several posts (a blog's front page) each post's
title is a link to the post, all in the same style. :func:`title_scores` scores every block;
:func:`headline_candidates` ranks the blocks most like an article's headline,
:mod:`spidercrawl.capture.posts` uses :func:`post_titles` to split pages of several posts,
and :func:`lead_with_headline` starts an article's text with its headline.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from spidercrawl.learn.blocks import Block
from spidercrawl.text import cjk_share, word_count

_PIXELS = re.compile(r"([\d.]+)px")
_SENTENCE_END = (".", ",", ";", ":", "\u3002", "\uff0c", "\uff1b")  # and CJK . , ;
MIN_TITLE_WORDS, MAX_TITLE_WORDS = 2, 30
POST_TITLE_MIN_SCORE = 2.5


def _pixels(value: object, default: float) -> float:
    match = _PIXELS.match(str(value or ""))
    return float(match.group(1)) if match else default


def body_font_size(page: Mapping[str, Any]) -> float:
    computed = (page.get("body") or {}).get("computed") or {}
    return _pixels(computed.get("font-size"), 16.0)


def font_size(block: Block, body_size: float) -> float:
    return _pixels(block.computed.get("font-size"), body_size)


def is_bold(block: Block) -> bool:
    weight = str(block.computed.get("font-weight", "400"))
    return weight == "bold" or (weight.isdigit() and int(weight) >= 600)


def link_share(block: Block) -> float:
    return block.link_chars / max(block.chars, 1)


def title_words(text: str) -> float:
    """A title's length in words; in Chinese or Japanese, where a word is one character or
    two and none is spaced, tokens count half (a 20-character headline is 10 words)."""
    return word_count(text) * (1.0 - 0.5 * cjk_share(text))


def title_score(block: Block, body_size: float) -> float:
    """How much a block looks like a title, whatever its link state (higher: more)."""
    words = title_words(block.text)
    if not MIN_TITLE_WORDS <= words <= MAX_TITLE_WORDS:
        return -5.0
    ratio = font_size(block, body_size) / max(body_size, 1.0)
    score = 2.0 * (ratio >= 1.2) + 1.0 * (ratio >= 1.6)
    score += {"h1": 1.5, "h2": 1.0, "h3": 1.0}.get(block.element, 0.0)
    score += 0.5 * is_bold(block)
    score -= 1.5 * block.text.rstrip().endswith(_SENTENCE_END)
    centre = (block.left + block.width / 2) / block.page_width
    score += 0.5 * (0.15 <= centre <= 0.85)
    return score


def title_scores(page: Mapping[str, Any], blocks: Sequence[Block]) -> list[float]:
    body_size = body_font_size(page)
    return [title_score(block, body_size) for block in blocks]


def headline_candidates(
    page: Mapping[str, Any], blocks: Sequence[Block], limit: int = 10
) -> list[str]:
    """Texts of the blocks most like a single article's headline (unlinked), best first."""
    scored = [
        (score - 1.0 * (link_share(block) > 0.5) - block.top / max(block.page_height, 1.0), block)
        for block, score in zip(blocks, title_scores(page, blocks), strict=True)
    ]
    scored.sort(key=lambda pair: -pair[0])
    return [block.text for score, block in scored[:limit] if score > 0]


def _style(block: Block, body_size: float) -> tuple:
    """What post titles share (ids and classes often number the posts, so they are left out)."""
    return (block.element, round(font_size(block, body_size)), is_bold(block))


def post_titles(page: Mapping[str, Any], blocks: Sequence[Block]) -> list[Block]:
    """The title blocks of a page of several posts, in page order; [] for other pages.

    Post titles are linked, title-like, and share one style; there must be two or more.
    """
    body_size = body_font_size(page)
    groups: dict[tuple, list[Block]] = defaultdict(list)
    for block, score in zip(blocks, title_scores(page, blocks), strict=True):
        if score >= POST_TITLE_MIN_SCORE and link_share(block) >= 0.8:
            groups[_style(block, body_size)].append(block)
    best = max(groups.values(), key=len, default=[])
    return sorted(best, key=lambda b: b.index) if len(best) >= 2 else []


def lead_with_headline(text: str, html: str, headline: str) -> tuple[str, str]:
    """The article's text and HTML beginning with its headline, as readers see the article.

    People's gold text of news pages starts with the headline (on pages with a heading
    like the title: 97% of cleanportaleval, 87% of dragnet, 94% of L3S-GN1), and so do
    most corpora. Unchanged when there is no text or the text already starts with it.
    """
    headline = " ".join(headline.split())
    if not text or not headline:
        return text, html
    opening = " ".join(text[: 2 * len(headline) + 100].split()).casefold()
    if headline.casefold() in opening:
        return text, html
    heading = f"<h1>{escape(headline, quote=False)}</h1>"
    return f"{headline}\n\n{text}", f"{heading}\n{html}" if html else html
