"""A learned site's article of a rendered page item, and the fallbacks where its model
does not fit the page (the site's rules on the DOM, the cross-site extractor less the
site's template, its article container, text density)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from spidercrawl.document.density import DensityResult
from spidercrawl.document.page import first_description
from spidercrawl.extract.cold_start import block_indices, cold_start_extraction
from spidercrawl.learn.blocks import Block
from spidercrawl.learn.model import Extraction, SiteModel
from spidercrawl.learn.page import Page
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
    docs/measurements.md). The consensus then votes on this article as it is, beside the
    peers' whole articles
    (:meth:`~spidercrawl.extract.consensus.ConsensusExtractor.confirm_learned`)."""
    return _less_template(page.blocks(), set(unseen.extract(page).blocks), model)


def _less_template(blocks: Sequence[Block], chosen: set[int], model: SiteModel) -> Extraction:
    """The ``chosen`` blocks (by index) less the site's template texts."""
    kept = [b for b in blocks if b.index in chosen and not model.is_template(b)]
    return Extraction.of_blocks(kept, model.decision(kept))


# Under this share of a page's text in tag paths the model saw, the page is of another
# template (print views, redesigns); any share from 0.1 to 0.3 measured the same.
MIN_FAMILIAR_SHARE = 0.2
# The note of a page extracted as unseen because no layout of the model knows it.
UNFAMILIAR = "is in a layout the model knows"


# The site model is sure of its own article where the median margin of its paragraphs is
# at least the SVM's margin, 1 (where its training paragraphs lie), and the model (the
# page's layout) was learned from at least 3 pages, the fewest a crawl learns from
# (LEARN_MIN_PAGES_AT_END): a model of 2 pages was sure of a related story's teaser.
SURE_MARGIN = 1.0
SURE_MIN_PAGES = 3


class LearnedArticle(NamedTuple):
    """A learned site's article: the extraction, the method that made it, why the model's
    own article was not used ("" when it was), whether the model is sure of it
    (``SURE_MARGIN``; the peers' check then leaves it alone), and whether the page is of
    no layout the model knows (extracted as a site never seen: a new layout's pages, not
    drift)."""

    extraction: Extraction | DensityResult | RuleExtraction
    method: str
    reason: str = ""
    sure: bool = False
    of_no_layout: bool = False


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


def learned_extraction(
    page: Mapping[str, Any],
    model: SiteModel,
    unseen: UnseenExtractor | None = None,
) -> LearnedArticle:
    """The layout's parser on the page's DOM where it serves the layout, passes its check
    and takes the page's prose as the fast path asks (:func:`rules_on_render`, method
    ``rules``, the cut the fast path gives: a story continued past the container sends the
    page on); else
    the site model's classifier; on a page of a template the model has not seen, what a
    site never seen would give (``unseen``, the cross-site extractor, less the site's
    template texts); where the classifier finds (almost) nothing, the blocks in the site's
    article container, else that cross-site article or, without it, text density's.

    The parser comes first because it is the site's reading a person could have written,
    judged against the page's reading when it was learned (docs/measurements.md). The
    method is ``rules``, ``learned``, ``learned+container``, ``learned+unseen`` or
    ``learned+density-fallback``. "Almost nothing" is under a tenth of the content the
    model saw per training page. The page's blocks are built once for all (a
    :class:`~spidercrawl.learn.page.Page` keeps them).
    """
    page = Page.of(page)
    by_rules = rules_on_render(page, model)
    if by_rules is not None and by_rules.prose.agrees_with(len(by_rules.text.split())):
        return LearnedArticle(by_rules, "rules", sure=True)
    blocks = page.blocks()
    model = model.for_blocks(blocks)  # several layouts: the page's own
    familiarity = model.familiarity(blocks)
    cross_site: Extraction | None = None  # computed once at most
    if unseen is not None and familiarity < MIN_FAMILIAR_SHARE:
        reason = f"only {familiarity:.0%} of the page's text {UNFAMILIAR}"
        cross_site = unseen_fallback(page, model, unseen)
        if cross_site.text:
            return LearnedArticle(cross_site, "learned+unseen", reason, of_no_layout=True)
    enough = model.enough_chars()
    extraction = model.extract_blocks(blocks)
    if len(extraction.text) >= enough:
        return LearnedArticle(extraction, "learned", sure=is_sure(model, extraction))
    nothing = "the model found almost nothing here"
    contained = model.extract_in_container(blocks)
    if contained is not None and len(contained.text) >= enough:
        return LearnedArticle(contained, "learned+container", nothing)
    if unseen is not None:
        if cross_site is None:
            cross_site = unseen_fallback(page, model, unseen)
        if cross_site.text:
            return LearnedArticle(cross_site, "learned+unseen", nothing)
    fallback = density_fallback(page, model)
    if fallback.text:
        return LearnedArticle(fallback, "learned+density-fallback", nothing)
    return LearnedArticle(extraction, "learned")
