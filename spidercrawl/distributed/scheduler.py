"""scrapy-redis's scheduler, made safe against a worker killed mid-crawl.

scrapy-redis pops a request from the shared queue and forgets it: if the worker dies before
the page is done, the page is lost (its fingerprint is in the duplicate filter, so nobody
fetches it again). :class:`ReliableScheduler` keeps each popped request in the worker's
in-flight hash (``PREFIX:inflight:WORKER``) until the page is done: its items delivered or
dropped (item signals), or its callback finished without items (:class:`InflightMiddleware`).
Each worker refreshes a heartbeat key (``PREFIX:worker:WORKER``, expiring after
``REDIS_WORKER_TIMEOUT`` seconds); when a worker's heartbeat is gone, the first worker to
notice puts its in-flight requests back into the queue. A page may so be fetched twice,
never delivered twice: delivery is an atomic check in Redis (:mod:`.delivery`).

scrapy-redis 0.9.1 against Scrapy 2.19: the scheduler and duplicate filter work as they are
(``Request.to_dict``/``request_from_dict``; the filter's own fingerprint). Its spider classes
are not used: ``RedisMixin`` calls ``engine.crawl(request, spider=...)``, which Scrapy 2.10
removed (rmax/scrapy-redis#285, fixed upstream in #286 after the 0.9.1 release), and has no
async ``start()`` (rmax/scrapy-redis#305). Our spider takes its sites from Redis itself
(:mod:`.sites`). And its scheduler passes ``spider=`` to ``StatsCollector.inc_value``, which
Scrapy deprecated (scrapy/scrapy#6750, #7011): a ScrapyDeprecationWarning in the log for
every request queued and taken. ``enqueue_request`` and ``next_request`` are redone here
without it (tested: no such warning in a worker's log).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any

from redis.exceptions import RedisError
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_from_coro
from scrapy_redis.scheduler import Scheduler
from twisted.internet import reactor, task

from spidercrawl.distributed import GUARD, NotDelivered, key_prefix

logger = logging.getLogger(__name__)


def worker_id() -> str:
    """A name for this worker process, unique across machines and restarts."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class ReliableScheduler(Scheduler):
    """A Redis scheduler whose popped requests stay in-flight until their page is done."""

    crawler: Crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReliableScheduler:
        scheduler = super().from_crawler(crawler)
        scheduler.crawler = crawler
        settings = crawler.settings
        scheduler.prefix = key_prefix(settings)
        scheduler.worker = worker_id()
        scheduler.timeout = max(3, settings.getint("REDIS_WORKER_TIMEOUT", 60))
        scheduler.inflight_key = f"{scheduler.prefix}:inflight:{scheduler.worker}"
        scheduler.heartbeat = task.LoopingCall(scheduler.beat)
        scheduler.redis_failed = False
        GUARD.listeners.append(scheduler.stop_for_redis)
        # Delivered or dropped: done. Not after an item error, nor a drop because Redis did
        # not answer: such pages stay in flight, to be put back.
        for signal in (signals.item_scraped, signals.item_dropped):
            crawler.signals.connect(scheduler.item_done, signal=signal)
        return scheduler

    def open(self, spider: Spider) -> Any:
        result = super().open(spider)
        self.server.sadd(f"{self.prefix}:workers", self.worker)
        self.beat()
        self.heartbeat.start(max(1, self.timeout // 3), now=False)
        logger.info(
            "Worker %s on Redis (queue %s: %d requests waiting)",
            self.worker, self.queue_key, len(self.queue),
        )  # fmt: skip
        return result

    def close(self, reason: str) -> Any:
        if self.heartbeat.running:
            self.heartbeat.stop()
        if self.redis_failed:
            return None  # nothing can be said to Redis; the heartbeat will expire
        left = self.server.hlen(self.inflight_key)
        if left and reason != "finished":
            self._requeue(self.worker)  # stopped early (Ctrl-C): others take them over
        self.server.delete(self.inflight_key, f"{self.prefix}:worker:{self.worker}")
        self.server.srem(f"{self.prefix}:workers", self.worker)
        return super().close(reason)

    def beat(self) -> None:
        """Say this worker is alive; put back the requests of workers that are not."""
        if self.redis_failed:
            return
        try:
            self.server.set(f"{self.prefix}:worker:{self.worker}", "alive", ex=self.timeout)
            self.recover_dead_workers()
        except RedisError as error:
            GUARD.error = GUARD.error or error
            self.stop_for_redis(error)

    def enqueue_request(self, request: Request) -> bool:
        try:
            if not request.dont_filter and GUARD(self.df.request_seen, request):
                self.df.log(request, self.spider)
                return False
            GUARD(self.queue.push, request)
        except NotDelivered:  # the page that led here stays in flight: nothing lost
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Request | None:
        if self.redis_failed:
            return None
        try:
            request = GUARD(self.queue.pop, self.idle_before_close)
            if request is None:
                return None
            GUARD(
                self.server.hset, self.inflight_key, self.df.request_fingerprint(request),
                self.queue._encode_request(request),
            )  # fmt: skip
        except NotDelivered:
            return None
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self) -> bool:
        if self.redis_failed:
            return False
        try:
            return bool(GUARD(super().has_pending_requests))
        except NotDelivered:
            return False

    def stop_for_redis(self, error: Exception) -> None:
        """Redis stopped answering (after the client's own retries): stop this worker with
        one clear line. What it had taken stays in flight in Redis and is put back when a
        worker runs again, so nothing is lost."""
        if self.redis_failed:
            return
        self.redis_failed = True
        if self.heartbeat.running:
            self.heartbeat.stop()
        logger.error(
            "Redis stopped answering (%s): this worker stops. Start it again once Redis is "
            "back; the pages it had not finished wait there, nothing is lost.",
            error,
        )
        engine = self.crawler.engine
        if engine is not None:
            reactor.callLater(
                0, deferred_from_coro, engine.close_spider_async(reason="redis_unavailable")
            )

    def done(self, request: Request | None) -> None:
        """The page of ``request`` is done: it no longer needs to be put back."""
        if request is not None:
            self.server.hdel(self.inflight_key, self.df.request_fingerprint(request))

    def item_done(
        self, item: Any, response: Response | None = None, exception: Any = None, **_: Any
    ) -> None:
        if isinstance(exception, NotDelivered) or self.redis_failed:
            return
        with contextlib.suppress(NotDelivered):
            GUARD(self.done, getattr(response, "request", None))

    def recover_dead_workers(self) -> int:
        """Put back the in-flight requests of workers whose heartbeat stopped."""
        recovered = 0
        for raw in self.server.smembers(f"{self.prefix}:workers"):
            other = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            if other == self.worker or self.server.exists(f"{self.prefix}:worker:{other}"):
                continue
            # One worker recovers a dead one; the lock expires if that worker dies too.
            if not self.server.set(f"{self.prefix}:recovering:{other}", self.worker, nx=True,
                                   ex=self.timeout):  # fmt: skip
                continue
            count = self._requeue(other)
            self.server.srem(f"{self.prefix}:workers", other)
            recovered += count
            logger.warning(
                "Worker %s stopped answering (no heartbeat for %d s): its %d unfinished "
                "requests are back in the queue",
                other, self.timeout, count,
            )  # fmt: skip
        return recovered

    def _requeue(self, worker: str) -> int:
        key = f"{self.prefix}:inflight:{worker}"
        entries = self.server.hgetall(key)
        for encoded in entries.values():
            try:
                self.queue.push(self.queue._decode_request(encoded))
            except Exception as error:  # an unreadable entry must not stop the recovery
                logger.error("An in-flight request of %s could not be restored: %s", worker, error)
        self.server.delete(key)
        return len(entries)


class InflightMiddleware:
    """Marks a request done when its callback finished without yielding an item (a page
    that only led to other pages); pages with items are done when their items are."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.get("REDIS_URL"):
            raise NotConfigured("no REDIS_URL: nothing is in flight in Redis")
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> InflightMiddleware:
        return cls(crawler)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        items = 0
        async for output in result:
            if not isinstance(output, Request):
                items += 1
            yield output
        if not items:
            self._done(response)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        items = 0
        for output in result:
            if not isinstance(output, Request):
                items += 1
            yield output
        if not items:
            self._done(response)

    def _done(self, response: Response) -> None:
        scheduler = self.crawler.engine.scheduler if self.crawler.engine else None
        if isinstance(scheduler, ReliableScheduler) and not scheduler.redis_failed:
            with contextlib.suppress(NotDelivered):
                GUARD(scheduler.done, response.request)
