"""Extraction rules: a learned site's content blocks as a few CSS-like selector paths.

Seed 001, section 6: once a site is learned, the selector paths of its content blocks
(tag, id and classes of every element from below ``<body>`` down to the block) are merged
into a handful of rules that find the article in raw HTML, with no browser and no
classifier. Two paths of equal length whose tags agree merge step by step, keeping the id
where both have the same one and the classes both share::

    body > div#a-386.article > div.p1 > p.p1.paragraph
    body > div#a-2383.article > div.p9 > p.p9.paragraph
    -> body > div.article > div > p.paragraph

A merge is kept only if the merged rule still matches (almost) no non-content block of the
training pages; merging repeats until nothing changes. Before merging, ids and classes
found on one training page only are dropped (:func:`without_page_marks`); after it, each
rule keeps its shortest tail that tells content from the rest (:func:`shorten`). Each rule
keeps its precision and recall (in characters) on the training pages, and rules below
``min_precision`` are dropped. Where the training pages carry their raw HTML, the rules
are tried on it too: the render decision (:attr:`ExtractionRules.render_reason`).

:class:`ExtractionRules` is fitted on the training pages and the content blocks the site
model chose; ``extract(html)`` applies the rules to any HTML with lxml's XPath, and
``check(...)`` says whether the result looks like the site's articles (text length in the
learned range, links, share of the page, relevance to the description), so a page the
rules do not fit can be rendered instead.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import lxml.html
import numpy as np
from lxml import etree

from spidercrawl.document.density import body_of, remove_invisible, visible_chars
from spidercrawl.document.html import UnusableDocumentError, parse_html, parse_raw_html
from spidercrawl.document.page import first_description
from spidercrawl.document.prose import ProseCoverage, prose_coverage
from spidercrawl.document.structure import (
    BLOCK_TAGS,
    Paragraph,
    element_paragraphs,
    paragraphs_html,
    paragraphs_text,
)
from spidercrawl.learn.blocks import block_text, template_step
from spidercrawl.learn.consensus_labels import ConsensusArticle, words_held
from spidercrawl.learn.relevance import lcs_relevance
from spidercrawl.learn.selectors import SelectorPath, Step, merge_paths, path_css
from spidercrawl.text import tokenize


@dataclass(frozen=True)
class Rule:
    """A selector path down to content blocks: from below ``<body>`` (``anchored``), or
    its last steps only, wherever they are in the page (see :func:`shorten`)."""

    steps: SelectorPath
    anchored: bool = True

    def covers(self, path: SelectorPath) -> bool:
        if self.anchored:
            if len(path) != len(self.steps):
                return False
        elif len(path) < len(self.steps):
            return False
        tail = path[len(path) - len(self.steps) :]
        return all(step.covers(other) for step, other in zip(self.steps, tail, strict=True))

    def merge(self, other: Rule) -> Rule | None:
        if not (self.anchored and other.anchored):
            return None
        merged = merge_paths([self.steps, other.steps])
        return None if merged is None else Rule(merged)

    @property
    def css(self) -> str:
        if self.anchored:
            return path_css(self.steps)
        return "body " + " > ".join(step.css() for step in self.steps)

    @property
    def xpath(self) -> str:
        """The rule as XPath from ``<body>``. A ``tbody`` step becomes optional: browsers
        insert it into tables, raw HTML often lacks it."""
        parts = ["//body" if self.anchored else "//body/"]
        for step in self.steps:
            parts.append("/" if step.name == "tbody" and not step.id else "/" + step.xpath())
        return "".join(parts).replace("///", "//")


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

# A shortened rule keeps at least the block's step and its container's: where the block
# sits, not only how it is styled (``p.para`` alone would take a sidebar's paragraphs of
# the same style on a page whose article moved).
MIN_TAIL_STEPS = 2


def shorten(
    rule: Rule,
    content: Mapping[SelectorPath, int],
    other: Mapping[SelectorPath, int],
    max_false_share: float = 0.02,
) -> Rule:
    """The shortest tail of ``rule`` (at least ``MIN_TAIL_STEPS``, holding an id or a
    class) that matches no more non-content than the whole rule does on the training
    pages, beyond ``max_false_share`` of the content characters the tail matches.

    A rule from ``<body>`` down fails on a page whose wrappers differ above the article
    (another section's sidebar column, a script's added ``div``, a dataset's wrapper):
    washingtonpost.com's blog pages of one template, learned from its first 10 pages in
    crawl order, put the article under ``div#main > div#primary`` on some pages and under
    ``div#main > div.cf`` on others, and the later ones were all rendered ("no rule
    matched"). The article's own end of the path (``article.post > div.entry-content >
    p``) is what the template keeps."""
    if not rule.anchored:
        return rule
    false = sum(chars for path, chars in other.items() if rule.covers(path))
    for size in range(min(MIN_TAIL_STEPS, len(rule.steps)), len(rule.steps)):
        steps = rule.steps[-size:]
        if not any(step.id or step.classes for step in steps):
            continue
        tail = Rule(steps, anchored=False)
        tail_true = sum(chars for path, chars in content.items() if tail.covers(path))
        tail_false = sum(chars for path, chars in other.items() if tail.covers(path))
        if tail_false - false <= max_false_share * tail_true:
            return tail
    return rule


def page_paths(page: Mapping[str, Any]) -> list[SelectorPath]:
    """The selector path of every block of a page item, in block order."""
    return [tuple(Step.of(s) for s in raw.get("selector") or []) for raw in page.get("texts") or []]


Mark = tuple[str, str, str]  # (tag, "#" or ".", the id or class)


def _by_tag_names(
    paths: Mapping[SelectorPath, int],
) -> dict[tuple[str, ...], list[tuple[SelectorPath, int]]]:
    """Paths (path -> characters) grouped by their tags: only paths of the same tags can
    cover one another (anchored rules)."""
    groups: dict[tuple[str, ...], list[tuple[SelectorPath, int]]] = defaultdict(list)
    for path, chars in paths.items():
        groups[tuple(step.name for step in path)].append((path, chars))
    return groups


def page_marks(paths_of_pages: Sequence[Iterable[SelectorPath]]) -> set[Mark]:
    """Ids and classes found on exactly one of several training pages: the page's own
    (``article#post-728.post-728``, a wrapper whose id is the page's URL), not its
    template's."""
    if len(paths_of_pages) < 2:
        return set()
    pages_with: Counter[Mark] = Counter()
    for paths in paths_of_pages:
        marks: set[Mark] = set()
        for path in paths:
            for step in path:
                if step.id:
                    marks.add((step.name, "#", step.id))
                marks.update((step.name, ".", c) for c in step.classes)
        pages_with.update(marks)
    return {mark for mark, count in pages_with.items() if count == 1}


def without_page_marks(
    content: Mapping[SelectorPath, int],
    other: Mapping[SelectorPath, int],
    marks: set[Mark],
    max_false_share: float = 0.02,
) -> Counter[SelectorPath]:
    """Content paths (path -> characters) with their page's own ids and classes dropped,
    unless that makes a path match new non-content blocks worth over ``max_false_share``
    of its characters.

    A template seen on one training page only never merged, so its rule kept that page's
    ids and matched no other page: washingtonpost.com's blog template, learned from its
    first 10 pages in crawl order, sent 11 of 16 later pages to the browser ("no rule
    matched")."""
    if not marks:
        return Counter(content)
    others = _by_tag_names(other)
    relaxed: Counter[SelectorPath] = Counter()
    for path, chars in content.items():
        general = tuple(
            Step(
                step.name,
                "" if (step.name, "#", step.id) in marks else step.id,
                frozenset(c for c in step.classes if (step.name, ".", c) not in marks),
            )
            for step in path
        )
        if general != path:
            rule = Rule(general)
            names = tuple(step.name for step in path)
            exact = Rule(path)
            false = sum(
                c for p, c in others.get(names, []) if rule.covers(p) and not exact.covers(p)
            )
            if false > max_false_share * chars:
                general = path
        relaxed[general] += chars
    return relaxed


def consolidate(
    content: Mapping[SelectorPath, int],
    other: Mapping[SelectorPath, int],
    max_false_share: float = 0.02,
) -> list[Rule]:
    """Merge content paths (path -> characters) into rules that avoid the ``other`` paths.

    Paths are merged greedily within groups of equal length and equal tags; a merge is
    kept when the characters of non-content blocks it would newly match (beyond those its
    two parts match already) stay under ``max_false_share`` of the content characters it
    matches. Repeats until stable.

    Counting only what a merge adds: paths of one page are never tested on their own, so
    a paragraph labeled otherwise under the article's own path (bbc.co.uk's bold first
    paragraph, a dropped role) was charged to every merge of two pages and never to the
    pages apart. bbc.co.uk's rules stayed one per page (``text#<the page's URL>`` steps)
    and matched no new page.
    """
    groups: dict[tuple[str, ...], list[tuple[Rule, int]]] = defaultdict(list)
    for path, chars in sorted(content.items(), key=lambda item: -item[1]):
        groups[tuple(step.name for step in path)].append((Rule(path), chars))
    others = _by_tag_names(other)

    rules: list[Rule] = []
    for names, members in groups.items():
        negatives = others.get(names, [])

        def covered(rule: Rule, negatives: list = negatives) -> frozenset[int]:
            return frozenset(i for i, (path, _) in enumerate(negatives) if rule.covers(path))

        merged = [[rule, chars, covered(rule)] for rule, chars in members]
        changed = True
        while changed:
            changed = False
            result: list[list] = []
            for rule, chars, matched in merged:
                for slot in result:
                    candidate = slot[0].merge(rule)
                    if candidate is None:
                        continue
                    taken = covered(candidate)
                    false = sum(negatives[i][1] for i in taken - slot[2] - matched)
                    if false <= max_false_share * (slot[1] + chars):
                        changed = changed or candidate != slot[0]
                        slot[:] = [candidate, slot[1] + chars, taken]
                        break
                else:
                    result.append([rule, chars, matched])
            changed = changed or len(result) < len(merged)
            merged = result
        rules.extend(rule for rule, _, _ in merged)
    return rules


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
    reconciled: bool = False  # the page's reading settled blocks of disputed roles

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
    """Selector rules of one site, learned from its training pages' content blocks.

    Parameters: ``min_precision`` (a rule below it on the training pages is dropped),
    ``max_false_share`` (how much non-content a merge may pick up), ``min_recall`` (the
    content share the rules must cover on the training pages to be usable at all).
    """

    def __init__(
        self,
        min_precision: float = 0.95,
        max_false_share: float = 0.02,
        min_recall: float = 0.8,
        shorten: bool = True,
    ) -> None:
        self.min_precision = min_precision
        self.max_false_share = max_false_share
        self.min_recall = min_recall
        self.shorten = shorten

    def fit(
        self,
        pages: Sequence[Mapping[str, Any]],
        content: Iterable[tuple[int, int]],
        excluded: Mapping[SelectorPath, int] | None = None,
        disputed: Mapping[str, str] | None = None,
    ) -> ExtractionRules:
        """Learn rules from ``pages`` and their content blocks as (page, block index) pairs;
        ``excluded``, the paths of blocks of roles the site's article never holds
        (:mod:`.roles`), become exclusions: never taken, not even in a gap; ``disputed``,
        the roles each page's reading settles (role -> ``doubted`` or ``offered``)."""
        chosen = set(content)
        # A training page where the model took no article tells nothing of what is not
        # the article there (the model failed on it, or it is no article): its blocks are
        # no negatives. As negatives, one such page of washingtonpost.com's blog layout
        # kept its siblings' rules tied to their own pages' ids.
        with_article = {number for number, _ in chosen}
        positives: Counter[SelectorPath] = Counter()
        negatives: Counter[SelectorPath] = Counter()
        paths_of_pages = []
        for number, page in enumerate(pages):
            paths = page_paths(page)
            paths_of_pages.append(paths)
            if number not in with_article:
                continue
            for index, (path, raw) in enumerate(zip(paths, page.get("texts") or [], strict=True)):
                chars = len(block_text(raw.get("text")))
                if chars and path:
                    (positives if (number, index) in chosen else negatives)[path] += chars
        positives = without_page_marks(
            positives, negatives, page_marks(paths_of_pages), self.max_false_share
        )
        candidates = consolidate(positives, negatives, self.max_false_share)
        if self.shorten:
            candidates = list(
                dict.fromkeys(
                    shorten(rule, positives, negatives, self.max_false_share) for rule in candidates
                )
            )
        self.rules_: list[Rule] = []
        self.rule_stats_: list[dict[str, Any]] = []
        total_content = sum(positives.values()) or 1
        for rule in candidates:
            true = sum(c for p, c in positives.items() if rule.covers(p))
            false = sum(c for p, c in negatives.items() if rule.covers(p))
            precision = true / max(true + false, 1)
            if precision < self.min_precision:
                continue
            self.rules_.append(rule)
            self.rule_stats_.append(
                {
                    "css": rule.css,
                    "precision": round(precision, 4),
                    "recall": round(true / total_content, 4),
                }
            )
        self.exclusions_ = exclusion_rules(excluded or {}, positives, self.max_false_share)
        self.disputed_ = dict(disputed or {})
        covered = {p for p in positives if any(r.covers(p) for r in self.rules_)}
        self.recall_ = sum(positives[p] for p in covered) / total_content
        wrong = sum(c for p, c in negatives.items() if any(r.covers(p) for r in self.rules_))
        self.precision_ = sum(positives[p] for p in covered) / max(
            sum(positives[p] for p in covered) + wrong, 1
        )
        in_dom = [  # the rules on each training page's DOM: the check's and the raw test's
            self.extract(page["rendered_html"], reading=training_reading(page))
            if page.get("rendered_html") and self.rules_ else None
            for page in pages
        ]  # fmt: skip
        self._fit_check(pages, in_dom)
        self._fit_raw_html(pages, in_dom)
        return self

    @property
    def usable(self) -> bool:
        """Rules that cover too little of the training content are not worth a fast path."""
        return bool(self.rules_) and self.recall_ >= self.min_recall

    # -- applying ---------------------------------------------------------------------------
    def extract(
        self,
        html: str | bytes | lxml.html.HtmlElement | RuleExtraction,
        content_type: str | None = None,
        reading: Callable[[], str] | None = None,
    ) -> RuleExtraction:
        """The rules' article from raw (or rendered) HTML, or from a parsed document
        (which this changes: invisible elements are removed from it). ``reading`` gives the
        page's own reading (its text), asked only where the page holds a role the
        layout's records dispute (:mod:`.roles`): the reading settles those blocks."""
        root = _document(html, content_type)
        if isinstance(root, RuleExtraction):  # nothing to parse
            return root
        remove_invisible(root)
        body = body_of(root)
        matched: set[lxml.html.HtmlElement] = set()
        ends: list[lxml.html.HtmlElement] = []  # each rule's first and last match
        rules_matched = 0
        for rule in self.rules_:
            found = [e for e in _matcher(rule)(root) if isinstance(e, lxml.html.HtmlElement)]
            rules_matched += bool(found)
            matched.update(found)
            ends += found[:1] + found[-1:]
        page_text = " ".join(body.text_content().split())
        matched |= _short_gaps(matched)
        matched -= self._excluded_elements(root)
        reconciled = False
        disputed = getattr(self, "disputed_", None)
        if disputed and reading is not None:
            matched, reconciled = reconcile(body, matched, disputed, reading)
        if not matched:
            return RuleExtraction(
                page_chars=len(page_text), page_text=page_text, reason="no rule matched"
            )
        keep, pass_through = _kept_elements(matched)
        paragraphs = list(element_paragraphs(body, keep, pass_through | {body}))
        prose = prose_coverage(body, keep - pass_through)
        container_words = self._container_words(ends)
        link_chars = sum(  # the article's links, fewer than the page's
            len(" ".join(a.text_content().split()))
            for a in keep
            if a.tag == "a" and not any(parent in keep for parent in a.iterancestors("a"))
        )
        return RuleExtraction(
            paragraphs_text(paragraphs),
            paragraphs_html(paragraphs),
            paragraphs,
            rules_matched,
            len(page_text),
            link_chars,
            page_text=page_text,
            prose=prose,
            container_words=container_words,
            reconciled=reconciled,
        )

    def _excluded_elements(self, root: lxml.html.HtmlElement) -> set[lxml.html.HtmlElement]:
        """The elements (with their descendants) of the excluded roles on a page."""
        dropped: set[lxml.html.HtmlElement] = set()
        for rule in getattr(self, "exclusions_", ()):
            for element in _matcher(rule)(root):
                if isinstance(element, lxml.html.HtmlElement) and element not in dropped:
                    dropped.update(e for e in element.iter() if isinstance(e.tag, str))
        return dropped

    def _container_words(self, ends: Sequence[lxml.html.HtmlElement]) -> int:
        """The words of the element all the rules' matches lie in (0 where that is the
        page's body, or where this layout's training pages set no floor to check them
        against). ``ends`` are each rule's first and last match: an XPath gives its matches
        in document order, and the element holding those holds all between them."""
        floor = getattr(self, "check_", {}).get("min_container_share")
        if floor == 0.0:  # learned without one: nothing to measure
            return 0
        container = _common_ancestor(ends)
        if container is None or container.tag in ("body", "html"):
            return 0
        return len(container.text_content().split())

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
            in_raw = self.extract(raw_document(raw), reading=training_reading(page))
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
        if share > limits["max_page_share"] and result.page_chars > limits["min_chars"]:
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
            "rules": self.rule_stats_,
            "exclusions": [rule.css for rule in getattr(self, "exclusions_", ())],
            "read_per_page": sorted(getattr(self, "disputed_", {})),
            "precision": round(self.precision_, 4),
            "recall": round(self.recall_, 4),
            "usable": self.usable,
            "check": self.check_,
            "raw_html": getattr(self, "raw_html_", None),
            "render": self.render_reason or None,
        }


