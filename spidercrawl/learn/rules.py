"""A learned layout's parser as a fast path: its container, less what to leave out.

Seed 001, section 6: once a site is learned, its article is found in raw HTML by a few
selectors, with no browser and no classifier. The selectors are a parser as a person
writes one (:mod:`.parser`): the article's container, and inside it the roles and kinds
that are not the story, induced from the vote of the training pages' readings (the site
model's mask, the cross-site blocks, trafilatura, readability). The article is the
container's text in document order: paragraphs, sub-headings, lists, quotes, and text
standing directly in it.

:class:`ExtractionRules` is fitted on a layout's training pages and the content blocks the
site model chose; ``extract(html)`` applies the parser to any HTML, and ``check(...)`` says
whether the result looks like the site's articles (text length in the learned range,
links, share of the page, relevance to the description), so a page it does not fit goes
to the arbiter or the browser. Whether the layout is served by its parser at all is
decided on its training pages by the text the parser and the page-level reading dispute
(:func:`~.parser.story_verdict`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import lxml.html
import numpy as np

from spidercrawl.document.blocks import block_text
from spidercrawl.document.density import body_of, remove_invisible
from spidercrawl.document.html import UnusableDocumentError, parse_html, parse_raw_html
from spidercrawl.document.page import first_description
from spidercrawl.document.prose import ProseCoverage, prose_coverage
from spidercrawl.document.structure import (
    Paragraph,
    element_paragraphs,
    paragraphs_html,
    paragraphs_text,
)
from spidercrawl.learn.consensus_labels import ConsensusArticle
from spidercrawl.learn.parser import (
    ParserPart,
    cut,
    induce,
    page_evidence,
    repeated_phrases,
    story_verdict,
    subtree,
    without_lines,
)
from spidercrawl.learn.relevance import lcs_relevance
from spidercrawl.text import tokenize

# How the render decision parsed the training pages' raw HTML: as a browser builds it
# (:func:`~spidercrawl.document.html.parse_raw_html`). Rules fitted before that
# lack the attribute: their decision read libxml2's tree, which called plain-HTML
# articles "drawn by scripts" (three l3s-gn1 sites), so such models are learned again.
RAW_PARSER = "html5"

# The render decision (:attr:`ExtractionRules.render_reason`): from at least this many
# training pages with raw HTML, a layout whose rules hold on under this share of them is
# rendered directly.
MIN_RAW_HTML_PAGES = 2
RAW_HTML_HOLD_SHARE = 0.5

# The container check: on a site's training pages the rules take nearly all the text of
# the element their matches share (``div.post-body``); a page where they take much less
# of it holds article text of a kind no training page showed there (a list of items, a
# second page of the story) and the rules miss it. Such a page is rendered as a page the
# rules do not fit. The floor is ``CONTAINER_SHARE_FACTOR`` times the least share on the
# training pages' raw HTML, from at least ``MIN_CONTAINER_PAGES`` pages; chosen leaving
# one dataset out among 0.6-0.9 times the least or the second least share
# (docs/measurements.md).
MIN_CONTAINER_PAGES = 3
CONTAINER_SHARE_FACTOR = 0.7

# The page-share check: rules that take more of a page's text than 1.5 times the most they
# took of a training page's have taken more than the article (a template whose container
# holds the whole page). From fewer than ``PAGE_SHARE_PAGES`` training pages that bound
# says little (a page whose story is longer against its template than theirs fails it),
# and it is then never under ``PAGE_SHARE_FLOOR``. Not chosen on the dev sets
# (docs/measurements.md).
PAGE_SHARE_PAGES = 3
PAGE_SHARE_FLOOR = 0.6


@dataclass
class RuleExtraction:
    """What the rules found in one page's HTML."""

    text: str = ""
    html: str = ""
    paragraphs: list[Paragraph] = field(default_factory=list)
    rules_matched: int = 0
    page_chars: int = 0  # visible text of the whole page
    link_chars: int = 0  # of the extracted text, characters inside links
    reason: str = ""  # why nothing was extracted, when nothing was
    confidence: float = 0.0  # set once the check passed: the rules' training precision
    layout: int = 0  # which layout's rules (LayoutRules), whose check applies
    page_text: str = ""  # the whole page's visible text, spaces folded ("" when not read)
    prose: ProseCoverage = field(default_factory=ProseCoverage)  # the page's prose, taken
    # words of the element all the rules' matches lie in (0: that is the page's body)
    container_words: int = 0

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def container_share(self) -> float:
        """The share of their container's words the rules took (1 without a container)."""
        if not self.container_words:
            return 1.0
        return min(1.0, len(self.text.split()) / self.container_words)


