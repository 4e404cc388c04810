"""Extraction on a site with no model yet: the shipped cross-site model and text density."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spidercrawl.extract.article import block_indices, cold_start_extraction
from spidercrawl.extract.structure import paragraphs_html, paragraphs_text
from spidercrawl.learn.blocks import page_blocks
from spidercrawl.learn.model import Extraction, SiteModel, block_paragraphs
from spidercrawl.runner import PROJECT_ROOT

DEFAULT_CROSS_SITE_MODEL = PROJECT_ROOT / "models" / "_cross_site"


class UnseenExtractor:
    """Blocks the cross-site model calls content, and those text density keeps."""

    def __init__(self, model: SiteModel) -> None:
        self.model = model

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
        chosen = [b for b, m in zip(blocks, margins, strict=True) if m > 0 and b.index in density]
        paragraphs = block_paragraphs(chosen)
        return Extraction(
            paragraphs_text(paragraphs),
            paragraphs_html(paragraphs),
            paragraphs,
            [b.index for b in chosen],
            0.5,
        )
