"""A uniform view of the text blocks of page items (ours and the ziyan-spider data).

Learning reads pages through :func:`page_blocks` only, so the two sources (blocks captured
by our crawler, and the published 2013 renders, which lack link counts) look the same.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from lxml import etree

from spidercrawl.document.selectors import Step
from spidercrawl.document.structure import (
    HEADINGS,
    Paragraph,
    paragraphs_html,
    paragraphs_text,
)
from spidercrawl.text import MARKUP_TAG

DENSITY_FEATURES = ("text_density", "composite_density")  # log1p of CETD's TD and CTD
# A link's start and end tags, paired in one pass (a pattern ``<a ...>(.*?)</a>`` read on to
# the end of the markup from every ``<a`` never closed).
_LINK_EDGE = re.compile(r"<a\b[^<>]*>|</a\s*>", re.IGNORECASE)


@dataclass
class Block:
    """One text block of one page, with the page-level facts features need."""

    page: int  # index of the page in the list given to the learner
    index: int  # position of the block in its page
    text: str
    left: float
    top: float
    width: float
    height: float
    element: str
    path: tuple[str, ...]
    selector: tuple[str, ...]  # "tag#id.class.class" per level (``steps`` as CSS)
    steps: tuple[Step, ...]
    computed: Mapping[str, str]
    link_chars: int
    link_count: int
    html_tags: int
    page_width: float
    page_height: float
    extra: dict[str, float] = field(default_factory=dict)  # e.g. density features
    # A later run of an element's own text (after a block nested in it): the index of the
    # element's first run; -1 for a first or only run (and for captures before runs)
    run_of: int = -1

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def box(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) on the rendered page."""
        return self.left, self.top, self.right, self.bottom

    @property
    def mostly_links(self) -> bool:
        """Navigation, "related" lists: never taken into an article by position alone."""
        return self.link_chars > 0.5 * self.chars


BOX_TOLERANCE_PX = 8.0  # rendering rounds boxes; an element may overhang its parent a little


def lies_inside(block: Block, box: Sequence[float], tolerance: float = BOX_TOLERANCE_PX) -> bool:
    """Whether ``block`` lies inside ``box`` (left, top, right, bottom), give or take."""
    left, top, right, bottom = box
    return (
        block.left >= left - tolerance
        and block.top >= top - tolerance
        and block.right <= right + tolerance
        and block.bottom <= bottom + tolerance
    )


@functools.lru_cache(maxsize=65536)
def template_step(step: str) -> str:
    """A selector step without its id and digits: ``div#post-12.entry.e3`` -> ``div.entry.e``.

    Ids and numbered classes change from page to page; the template's role does not.
    """
    tag, *classes = re.sub(r"#[^.]*", "", step).split(".")
    return ".".join([tag, *sorted({re.sub(r"\d+", "", c) for c in classes} - {""})])


@functools.lru_cache(maxsize=65536)
def template_path(selector: tuple[str, ...]) -> str:
    """A block's role in the site's template: its selector path without ids and digits."""
    return " > ".join(template_step(step) for step in selector)


ROLE_CLASS_STEPS = 2  # a role keeps the classes of the block's element and its parent only


@functools.lru_cache(maxsize=65536)
def role_of(selector: tuple[str, ...]) -> str:
    """A block's role in its layout (:mod:`.roles`): its selector path without ids and
    digits, with the classes of its element and its parent only. Classes further up name a
    post's category or tags as often as the template (``div.category-news.post``): kept,
    they made each story's paragraphs a role of their own, seen on too few pages to decide."""
    cut = len(selector) - ROLE_CLASS_STEPS
    return " > ".join(
        template_step(step) if number >= cut else template_step(step).split(".", 1)[0]
        for number, step in enumerate(selector)
    )


def block_text(raw: object) -> str:
    """A block's text (a string, or the list of its text-node strings), spaces folded."""
    if isinstance(raw, str):
        return " ".join(raw.split())
    if isinstance(raw, Sequence):
        return " ".join(" ".join(str(part) for part in raw).split())
    return ""


def _links(html: str) -> list[str]:
    """The markup inside each link of ``html``: from an ``<a>`` to the next ``</a>`` (a
    link opened again before it closed starts there)."""
    found: list[str] = []
    start: int | None = None
    for edge in _LINK_EDGE.finditer(html):
        if edge.group(0)[1] != "/":
            start = edge.end()
        elif start is not None:
            found.append(html[start : edge.start()])
            start = None
    return found