class FastPathArticle:
    """A page's article as the fast path cut and checked it, and the version of the model
    whose rules did (the pipeline reuses it while that model is in use).

    A plain class, not a dataclass: it rides in the page item, and itemadapter would turn a
    dataclass into a dict on its way."""

    __slots__ = ("extraction", "model_version")

    def __init__(self, extraction: RuleExtraction, model_version: str) -> None:
        self.extraction = extraction
        self.model_version = model_version


@dataclass
class RuleCheck:
    """The verdict on a rule extraction: ``ok``, or why not."""

    ok: bool
    reason: str = ""


class ExtractionRules:
    """A layout's parser (container and exclusions, :mod:`.parser`), learned from its
    training pages, with the check of what it cuts.

    ``min_recall``: the share of the vote's article words the parser must take on the
    training pages to be usable at all."""

    def __init__(self, min_recall: float = 0.6) -> None:
        self.min_recall = min_recall

    def fit(
        self, pages: Sequence[Mapping[str, Any]], content: Sequence[tuple[int, int]]
    ) -> ExtractionRules:
        """Learn the parser from ``pages`` (rendered page items, their DOM and raw HTML)
        and the site model's content blocks as (page, block index) pairs: the model's mask
        is one reading of each page; the page's never-seen readings
        (``consensus_article``), where it has them, are the others."""
        masks: dict[int, list[int]] = {}
        for number, index in content:
            masks.setdefault(number, []).append(index)
        bodies, readings, arbiter = [], [], []
        for number, page in enumerate(pages):
            body = _training_body(page)
            if body is None:
                continue
            texts = page.get("texts") or []
            chosen = sorted(masks.get(number, []))
            mask = " ".join(block_text(texts[i].get("text")) for i in chosen if 0 <= i < len(texts))
            consensus = ConsensusArticle.of_page(page)
            bodies.append(body)
            readings.append([mask, *(consensus.readings if consensus else [])])
            arbiter.append(consensus.text if consensus else "")
        repeated = repeated_phrases(bodies)
        evidence = [
            page_evidence(body, texts, repeated)
            for body, texts in zip(bodies, readings, strict=True)
        ]
        induced = induce(evidence)
        self.parts_: list[ParserPart] = [
            *induced.containers,
            *induced.exclusions,
            *induced.summaries,
            *induced.markup,
        ]
        self.recall_ = induced.recall
        self.template_lines_ = frozenset(induced.template_lines)
        self.serving_ = story_verdict(evidence, arbiter, bodies, readings) if any(arbiter) else ""
        in_dom = [  # the parser on each training page's DOM: the check's and the raw test's
            self.extract(page["rendered_html"]) if page.get("rendered_html") and self.parts_
            else None
            for page in pages
        ]  # fmt: skip
        self._fit_check(pages, in_dom)
        self._fit_raw_html(pages, in_dom)
        return self

    @property
    def containers(self) -> list[ParserPart]:
        return [part for part in getattr(self, "parts_", []) if part.kind == "container"]

    @property
    def exclusions(self) -> list[ParserPart]:
        return [part for part in getattr(self, "parts_", []) if part.kind == "exclusion"]

    @property
    def summaries(self) -> list[ParserPart]:
        return [part for part in getattr(self, "parts_", []) if part.kind == "summary"]

    @property
    def usable(self) -> bool:
        """A parser with a container that takes enough of the training articles, and that
        the text in dispute with the page-level reading does not overrule."""
        return bool(self.containers) and self.recall_ >= self.min_recall and not self.serving_

    @property
    def read_by_arbiter(self) -> str:
        """Why the layout's pages are read by the arbiter, not cut by its parser ("" where
        the parser serves them)."""
        if self.usable:
            return ""
        if not self.containers:
            return "no container holds the text the vote keeps"
        if self.serving_:
            return self.serving_
        return (
            f"its parser takes {self.recall_:.0%} of the text the vote keeps on the training "
            f"pages (under {self.min_recall:.0%})"
        )

    # -- applying ---------------------------------------------------------------------------
    def extract(
        self,
        html: str | bytes | lxml.html.HtmlElement | RuleExtraction,
        content_type: str | None = None,
    ) -> RuleExtraction:
        """The parser's article from raw (or rendered) HTML, or from a parsed document
        (which this changes: invisible elements are removed from it)."""
        root = _document(html, content_type)
        if isinstance(root, RuleExtraction):  # nothing to parse
            return root
        remove_invisible(root)
        body = body_of(root)
        page_text = " ".join(body.text_content().split())
        kept = [part for part in self.parts_ if part.kind == "kept"]
        found = cut(body, self.containers, self.exclusions, self.summaries, kept)
        if found is None:
            return RuleExtraction(
                page_chars=len(page_text), page_text=page_text,
                reason="the layout's container is not on the page",
            )  # fmt: skip
        paragraphs = without_lines(
            element_paragraphs(body, found.keep, found.pass_through), self.template_lines_
        )
        kept = found.keep - found.pass_through
        # The readers' comments it left out are neither the page's prose nor its container's
        # words that an article would miss.
        prose = prose_coverage(body, kept, subtree(found.comments))
        container_words = sum(len(e.text_content().split()) for e in found.containers)
        container_words -= sum(len(e.text_content().split()) for e in found.comments)
        link_chars = sum(  # the article's links, fewer than the page's
            len(" ".join(a.text_content().split()))
            for a in kept
            if a.tag == "a" and not any(parent in kept for parent in a.iterancestors("a"))
        )
        return RuleExtraction(
            paragraphs_text(paragraphs),
            paragraphs_html(paragraphs),
            paragraphs,
            len(found.containers),
            len(page_text),
            link_chars,
            page_text=page_text,
            prose=prose,
            container_words=container_words,
        )

    # -- checking ---------------------------------------------------------------------------
    def _fit_check(
        self, pages: Sequence[Mapping[str, Any]], in_dom: Sequence[RuleExtraction | None]
    ) -> None:
        """The ranges a good extraction of this site falls in, from the training pages
        (``in_dom``: the rules' extraction from each page's DOM, None without one)."""
        chars, shares, link_shares, relevance = [], [], [], []
        for page, result in zip(pages, in_dom, strict=True):
            if result is None or not result.text:
                continue
            chars.append(result.chars)
            shares.append(result.chars / max(result.page_chars, 1))
            link_shares.append(result.link_chars / max(result.chars, 1))
            reference = first_description(page)
            if reference:
                relevance.append(lcs_relevance(result.text, reference))
        self.check_ = {
            "pages": len(chars),
            "min_chars": int(0.25 * min(chars)) if chars else 0,
            "max_chars": int(4 * max(chars)) if chars else 0,
            "max_page_share": min(1.0, 1.5 * max(shares)) if shares else 1.0,
            "max_link_share": max(0.25, 2 * max(link_shares)) if link_shares else 0.25,
            # Relevance is checked only where the site's articles echo their description.
            "min_relevance": round(0.5 * float(np.quantile(relevance, 0.1)), 3)
            if len(relevance) >= 3 and float(np.median(relevance)) >= 0.3
            else 0.0,
        }

    def _fit_raw_html(
        self, pages: Sequence[Mapping[str, Any]], in_dom: Sequence[RuleExtraction | None]
    ) -> None:
        """On the training pages that carry both, whether the rules find in the raw HTML
        (what the fast path fetches) the article they find in the browser's DOM.

        The rules are learned from the DOM; the raw HTML can lack the article (a script
        draws it) or the wrappers the rules go through (the browser adds ``tbody``, scripts
        add wrappers and classes). Where they do not hold, the fast path would fetch every
        page twice for nothing: :attr:`render_reason` says so and the crawl renders the
        layout's pages directly."""
        tried = held = 0
        container_shares = []
        for page, from_dom in zip(pages, in_dom, strict=True):
            raw = page.get("raw_html")
            if not raw or from_dom is None or not from_dom.text:
                continue
            tried += 1
            in_raw = self.extract(raw_document(raw))
            if self.check(in_raw).ok and _same_words(in_raw.text, from_dom.text):
                held += 1
                container_shares.append(in_raw.container_share)
        self.raw_html_ = {"pages": tried, "held": held}
        self.raw_parser_ = RAW_PARSER
        self.check_["min_container_share"] = container_floor(container_shares)

    @property
    def render_reason(self) -> str:
        """Why this layout's pages should be rendered with no plain fetch first ("" when
        its rules hold on raw HTML, or when no training page told)."""
        raw = getattr(self, "raw_html_", None) or {}
        tried, held = raw.get("pages", 0), raw.get("held", 0)
        if tried < MIN_RAW_HTML_PAGES or held >= RAW_HTML_HOLD_SHARE * tried:
            return ""
        return (
            f"the rules found the article in the raw HTML of {held} of {tried} training "
            f"pages, in the browser's DOM of all {tried}: scripts draw it"
        )

    @property
    def stale_render_decision(self) -> bool:
        """Whether the rules send their pages to the browser by a decision made on raw
        HTML parsed another way than the fast path parses it now (:data:`RAW_PARSER`)."""
        return bool(self.render_reason) and getattr(self, "raw_parser_", "") != RAW_PARSER

    def check(self, result: RuleExtraction, reference: str = "") -> RuleCheck:
        """Whether ``result`` looks like this site's articles; the reason when it does not."""
        limits = self.check_
        if not result.text:
            return RuleCheck(False, result.reason or "the rules found no text")
        if result.chars < limits["min_chars"]:
            return RuleCheck(
                False, f"too little text ({result.chars} chars, expected ≥ {limits['min_chars']})"
            )
        if result.chars > limits["max_chars"]:
            return RuleCheck(
                False, f"too much text ({result.chars} chars, expected ≤ {limits['max_chars']})"
            )
        share = result.chars / max(result.page_chars, 1)
        most = limits["max_page_share"]
        if limits.get("pages", PAGE_SHARE_PAGES) < PAGE_SHARE_PAGES:
            most = max(most, PAGE_SHARE_FLOOR)
        if share > most and result.page_chars > limits["min_chars"]:
            return RuleCheck(False, f"the rules took {share:.0%} of the page's text")
        link_share = result.link_chars / max(result.chars, 1)
        if link_share > limits["max_link_share"]:
            return RuleCheck(False, f"{link_share:.0%} of the text is links (navigation?)")
        floor = limits.get("min_container_share") or 0.0
        if result.container_share < floor:
            return RuleCheck(
                False,
                f"the rules took {result.container_share:.0%} of their container's words "
                f"(the site's articles ≥ {floor:.0%}): part of the article missed",
            )
        if limits["min_relevance"] and reference:
            relevance = lcs_relevance(result.text, reference)
            if relevance < limits["min_relevance"] and _page_echoes(result, reference, limits):
                return RuleCheck(
                    False, f"the text does not echo the description (relevance {relevance:.2f})"
                )
        return RuleCheck(True)

    def summary(self) -> dict[str, Any]:
        return {
            "containers": [_part_summary(part) for part in self.containers],
            "exclusions": [_part_summary(part) for part in self.exclusions],
            "summaries": [_part_summary(part) for part in self.summaries],
            "recall": round(self.recall_, 4),
            "usable": self.usable,
            "served": f"by the arbiter: {self.read_by_arbiter}"
            if self.read_by_arbiter
            else "by its parser",
            "check": self.check_,
            "raw_html": getattr(self, "raw_html_", None),
            "render": self.render_reason or None,
        }


