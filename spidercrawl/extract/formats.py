"""Which forms of an article's content its output carries: ``text``, ``html``, ``markdown``.

Every article is made with all three (the same article, see
:mod:`spidercrawl.document.markdown`); a user who builds a corpus of Markdown alone need
not store the text and HTML beside it. ``ARTICLE_FORMATS`` (a crawl's setting) and
``--formats`` (the extract command's) name the forms kept; metadata is always kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

CONTENT_FORMATS = ("text", "html", "markdown")


@dataclass(frozen=True)
class ArticleFormats:
    """The content forms an article's output keeps."""

    kept: frozenset[str] = frozenset(CONTENT_FORMATS)

    @classmethod
    def parse(cls, names: Iterable[str] | str) -> ArticleFormats:
        """From a list or a comma-separated string; a ValueError names what is wrong."""
        if isinstance(names, str):
            names = names.split(",")
        kept = {name.strip().lower() for name in names if name and name.strip()}
        unknown = sorted(kept - set(CONTENT_FORMATS))
        if unknown:
            raise ValueError(
                f"unknown article format {', '.join(unknown)}: choose among "
                f"{', '.join(CONTENT_FORMATS)}"
            )
        if not kept:
            raise ValueError(f"no article format: name one or more of {', '.join(CONTENT_FORMATS)}")
        return cls(frozenset(kept))

    def keeps(self, name: str) -> bool:
        return name in self.kept

    def strip(self, article: Mapping[str, Any]) -> dict[str, Any]:
        """The article without the content forms not kept."""
        return {k: v for k, v in article.items() if k not in CONTENT_FORMATS or k in self.kept}
