"""Many sites on many machines: Scrapy's scheduler in Redis (scrapy-redis), shared state.

``-s REDIS_URL=redis://HOST:PORT/DB`` (or ``SPIDERCRAWL_REDIS_URL``) turns it on
(:class:`RedisAddon`). Then, for every worker that reaches the same Redis:

- the request queue and the duplicate filter are scrapy-redis's, kept after a crawl ends,
  so a stopped crawl resumes where it was (:mod:`.scheduler`); requests a worker took but
  had not finished when it died are put back by the next worker that notices it is gone;
- sites come from a queue that ``python -m spidercrawl.enqueue`` fills (:mod:`.sites`),
  and the pages claimed per site (and the ``max_pages`` budget) are counted in Redis;
- each article is judged, recorded and put into the delivery stream in one atomic step
  (:mod:`.delivery`), and ``python -m spidercrawl.collect`` writes the stream to the
  per-site articles files and JSON Feeds;
- a worker stops when the queues stay empty for ``REDIS_IDLE_CLOSE`` seconds.

Every key starts with ``REDIS_PREFIX`` (``spidercrawl``), so one Redis can serve several
independent deployments.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


class RedisUnavailableError(RuntimeError):
    """Redis cannot be reached: the message says where and why."""


def redis_client(url: str) -> Any:
    """A client of the Redis at ``url``, checked with a PING (RedisUnavailableError if not)."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, health_check_interval=30)
        client.ping()
    except (redis.exceptions.RedisError, ValueError) as error:
        raise RedisUnavailableError(f"cannot reach Redis at {url}: {error}") from None
    return client


def key_prefix(settings: BaseSettings) -> str:
    return str(settings.get("REDIS_PREFIX") or "spidercrawl")


class RedisAddon:
    """With ``REDIS_URL`` set, the scheduler, duplicate filter and state go to Redis."""

    def update_settings(self, settings: BaseSettings) -> None:
        url = settings.get("REDIS_URL")
        if not url:
            return
        prefix = key_prefix(settings)
        for name, value in {
            "SCHEDULER": "spidercrawl.distributed.scheduler.ReliableScheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,  # a stopped crawl resumes; enqueue --reset clears
            "SCHEDULER_QUEUE_KEY": f"{prefix}:requests",
            "SCHEDULER_DUPEFILTER_KEY": f"{prefix}:dupefilter",
            # Requests travel as JSON-safe pickles of Request.to_dict (scrapy-redis default).
        }.items():
            settings.set(name, value, priority="addon")
