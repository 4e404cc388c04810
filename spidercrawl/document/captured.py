"""A captured page with its text blocks built at most once.

A page item (a crawl's, or a dataset's) is read by many stages: the page-kind check and
the headline want its blocks, extraction wants them with their text densities (a parse of
the page's HTML). Building the blocks costs about as much as extracting the article, so
:class:`Page` builds them once and adds the densities once, whoever asks first. It reads as
the mapping it wraps, so code that only reads a page's fields takes it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.blocks import Block, add_densities, page_blocks
from spidercrawl.document.page import fetched_plainly


@dataclass(eq=False)
class Page(Mapping[str, Any]):
    """One captured page: ``item`` as the crawl or a dataset has it, and its blocks."""

    item: Mapping[str, Any]
    _blocks: list[Block] | None = field(default=None, init=False, repr=False)
    _with_densities: bool = field(default=False, init=False, repr=False)

    @classmethod
    def of(cls, page: Mapping[str, Any]) -> Page:
        """``page`` itself when it is a :class:`Page` already (its blocks kept), else a
        new one around it."""
        return page if isinstance(page, Page) else cls(page)

    # -- read as the item -----------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.item[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.item)

    def __len__(self) -> int:
        return len(self.item)

    @property
    def site(self) -> str:
        return str(self.item.get("site") or "unknown")

    @property
    def plain(self) -> bool:
        """Fetched without a browser: extracted from its HTML, never from blocks."""
        return fetched_plainly(self.item)

    # -- its blocks, built once -----------------------------------------------------------
    def blocks(self) -> list[Block]:
        """The non-empty text blocks with their text densities (extraction reads them)."""
        if self._blocks is None:
            self._blocks = page_blocks(self.item)
        elif not self._with_densities:
            add_densities(self.item, self._blocks)
        self._with_densities = True
        return self._blocks

    @property
    def has_blocks(self) -> bool:
        """Whether its blocks with their densities were built (an extractor may read them
        after another raised)."""
        return self._with_densities

    def blocks_without_densities(self) -> list[Block]:
        """The blocks, their densities not needed (page kind, headline): the blocks with
        densities when those were built already."""
        if self._blocks is None:
            self._blocks = page_blocks(self.item, densities=False)
        return self._blocks