def training_reading(page: Mapping[str, Any]) -> Callable[[], str] | None:
    """A training page's page-level reading (its ``consensus_article``), as the fast path
    asks a page's reading: the rules' article on the training pages, which sets the ranges
    of their check, is then the one the fast path delivers."""
    article = ConsensusArticle.of_page(page)
    return None if article is None else (lambda: article.text)


def element_roles(body: lxml.html.HtmlElement) -> dict[lxml.html.HtmlElement, str]:
    """Every element below ``body`` with its role (as :func:`~spidercrawl.learn.blocks.
    role_of` spells a captured block's: tags from below ``<body>``, the classes of the
    element and its parent, no ids or digits)."""
    roles: dict[lxml.html.HtmlElement, str] = {}
    # (element, the tags above its parent, its parent's step with classes)
    stack = [(child, "", "") for child in body]
    while stack:
        element, above, parent = stack.pop()
        if not isinstance(element.tag, str):
            continue
        tag = element.tag.lower()
        step = template_step(tag + "".join(f".{c}" for c in (element.get("class") or "").split()))
        roles[element] = " > ".join(part for part in (above, parent, step) if part)
        higher = " > ".join(part for part in (above, parent.split(".", 1)[0]) if part)
        stack.extend((child, higher, step) for child in element)
    return roles


