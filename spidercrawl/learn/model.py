"""A site model: learned from a site's pages without labels, saved in one folder.

``SiteModel().fit(pages)`` clusters the site's blocks (DBSCAN), labels the content cluster
by relevance to each page's description (:class:`AutoLabeler`), and trains a linear SVM
with balanced class weights on those labels. ``extract(page)`` then returns the article
of any page of that site. ``save(folder)`` / ``SiteModel.load(folder)`` keep it under
``models/<site>/`` with its parameters, training statistics, a version and a date.

A model in use is plain data (a vocabulary, scales, the SVM's weights): scikit-learn and
the clustering, labelling and layout modules are imported where a model learns, so a
crawl that only reads pages with saved models starts without them.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import math
import re
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from spidercrawl.document.blocks import (
    PARAGRAPH_CHARS,
    Block,
    Extraction,
    lies_inside,
    page_blocks,
)
from spidercrawl.document.captured import Page
from spidercrawl.document.language import confirmed_language, declared_language
from spidercrawl.document.selectors import SelectorPath, Step, path_css
from spidercrawl.files import write_json_atomically
from spidercrawl.learn import model_file
from spidercrawl.learn.consensus_labels import LABEL_SOURCES, consensus_labels
from spidercrawl.learn.container import fit_container, inside_container
from spidercrawl.learn.features import CLUSTER_GROUPS, FEATURE_GROUPS, BlockVectorizer
from spidercrawl.learn.labeling import AutoLabeler, NoContentClusterError
from spidercrawl.learn.layouts import group_layouts
from spidercrawl.learn.parser import ParserPart, check_parts, check_template_lines
from spidercrawl.learn.rules import ExtractionRules, LayoutRules
from spidercrawl.text import folded

logger = logging.getLogger(__name__)

MAX_LAYOUTS = 6  # layouts a site model keeps as templates come (the oldest go first)

# 4: template texts, nested blocks; 5: container_; 6: class_words; 7: tag_paths_;
# 8: stored as arrays and JSON (model.npz), never as a pickle; 10: plain weights and
# scales, no scikit-learn objects.
SVM_MAX_ITER = 5000  # liblinear iterations; a stop short of them is logged, not fatal
MODEL_FORMAT = 10  # older saved models are relearned
MODEL_FILE = "model.npz"
META_FILE = "model.json"
PICKLED_MODEL_FILE = "model.joblib"  # the older format: never loaded (a pickle runs code)
VERSION_PATTERN = re.compile(r"\d{8}T\d{6}Z\Z")  # a model's version: its UTC creation time


class LearningError(ValueError):
    """The pages cannot teach a model (no blocks, one class only, no content cluster)."""


@dataclass
class LinearWeights:
    """A linear classifier as it is used: a block's margin is its features times ``coef``
    plus ``intercept`` (content above 0). Learned by scikit-learn's ``LinearSVC``."""

    coef: np.ndarray  # one weight per feature, in the vectorizer's column order
    intercept: float


def fill_gaps(blocks: Sequence[Block], is_content: np.ndarray, max_gap: int) -> np.ndarray:
    """Blocks between two content blocks of the same page belong to the article when none
    is mostly links and either there are at most ``max_gap`` of them in a row (sub-headings,
    captions and one-off paragraphs the classifier misses) or, however many, they are
    mostly (80% of their text) inside the element that holds the page's content blocks
    (a letter quoted in full inside the article; a bulleted list in the article's own
    element). ``blocks`` is one page's or a whole site's, in page order."""
    filled = np.asarray(is_content, dtype=bool).copy()
    positions = np.flatnonzero(filled)
    content_parents: dict[int, set[tuple[str, ...]]] = defaultdict(set)
    for i in positions:
        content_parents[blocks[i].page].add(blocks[i].selector[:-1])

    def inside_share(gap: range) -> float:
        parents = content_parents[blocks[gap[0]].page]
        chars = sum(blocks[i].chars for i in gap)
        inside = sum(blocks[i].chars for i in gap if _inside(blocks[i], parents))
        return inside / (chars or 1)

    for start, end in itertools.pairwise(positions):
        gap = range(start + 1, end)
        if (
            len(gap) > 0
            and blocks[start].page == blocks[end].page
            and not any(blocks[i].mostly_links for i in gap)
            and (len(gap) <= max_gap or inside_share(gap) >= 0.8)
        ):
            filled[start + 1 : end] = True
    return filled


# Elements whose children are the article's text where they stand inside the article's
# element: a list's items, a quote's paragraphs, a figure's caption.
ARTICLE_PARTS = frozenset({"ul", "ol", "dl", "blockquote", "figure"})


