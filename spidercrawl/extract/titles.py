"""Title blocks: which text blocks look like a headline (seed 004's features).

A title is big for its page (font size against the body's), short, often bold or a heading
element, without sentence punctuation at its end, and sits in the page's main column. On a
single article it is unlinked; on a page of several posts (a blog's front page) each post's
title is a link to the post, all in the same style. :func:`title_score` scores a block;
:func:`headline_candidates` ranks the blocks most like an article's headline,
:mod:`spidercrawl.capture.posts` uses :func:`post_titles` to split pages of several posts,
and :func:`lead_with_headline` starts an article's text with its headline.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape, unescape
from typing import Any

from spidercrawl.document.blocks import Block
from spidercrawl.text import MARKUP_TAG, cjk_share, folded, word_count

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


NOT_A_TITLE = -5.0  # the score of a block too short or too long to be a title


def style_score(block: Block, body_size: float) -> float:
    """How much a block looks like a title by its style and place, whatever its length."""
    ratio = font_size(block, body_size) / max(body_size, 1.0)
    score = 2.0 * (ratio >= 1.2) + 1.0 * (ratio >= 1.6)
    score += {"h1": 1.5, "h2": 1.0, "h3": 1.0}.get(block.element, 0.0)
    score += 0.5 * is_bold(block)
    score -= 1.5 * block.text.rstrip().endswith(_SENTENCE_END)
    centre = (block.left + block.width / 2) / block.page_width
    score += 0.5 * (0.15 <= centre <= 0.85)
    return score


def title_length(block: Block) -> bool:
    """Whether the block is as long as a title can be (in words)."""
    return MIN_TITLE_WORDS <= title_words(block.text) <= MAX_TITLE_WORDS


def title_score(block: Block, body_size: float) -> float:
    """How much a block looks like a title, whatever its link state (higher: more)."""
    return style_score(block, body_size) if title_length(block) else NOT_A_TITLE


def headline_candidates(
    page: Mapping[str, Any], blocks: Sequence[Block], limit: int = 10
) -> list[str]:
    """Texts of the blocks most like a single article's headline (unlinked), best first:
    :func:`title_score` less a point for a linked block and less the block's depth down the
    page (0 at its top, 1 at its bottom), where that is above 0. Words are counted only in
    blocks whose style leaves them above 0 (counting every block's was most of the cost)."""
    body_size = body_font_size(page)
    scored = []
    for block in blocks:
        penalty = 1.0 * (link_share(block) > 0.5) + block.top / max(block.page_height, 1.0)
        score = style_score(block, body_size) - penalty
        if score > 0 and title_length(block):
            scored.append((score, block))
    scored.sort(key=lambda pair: -pair[0])
    return [block.text for score, block in scored[:limit]]


def _style(block: Block, body_size: float) -> tuple:
    """What post titles share (ids and classes often number the posts, so they are left out)."""
    return (block.element, round(font_size(block, body_size)), is_bold(block))


def post_titles(page: Mapping[str, Any], blocks: Sequence[Block]) -> list[Block]:
    """The title blocks of a page of several posts, in page order; [] for other pages.

    Post titles are linked, title-like, and share one style; there must be two or more.
    """
    body_size = body_font_size(page)
    groups: dict[tuple, list[Block]] = defaultdict(list)
    for block in blocks:  # :func:`title_score`, words counted last (as for headlines)
        if (
            style_score(block, body_size) >= POST_TITLE_MIN_SCORE
            and link_share(block) >= 0.8
            and title_length(block)
        ):
            groups[_style(block, body_size)].append(block)
    best = max(groups.values(), key=len, default=[])
    return sorted(best, key=lambda b: b.index) if len(best) >= 2 else []


# A headline the extraction took can follow a date line or share links: it is looked for
# among this many opening paragraphs.
HEADLINE_WITHIN = 3


def lead_with_headline(text: str, html: str, headline: str) -> tuple[str, str]:
    """The article's text and HTML beginning with its headline, as readers see the article.

    People's gold text of news pages starts with the headline (on pages with a heading
    like the title: 97% of cleanportaleval, 87% of dragnet, 94% of L3S-GN1), and so do
    most corpora. Unchanged when there is no text or the text already has it: the text
    starts with it, or one of its first ``HEADLINE_WITHIN`` lines is it (a date line or
    "Share this page" may come first).

    The headline's words found anywhere near the start did not count as the headline: a
    lead sentence repeating a short headline ("... the new ferry pier will open ...") kept
    the article from its headline (7 of the datasets' 1,036 pages, by the never-seen path's
    text: 6 better, 1 worse, F1 +0.13 in sum, dragnet only).
    """
    headline = " ".join(headline.split())
    if not text or not headline:
        return text, html
    wanted = folded(headline)
    lines = (line for line in text.splitlines() if line.strip())
    opening = [folded(line) for line in itertools.islice(lines, HEADLINE_WITHIN)]
    if wanted in opening or folded(text[: 2 * len(headline) + 100]).startswith(wanted):
        return text, html
    heading = f"<h1>{escape(headline, quote=False)}</h1>"
    return f"{headline}\n\n{text}", f"{heading}\n{html}" if html else html


def without_headline(text: str, html: str, headline: str) -> tuple[str, str]:
    """The article's text and HTML less its headline paragraph (:func:`lead_with_headline`'s,
    or the article's own heading, one of its first ``HEADLINE_WITHIN`` paragraphs: a date
    line or "Share this page" may come first): for formats that carry the title beside
    the content, as a JSON Feed does, whose readers show the title above it. Unchanged
    where no opening paragraph is the headline, or the text is nothing else."""
    headline = folded(headline)
    paragraphs = text.split("\n\n")
    if not headline or len(paragraphs) < 2:
        return text, html
    opening = [folded(paragraph) for paragraph in paragraphs[:HEADLINE_WITHIN]]
    if headline not in opening:
        return text, html
    at = opening.index(headline)
    rest = paragraphs[:at] + paragraphs[at + 1 :]
    if not any(paragraph.strip() for paragraph in rest):
        return text, html
    lines = html.split("\n")  # an element a line, but an element may span a few lines
    for number, line in enumerate(lines[: 2 * HEADLINE_WITHIN]):
        if folded(unescape(MARKUP_TAG.sub(" ", line))) == headline:
            del lines[number]
            break
    return "\n\n".join(rest).strip("\n"), "\n".join(lines)
