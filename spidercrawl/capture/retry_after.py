"""A 429 or 503 is retried after the wait the site asks for (``Retry-After``), bounded.

Scrapy's retry middleware retries at once, which a rate-limited site answers with the same
429. Here the page waits what ``Retry-After`` says (seconds or an HTTP date), at most
``WALL_RETRY_AFTER_MAX`` seconds (``WALL_RETRY_DEFAULT`` where the header is missing or
odd), up to ``WALL_RETRIES`` times; the wait is logged with its reason and only that
request waits. After the last try the response goes on, and the spider counts the page as
blocked (:mod:`spidercrawl.document.walls`).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response

logger = logging.getLogger(__name__)

RETRIED_STATUSES = (429, 503)


class RetryAfterMiddleware:
    """Waits out a 429 or 503 as the site asks, a bounded number of times."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.retries = max(0, settings.getint("WALL_RETRIES"))
        self.max_wait = max(0.0, settings.getfloat("WALL_RETRY_AFTER_MAX"))
        self.default_wait = min(self.max_wait, max(0.0, settings.getfloat("WALL_RETRY_DEFAULT")))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryAfterMiddleware:
        return cls(crawler)

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if response.status not in RETRIED_STATUSES:
            return response
        tries = int(request.meta.get("retry_after_tries", 0))
        if tries >= self.retries:
            return response
        header = (response.headers.get(b"Retry-After") or b"").decode("latin-1").strip()
        asked = retry_after_seconds(header)
        wait = self.default_wait if asked is None else min(asked, self.max_wait)
        self.crawler.stats.inc_value(f"spidercrawl/pages/retried_after/http_{response.status}")
        logger.info(
            "HTTP %d on %s: retrying in %.0f s (%s), try %d of %d",
            response.status, request.url, wait,
            f"Retry-After: {header}" if header else "no Retry-After", tries + 1, self.retries,
        )  # fmt: skip
        await asyncio.sleep(wait)
        meta = {**request.meta, "retry_after_tries": tries + 1}
        return request.replace(meta=meta, dont_filter=True)


def retry_after_seconds(value: str) -> float | None:
    """A ``Retry-After`` header's wait in seconds (delta seconds or an HTTP date), None
    where it is neither."""
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