def _inside(block: Block, elements: set[tuple[str, ...]]) -> bool:
    """Whether the block's element is one of ``elements`` (selector paths), a child of one,
    or a child of a list, quote or figure (``ARTICLE_PARTS``) that is a child of one.
    Deeper down are boxes of their own (an aside of related links, a comment thread in a
    section)."""
    selector = block.selector
    if selector in elements or selector[:-1] in elements:
        return True
    return len(selector) > 2 and block.steps[-2].name in ARTICLE_PARTS and selector[:-2] in elements


def take_nested(blocks: Sequence[Block], is_content: np.ndarray) -> np.ndarray:
    """Blocks nested in a content block's element belong to the article, unless mostly links.

    The capture script makes a separate block of every block-level element with text of
    its own, so an article element with direct text and ``<p>`` children is one block plus
    one per paragraph; the paragraphs can look unlike anything labeled content in
    training. Nested means: the content block's selector path is
    a proper prefix of the block's, on the same page, and the block lies inside its box.
    """
    taken = np.asarray(is_content, dtype=bool).copy()
    boxes: dict[tuple[int, tuple[str, ...]], list[Block]] = defaultdict(list)
    for block, content in zip(blocks, taken, strict=True):
        if content:
            boxes[(block.page, block.selector)].append(block)
    if not boxes:
        return taken
    for i, block in enumerate(blocks):
        if taken[i] or block.mostly_links:
            continue
        taken[i] = any(
            lies_inside(block, outer.box)
            for depth in range(1, len(block.selector))
            for outer in boxes.get((block.page, block.selector[:depth]), ())
        )
    return taken


def take_runs(blocks: Sequence[Block], is_content: np.ndarray) -> np.ndarray:
    """The later runs of a content block's element belong to the article, unless mostly
    links: the text an element goes on with after a block nested in it (a post's closing
    paragraphs after its list, a story's text after a pull quote) is one block with the
    rest of its text to the page's author, and was one block to the capture until session
    27 split it to keep the reading order. Styled and placed like its first run, it can
    still read unlike it (no markup of its own, other words)."""
    taken = np.asarray(is_content, dtype=bool).copy()
    later = [i for i, block in enumerate(blocks) if block.run_of >= 0]
    if not later:  # most pages
        return taken
    position = {(block.page, block.index): i for i, block in enumerate(blocks)}
    for i in later:
        block = blocks[i]
        if taken[i] or block.mostly_links:
            continue
        first = position.get((block.page, block.run_of))
        taken[i] = first is not None and bool(is_content[first])
    return taken


def _style(block: Block) -> tuple[str, tuple[tuple[str, str], ...]]:
    return block.element, tuple(sorted(block.computed.items()))


def _of_a_kind(step: Step, others: set[Step]) -> bool:
    """Whether the element ``step`` describes has the tag and a class of one of ``others``."""
    return any(step.name == other.name and step.classes & other.classes for other in others)


def take_continuation(
    blocks: Sequence[Block], is_content: np.ndarray, template: frozenset[str] = frozenset()
) -> np.ndarray:
    """Blocks right before or after a page's article that continue it: inside the
    grandparent element of one of its blocks, not mostly links, not template text, and
    either styled like one of its blocks (same tag and computed style) or a paragraph's
    length (``PARAGRAPH_CHARS``); taken one by one until one is not.

    The classifier often takes the lead of an article and not the rest: a post cut into a
    teaser and a "read more" part (``div.entry-body`` then ``div.entry-more``), a styled
    intro followed by plain paragraphs, paragraphs joined by ``<br>`` into one block.
    ``blocks`` is one page's or a whole site's, in page order.
    """
    taken = np.asarray(is_content, dtype=bool).copy()
    pages: dict[int, list[int]] = defaultdict(list)
    for i, block in enumerate(blocks):
        pages[block.page].append(i)
    for members in pages.values():
        content = [i for i in members if taken[i]]
        if not content:
            continue
        continues = partial(
            _continues,
            styles={_style(blocks[i]) for i in content},
            grandparents={blocks[i].selector[:-2] for i in content if len(blocks[i].selector) > 2},
            template=template,
            wider={blocks[i].selector[:-3] for i in content if len(blocks[i].selector) > 3},
            parents_steps={blocks[i].steps[-2] for i in content if len(blocks[i].steps) > 1},
        )
        parents = {blocks[i].selector[:-1] for i in content if len(blocks[i].selector) > 1}
        first, last = members.index(content[0]), members.index(content[-1])
        for i in members[last + 1 :]:
            if not continues(blocks[i]):
                break
            taken[i] = True
        before = members[:first][::-1]
        position = 0
        while position < len(before):
            if continues(blocks[before[position]]):
                taken[before[position]] = True
                position += 1
                continue
            lead = _lead_past_aside(blocks, before[position:], continues, parents)
            if lead is None:
                break
            taken[before[position + lead]] = True
            position += lead + 1
    return taken


