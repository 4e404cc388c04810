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
without it, and ``open``'s "Resuming crawl" through the deprecated ``Spider.log()`` is
silenced (tested: no such warning in the log of a worker that joins a running crawl).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
import warnings
from collections.abc import AsyncIterator, Iterable
from typing import Any

from redis.exceptions import RedisError
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured, ScrapyDeprecationWarning
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.misc import load_object
from scrapy_redis.queue import PriorityQueue
from scrapy_redis.scheduler import Scheduler
from twisted.internet import reactor, task

from spidercrawl.distributed import GUARD, NotDelivered, as_text, key_prefix
from spidercrawl.distributed.sites import CLAIM_META, put_back_started
from spidercrawl.signals import page_claimed, redis_lost

logger = logging.getLogger(__name__)


# The request of highest priority (the lowest score: scrapy-redis scores by -priority),
# moved into the in-flight hash under an entry named by its hash, its worker (again) among
# the workers (KEYS: queue, in-flight, workers; ARGV: the worker): a worker struck off after
# a stall is found again by those who put back what it holds when it dies.
_POP_INTO_FLIGHT = """
local top = redis.call('ZRANGE', KEYS[1], 0, 0)
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
local entry = redis.sha1hex(top[1])
redis.call('HSET', KEYS[2], entry, top[1])
redis.call('SADD', KEYS[3], ARGV[1])
return {entry, top[1]}
"""
# A worker whose heartbeat is gone, taken over (KEYS: workers, its heartbeat, its in-flight
# hash, the in-flight hash of the worker that takes over; ARGV: its name): struck off, its
# in-flight entries moved into the taker's hash (put back from there: a taker that dies
# meanwhile is taken over in turn), returned as entry, request, ... Nil when it is alive,
# or another worker took it over first.
_TAKE_OVER = """
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return false end
local held = redis.call('HGETALL', KEYS[3])
for i = 1, #held, 2 do redis.call('HSET', KEYS[4], held[i], held[i + 1]) end
redis.call('DEL', KEYS[3])
return held
"""
# Queue a request unless its fingerprint was seen or its page was claimed. KEYS: duplicate
# filter, queue, and for a claimed page its PageClaim's sets (claim, other, budget). ARGV:
# fingerprint ("" for a request that is not filtered), score, the encoded request, and the
# page's key and budget. 1: queued; 0: a duplicate; 2: claimed already or over the budget.
_PUSH_UNSEEN = """
if #KEYS > 2 then
  if redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 1 then return 2 end
  if KEYS[4] ~= KEYS[3] and redis.call('SISMEMBER', KEYS[4], ARGV[4]) == 1 then return 2 end
  local budget = tonumber(ARGV[5])
  if budget > 0 and redis.call('SCARD', KEYS[5]) >= budget then return 2 end
end
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
if #KEYS > 2 then redis.call('SADD', KEYS[3], ARGV[4]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
INFLIGHT_META = "inflight_entries"  # request.meta: its entries in the in-flight hash


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
        scheduler.timeout = max(3, settings.getint("REDIS_WORKER_TIMEOUT"))
        scheduler.inflight_key = f"{scheduler.prefix}:inflight:{scheduler.worker}"
        scheduler.heartbeat = task.LoopingCall(scheduler.beat)
        scheduler.redis_failed = False
        scheduler.beats = 0  # heartbeats given
        scheduler.handed_out = set()  # in-flight entries handed to this worker, not done
        GUARD.listeners.append(scheduler.stop_for_redis)
        # Delivered or dropped: done. Not after an item error, nor a drop because Redis did
        # not answer: such pages stay in flight, to be put back.
        for signal in (signals.item_scraped, signals.item_dropped):
            crawler.signals.connect(scheduler.item_done, signal=signal)
        return scheduler

    def open(self, spider: Spider) -> Any:
        if not issubclass(load_object(self.queue_cls), PriorityQueue):
            raise NotConfigured(
                f"ReliableScheduler takes and puts requests atomically in scrapy-redis's "
                f"PriorityQueue; SCHEDULER_QUEUE_CLASS is {self.queue_cls}"
            )
        self.pop_script = self.server.register_script(_POP_INTO_FLIGHT)
        self.take_over_script = self.server.register_script(_TAKE_OVER)
        self.push_script = self.server.register_script(_PUSH_UNSEEN)
        with warnings.catch_warnings():
            # scrapy-redis says "Resuming crawl" with Spider.log(), which Scrapy deprecated:
            # a worker started after others had queued pages warned; our line below says it.
            warnings.filterwarnings(
                "ignore",
                message=r"Spider\.log\(\) is deprecated",
                category=ScrapyDeprecationWarning,
            )
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
        if reason != "finished":  # stopped early (Ctrl-C): others take its requests over
            self._requeue(self.worker)
            put_back_started(self.server, self.prefix, self.worker)
        else:  # every request it was handed is done; one Redis took for it but it never got
            # (a reply lost to a restart, the step retried) was not: put it back
            entries = {as_text(e) for e in self.server.hkeys(self.inflight_key)}
            never_handed = sorted(entries - self.handed_out)
            if never_handed:
                count = self._requeue(self.worker, never_handed)
                logger.warning("%d requests taken for this worker but never handed to it are "
                               "back in the queue", count)  # fmt: skip
            sites = put_back_started(self.server, self.prefix, self.worker)
            if sites:  # taken for it (a reply lost to a restart), never started
                logger.warning("%d sites taken for this worker but never started are back in "
                               "the site queue", sites)  # fmt: skip
        self.server.delete(self.inflight_key, f"{self.prefix}:worker:{self.worker}")
        self.server.srem(f"{self.prefix}:workers", self.worker)
        return super().close(reason)

    def beat(self) -> None:
        """Say this worker is alive; put back the requests of workers that are not. A
        heartbeat found lapsed (a stall longer than REDIS_WORKER_TIMEOUT) is said: what
        the worker held may have been put back, and is fetched again (delivered once)."""
        if self.redis_failed:
            return
        heartbeat = f"{self.prefix}:worker:{self.worker}"
        try:
            pipe = self.server.pipeline()
            pipe.exists(heartbeat)
            pipe.set(heartbeat, "alive", ex=self.timeout)
            pipe.sadd(f"{self.prefix}:workers", self.worker)
            lapsed = not pipe.execute()[0]
            if lapsed and self.beats:
                logger.warning(
                    "This worker gave no sign of life for more than %d s (REDIS_WORKER_TIMEOUT): "
                    "the pages it held may have been put back for others; they are fetched "
                    "again, and delivered once", self.timeout,
                )  # fmt: skip
            self.beats += 1
            self.recover_dead_workers()
        except RedisError as error:
            GUARD.error = GUARD.error or error
            self.stop_for_redis(error)

    def enqueue_request(self, request: Request) -> bool:
        """Queue ``request`` unless the duplicate filter has seen it, or the page it
        claims (``meta[CLAIM_META]``) was claimed: one atomic step, so that a Redis that
        dies in between cannot keep the fingerprint or the claim and lose the request (its
        page would then be skipped for good). A page claimed here is said with the
        ``page_claimed`` signal."""
        claim = request.meta.pop(CLAIM_META, None)  # not queued: requests made of it claim nothing
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        keys = [self.df.key, self.queue.key]
        args = [fingerprint, -request.priority, self.queue._encode_request(request)]
        if claim is not None:
            keys += claim.keys(self.prefix)
            args += [claim.key, claim.budget]
        try:
            queued = GUARD(self.push_script, keys=keys, args=args)
        except NotDelivered:  # the page that led here stays in flight: nothing lost
            return False
        if queued == 2:  # another page, or another worker, claimed it first
            return False
        if not queued:
            self.df.log(request, self.spider)
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        if claim is not None:
            self.crawler.signals.send_catch_log(page_claimed, request=request, claim=claim)
        return True

    def next_request(self) -> Request | None:
        """The next request, taken from the queue and put in this worker's in-flight hash
        in one atomic step: taken in two, a Redis killed between them lost the request
        (a test lost 1 article of 30 in about 1 run of 7 that way)."""
        while True:
            if self.redis_failed:
                return None
            try:
                taken = GUARD(
                    self.pop_script,
                    keys=[self.queue.key, self.inflight_key, f"{self.prefix}:workers"],
                    args=[self.worker],
                )
            except NotDelivered:
                return None
            if not taken:
                return None
            entry, encoded = as_text(taken[0]), taken[1]
            try:
                request = self.queue._decode_request(encoded)
                break
            except Exception as error:  # not ours (BadQueuedRequestError) or not for this spider
                self._skip_bad_entry(entry, error)
        # The entries of the requests this one replaced (a plain fetch before its render,
        # a fast-path page rendered after all) are done when it is.
        self.handed_out.add(entry)
        request.meta[INFLIGHT_META] = [*request.meta.get(INFLIGHT_META, []), entry]
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def _skip_bad_entry(self, entry: str, error: Exception) -> None:
        """A queued entry that is no request of ours: one line, out of the in-flight hash
        (it would come back forever), counted."""
        logger.error("Skipped a queued request from Redis that is not one of ours: %s", error)
        if self.stats:
            self.stats.inc_value("spidercrawl/redis/bad_requests")
        with contextlib.suppress(NotDelivered):
            GUARD(self.server.hdel, self.inflight_key, entry)

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
        # The pages it holds (a site's first pages, waiting for its model) are let go
        # now: held, they would keep the engine from closing.
        self.crawler.signals.send_catch_log(signal=redis_lost, error=error)
        engine = self.crawler.engine
        if engine is not None:
            reactor.callLater(
                0, deferred_from_coro, engine.close_spider_async(reason="redis_unavailable")
            )

    def done(self, request: Request | None) -> None:
        """The page of ``request`` is done: it, and the requests it replaced, no longer
        need to be put back."""
        entries = request.meta.get(INFLIGHT_META) if request is not None else None
        if entries:
            self.server.hdel(self.inflight_key, *entries)
            self.handed_out.difference_update(entries)

    def release_ended(self) -> None:
        """At the engine's idle check every request handed to this worker has ended: those
        no item nor callback marked done (a 304 answer, a missing tdmrep.json, a failed
        fetch) leave its in-flight hash, as at a finished close, so that no worker waits
        for them. Entries Redis took for it but never handed stay, to be put back."""
        if self.redis_failed or not self.handed_out:
            return
        with contextlib.suppress(NotDelivered):
            GUARD(self.server.hdel, self.inflight_key, *self.handed_out)
            self.handed_out.clear()

    def item_done(
        self, item: Any, response: Response | None = None, exception: Any = None, **_: Any
    ) -> None:
        if isinstance(exception, NotDelivered) or self.redis_failed:
            return
        with contextlib.suppress(NotDelivered):
            GUARD(self.done, getattr(response, "request", None))

    def recover_dead_workers(self) -> int:
        """Put back the in-flight requests of workers whose heartbeat stopped, each taken
        over by one worker in one step (:data:`_TAKE_OVER`)."""
        recovered = 0
        for raw in self.server.smembers(f"{self.prefix}:workers"):
            other = as_text(raw)
            if other == self.worker:
                continue
            held = self.take_over_script(
                keys=[
                    f"{self.prefix}:workers",
                    f"{self.prefix}:worker:{other}",
                    f"{self.prefix}:inflight:{other}",
                    self.inflight_key,
                ],
                args=[other],
            )
            if held is None:  # alive after all, or taken over by another worker
                continue
            entries = [as_text(entry) for entry in held[::2]]
            count = self._requeue(self.worker, entries)
            sites = put_back_started(self.server, self.prefix, other)
            recovered += count
            logger.warning(
                "Worker %s stopped answering (no heartbeat for %d s): its %d unfinished "
                "requests are back in the queue%s",
                other, self.timeout, count,
                f", and {sites} sites it had not started in the site queue" if sites else "",
            )  # fmt: skip
        return recovered

    def _requeue(self, worker: str, entries: list[str] | None = None) -> int:
        """Put back the in-flight requests of ``worker`` (only ``entries``, if given), each
        out of its hash once it is in the queue."""
        key = f"{self.prefix}:inflight:{worker}"
        if entries is None:
            held = [(as_text(e), r) for e, r in self.server.hgetall(key).items()]
        else:
            values = self.server.hmget(key, entries) if entries else []
            held = [(e, r) for e, r in zip(entries, values, strict=True) if r is not None]
        for entry, encoded in held:
            try:
                self.queue.push(self.queue._decode_request(encoded))
            except Exception as error:  # an unreadable entry must not stop the recovery
                logger.error("An in-flight request of %s could not be restored: %s", worker, error)
            self.server.hdel(key, entry)
            self.handed_out.discard(entry)
        return len(held)


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
