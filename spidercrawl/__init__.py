"""spidercrawl: crawl news sites, learn each site's article template, write clean articles.

``spidercrawl.extract_html(html, url=None, site_model=None)`` extracts one page without a
crawl (see :mod:`spidercrawl.extract.api`). It is imported on first use: Scrapy imports this
package for its settings, and a crawl should not pay for what it does not call.
"""

from __future__ import annotations

from typing import Any

__all__ = ["extract_html"]


def __getattr__(name: str) -> Any:
    if name == "extract_html":
        from spidercrawl.extract.api import extract_html

        return extract_html
    raise AttributeError(f"module 'spidercrawl' has no attribute {name!r}")
