"""A learned site's readers of a page: its layout's parser (on the rendered DOM, or the raw
HTML of a page fetched without a browser), its layout's classifier, the blocks in its
article container, and the cross-site blocks or text density less the site's template.
Which of their articles a page gets is :mod:`spidercrawl.extract.decision`'s question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spidercrawl.document.blocks import Block, Extraction, block_numbers, marked_elements
from spidercrawl.document.captured import Page
from spidercrawl.document.density import DensityResult, rendered_page_measure
from spidercrawl.document.page import first_description
from spidercrawl.extract.cold_start import block_indices, cold_start_extraction
from spidercrawl.extract.readers import (
    CLASSIFIER,
    CONTAINER,
    PARSER,
    SITE_BLOCKS,
    SITE_DENSITY,
    NoReadingError,
)
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.parser import dropped_kinds
from spidercrawl.learn.rules import RuleExtraction

if TYPE_CHECKING:
    from spidercrawl.extract.unseen import UnseenExtractor


def density_fallback(page: Mapping[str, Any], model: SiteModel) -> Extraction | DensityResult:
    """The captured blocks in text density's article of a page, less the site's template
    texts (a newsletter box or comment guidelines dense enough to be taken). Text
    density's own result when no captured block is in it (a page item without the capture
    script's block marks)."""
    result = cold_start_extraction(page)
    region = block_indices(result)
    if not region:
        return result
    return _less_template(Page.of(page).blocks(), region, model)


def unseen_fallback(page: Page, model: SiteModel, unseen: UnseenExtractor) -> Extraction:
    """The article the cross-site extractor finds (:mod:`spidercrawl.extract.unseen`), less
    the site's template texts: the run of blocks the cross-site model and text density agree
    on, so a comment thread denser than a short post is not taken.

    The peers' articles are not cut by the template here: the site's own template texts
    cut our blocks more precisely than lines of another extractor's text (measured: see
    docs/measurements.md). The decision then votes on this article as it is, beside the
    peers' whole articles (:mod:`spidercrawl.extract.decision`)."""
    return _less_template(page.blocks(), set(unseen.extract(page).blocks), model)


def _less_template(blocks: Sequence[Block], chosen: set[int], model: SiteModel) -> Extraction:
    """The ``chosen`` blocks (by index) less the site's template texts."""
    kept = [b for b in blocks if b.index in chosen and not model.is_template(b)]
    return Extraction.of_blocks(kept, model.decision(kept))


# Where the parser's kinds would take more than half a reading's article, it read another
# region than the story's (a gallery of captions, a thread of comments): the article stays
# as it is, for the decision to judge. Set beforehand, not swept.
MIN_KEPT_SHARE = 0.5


def without_kinds_left_out(
    extraction: Extraction, blocks: Sequence[Block], page: Page, layout: SiteModel
) -> Extraction:
    """A learned site's reading made of blocks (its classifier's, its container's, the
    site's vote) less the blocks in what the layout's parser leaves out by its markup (a
    caption, a sign-up box, a line of one link: the kinds of
    :func:`~spidercrawl.learn.parser.dropped_kinds`, but those the site's vote keeps):
    where the parser does not serve the page, its kinds still tell what is never the
    story. Judged below the innermost element holding the article's blocks, as the parser
    judges below its container (a form or an aside around the whole page is no kind left
    out), and not cut where that would leave under ``MIN_KEPT_SHARE`` of it. Read on the
    page's tree as text density measured it (:func:`rendered_page_measure`: parsed once a
    page, however many readings ask)."""
    html = page.get("rendered_html") or ""
    measure = rendered_page_measure(html) if extraction.blocks and html else None
    if measure is None:  # no blocks, or no usable rendered page
        return extraction
    taken = set(extraction.blocks)
    marked = [e for e in marked_elements(measure.body) if not taken.isdisjoint(block_numbers(e))]
    region = _common_ancestor(marked)
    if region is None:
        return extraction
    rules = getattr(layout, "rules_", None)  # a layout whose parser was not learned: none
    kept = [part for part in getattr(rules, "parts_", ()) if part.kind == "kept"]
    dropped: set[int] = set()
    for element in dropped_kinds(region, kept):
        for inner in marked_elements(element):
            dropped.update(block_numbers(inner))
    if not dropped.intersection(extraction.blocks):
        return extraction
    chosen = [b for b in blocks if b.index in taken - dropped]
    if sum(b.chars for b in chosen) < MIN_KEPT_SHARE * len(extraction.text):
        return extraction  # not the story's odd boxes: the reading is of another region
    margins = dict(zip((b.index for b in blocks), layout.decision(blocks), strict=True))
    return Extraction.of_blocks(chosen, np.array([margins[b.index] for b in chosen]))


def _common_ancestor(elements: Sequence[Any]) -> Any:
    """The innermost element holding all of ``elements`` (None for none)."""
    if not elements:
        return None
    common = [elements[0], *elements[0].iterancestors()]
    for element in elements[1:]:
        ancestry = {element, *element.iterancestors()}
        while common and common[0] not in ancestry:
            common.pop(0)
    return common[0] if common else None