def reconcile(
    body: lxml.html.HtmlElement,
    matched: set[lxml.html.HtmlElement],
    disputed: Mapping[str, str],
    reading: Callable[[], str],
) -> tuple[set[lxml.html.HtmlElement], bool]:
    """The rules' elements with the disputed roles settled by the page's reading: an
    element of a ``doubted`` role stays where the reading holds its words, one of an
    ``offered`` role joins where it does. Returns the elements, and whether the page had
    any such element (and so was read). A reading that found nothing settles nothing."""
    roles = element_roles(body)
    doubted = [e for e in matched if disputed.get(roles.get(e, "")) == "doubted"]
    offered = [
        e for e, role in roles.items() if disputed.get(role) == "offered" and e not in matched
    ]
    if not doubted and not offered:
        return matched, False
    bag = Counter(tokenize(reading()))
    if not bag:
        return matched, True
    out = set(matched)
    for element in doubted:
        if not words_held(element.text_content(), bag):
            out.difference_update(element.iter())
    for element in offered:
        if not _mostly_links(element) and words_held(element.text_content(), bag):
            out.add(element)
    return out, True


def exclusion_rules(
    excluded: Mapping[SelectorPath, int],
    content: Mapping[SelectorPath, int],
    max_false_share: float,
) -> list[Rule]:
    """Rules for the blocks of excluded roles (paths -> characters): their paths merged by
    tags, each cut to its shortest tail that takes no more of the article (``content``)
    than the whole path does."""
    rules = []
    for group in _by_tag_names(excluded).values():
        merged = merge_paths([path for path, _ in group])
        if merged is not None:
            rules.append(shorten(Rule(merged), dict(group), content, max_false_share))
    return list(dict.fromkeys(rules))


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


