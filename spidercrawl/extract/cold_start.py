"""Text density on a page item: the article of a page no model applies to.

The crawler's page item carries the rendered DOM (``rendered_html``, hidden elements
marked by the capture script), so text density runs render-aware here. Below both the
site model's chain (:mod:`.article`) and the cross-site extractor (:mod:`.unseen`), which
read its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spidercrawl.document.blocks import block_numbers
from spidercrawl.document.density import DensityResult, rendered_page_density


def cold_start_extraction(page: Mapping[str, Any]) -> DensityResult:
    """CETD on the page's rendered HTML: the article of a page of a site not learned yet."""
    html = page.get("rendered_html") or ""
    if not html:
        return DensityResult("cectd-ds", reason="the page item has no rendered_html")
    return rendered_page_density(html)


def block_indices(result: DensityResult) -> set[int]:
    """The capture script's block numbers (``data-sc-block``) inside the density content."""
    indices = set()
    for element in result.content:
        indices.update(block_numbers(element))
    return indices