def _continues(
    block: Block,
    styles: set[tuple[str, tuple[tuple[str, str], ...]]],
    grandparents: set[tuple[str, ...]],
    template: frozenset[str],
    paragraph_only: bool = False,
    wider: set[tuple[str, ...]] = frozenset(),
    parents_steps: set[Step] = frozenset(),
) -> bool:
    """Whether ``block`` continues an article of these styles inside these grandparent
    elements (a paragraph's length where its style is not the article's, or always when
    ``paragraph_only``), or styled like the article, one element further up (``wider``),
    in a parent of the kind of the article's parents (same tag, a class in common:
    ``div.articletext`` of the first paragraph, and the ``div.articletext`` of the rest
    after an advert)."""
    styled = not paragraph_only and _style(block) in styles
    inside = any(block.selector[: len(g)] == g for g in grandparents) or (
        styled
        and len(block.steps) > 1
        and _of_a_kind(block.steps[-2], parents_steps)
        and any(block.selector[: len(w)] == w for w in wider)
    )
    return not (
        block.mostly_links
        or not inside
        or (not styled and block.chars < PARAGRAPH_CHARS)
        or folded(block.text) in template
    )


MAX_ASIDE_BLOCKS = 12  # inline boxes (related links, "follow us") between a lead and the rest


def _lead_past_aside(
    blocks: Sequence[Block],
    before: Sequence[int],
    continues: Callable[..., bool],
    parents: set[tuple[str, ...]],
) -> int | None:
    """Where, in ``before`` (the blocks above the article, nearest first), a lead paragraph
    lies past a short inline box: up to ``MAX_ASIDE_BLOCKS`` short blocks (none a
    paragraph), then a paragraph-length ``<p>`` that continues the article and lies inside
    the parent element of one of its blocks (below it, not the parent's own stray text).
    The box is not taken; the lead is. A news page's first paragraph often sits in a
    wrapper of its own (a dateline, a drop cap) with a "follow us" box floated beside it,
    so the classifier takes the rest of the story and not its first paragraph
    (nytimes.com 2012: recall 0.88-0.92, precision 1.0). Authors' bios above an article
    were taken by looser versions of this rule (a ``<p>`` elsewhere in the grandparent on
    techcrunch.com, a ``<div>`` within the parent on thecarconnection.com)."""
    for offset, i in enumerate(before[: MAX_ASIDE_BLOCKS + 1]):
        block = blocks[i]
        inside_parent = any(
            len(block.selector) > len(p) and block.selector[: len(p)] == p for p in parents
        )
        if block.element == "p" and inside_parent and continues(block, paragraph_only=True):
            return offset if offset > 0 else None
        if block.chars >= PARAGRAPH_CHARS:
            return None
    return None


def _say_left_out(pages: int, grouped: int, every_template: bool) -> None:
    """Log the training pages no layout learns from (none: nothing to say)."""
    if grouped < pages:
        logger.info(
            "%d of %d training pages are of templates too rare to learn%s: learned from the "
            "other %d", pages - grouped, pages, "" if every_template else " yet", grouped,
        )  # fmt: skip


def _training_order(page: Mapping[str, Any]) -> tuple[str, str]:
    """A training page's place: its URL (its HTML where two pages share one)."""
    return str(page.get("url") or ""), str(page.get("rendered_html") or "")


def template_texts(blocks: Sequence[Block], min_share: float) -> frozenset[str]:
    """Texts that recur on at least ``min_share`` of the pages (and on 3 or more): the
    template's, not an article's.

    A sidebar blurb or a newsletter box can look exactly like the article's paragraphs and
    even echo a page's description by chance; no article repeats word for word on page
    after page.
    """
    pages_of: dict[str, set[int]] = defaultdict(set)
    for block in blocks:
        pages_of[folded(block.text)].add(block.page)
    pages = len({block.page for block in blocks})
    needed = max(3, math.ceil(min_share * pages))
    return frozenset(text for text, on in pages_of.items() if len(on) >= needed)


