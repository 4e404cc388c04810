"""Extraction on a site with no model yet: the shipped cross-site model and text density."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from spidercrawl.extract.article import block_indices, cold_start_extraction
from spidercrawl.learn.blocks import page_blocks
from spidercrawl.learn.model import Extraction, SiteModel
from spidercrawl.runner import PROJECT_ROOT

DEFAULT_CROSS_SITE_MODEL = PROJECT_ROOT / "models" / "_cross_site"


class UnseenExtractor:
    """Text density's blocks, less those the cross-site model firmly calls boilerplate.

    Text density decides the region (it needs no training and measured best on sites never
    seen); the cross-site SVM only vetoes blocks whose margin is ``veto_margin`` below the
    region's median (navigation-like blocks inside the region). The veto is relative:
    margins shift from one site's styling to another's. Where text density finds nothing, the
    blocks the SVM calls content are used.
    """

    def __init__(self, model: SiteModel, veto_margin: float = 1.0) -> None:
        self.model = model
        self.veto_margin = veto_margin

    @staticmethod
    def available(folder: Path | None = None) -> bool:
        return SiteModel.exists(folder or DEFAULT_CROSS_SITE_MODEL)

    @classmethod
    def load(cls, folder: Path | None = None) -> UnseenExtractor:
        return cls(SiteModel.load(folder or DEFAULT_CROSS_SITE_MODEL))

    def extract(self, page: Mapping[str, Any]) -> Extraction:
        blocks = page_blocks(page)
        margins = self.model.decision(blocks)
        density = block_indices(cold_start_extraction(page))
        region = [(b, m) for b, m in zip(blocks, margins, strict=True) if b.index in density]
        if region:
            typical = float(np.median([m for _, m in region]))
            chosen = [(b, m) for b, m in region if m > typical - self.veto_margin]
        else:
            chosen = [(b, m) for b, m in zip(blocks, margins, strict=True) if m > 0]
        return Extraction.of_blocks([b for b, _ in chosen], [m for _, m in chosen])
