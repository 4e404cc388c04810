"""The default articles file: ``output/<site>/articles.jsonl``, for articles only.

A Scrapy add-on, so that it sees the feeds of the command line (``-o``/``-O``) before the
settings freeze. When the user names no feed, every article (and nothing else: page items,
as ``LEARN_ENABLED=False`` yields, are not articles) is appended to ``ARTICLES_FILE``.
When the user names one (``-O articles.jsonl``, or ``FEEDS`` in their settings), that is
where the items go and the default file is left alone: ``-O`` replaces what the user named
and nothing else, and test or evaluation crawls never write into the project's folder.

Setting: ``ARTICLES_FILE`` (default ``output/%(site)s/articles.jsonl``; ``""`` turns the
default file off).
"""

from __future__ import annotations

import logging

from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

ARTICLE_ITEM_CLASS = "spidercrawl.items.ArticleItem"


def default_feed(path: str) -> dict[str, dict[str, object]]:
    """The ``FEEDS`` entry of the default articles file."""
    return {
        path: {
            "format": "jsonlines",
            "encoding": "utf-8",
            "item_classes": [ARTICLE_ITEM_CLASS],
        }
    }


class ArticlesFileAddon:
    """Adds the default articles file to ``FEEDS`` unless the user named feeds of their own."""

    def update_settings(self, settings: BaseSettings) -> None:
        path = settings.get("ARTICLES_FILE", "")
        if not path:
            return
        if settings.getdict("FEEDS"):
            logger.debug("Items go to the feeds named by the user; %s is not written", path)
            return
        if not settings.getbool("LEARN_ENABLED", True):
            logger.warning(
                "LEARN_ENABLED=False yields page items, not articles, and %s takes articles "
                "only: name a file for the page items with -O pages.jsonl",
                path,
            )
            return
        settings.set("FEEDS", default_feed(path), priority="addon")
