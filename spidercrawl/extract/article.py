"""Extraction from a rendered page item when no site model applies: text density.

The crawler's page item carries the rendered DOM (``rendered_html``, hidden elements
marked by the capture script), so text density runs render-aware here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spidercrawl.extract.density import DensityExtractor, DensityResult
from spidercrawl.learn.model import SiteModel


def cold_start_extraction(page: Mapping[str, Any]) -> DensityResult:
    """CETD on the page's rendered HTML: the article of a page of a site not learned yet."""
    html = page.get("rendered_html") or ""
    if not html:
        return DensityResult("cectd-ds", reason="the page item has no rendered_html")
    return DensityExtractor.product().extract(html)


def block_indices(result: DensityResult) -> set[int]:
    """The capture script's block numbers (``data-sc-block``) inside the density content."""
    indices = set()
    for element in result.content:
        number = element.get("data-sc-block")
        if number is not None and number.isdigit():
            indices.add(int(number))
    return indices


def learned_extraction(page: Mapping[str, Any], model: SiteModel) -> tuple[Any, str]:
    """The site model's article, or text density's when the model finds (almost) nothing.

    Returns the extraction and the method that produced it (``learned`` or
    ``learned+density-fallback``). "Almost nothing" is under a tenth of the content the
    model saw per training page: the page's template differs from the training pages'.
    """
    extraction = model.extract(page)
    expected = float(model.training_.get("content_chars_per_page", 0.0))
    if len(extraction.text) >= max(1.0, 0.1 * expected):
        return extraction, "learned"
    fallback = cold_start_extraction(page)
    if fallback.text:
        return fallback, "learned+density-fallback"
    return extraction, "learned"