@functools.lru_cache(maxsize=4096)
def _matcher(rule: Rule) -> etree.XPath:
    """A rule's XPath, written and compiled once per process (through parsel, every page
    paid for both and for a Selector around every match: a third of the rules' time)."""
    return etree.XPath(rule.xpath)


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


# At most this many elements in a row between two of the rules' elements join the article,
# as short gaps do in the site model's (``SiteModel.max_gap``).
MAX_GAP = 4


def _short_gaps(matched: set[lxml.html.HtmlElement]) -> set[lxml.html.HtmlElement]:
    """The elements (with their descendants) in short gaps between the rules' elements of
    one parent: a quote, a captioned photo or a list that the training pages never showed
    in that place, so no rule covers it. The site model fills such gaps on the rendered page
    (:func:`spidercrawl.learn.model.fill_gaps`); without this the fast path cut them out
    (washingtonpost.com's blog posts: recall 0.29-0.47 where the rendered page gave 0.97).
    A gap holding a block that is mostly links (a box of related stories) is no part of
    the article (:func:`_holds_links`)."""
    by_parent: Counter[lxml.html.HtmlElement] = Counter()
    for element in matched:
        parent = element.getparent()
        if parent is not None:
            by_parent[parent] += 1
    added: set[lxml.html.HtmlElement] = set()
    for parent, count in by_parent.items():
        if count < 2:
            continue
        gap: list[lxml.html.HtmlElement] = []
        started = False
        for child in parent:
            if not isinstance(child.tag, str):
                continue
            if child not in matched:
                gap.append(child)
                continue
            if started and gap and len(gap) <= MAX_GAP and not any(map(_holds_links, gap)):
                for element in gap:
                    added.update(e for e in element.iter() if isinstance(e.tag, str))
            gap, started = [], True
    return added