def _link_stats(html: str) -> tuple[int, int]:
    """(characters inside links, links) from a block's innerHTML, for data without them."""
    links = _links(html or "")
    chars = sum(len(" ".join(MARKUP_TAG.sub(" ", link).split())) for link in links)
    return chars, len(links)


def block_densities(rendered_html: str) -> dict[int, tuple[float, float]]:
    """Block number -> (text density, composite text density) of its element (CETD).

    The capture script marks each block's element with ``data-sc-block``; text density runs
    render-aware on the rendered DOM (measured once per page:
    :func:`rendered_page_measure`). Empty when the page has no usable rendered HTML.
    """
    from spidercrawl.document.density import rendered_page_measure

    measure = rendered_page_measure(rendered_html)
    if measure is None:
        return {}
    densities = {}
    for element in marked_elements(measure.body):
        i = measure.index.get(element)
        if i is None:
            continue
        for number in block_numbers(element):  # each run of the element's own text
            densities[number] = (
                math.log1p(measure.text_density[i]),
                math.log1p(max(measure.composite_density[i], 0.0)),
            )
    return densities


_MARKED = etree.XPath("descendant-or-self::*[@data-sc-block]")


def marked_elements(root: Any) -> list[Any]:
    """``root`` and the elements below it that hold captured blocks (``data-sc-block``),
    in document order: found in C, the few among the page's elements."""
    return _MARKED(root)


def block_numbers(element: Any) -> list[int]:
    """The numbers of the blocks an element holds (its ``data-sc-block``: one, or one per
    run of its own text that blocks nested in it interrupt, "3 7")."""
    marks = element.get("data-sc-block") or ""
    return [int(number) for number in marks.split() if number.isdigit()]


class _PathReader:
    """A page's block paths, read in page order: a block's path mostly repeats the previous
    block's but for its last steps, so the shared beginning is taken from that block's
    (compared as captured) and only the rest is read (reading every step of every block
    was most of the time spent making a page's blocks)."""

    def __init__(self) -> None:
        self._raw_selector: Sequence[Any] = ()
        self._steps: tuple[Step, ...] = ()
        self._css: tuple[str, ...] = ()
        self._raw_tags: Sequence[Any] = ()
        self._tags: tuple[str, ...] = ()

    def steps(self, raw: Sequence[Any]) -> tuple[tuple[Step, ...], tuple[str, ...]]:
        """The selector path's steps and their CSS."""
        shared = _shared_length(raw, self._raw_selector)
        new_steps = tuple(Step.of(s) for s in raw[shared:])
        self._steps = self._steps[:shared] + new_steps
        self._css = self._css[:shared] + tuple(step.css() for step in new_steps)
        self._raw_selector = raw
        return self._steps, self._css

    def tags(self, raw: Sequence[Any]) -> tuple[str, ...]:
        """The tag path, in lower case."""
        shared = _shared_length(raw, self._raw_tags)
        self._tags = self._tags[:shared] + tuple(str(tag).lower() for tag in raw[shared:])
        self._raw_tags = raw
        return self._tags


def _shared_length(first: Sequence[Any], second: Sequence[Any]) -> int:
    """How many items ``first`` and ``second`` share from their beginning."""
    shared, most = 0, min(len(first), len(second))
    while shared < most and first[shared] == second[shared]:
        shared += 1
    return shared


def add_densities(page: Mapping[str, Any], blocks: list[Block]) -> list[Block]:
    """``blocks`` of ``page`` built without densities (``page_blocks(..., densities=False)``),
    given them in place: the crawl builds a page's blocks once for its kind and headline,
    and extraction needs the densities too (building the blocks again cost as much as our
    whole extraction of a page). Returns ``blocks``."""
    html = page.get("rendered_html")
    densities_of = block_densities(html) if html else {}
    for block in blocks:
        values = densities_of.get(block.index, (0.0, 0.0))
        block.extra.update(zip(DENSITY_FEATURES, values, strict=True))
    return blocks


