"""A page read before its site's tdmrep.json was known waits for it at the item step.

The spider asks for a site's ``/.well-known/tdmrep.json`` first, but a slow answer (or,
with Redis, another worker that reads it: :mod:`spidercrawl.distributed.tdm`) can come
after the site's first pages were read. Those pages went without ``tdm`` where the policy
reserves their path: an opt-out leaked. Here each page item whose site's policy is not
known yet waits for it, asking every POLL_SECONDS up to the fetch's own bound (its download
timeout, and its retries), and gets ``tdm`` where the policy reserves its path (the spider
marks it where it knew the policy already; adding it again changes nothing). A site whose
policy did not come in time is said once, and its later pages do not wait: they go with
what is known. Redis gone while waiting: the page is not delivered (it stays in flight,
crawled again).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler

from spidercrawl.distributed import GUARD, RedisDownError
from spidercrawl.document.reservations import TDM, TdmPolicy

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how often a waiting page's site policy is asked for again


class TdmPolicyWait:
    """The item step before learning (``ITEM_PIPELINES``: 250, the learning pipeline turns
    reservations into ``reserved`` at 300); see the module doc."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.wait = settings.getfloat("DOWNLOAD_TIMEOUT") * (1 + settings.getint("RETRY_TIMES"))
        self.with_redis = bool(settings.get("REDIS_URL"))
        self.late: set[str] = set()  # sites whose policy did not come within the wait

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TdmPolicyWait:
        return cls(crawler)

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        # The spider's view of each site's policy (spiders/news.py): None while unknown.
        ask: Callable[[str], TdmPolicy | None] | None = getattr(
            self.crawler.spider, "tdm_policy", None
        )
        site = str(adapter.get("site") or "")
        if "texts" not in adapter or not site or ask is None:
            return item  # not a page item of the news spider
        policy = await self._policy(ask, site)
        if policy is not None and policy.reserves(urlsplit(str(adapter.get("url"))).path):
            adapter["reservations"] = sorted({*(adapter.get("reservations") or ()), TDM})
        return item

    async def _policy(self, ask: Callable[[str], TdmPolicy | None], site: str) -> TdmPolicy | None:
        policy = ask(site)
        deadline = time.monotonic() + self.wait
        while policy is None and site not in self.late and time.monotonic() < deadline:
            if self.with_redis and GUARD.error is not None:
                raise RedisDownError(f"Redis stopped answering ({GUARD.error})")
            await asyncio.sleep(POLL_SECONDS)
            policy = ask(site)
        if policy is None and site not in self.late:
            self.late.add(site)
            logger.warning(
                "%s: its tdmrep.json was not known after %.0f s: its pages go without the "
                "site's text-and-data-mining reservations until it is", site, self.wait,
            )  # fmt: skip
        return policy
