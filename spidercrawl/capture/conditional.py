"""Conditional re-fetch: a page delivered before is asked for only if it changed.

Every plain fetch of an article page (the fast path's, or the raw HTML fetched before a
render) keeps the response's validators, ``ETag`` and ``Last-Modified``; the delivery
pipeline records them with the article in the crawl's memory (:mod:`spidercrawl.memory`;
in Redis with ``REDIS_URL``). On the next crawl a known page is fetched with
``If-None-Match`` / ``If-Modified-Since``; a ``304 Not Modified`` answer ends it there: no
render, no extraction, nothing delivered (it would be unchanged), counted in
``spidercrawl/pages/not_modified``. Validators are recorded only once the article is
delivered or judged unchanged, so a killed crawl never skips a page it did not deliver.

Setting: ``CONDITIONAL_FETCH`` (True; off with ``INCREMENTAL_ENABLED=False``, which asks for
every article again).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response

from spidercrawl.memory import page_key, read_validators

logger = logging.getLogger(__name__)

NOT_MODIFIED = 304


class ConditionalFetchMiddleware:
    """Adds the validators of known pages to their plain fetch; turns a 304 into a skip."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("CONDITIONAL_FETCH"):
            raise NotConfigured("CONDITIONAL_FETCH is off")
        if not settings.getbool("INCREMENTAL_ENABLED"):
            raise NotConfigured("INCREMENTAL_ENABLED is off: every page is fetched whole")
        if not settings.getbool("LEARN_ENABLED"):
            raise NotConfigured("LEARN_ENABLED is off: page items are wanted whatever changed")
        self.crawler = crawler
        self.state_dir = Path(settings.get("STATE_DIR"))
        self.sites: dict[str, dict[str, dict[str, str]]] = {}
        self.redis: Any = None
        self.prefix = ""
        if settings.get("REDIS_URL"):
            from spidercrawl.distributed import key_prefix, redis_client

            self.redis = redis_client(settings.get("REDIS_URL"))
            self.prefix = key_prefix(settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ConditionalFetchMiddleware:
        return cls(crawler)

    def _known(self, site: str, url: str) -> dict[str, str] | None:
        key = page_key(url)
        if self.redis is not None:
            from spidercrawl.distributed import GUARD, NotDelivered
            from spidercrawl.distributed.delivery import read_page_validators

            try:
                return GUARD(read_page_validators, self.redis, self.prefix, site, key)
            except NotDelivered:
                return None
        if site not in self.sites:
            self.sites[site] = read_validators(self.state_dir, site)
        return self.sites[site].get(key)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if meta.get("render") or not (meta.get("fast_path") or meta.get("raw_first")):
            return None  # the browser cannot ask conditionally; discovery pages are small
        known = self._known(str(meta.get("site") or ""), request.url)
        if not known:
            return None
        if known.get("etag"):
            request.headers.setdefault(b"If-None-Match", known["etag"].encode("latin-1"))
        if known.get("last_modified"):
            request.headers.setdefault(
                b"If-Modified-Since", known["last_modified"].encode("latin-1")
            )
        meta["conditional"] = True
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        meta = request.meta
        if meta.get("conditional") and response.status == NOT_MODIFIED:
            site = str(meta.get("site") or "")
            stats = self.crawler.stats
            stats.inc_value("spidercrawl/pages/not_modified")
            stats.inc_value(f"spidercrawl/site/{site}/not_modified")
            logger.debug("%s: not modified since the last crawl: %s", site, request.url)
            raise IgnoreRequest(f"not modified since the last crawl: {request.url}")
        if (meta.get("fast_path") or meta.get("raw_first")) and response.status == 200:
            validators = {
                name: value.decode("latin-1")
                for name, header in (("etag", b"ETag"), ("last_modified", b"Last-Modified"))
                if (value := response.headers.get(header))
            }
            if validators:
                meta["validators"] = validators
        return response