def _holds_links(element: lxml.html.HtmlElement) -> bool:
    """Whether the element, or a block inside it, is mostly links (a box of related
    stories, a photo's "Email to a friend | Printer friendly" tools): as a block of the
    rendered page that is mostly links keeps a gap out of the site model's article."""
    return any(
        _mostly_links(block)
        for block in element.iter()
        if block is element or (isinstance(block.tag, str) and block.tag in BLOCK_TAGS)
    )


def _mostly_links(element: lxml.html.HtmlElement) -> bool:
    """Whether over half of the element's text is inside links."""
    chars = visible_chars(element.text_content())
    links = sum(visible_chars(a.text_content()) for a in element.iter("a"))
    return chars > 0 and links > chars / 2


def _common_ancestor(
    elements: Sequence[lxml.html.HtmlElement],
) -> lxml.html.HtmlElement | None:
    """The deepest element holding all of ``elements`` (one of them, when it holds the
    others), None without elements. Each walks up only until it meets the first one's
    ancestry; the fast path passes a few (each rule's first and last match)."""
    if not elements:
        return None
    chain = [elements[0], *elements[0].iterancestors()]  # from the first up to the root
    height_of = {element: height for height, element in enumerate(chain)}
    highest = 0
    for element in elements[1:]:
        for ancestor in itertools.chain((element,), element.iterancestors()):
            if ancestor in height_of:
                highest = max(highest, height_of[ancestor])
                break
    return chain[highest]