def _part_summary(part: ParserPart) -> dict[str, Any]:
    return {
        "css": part.css, "pages": part.pages, "kept": part.kept_share,
        "repeated": part.repeated_share, "why": part.why,
    }  # fmt: skip


def _training_body(page: Mapping[str, Any]) -> lxml.html.HtmlElement | None:
    """A training page's parsed DOM (its raw HTML where it has no DOM), invisible elements
    removed; None where it has neither or they do not parse."""
    html = page.get("rendered_html") or page.get("raw_html")
    if not html:
        return None
    root = _document(html, None) if page.get("rendered_html") else raw_document(html)
    if isinstance(root, RuleExtraction):
        return None
    remove_invisible(root)
    return body_of(root)


def container_floor(shares: Sequence[float]) -> float:
    """The least share of their container's words the rules may take on a page of this
    layout, from the training pages' shares (0, no floor, from too few pages)."""
    if len(shares) < MIN_CONTAINER_PAGES:
        return 0.0
    return round(CONTAINER_SHARE_FACTOR * min(shares), 3)


def _page_echoes(result: RuleExtraction, reference: str, limits: Mapping[str, Any]) -> bool:
    """Whether the page as a whole echoes its description as the layout's articles do
    (``min_relevance`` is half the training pages' 10% quantile, so this is that quantile).

    A rules' text that misses the description is suspect only where the description's
    words are on the page: then the rules took something other than the article. Where the
    page does not echo it either (a teaser written apart from the text), low relevance says
    nothing about the rules; rejecting it rendered good pages for nothing (a live-blog
    layout learned from 3 pages: 1 page in 10). Without the page's text (a result made by
    hand), the text's relevance alone decides, as before."""
    if not result.page_text:
        return True
    return lcs_relevance(result.page_text, reference) >= 2 * limits["min_relevance"]


