"""A site's TDMRep policy shared by every worker: ``PREFIX:tdm``, site -> its tdmrep.json.

One worker fetches a site's ``/.well-known/tdmrep.json`` (the one that takes its request
from the queue); every worker renders its pages. Without sharing, a worker that had not
read the file itself delivered the pages under a reserved path without ``tdm``: an
opt-out leaked. The worker that reads the file shares its text ("" where the site has
none, it could not be read, is over MAX_TDMREP_BYTES or holds no rule); a worker that has
not read it asks Redis once a page until the policy is there, then keeps it.

A page read before any worker had shared the policy (its fetch still on its way) waits for
it at the item step (:class:`TdmPolicyWait`), up to the fetch's own bound, and gets ``tdm``
where the policy reserves its path. What the hash holds is read as data: a value that is
not a tdmrep.json this module wrote (too long, not UTF-8, no rule) is no policy, said once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from spidercrawl.distributed import GUARD, NotDelivered, RedisDownError
from spidercrawl.document.reservations import MAX_TDMREP_BYTES, TDM, TdmPolicy

logger = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how often a waiting page's site policy is asked for again
PIPELINE_ORDER = 250  # before the learning pipeline (300) turns reservations into `reserved`


class SharedTdm:
    """The ``PREFIX:tdm`` hash: sites' tdmrep.json as the worker that read each left it."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.key = f"{prefix}:tdm"

    def share(self, site: str, text: str) -> None:
        """The site's tdmrep.json for every worker ("" for no policy). Redis not answering
        leaves it unshared: another worker's pages then wait for it, then go unmarked."""
        with contextlib.suppress(NotDelivered):
            GUARD(self.redis.hset, self.key, site, text)

    def policy(self, site: str) -> TdmPolicy | None:
        """The site's policy as shared; None while no worker has shared it, or when Redis
        does not answer (asked again for the next page)."""
        try:
            raw = GUARD(self.redis.hget, self.key, site)
        except NotDelivered:
            return None
        return None if raw is None else read_shared(site, raw)


def read_shared(site: str, raw: bytes | str) -> TdmPolicy:
    """The policy of a value from the hash; an empty one, logged, for a value this module
    does not write (another program's, or damaged)."""
    if not raw:
        return TdmPolicy()
    if len(raw) > MAX_TDMREP_BYTES:
        why = f"{len(raw)} bytes, over {MAX_TDMREP_BYTES}"
    else:
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            why = "not UTF-8 text"
        else:
            policy = TdmPolicy.parse(text)
            if policy.rules:
                return policy
            why = "not a tdmrep.json with rules"
    logger.warning(
        "%s: the tdmrep.json shared in Redis is unreadable (%s): no reservation by the site",
        site, why,
    )  # fmt: skip
    return TdmPolicy()


class TdmPolicyWait:
    """With Redis: a page item whose site's policy is not known yet waits for it, asking
    every POLL_SECONDS up to the tdmrep.json fetch's own bound (its download timeout, and
    its retries); ``tdm`` is then added where the policy reserves the page's path (the
    spider marks it where it knew the policy already; adding it again changes nothing).
    A site whose policy did not come in time is said once, and its later pages do not wait:
    they go with what is known. Redis gone while waiting: the page is not delivered (it
    stays in flight, crawled again)."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.get("REDIS_URL"):
            raise NotConfigured("no REDIS_URL: the spider reads every tdmrep.json itself")
        self.crawler = crawler
        self.wait = settings.getfloat("DOWNLOAD_TIMEOUT") * (1 + settings.getint("RETRY_TIMES"))
        self.late: set[str] = set()  # sites whose policy did not come within the wait

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TdmPolicyWait:
        return cls(crawler)

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        # The spider's view of each site's policy (spiders/news.py), asking Redis if unknown.
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
            if GUARD.error is not None:
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