def page_blocks(
    page: Mapping[str, Any], page_number: int = 0, densities: bool = True
) -> list[Block]:
    """The non-empty text blocks of one page item (or ziyan-spider page).

    Pages with ``rendered_html`` (our crawls) also get each block's text densities in
    ``extra`` (unless ``densities`` is False: they cost a parse of the page, and
    :func:`add_densities` can add them later); the ziyan-spider data has no HTML, and its
    blocks get zeros.
    """
    with_html = densities and page.get("rendered_html")
    densities_of = block_densities(page["rendered_html"]) if with_html else {}
    body = page.get("body") or {}
    body_bound = body.get("bound") or {}
    page_width = float(body_bound.get("width") or (page.get("viewport") or {}).get("width") or 1)
    blocks = []
    raw_blocks = page.get("texts") or []
    page_height = max(
        [float(body_bound.get("height") or 0)]
        + [float((b.get("bound") or {}).get("top", 0)) for b in raw_blocks]
    )
    paths = _PathReader()
    for index, raw in enumerate(raw_blocks):
        text = block_text(raw.get("text"))
        if not text:
            continue
        bound = raw.get("bound") or {}
        html = raw.get("html") or ""
        if "link_chars" in raw:
            link_chars, link_count = int(raw["link_chars"]), int(raw.get("link_count", 0))
        else:
            link_chars, link_count = _link_stats(html)
        element = raw.get("element") or {}
        steps, selector = paths.steps(raw.get("selector") or [])
        blocks.append(
            Block(
                page=page_number,
                index=index,
                text=text,
                left=float(bound.get("left", 0)),
                top=float(bound.get("top", 0)),
                width=float(bound.get("width", 0)),
                height=float(bound.get("height", 0)),
                element=str(element.get("name", "")).lower(),
                path=paths.tags(raw.get("path") or []),
                selector=selector,
                steps=steps,
                computed=raw.get("computed") or {},
                link_chars=min(link_chars, len(text)),
                link_count=link_count,
                html_tags=html.count("<") - html.count("</"),
                page_width=max(page_width, 1.0),
                page_height=max(page_height, 1.0),
                extra=dict(zip(DENSITY_FEATURES, densities_of.get(index, (0.0, 0.0)), strict=True)),
                run_of=int(raw.get("run_of", -1)),
            )
        )
    return blocks


PARAGRAPH_CHARS = 150  # a sentence or two: text long enough to be a paragraph of its own


@dataclass
class Extraction:
    """The article text of one page as a model sees it."""

    text: str
    html: str
    paragraphs: list[Paragraph]
    blocks: list[int]  # indices (in the page's ``texts``) of the content blocks
    confidence: float
    # The median classifier margin of its paragraphs (blocks of PARAGRAPH_CHARS or more):
    # 1 or more where the model is as sure of them as of its training paragraphs (beyond
    # the SVM's margin). 0 for an article without a paragraph.
    paragraph_margin: float = 0.0

    @classmethod
    def of_blocks(cls, blocks: Sequence[Block], margins: Sequence[float]) -> Extraction:
        """The article made of ``blocks`` (in page order); its confidence is the mean of the
        classifier's margins of those blocks, squashed to (0, 1)."""
        paragraphs = block_paragraphs(blocks)
        confidence = float(np.mean([1 / (1 + math.exp(-2 * m)) for m in margins])) if blocks else 0
        long = [m for b, m in zip(blocks, margins, strict=True) if b.chars >= PARAGRAPH_CHARS]
        return cls(
            paragraphs_text(paragraphs),
            paragraphs_html(paragraphs),
            paragraphs,
            [b.index for b in blocks],
            round(confidence, 3),
            float(np.median(long)) if long else 0.0,
        )


def block_paragraphs(blocks: Sequence[Block]) -> list[Paragraph]:
    """Content blocks, in page order, as paragraphs of the right kind."""
    paragraphs = []
    for block in blocks:
        path = block.path
        quote = "blockquote" in path
        if block.element in HEADINGS or block.element == "pre":
            kind = block.element
        elif block.element == "li" or (len(path) > 1 and path[-2] in {"ul", "ol"}):
            kind = next((tag for tag in reversed(path) if tag in {"ul", "ol"}), "ul")
        else:
            kind = "p"
        group = hash(block.selector[:-1]) if kind in {"ul", "ol"} or quote else 0
        depth = max(0, sum(tag in {"ul", "ol"} for tag in path) - 1) if kind in {"ul", "ol"} else 0
        paragraphs.append(Paragraph(block.text, kind, group, quote, depth))
    return paragraphs