def _same_words(text: str, reference: str, share: float = 0.8) -> bool:
    """Whether ``text`` holds at least ``share`` of ``reference``'s words (as a multiset)."""
    wanted = Counter(tokenize(reference))
    found = Counter(tokenize(text))
    total = sum(wanted.values())
    return total == 0 or sum((wanted & found).values()) >= share * total


def raw_document(html: str | bytes) -> lxml.html.HtmlElement | RuleExtraction:
    """A page's raw HTML parsed as a browser builds it (what the rules learned from the
    browser's DOM expect), or an empty extraction saying why there is nothing to parse."""
    try:
        return parse_raw_html(html)
    except UnusableDocumentError as error:
        return RuleExtraction(reason=str(error))


def _document(
    html: str | bytes | lxml.html.HtmlElement | RuleExtraction, content_type: str | None
) -> lxml.html.HtmlElement | RuleExtraction:
    """The parsed page, or an empty extraction saying why there is none (one already made,
    as :func:`raw_document` makes it, passes through)."""
    if isinstance(html, (lxml.html.HtmlElement, RuleExtraction)):
        return html
    try:
        return parse_html(html, content_type)
    except UnusableDocumentError as error:
        return RuleExtraction(reason=str(error))


class LayoutRules:
    """The extraction rules of a site of several layouts (:mod:`.layouts`): each layout's
    own rules and check, tried in turn on a page, largest layout first; the first whose
    rules pass their check (without the description, which :meth:`check` then adds) gives
    the page's article. The same interface as :class:`ExtractionRules`."""

    def __init__(self, layouts: Sequence[ExtractionRules]) -> None:
        self.layouts = [rules for rules in layouts if rules.usable]
        self.all_layouts = list(layouts)
        self.recall_ = min((r.recall_ for r in self.all_layouts), default=0.0)
        minimums = [r.check_["min_chars"] for r in self.layouts if r.check_.get("min_chars")]
        self.check_ = {"min_chars": min(minimums, default=0), "layouts": len(self.layouts)}

    @property
    def summaries(self) -> list[ParserPart]:
        return [part for part in getattr(self, "parts_", []) if part.kind == "summary"]

    @property
    def usable(self) -> bool:
        return bool(self.layouts)

    @property
    def render_reason(self) -> str:
        """Why the site's pages should be rendered directly: every usable layout's rules
        failed on the raw HTML of its training pages ("" when one layout's held). A page of
        a layout that needs the browser while others do not is fetched plainly first, like
        any page the rules do not fit, and the learning pipeline does not take it for
        drift."""
        reasons = [rules.render_reason for rules in self.layouts]
        if not reasons or not all(reasons):
            return ""
        return reasons[0] if len(reasons) == 1 else f"all {len(reasons)} layouts: {reasons[0]}"

    @property
    def stale_render_decision(self) -> bool:
        """Whether the site is rendered directly by a decision made on raw HTML parsed
        another way than the fast path parses it now."""
        return bool(self.render_reason) and any(
            rules.stale_render_decision for rules in self.layouts
        )

    def extract(
        self,
        html: str | bytes | lxml.html.HtmlElement | RuleExtraction,
        content_type: str | None = None,
    ) -> RuleExtraction:
        root = _document(html, content_type)
        if isinstance(root, RuleExtraction):  # nothing to parse
            return root
        first: RuleExtraction | None = None
        for number, rules in enumerate(self.layouts):
            result = rules.extract(root)
            result.layout = number
            if rules.check(result).ok:
                return result
            first = first or result
        if first is None:
            return RuleExtraction(reason="no layout has usable rules")
        if first.text:
            first.reason = "no layout's rules fit this page"
        return first

    def check(self, result: RuleExtraction, reference: str = "") -> RuleCheck:
        if not self.layouts:
            return RuleCheck(False, "no layout has usable rules")
        verdict = self.layouts[min(result.layout, len(self.layouts) - 1)].check(result, reference)
        if not verdict.ok and result.reason:
            return RuleCheck(False, result.reason)
        return verdict

    def summary(self) -> dict[str, Any]:
        return {
            "layouts": [rules.summary() for rules in self.all_layouts],
            "recall": round(self.recall_, 4),
            "usable": self.usable,
            "check": self.check_,
            "render": self.render_reason or None,
        }
