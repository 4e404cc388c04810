"""Scrapy's log lines about items, one line each.

Scrapy logs a dropped item with the whole item after the reason: a page item holds every
text block of its page, so one dropped page (a home page that is no article, a page
Redis could not take) wrote about a thousand lines. Here it is the reason and the page's
URL, on one line; the level is Scrapy's (the exception's ``log_level``, else
``DEFAULT_DROPITEM_LOG_LEVEL``).
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter, is_item
from scrapy.logformatter import LogFormatter, LogFormatterResult

MAX_REASON_CHARS = 300  # a reason longer than this (a message quoting a page) is cut


class OneLineLogFormatter(LogFormatter):
    """:class:`scrapy.logformatter.LogFormatter` with a dropped item said in one line."""

    def dropped(self, item: Any, exception: BaseException, response: Any, spider: Any
                ) -> LogFormatterResult:  # fmt: skip
        result = super().dropped(item, exception, response, spider)
        url = ItemAdapter(item).get("url") if is_item(item) else None
        reason = " ".join(str(exception).split())[:MAX_REASON_CHARS]
        result["msg"] = "Dropped: %(exception)s" + (" (%(url)s)" if url else "")
        result["args"] = {"exception": reason, "url": url}
        return result