def _kept_elements(
    matched: set[lxml.html.HtmlElement],
) -> tuple[set[lxml.html.HtmlElement], set[lxml.html.HtmlElement]]:
    """Elements whose text the article takes, and the ancestors that only lead to them.

    A matched element gives its own text and that of its inline descendants (links,
    emphasis...); a block element inside it is another block, kept only if matched too.
    """
    keep: set[lxml.html.HtmlElement] = set()
    for element in matched:
        keep.add(element)
        stack = list(element)
        while stack:
            child = stack.pop()
            if not isinstance(child.tag, str) or child.tag in BLOCK_TAGS:
                continue
            keep.add(child)
            stack.extend(child)
    pass_through: set[lxml.html.HtmlElement] = set()
    for element in matched:
        for ancestor in element.iterancestors():
            if ancestor in keep or ancestor in pass_through:
                if ancestor in pass_through:
                    break
                continue
            pass_through.add(ancestor)
    keep |= pass_through
    return keep, pass_through - matched


class LayoutRules:
    """The extraction rules of a site of several layouts (:mod:`.layouts`): each layout's
    own rules and check, tried in turn on a page, largest layout first; the first whose
    rules pass their check (without the description, which :meth:`check` then adds) gives
    the page's article. The same interface as :class:`ExtractionRules`."""

    def __init__(self, layouts: Sequence[ExtractionRules]) -> None:
        self.layouts = [rules for rules in layouts if rules.usable]
        self.all_layouts = list(layouts)
        self.rules_ = [rule for rules in self.layouts for rule in rules.rules_]
        self.precision_ = min((r.precision_ for r in self.layouts), default=0.0)
        self.recall_ = min((r.recall_ for r in self.all_layouts), default=0.0)
        minimums = [r.check_["min_chars"] for r in self.layouts if r.check_.get("min_chars")]
        self.check_ = {"min_chars": min(minimums, default=0), "layouts": len(self.layouts)}

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
        reading: Callable[[], str] | None = None,
    ) -> RuleExtraction:
        root = _document(html, content_type)
        if isinstance(root, RuleExtraction):  # nothing to parse
            return root
        first: RuleExtraction | None = None
        for number, rules in enumerate(self.layouts):
            result = rules.extract(root, reading=reading)
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
            "rules": [stat for rules in self.layouts for stat in rules.rule_stats_],
            "layouts": [rules.summary() for rules in self.all_layouts],
            "precision": round(self.precision_, 4),
            "recall": round(self.recall_, 4),
            "usable": self.usable,
            "check": self.check_,
            "render": self.render_reason or None,
        }