def article_mask(
    blocks: Sequence[Block],
    margins: np.ndarray,
    max_gap: int,
    template: frozenset[str] = frozenset(),
) -> np.ndarray:
    """Which blocks the article takes: the classifier's content that is not the site's
    ``template`` text, the blocks nested in it, short gaps between content blocks, the
    paragraphs that continue it, and the later runs of any element it took."""
    is_content = margins > 0
    if template:
        own = np.array([folded(b.text) not in template for b in blocks], bool)
    else:  # a site never seen has none: nothing to fold on every page
        own = np.ones(len(blocks), dtype=bool)
    is_content = take_runs(blocks, is_content & own) & own
    filled = fill_gaps(blocks, take_nested(blocks, is_content), max_gap)
    continued = take_continuation(blocks, filled, template)
    return continued | (take_runs(blocks, continued) & own)


class SiteModel:
    """Learn one site's article blocks from its pages; extract articles of its pages."""

    labels = "relevance"  # what a model saved before the parameter existed was taught by

    def __init__(
        self,
        feature_groups: Sequence[str] = FEATURE_GROUPS,
        cluster_groups: Sequence[str] = CLUSTER_GROUPS,
        similarity: str = "lcs",
        eps: float | None = None,
        min_page_share: float = 0.3,
        C: float = 1.0,  # noqa: N803 (scikit-learn's name)
        max_gap: int = 4,
        template_share: float = 0.2,
        class_words: frozenset[str] = frozenset(),
        random_state: int = 0,
        layouts: bool = True,
        labels: str = "relevance",
    ) -> None:
        self.feature_groups = feature_groups
        self.cluster_groups = cluster_groups
        self.similarity = similarity
        self.eps = eps
        self.min_page_share = min_page_share
        self.C = C
        self.max_gap = max_gap
        self.template_share = template_share
        self.class_words = class_words  # for the class_words feature group (cross-site model)
        self.random_state = random_state
        self.layouts = layouts  # pages of several templates: one model per layout (layouts.py)
        if labels not in LABEL_SOURCES:
            raise ValueError(f"labels must be one of {LABEL_SOURCES}, got {labels!r}")
        self.labels = labels  # the training labels' source (learn/consensus_labels.py)

    def get_params(self) -> dict[str, Any]:
        """The model's parameters (its constructor's arguments) by name."""
        return {name: getattr(self, name) for name in sorted(_PARAMETER_DEFAULTS)}

    def __repr__(self) -> str:
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if value != _PARAMETER_DEFAULTS[name]
        ]
        return f"SiteModel({', '.join(changed)})"

    # -- learning ---------------------------------------------------------------------------
    def auto_label(self, pages: Sequence[Mapping[str, Any]]) -> tuple[list[Block], np.ndarray]:
        """The site's blocks and their automatic content labels (steps 2 and 3)."""
        from spidercrawl.learn.cluster import BlockClusterer

        blocks = [b for number, page in enumerate(pages) for b in page_blocks(page, number)]
        if not blocks:
            raise LearningError("the pages have no text blocks")
        cluster_features = BlockVectorizer(self.cluster_groups).fit_transform(blocks)
        clusterer = BlockClusterer(self.eps, self.min_page_share, len(pages)).fit(cluster_features)
        try:
            labeler = AutoLabeler(self.similarity).fit(blocks, clusterer.labels_, pages)
            seed, content_cluster = take_runs(blocks, labeler.labels_), labeler.content_cluster_
            basis = labeler.basis_
        except NoContentClusterError:
            if self.labels == "relevance":
                raise
            seed, content_cluster, basis = np.zeros(len(blocks), bool), None, "none"
        chosen = consensus_labels(blocks, pages, seed, clusterer.labels_, self.labels)
        if self.labels != "relevance":
            basis = f"{self.labels} on {chosen.pages_labelled} of {chosen.pages} pages, {basis}"
            basis += f" ({chosen.how})" if chosen.how else ""
            if not chosen.pages_labelled:
                logger.info(
                    "No training page has a consensus its extractors agree on: labelled by "
                    "relevance to the pages' descriptions"
                )
        self.clustering_ = {
            "eps": round(float(clusterer.eps_), 4),
            "min_samples": clusterer.min_samples_,
            "clusters": len(set(clusterer.labels_.tolist()) - {-1}),
            "noise_blocks": int((clusterer.labels_ == -1).sum()),
            "content_cluster": content_cluster,
            "label_basis": basis,
        }
        return blocks, take_runs(blocks, chosen.labels)

    def fit(
        self, pages: Sequence[Mapping[str, Any]], y: object = None, *, every_template: bool = False
    ) -> SiteModel:
        self.fit_extract(pages, every_template=every_template)
        return self

    def fit_extract(
        self, pages: Sequence[Mapping[str, Any]], *, every_template: bool = False
    ) -> tuple[list[Block], np.ndarray]:
        """Fit, and return the training blocks with what the fitted model extracts from
        them (the labels the cross-site model learns from; none for a site of several
        layouts, which the cross-site model's training does not ask for). The pages are
        taken in the order of their URLs, not as they arrived: the same pages give the same
        model, whichever worker fetched them first. ``every_template``: the pages are all
        the site will have, so every template among them is learned (see
        :func:`group_layouts`)."""
        pages = sorted(pages, key=_training_order)
        self.layouts_: list[SiteModel] = []
        if self.layouts:
            groups = group_layouts(pages, every_template=every_template)
            if len(groups) > 1 and self._fit_layouts(pages, groups):
                _say_left_out(len(pages), sum(map(len, groups)), every_template)
                return [], np.zeros(0, dtype=bool)
            if len(groups) == 1 and len(groups[0]) < len(pages):
                _say_left_out(len(pages), len(groups[0]), every_template)
                pages = [pages[i] for i in groups[0]]
        started = time.perf_counter()
        blocks, labels = self.auto_label(pages)
        self.fit_labeled(blocks, labels, pages=len(pages), started=started)
        self.template_texts_ = template_texts(blocks, self.template_share)
        self.training_["template_texts"] = len(self.template_texts_)
        self.tag_paths_ = frozenset(block.path for block in blocks)
        self.training_["tag_paths"] = len(self.tag_paths_)
        extracted = article_mask(blocks, self.decision(blocks), self.max_gap, self.template_texts_)
        self.container_ = fit_container(blocks, extracted)
        self.fit_rules(pages, blocks, extracted)
        self.language_ = _site_language(pages, blocks, extracted)
        return blocks, extracted

    def _fit_layouts(self, pages: Sequence[Mapping[str, Any]], groups: list[list[int]]) -> bool:
        """One model per layout; this one routes each page to the layout it fits. False
        (learn as one) when fewer than two layouts could be learned."""
        started = time.perf_counter()
        layouts = []
        for group in groups:
            try:
                layouts.append(SiteModel(**{**self.get_params(), "layouts": False}).fit(
                    [pages[i] for i in group]
                ))  # fmt: skip
            except LearningError as error:
                logger.info("A layout of %d pages could not be learned: %s", len(group), error)
        if len(layouts) < 2:
            return False
        self._set_layouts(layouts, None, started)  # the pages of the layouts learned
        return True

    def with_layout(self, new: SiteModel, max_layouts: int = MAX_LAYOUTS) -> SiteModel:
        """This model with the layouts of ``new`` (learned from pages this one did not fit:
        a template the site added, or a redesign) beside its own, newest first; the oldest
        go beyond ``max_layouts``. A new layout is not a new site: the pages of the old
        templates (an archive) still fit."""
        layouts = new.layout_models() + self.layout_models()
        combined = SiteModel(**self.get_params())
        combined._set_layouts(layouts[:max_layouts], None, time.perf_counter())
        return combined

    def _set_layouts(self, layouts: list[SiteModel], pages: int | None, started: float) -> None:
        self.layouts_ = layouts
        self.rules_ = LayoutRules([layout.rules_ for layout in layouts])
        self.tag_paths_ = frozenset().union(*(layout.tag_paths_ for layout in layouts))
        self.template_texts_ = frozenset().union(*(m.template_texts_ for m in layouts))
        self.container_ = None
        languages = {getattr(layout, "language_", "") for layout in layouts}
        self.language_ = languages.pop() if len(languages) == 1 else ""
        self.training_ = {
            "pages": pages or sum(layout.training_["pages"] for layout in layouts),
            "layouts": [layout.training_["pages"] for layout in layouts],
            "blocks": sum(layout.training_["blocks"] for layout in layouts),
            "content_chars_per_page": min(
                layout.training_["content_chars_per_page"] for layout in layouts
            ),
            "seconds": round(time.perf_counter() - started, 3),
        }
        self.format_ = MODEL_FORMAT
        self.created_ = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.version_ = self.created_.replace("-", "").replace(":", "")

    def layout_models(self) -> list[SiteModel]:
        """The model of each layout (this model alone when it has one)."""
        return list(getattr(self, "layouts_", None) or [self])

    def enough_chars(self) -> float:
        """Under this many characters the model "found almost nothing" on a page: a tenth
        of the article text it saw per training page."""
        return max(1.0, 0.1 * float(self.training_.get("content_chars_per_page", 0.0)))

    def finds_article(self, page: Mapping[str, Any]) -> bool:
        """Whether the model finds an article (:meth:`enough_chars` of it) on ``page``."""
        blocks = Page.of(page).blocks()
        return len(self.extract_blocks(blocks).text) >= self.for_blocks(blocks).enough_chars()

    def read_by_arbiter(self) -> list[str]:
        """For each layout whose pages are read by the arbiter, not cut by its parser, a
        line saying which and why (:attr:`ExtractionRules.read_by_arbiter`)."""
        layouts = self.layout_models()
        lines = []
        for number, layout in enumerate(layouts, 1):
            rules = layout.extraction_rules()
            why = rules.read_by_arbiter if isinstance(rules, ExtractionRules) else "no parser"
            if why:
                which = f"layout {number} of {len(layouts)}" if len(layouts) > 1 else "its pages"
                lines.append(f"{which} read by the arbiter, not its parser: {why}")
        return lines

    def extraction_rules(self) -> ExtractionRules | LayoutRules | None:
        """The fast path's rules (None: a model saved without them)."""
        return getattr(self, "rules_", None)

    def usable_rules(self) -> ExtractionRules | LayoutRules | None:
        """The rules where the fast path can use them (they held on the training pages)."""
        rules = self.extraction_rules()
        return rules if rules is not None and rules.usable else None

    def content_language(self) -> str:
        """The language of the site's articles ("" where unknown or mixed)."""
        return getattr(self, "language_", "")

    def shortest_article_chars(self) -> int | None:
        """The shortest article the fast path's rules accept (None: no rules, no bar)."""
        check = getattr(self.extraction_rules(), "check_", None) or {}
        return int(check.get("min_chars") or 0) or None

    def for_blocks(self, blocks: Sequence[Block]) -> SiteModel:
        """The model of the layout a page's blocks fit best (this model when it has one
        layout): the layout whose tag paths hold most of the page's text."""
        layouts = getattr(self, "layouts_", None)
        if not layouts:
            return self
        return max(layouts, key=lambda layout: layout.familiarity(blocks))

    def fit_rules(
        self, pages: Sequence[Mapping[str, Any]], blocks: Sequence[Block], extracted: np.ndarray
    ) -> None:
        """Consolidate the selectors of the blocks the model extracts on its training pages
        (``extracted``, from :func:`article_mask`) into extraction rules (the fast path: raw
        HTML, no browser), so that both paths give the same article."""
        started = time.perf_counter()
        chosen = [(b.page, b.index) for b, c in zip(blocks, extracted, strict=True) if c]
        self.rules_ = ExtractionRules().fit(pages, chosen)
        self.training_["rules_seconds"] = round(time.perf_counter() - started, 3)

    def fit_labeled(
        self,
        blocks: Sequence[Block],
        labels: np.ndarray,
        pages: int,
        started: float | None = None,
    ) -> SiteModel:
        """Train the SVM on given labels (the cross-site model pools several sites' labels)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        started = time.perf_counter() if started is None else started
        labels = np.asarray(labels, dtype=bool)
        if labels.all() or not labels.any():
            raise LearningError("the labels hold one class only: nothing to tell apart")
        self.vectorizer_ = BlockVectorizer(self.feature_groups, self.class_words).fit(blocks)
        features = self.vectorizer_.transform(blocks)
        svm = LinearSVC(
            C=self.C, class_weight="balanced", random_state=self.random_state, max_iter=SVM_MAX_ITER
        )
        # liblinear stopping short of its tolerance still leaves a usable separation (the
        # training accuracy says how good); its warning read as a failure in crawl logs, so
        # it is recorded in the model and logged plainly instead.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            svm.fit(features, labels)
        converged = True
        for warning in caught:
            if issubclass(warning.category, ConvergenceWarning):
                converged = False
            else:  # anything else is passed on as it came
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        self.weights_ = LinearWeights(svm.coef_[0].copy(), float(svm.intercept_[0]))
        predicted = svm.predict(features)
        content_chars = [
            b.chars for b, is_content in zip(blocks, labels, strict=True) if is_content
        ]
        self.training_ = {
            "pages": pages,
            "blocks": len(blocks),
            "content_blocks": int(labels.sum()),
            "training_accuracy": round(float((predicted == labels).mean()), 4),
            "svm_converged": converged,
            "content_chars_per_page": round(sum(content_chars) / max(pages, 1), 1),
            "seconds": round(time.perf_counter() - started, 3),
        }
        if not converged:
            logger.info(
                "the SVM stopped at %d iterations short of liblinear's tolerance (training "
                "accuracy %.3f): used as it is",
                SVM_MAX_ITER, self.training_["training_accuracy"],
            )  # fmt: skip
        self.template_texts_: frozenset[str] = frozenset()  # fit() finds the site's
        self.container_: SelectorPath | None = None  # and its article container
        self.tag_paths_: frozenset[tuple[str, ...]] = frozenset()  # and its tag paths
        self.format_ = MODEL_FORMAT
        self.created_ = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.version_ = self.created_.replace("-", "").replace(":", "")
        return self

    # -- using ------------------------------------------------------------------------------
    def decision(self, blocks: Sequence[Block]) -> np.ndarray:
        if not blocks:
            return np.zeros(0)
        model = self.for_blocks(blocks)
        if model is not self:
            return model.decision(blocks)
        return self.vectorizer_.linear_decision(blocks, self.weights_.coef, self.weights_.intercept)

    def familiarity(self, blocks: Sequence[Block]) -> float:
        """The share of a page's own text in blocks whose tag path occurs on the training
        pages: near 0 on a page of another template (a print view, a section with its own
        layout), where the classifier's margins mean little.

        The site's template texts (menus, footer, share links) are left out where the page
        has other text: every layout of a site shares them, and through them the demo's
        live blogs and galleries looked a fifth familiar to its story layout, so their
        pages counted as drift instead of a new layout (one relearning in a crawl).
        Measured on the three datasets (4 folds): 5 pages moved, learned F1 unchanged."""
        model = self.for_blocks(blocks)
        if model is not self:
            return model.familiarity(blocks)
        counted = [block for block in blocks if not self.is_template(block)] or blocks
        chars = sum(block.chars for block in counted)
        known = sum(block.chars for block in counted if block.path in self.tag_paths_)
        return known / chars if chars else 1.0

    def is_template(self, block: Block) -> bool:
        """Whether the block's text is one the site repeats on page after page."""
        return folded(block.text) in self.template_texts_

    def extract(self, page: Mapping[str, Any]) -> Extraction:
        """The article of one page: its content blocks in page order."""
        return self.extract_blocks(Page.of(page).blocks())

    def extract_blocks(self, blocks: Sequence[Block]) -> Extraction:
        """The article among one page's blocks (:func:`page_blocks`)."""
        model = self.for_blocks(blocks)
        if model is not self:
            return model.extract_blocks(blocks)
        margins = self.decision(blocks)
        is_content = article_mask(blocks, margins, self.max_gap, self.template_texts_)
        return Extraction.of_blocks(
            [b for b, content in zip(blocks, is_content, strict=True) if content],
            margins[is_content],
        )

    def extract_in_container(self, blocks: Sequence[Block]) -> Extraction | None:
        """The blocks of one page inside the site's article container (:mod:`.container`),
        less links and template texts: the article where the classifier finds nothing.
        None when the site has no container."""
        model = self.for_blocks(blocks)
        if model is not self:
            return model.extract_in_container(blocks)
        if self.container_ is None:
            return None
        chosen = [
            b
            for b in blocks
            if inside_container(b, self.container_)
            and not b.mostly_links
            and not self.is_template(b)
        ]
        return Extraction.of_blocks(chosen, self.decision(chosen))

    # -- storage ----------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "version": self.version_,
            "created": self.created_,
            "parameters": {
                k: sorted(v) if isinstance(v, frozenset) else list(v) if isinstance(v, tuple) else v
                for k, v in self.get_params().items()
            },
            "training": self.training_,
            "clustering": getattr(self, "clustering_", None),
            "rules": self.rules_.summary() if getattr(self, "rules_", None) else None,
            "layouts": [
                {
                    "pages": layout.training_["pages"],
                    "clustering": getattr(layout, "clustering_", None),
                    "container": path_css(layout.container_) if layout.container_ else None,
                    "parser": len(getattr(layout.rules_, "parts_", [])),
                    "raw_html": getattr(layout.rules_, "raw_html_", None),
                    "render": layout.rules_.render_reason or None,
                }
                for layout in getattr(self, "layouts_", [])
            ],
            "container": path_css(self.container_) if getattr(self, "container_", None) else None,
            # The declared language, found right on every training page: not checked again.
            "confirmed_language": getattr(self, "language_", ""),
        }

    def save(self, folder: Path | str) -> Path:
        """Write the model (``model.npz``: arrays and JSON, no pickle) and a readable
        ``model.json`` into ``folder`` (created)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        model_file.dump(folder / MODEL_FILE, self, _stored_classes())
        write_json_atomically(folder / META_FILE, self.metadata(), indent=2)
        return folder

    @classmethod
    def load(cls, folder: Path | str) -> SiteModel:
        """The model saved in ``folder``; :class:`LearningError` where the file is not a
        site model of this format or its parts do not fit together. Loading runs no code
        from the file (:mod:`spidercrawl.learn.model_file`)."""
        try:
            model = model_file.load(Path(folder) / MODEL_FILE, _stored_classes())
        except model_file.ModelFileError as error:
            raise LearningError(f"{folder} does not hold a usable site model: {error}") from error
        if not isinstance(model, cls):
            raise LearningError(f"{folder} does not hold a site model")
        if getattr(model, "format_", 1) != MODEL_FORMAT:
            raise LearningError(
                f"the model in {folder} has format {getattr(model, 'format_', 1)}, "
                f"not this spidercrawl's {MODEL_FORMAT}"
            )
        try:
            model.check_parts(str(folder))
        except (AttributeError, TypeError) as error:  # a part missing, or of another kind
            raise LearningError(f"the model in {folder} is damaged: {error}") from error
        if getattr(getattr(model, "rules_", None), "stale_render_decision", False):
            raise LearningError(
                f"the model in {folder} renders every page by a decision made on raw HTML "
                f"parsed another way than the fast path parses it now: it is made again"
            )
        return model

    def check_parts(self, where: str) -> None:
        """Check that a loaded model's parts are what fitting makes and fit together
        (a model file is data from outside: a wrong part is an error here, not on every
        page later)."""

        def need(condition: bool, what: str) -> None:
            if not condition:
                raise LearningError(f"the model in {where} is damaged: {what}")

        need(isinstance(self.version_, str) and bool(VERSION_PATTERN.match(self.version_)),
             "its version is not a UTC time")  # fmt: skip
        need(isinstance(self.training_, dict), "no training statistics")
        rules = getattr(self, "rules_", None)  # the cross-site model has none
        need(rules is None or isinstance(rules, (ExtractionRules, LayoutRules)), "odd rules")
        layouts = getattr(self, "layouts_", None) or [self]
        need(isinstance(layouts, list) and len(layouts) <= MAX_LAYOUTS, "odd layouts")
        for layout in layouts:
            need(isinstance(layout, SiteModel), "a layout that is not a model")
            need(isinstance(layout.training_, dict), "a layout without training statistics")
            need(isinstance(layout.template_texts_, frozenset), "odd template texts")
            need(isinstance(layout.tag_paths_, frozenset), "odd tag paths")
            layout_rules = getattr(layout, "rules_", None)
            if isinstance(layout_rules, ExtractionRules):
                try:
                    check_parts(getattr(layout_rules, "parts_", None))
                    check_template_lines(getattr(layout_rules, "template_lines_", None))
                except ValueError as error:
                    need(False, f"a malformed parser ({error})")
            vectorizer, weights = layout.vectorizer_, layout.weights_
            need(isinstance(vectorizer, BlockVectorizer), "no block vectorizer")
            try:
                vectorizer.check()
            except ValueError as error:
                need(False, f"its features: {error}")
            need(isinstance(weights, LinearWeights), "no linear classifier")
            coef, intercept = weights.coef, weights.intercept
            need(isinstance(coef, np.ndarray) and coef.shape == (vectorizer.width,)
                 and coef.dtype.kind == "f" and bool(np.isfinite(coef).all())
                 and isinstance(intercept, float) and math.isfinite(intercept),
                 "classifier weights that do not match its features")  # fmt: skip

    @staticmethod
    def exists(folder: Path | str) -> bool:
        return (Path(folder) / MODEL_FILE).is_file()


# The constructor's parameters and their defaults, by name.
_PARAMETER_DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(SiteModel.__init__).parameters.items()
    if name != "self"
}


def _stored_classes() -> dict[str, type]:
    """The classes a model file may hold objects of (by name); nothing else is made."""
    classes = (SiteModel, BlockVectorizer, LinearWeights, ExtractionRules, LayoutRules,
               ParserPart, Step)  # fmt: skip
    return {cls.__name__: cls for cls in classes}


def _site_language(
    pages: Sequence[Mapping[str, Any]], blocks: Sequence[Block], extracted: np.ndarray
) -> str:
    """The language the site declares, if every training page's article text agrees with
    it (:func:`~spidercrawl.document.language.confirmed_language`)."""
    texts: dict[int, list[str]] = defaultdict(list)
    for block, is_content in zip(blocks, extracted, strict=True):
        if is_content:
            texts[block.page].append(block.text)
    return confirmed_language(
        (declared_language(page), " ".join(texts.get(number, [])))
        for number, page in enumerate(pages)
    )