# The site model is sure of its own article where the median margin of its paragraphs is
# at least the SVM's margin, 1 (where its training paragraphs lie), and the model (the
# page's layout) was learned from at least 3 pages, the fewest a crawl learns from
# (LEARN_MIN_PAGES_AT_END): a model of 2 pages was sure of a related story's teaser.
SURE_MARGIN = 1.0
SURE_MIN_PAGES = 3


def checked_rules(
    page: Mapping[str, Any], model: SiteModel | None
) -> tuple[RuleExtraction | None, str]:
    """The site's extraction rules (every layout's, as the fast path tries them) on the
    page's HTML (``rendered_html``: the browser's DOM, or the raw HTML of a page fetched
    plainly), with their precision as confidence, where they pass their check; else None
    and why not ("" where the model has no usable rules)."""
    rules = model.extraction_rules() if model is not None else None
    if rules is None or not rules.usable:
        return None, ""
    result = rules.extract(page.get("rendered_html") or "")
    verdict = rules.check(result, first_description(page))
    if not verdict.ok:
        return None, verdict.reason
    result.confidence = round(rules.recall_, 3)
    return result, ""


def rules_on_render(page: Mapping[str, Any], model: SiteModel) -> RuleExtraction | None:
    """The site's extraction rules on the page's rendered DOM where they pass their check
    (:func:`checked_rules`); None where they do not apply.

    A page whose blocks are mostly in tag paths the training pages never had can still
    hold its article where the rules' selectors point: an extra wrapper or a sidebar of
    another template moves the tag paths, not the article's selectors (measured in
    docs/measurements.md)."""
    return checked_rules(page, model)[0]


def is_sure(model: SiteModel, extraction: Extraction) -> bool:
    """Whether ``model`` (the page's layout) is sure of its article ``extraction``."""
    pages = int(model.training_.get("pages", 0))
    return pages >= SURE_MIN_PAGES and extraction.paragraph_margin >= SURE_MARGIN


def plain_rules(page: Mapping[str, Any], model: SiteModel | None) -> tuple[Any, str]:
    """A page fetched plainly (fast path): the model's rules' article where they pass their
    check (the fast path's own cut, when made with this model), else None and why not."""
    rules = model.extraction_rules() if model is not None else None
    done = page.get("fast_path_article")
    if rules is not None and done is not None and done.model_version == model.version_:
        done.extraction.confidence = round(rules.recall_, 3)  # checked by the fast path
        return done.extraction, ""
    extraction, failed = checked_rules(page, model)
    if extraction is not None:
        return extraction, ""
    if rules is not None and rules.usable:
        return None, f"fetched without a browser; the rules failed ({failed})"
    if model is None:
        return None, "no site model"
    return None, "fetched without a browser, and the site model has no usable rules"


class SiteReaders:
    """A learned site's readers of one page (:mod:`spidercrawl.extract.readers`'
    interface): on a page fetched without a browser its parser alone; on a rendered page
    also its layout's classifier and the fallbacks where the classifier does not fit. The
    page's layout (of the model's several) is found once, on first use."""

    def __init__(self, page: Page, model: SiteModel, cross_site: UnseenExtractor | None) -> None:
        self.page = page
        self.model = model
        self.cross_site = cross_site
        self._layout: SiteModel | None = None

    @property
    def layout(self) -> SiteModel:
        if self._layout is None:
            self._layout = self.model.for_blocks(self.page.blocks())
        return self._layout

    def readers(self) -> dict[str, Any]:
        if self.page.plain:
            return {PARSER: self.parser}
        found = {
            PARSER: self.parser,
            CLASSIFIER: self.classifier,
            CONTAINER: self.container,
            SITE_DENSITY: self.site_density,
        }
        if self.cross_site is not None:
            found[SITE_BLOCKS] = self.site_blocks
        return found

    def parser(self) -> Any:
        if self.page.plain:
            extraction, why = plain_rules(self.page, self.model)
            if extraction is None:
                raise NoReadingError(why)
            return extraction
        extraction = rules_on_render(self.page, self.model)
        if extraction is None:
            raise NoReadingError("the site's parser does not serve this page")
        return extraction

    def classifier(self) -> Extraction:
        blocks = self.page.blocks()
        return without_kinds_left_out(
            self.layout.extract_blocks(blocks), blocks, self.page, self.layout
        )

    def container(self) -> Extraction:
        blocks = self.page.blocks()
        contained = self.layout.extract_in_container(blocks)
        if contained is None:
            raise NoReadingError("no article container on this page")
        return without_kinds_left_out(contained, blocks, self.page, self.layout)

    def site_blocks(self) -> Extraction:
        assert self.cross_site is not None
        found = unseen_fallback(self.page, self.layout, self.cross_site)
        return without_kinds_left_out(found, self.page.blocks(), self.page, self.layout)

    def site_density(self) -> Extraction | DensityResult:
        return density_fallback(self.page, self.layout)

    def familiarity(self) -> float:
        return self.layout.familiarity(self.page.blocks())

    def enough_chars(self) -> int:
        return self.layout.enough_chars()

    def sure(self, extraction: Extraction) -> bool:
        return is_sure(self.layout, extraction)
