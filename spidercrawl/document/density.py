"""Content extraction via text density (CETD; Sun, Song & Liao, SIGIR 2011), from the paper.

Per DOM node i of ``<body>`` (scripts, styles, comments and hidden elements removed first):

* ``C_i`` characters (non-whitespace) in its subtree, ``T_i`` tags below it,
  ``LC_i`` characters inside links, ``LT_i`` link tags (``<a>``, buttons, drop-down lists).
* Text density ``TD_i = C_i / T_i`` (Definition 1).
* Composite text density (Definition 2)::

      CTD_i = C_i/T_i * log_{ln(C_i/nLC_i * LC_i + LC_b/C_b * C_i + e)} (C_i/LC_i * T_i/LT_i)

  with ``nLC_i = C_i - LC_i`` and ``b`` the body; every zero denominator counts as 1.
* ``DensitySum_i`` = the sum of the densities of i's children (Definition 3).

Extraction: the threshold is the smallest density on the path from the node with the
largest DensitySum up to ``<body>`` (section 4.2). Algorithm 2 walks down from ``<body>``:
each node whose density reaches the threshold marks the node of largest DensitySum in its
subtree as content and passes the walk to its children. A marked subtree is content, less
the descendants whose density falls below the threshold.

Methods: ``cetd-ds`` (TD + DensitySum), ``cectd-ds`` (CTD + DensitySum) and ``cectd-s``
(CTD + DensitySum over *smoothed* densities: each node's density is averaged with its
element siblings' (weights 1/4, 1/2, 1/4), so a short paragraph between long ones is kept;
our reading of the paper's smoothing variant).

``min_region_share`` (our addition, 0 = the paper): Algorithm 2 marks a region under every
dense node, footers and promotion boxes too; keep only the regions whose unlinked text is
at least this share of the largest region's.

Render-aware: elements the browser reported invisible (``data-sc-hidden`` from the capture
script), and in raw HTML those with ``hidden``, ``aria-hidden="true"`` or an inline
``display:none``/``visibility:hidden``, are removed before counting: hidden disclaimers
were a main cause of the paper's errors.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

from spidercrawl.document.consent import may_hold_consent_dialogs, remove_consent_dialogs
from spidercrawl.document.html import UnusableDocumentError, parse_html
from spidercrawl.document.structure import (
    INLINE_TAGS,
    Paragraph,
    element_paragraphs,
    paragraphs_html,
    paragraphs_text,
)

METHODS = ("cetd-ds", "cectd-ds", "cectd-s")
DEFAULT_METHOD = "cectd-ds"
# spidercrawl's own default (method "cetd"): keep only marked regions with at least half the
# unlinked text of the largest. On ../shared/datasets (`python -m spidercrawl.evaluate
# ../shared/datasets --methods cetd,cectd-ds`), F1 per page without it
# (cectd-ds) 0.836 / 0.748 / 0.870, with it 0.947 / 0.839 / 0.918 (cleanportaleval /
# dragnet / l3s-gn1; the share was chosen on these datasets).
PRODUCT_REGION_SHARE = 0.5

# Removed before counting: never visible text.
INVISIBLE_TAGS = ("script", "style", "noscript", "template", "iframe", "object", "svg", "head")
LINK_TAGS = frozenset({"a", "button", "select"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def visible_chars(text: str | None) -> int:
    """Characters that are not whitespace (``str.split`` and ``\\s`` agree on what is).
    Most tails between elements are whitespace only, told at once by ``isspace``."""
    if not text or text.isspace():
        return 0
    return len("".join(text.split()))


@dataclass
class DensityResult:
    """An extraction: text, clean HTML, paragraphs, and the threshold behind it."""

    method: str
    text: str = ""
    html: str = ""
    paragraphs: list[Paragraph] = field(default_factory=list)
    threshold: float = 0.0
    content: set[lxml.html.HtmlElement] = field(default_factory=set)  # elements kept
    reason: str = ""  # why the text is empty; "" when it is not

    @property
    def ok(self) -> bool:
        return bool(self.text)


_DOCUMENT_TAGS = frozenset({"html", "body"})
_DROPPED = "sc-dropped"  # the tag hidden elements are given on their way out
# The attributes that can hide an element, found as attributes: libxml2 finds them faster
# than it tests every element for them (docs/measurements.md).
_HIDING_ATTRIBUTES = etree.XPath(
    " | ".join(
        f"./@{name} | .//@{name}" for name in ("data-sc-hidden", "hidden", "aria-hidden", "style")
    )
)


def remove_invisible(root: lxml.html.HtmlElement, render_aware: bool = True) -> None:
    """Drop elements that never show text (scripts, styles...) and, render-aware, hidden ones.

    The document's ``<html>`` and ``<body>`` stay whatever they are marked: a page whose
    body is hidden until scripts show it (``<body style="display:none">`` in raw HTML), or
    marked hidden by a capture for a stray hidden text node in it (5 dataset pages of
    nuttynomads.posterous.com, captured before that was fixed), is still read."""
    # Dropped in C, each element's tail text kept where it stood (as ``drop_tree`` keeps
    # it): dropping them one by one in Python was a twentieth of a never-seen page's time.
    etree.strip_elements(root, *INVISIBLE_TAGS, with_tail=False)
    if may_hold_consent_dialogs(root):  # never text a reader wants, shown or not
        remove_consent_dialogs(root)
    if not render_aware:
        return
    # XPath (in C) finds the few elements with any of these attributes; walking every
    # element in Python cost a tenth of the fast path's time. The hidden ones are renamed
    # and dropped in one pass, as above.
    hidden = False
    for element in dict.fromkeys(attribute.getparent() for attribute in _HIDING_ATTRIBUTES(root)):
        if element.tag in _DOCUMENT_TAGS or element.getparent() is None:
            continue
        attrib = element.attrib
        if (
            "data-sc-hidden" in attrib
            or "hidden" in attrib
            or attrib.get("aria-hidden") == "true"
            or _HIDDEN_STYLE.search(attrib.get("style", ""))
        ):
            element.tag, hidden = _DROPPED, True
    if hidden:
        etree.strip_elements(root, _DROPPED, with_tail=False)


def shows_text(markup: str) -> bool:
    """Whether ``markup`` (raw HTML) has any text a reader could see: a page the browser
    showed empty is read from its raw HTML only where that HTML has some."""
    return bool(shown_text(markup, render_aware=False).strip())


def shown_text(markup: str, render_aware: bool = True) -> str:
    """The text of ``markup``'s body (raw HTML) less what never shows (scripts, styles,
    and render-aware, hidden elements), a space between elements; "" where it does not
    parse."""
    try:
        root = parse_html(markup)
    except UnusableDocumentError:
        return ""
    remove_invisible(root, render_aware)
    return " ".join(body_of(root).itertext())


def body_of(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    body = root.find("body") if root.tag == "html" else None
    if body is None:
        body = next(root.iter("body"), None)
    return body if body is not None else root


class TextDensity:
    """Per-node counts and densities of one document body, computed without recursion."""

    def __init__(self, body: lxml.html.HtmlElement) -> None:
        self.body = body
        # Pre-order: a parent always comes before its children.
        self.nodes = list(body.iter(etree.Element))  # elements only: no comments, no PIs
        self.index = index = {el: i for i, el in enumerate(self.nodes)}
        n = len(self.nodes)
        parent = [-1] * n
        children: list[list[int]] = [[] for _ in range(n)]
        chars, tags, link_chars, link_tags = [0] * n, [0] * n, [0] * n, [0] * n
        # One pass over every node: an element's own text counts for it, any node's tail
        # (a comment's too) for its parent; then one pass adding each node to its parent
        # (the same counts as walking each element's children, a tenth quicker).
        for node in body.iter():
            i = index.get(node)
            if i is not None and node.text:
                chars[i] += visible_chars(node.text)
            if i == 0:  # the body: its tail is outside it
                continue
            up = index.get(node.getparent(), -1)
            if up < 0:
                continue
            if node.tail:
                chars[up] += visible_chars(node.tail)
            if i is not None:
                parent[i] = up
                children[up].append(i)
        # Reverse pre-order: a node is complete before it is added to its parent.
        for i in range(n - 1, -1, -1):
            if self.nodes[i].tag in LINK_TAGS:
                link_chars[i] = chars[i]
                link_tags[i] += 1
            up = parent[i]
            if up >= 0:
                chars[up] += chars[i]
                tags[up] += 1 + tags[i]
                link_chars[up] += link_chars[i]
                link_tags[up] += link_tags[i]
        self.parent, self.children = parent, children
        self.chars, self.tags, self.link_chars, self.link_tags = chars, tags, link_chars, link_tags
        self.text_density = [c / (t or 1) for c, t in zip(chars, tags, strict=True)]
        self.composite_density = [self._composite(i) for i in range(n)]

    def _composite(self, i: int) -> float:
        c, t, lc, lt = self.chars[i], self.tags[i], self.link_chars[i], self.link_tags[i]
        if c == 0:
            return 0.0
        c_body, lc_body = self.chars[0] or 1, self.link_chars[0]
        non_link = c - lc
        base = math.log((c / (non_link or 1)) * lc + (lc_body / c_body) * c + math.e)
        argument = (c / (lc or 1)) * ((t or 1) / (lt or 1))
        return (c / (t or 1)) * math.log(argument) / (math.log(base) or 1.0)

    def density_sums(self, density: list[float]) -> list[float]:
        return [sum(density[j] for j in kids) for kids in self.children]

    def smoothed(self, density: list[float]) -> list[float]:
        """Each node's density averaged with its element siblings' (1/4, 1/2, 1/4)."""
        result = list(density)
        for kids in self.children:
            for position, j in enumerate(kids):
                weight, total = 0.5, 0.5 * density[j]
                if position > 0:
                    weight, total = weight + 0.25, total + 0.25 * density[kids[position - 1]]
                if position + 1 < len(kids):
                    weight, total = weight + 0.25, total + 0.25 * density[kids[position + 1]]
                result[j] = total / weight
        return result


class DensityExtractor:
    """The no-training extractor: ``DensityExtractor("cectd-ds").extract(html)``.

    ``product()`` builds the configuration spidercrawl uses for cold start and fallback.
    """

    @classmethod
    def product(cls, render_aware: bool = True) -> DensityExtractor:
        return cls(DEFAULT_METHOD, render_aware, PRODUCT_REGION_SHARE)

    def __init__(
        self, method: str = DEFAULT_METHOD, render_aware: bool = True, min_region_share: float = 0.0
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown text-density method {method!r}; choose from {METHODS}")
        if not 0.0 <= min_region_share <= 1.0:
            raise ValueError("min_region_share is a share: between 0 and 1")
        self.method = method
        self.render_aware = render_aware
        self.min_region_share = min_region_share

    def extract(self, markup: str | bytes) -> DensityResult:
        """Extract the main content of one page. Never raises on bad input: see ``reason``."""
        try:
            root = parse_html(markup)
        except UnusableDocumentError as error:
            return DensityResult(self.method, reason=str(error))
        return self.extract_tree(root)

    def extract_tree(self, root: lxml.html.HtmlElement) -> DensityResult:
        """Extract from a parsed document (it is modified: invisible elements are removed)."""
        remove_invisible(root, self.render_aware)
        return self.extract_measured(TextDensity(body_of(root)))

    def extract_measured(self, measure: TextDensity) -> DensityResult:
        """Extract from a measured body (its invisible elements already removed)."""
        body = measure.body
        if not measure.chars[0]:
            return DensityResult(self.method, reason="the page has no visible text")
        density = measure.text_density if self.method == "cetd-ds" else measure.composite_density
        if self.method == "cectd-s":
            density = measure.smoothed(density)
        density_sum = measure.density_sums(density)
        threshold = self._threshold(measure, density, density_sum)
        marked = self._mark_content(measure, density, density_sum, threshold)
        if self.min_region_share:
            marked = self._main_regions(measure, marked)
        keep, pass_through = self._content_nodes(measure, density, marked, threshold)
        paragraphs = list(element_paragraphs(body, keep | pass_through, pass_through))
        result = DensityResult(
            self.method,
            text=paragraphs_text(paragraphs),
            html=paragraphs_html(paragraphs),
            paragraphs=paragraphs,
            threshold=threshold,
            content=keep,
        )
        if not result.text:
            result.reason = "no node reached the density threshold"
        return result

    @staticmethod
    def _threshold(measure: TextDensity, density: list[float], density_sum: list[float]) -> float:
        """The smallest density on the path from the largest-DensitySum node up to body."""
        node = max(range(len(density_sum)), key=density_sum.__getitem__)
        threshold = density[node]
        while node > 0:
            node = measure.parent[node]
            threshold = min(threshold, density[node])
        return threshold

    @staticmethod
    def _mark_content(
        measure: TextDensity, density: list[float], density_sum: list[float], threshold: float
    ) -> set[int]:
        """Algorithm 2, iteratively: the nodes marked as content."""
        n = len(density)
        # For every node, the node of largest DensitySum in its subtree. Links and what is
        # inside them are no candidates: a link is navigation, never the article's container.
        candidate_sum = [
            0.0 if measure.link_chars[i] * 2 > measure.chars[i] else density_sum[i]
            for i in range(n)
        ]
        best = list(range(n))
        for i in range(n - 1, -1, -1):
            for j in measure.children[i]:
                if candidate_sum[best[j]] > candidate_sum[best[i]]:
                    best[i] = best[j]
        marked: set[int] = set()
        pending = [0]
        while pending:
            i = pending.pop()
            if density[i] >= threshold:
                marked.add(best[i])
                pending.extend(measure.children[i])
        return marked

    def _main_regions(self, measure: TextDensity, marked: set[int]) -> set[int]:
        """Drop marked regions whose unlinked text is a small share of the largest one's.

        Algorithm 2 marks a region under every dense enough node, footers and promotion boxes
        included; the article is the region with the most text that is not links.
        """
        own_text = {i: measure.chars[i] - measure.link_chars[i] for i in marked}
        largest = max(own_text.values(), default=0)
        return {i for i, chars in own_text.items() if chars >= self.min_region_share * largest}

    @staticmethod
    def _content_nodes(
        measure: TextDensity, density: list[float], marked: set[int], threshold: float
    ) -> tuple[set[lxml.html.HtmlElement], set[lxml.html.HtmlElement]]:
        """A marked subtree is content, less its block descendants below the threshold.

        Plain text elements (no tags, no links below them) always stay: the threshold comes
        from an ancestor, and on a flat page every paragraph is below its parent's density.

        Returns the content elements and the ancestors that lead to them.
        """
        n = len(density)
        # Inline elements (links, emphasis) go with their paragraph.
        keep: set[int] = set()
        nodes = measure.nodes
        for i in range(n):
            plain_text = not measure.tags[i] and not measure.link_chars[i]
            inherited = measure.parent[i] in keep and (
                density[i] >= threshold or plain_text or nodes[i].tag in INLINE_TAGS
            )
            if i in marked or inherited:
                keep.add(i)
        return {nodes[i] for i in keep}, {nodes[i] for i in _ancestors(measure, keep)}


def _ancestors(measure: TextDensity, nodes: set[int]) -> set[int]:
    """The ancestors of kept nodes must be walked through (their own text is not kept)."""
    found: set[int] = set()
    for i in nodes:
        parent = measure.parent[i]
        while parent >= 0 and parent not in nodes and parent not in found:
            found.add(parent)
            parent = measure.parent[parent]
    return found


def rendered_page_measure(rendered_html: str) -> TextDensity | None:
    """The render-aware densities of one rendered page's body, measured once however many
    stages read them (the blocks' density features, the cold-start region): parsing the
    page twice cost a fifth of a never-seen page's extraction time. None when the page is
    no usable document. Callers only read it (it is shared)."""
    return _measured(rendered_html)[0]


@functools.lru_cache(maxsize=2)
def rendered_page_density(rendered_html: str) -> DensityResult:
    """The product's text density extraction (``DensityExtractor.product()``) of one
    rendered page, on its shared measure (:func:`rendered_page_measure`), made once: the
    blocks' extraction and the consensus both read it. Callers only read it (it is shared)."""
    extractor = DensityExtractor.product()
    measure, unusable = _measured(rendered_html)
    if measure is None:
        return DensityResult(extractor.method, reason=unusable)
    return extractor.extract_measured(measure)


@functools.lru_cache(maxsize=2)
def _measured(rendered_html: str) -> tuple[TextDensity | None, str]:
    """(the page's measure, "") or (None, why the page is no usable document)."""
    try:
        root = parse_html(rendered_html)
    except UnusableDocumentError as error:
        return None, str(error)
    remove_invisible(root)
    return TextDensity(body_of(root)), ""
