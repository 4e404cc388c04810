"""Sites and claimed pages in Redis: what every worker of a distributed crawl shares.

- ``PREFIX:sites:queue``: sites waiting to be started (lines of a sites file), filled by
  ``python -m spidercrawl.enqueue``; an idle worker pops one and starts its discovery;
- ``PREFIX:sites``: every site's line by name, so that a worker can handle the pages of a
  site another worker started;
- ``PREFIX:tdm``: every site's tdmrep.json, as the worker that read it shared it
  (:mod:`.tdm`), marked as being read again when the site is queued again;
- ``PREFIX:sites:starting:WORKER``: the sites a worker took and has not yet queued the
  start requests of (put back in the queue if it stops answering first);
- ``PREFIX:claimed:render:SITE`` / ``PREFIX:claimed:visit:SITE``: the pages sent to the
  browser / fetched plainly, each claimed once across workers; the first set's size is the
  site's ``max_pages`` budget. A page is claimed in the step that queues its request
  (:class:`PageClaim`, the scheduler's script): a claim without its request would keep
  the page from every later reading of the sitemap.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scrapy.crawler import Crawler

from spidercrawl.distributed import GUARD, NotDelivered, as_text, key_prefix, redis_client
from spidercrawl.distributed.tdm import SharedTdm, read_again
from spidercrawl.sites import SiteSpec, parse_site_line

logger = logging.getLogger(__name__)

# How long an idle worker waits for requests in flight, in REDIS_WORKER_TIMEOUTs.
FLIGHT_WAIT_FACTOR = 1.5


class RedisSiteQueue:
    """The shared queue of sites, and how long a worker waits for more."""

    def __init__(
        self,
        redis: Any,
        prefix: str,
        idle_close: float,
        wait_forever: bool,
        flight_wait: float = 0.0,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.idle_close = idle_close
        self.wait_forever = wait_forever
        self.idle_since: float | None = None
        self.flight_since: float | None = None  # since when only requests in flight are left
        self.flight_wait = flight_wait
        self.specs: dict[str, SiteSpec] = {}
        self.tdm = SharedTdm(redis, prefix)  # the sites' tdmrep.json, for every worker

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisSiteQueue:
        settings = crawler.settings
        return cls(
            redis_client(settings.get("REDIS_URL")),
            key_prefix(settings),
            settings.getfloat("REDIS_IDLE_CLOSE"),
            settings.getbool("REDIS_WAIT_FOREVER"),
            # A stopped worker's requests go back within its heartbeat's timeout and the
            # next check of the others' heartbeats (a third of it): waited for, and more.
            FLIGHT_WAIT_FACTOR * max(3, settings.getint("REDIS_WORKER_TIMEOUT")),
        )

    def push(self, specs: Iterable[SiteSpec]) -> int:
        return push_sites(self.redis, self.prefix, specs)

    def pop(self, worker: str) -> StartedSite | None:
        """The next site to start, or None when the queue is empty. It moves to the
        worker's ``sites:starting`` list in the same step, and stays there until its start
        requests are queued (:meth:`started`): a Redis that dies in between loses no site.
        The worker is (again) among the workers in that step: one struck off after a stall
        is found again, and the site put back, when it dies."""
        queue, starting = f"{self.prefix}:sites:queue", starting_key(self.prefix, worker)
        while True:
            pipe = self.redis.pipeline(transaction=True)
            pipe.lmove(queue, starting, "LEFT", "RIGHT")
            pipe.sadd(f"{self.prefix}:workers", worker)
            try:
                raw, _ = GUARD(pipe.execute)
            except NotDelivered:
                return None
            if raw is None:
                return None
            line = as_text(raw)
            try:
                spec = parse_site_line(line)
            except ValueError as error:
                logger.error("Skipped a bad site line from Redis: %s", error)
                spec = None
            if spec is None:
                self.started(StartedSite(SiteSpec.parse("-"), raw, worker))
                continue
            self.idle_since = None
            logger.info("%s: taken from the Redis site queue", spec.name)
            return StartedSite(spec, raw, worker)

    def started(self, site: StartedSite) -> None:
        """The site's start requests are queued: it leaves the worker's starting list
        (left there when Redis does not answer, for the next worker to start it)."""
        with contextlib.suppress(NotDelivered):
            GUARD(self.redis.lrem, starting_key(self.prefix, site.worker), 1, site.raw)

    def spec(self, name: str) -> SiteSpec | None:
        """A site started by any worker (its base URL, for a local copy)."""
        if name not in self.specs:
            try:
                raw = GUARD(self.redis.hget, f"{self.prefix}:sites", name)
            except NotDelivered:
                return None  # not kept: asked again once Redis is back
            line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            self.specs[name] = (parse_site_line(line) if line else None) or SiteSpec.parse(name)
        return self.specs[name]

    def keep_waiting(self) -> bool:
        """Whether an idle worker waits for more work (requests or sites from others)."""
        if GUARD.error is not None:
            return False  # the worker is stopping
        if self.wait_forever:
            return True
        try:
            queued = GUARD(self.redis.zcard, f"{self.prefix}:requests")
            in_flight = 0 if queued else GUARD(self._in_flight)
        except NotDelivered:
            return False
        if queued:
            self.idle_since = self.flight_since = None
            return True
        now = time.monotonic()
        if not in_flight:
            self.flight_since = None
        elif self._waits_for_flight(now, in_flight):
            return True
        if self.idle_since is None:
            self.idle_since = now
            logger.info(
                "Nothing queued in Redis: waiting up to %.0f s for more (REDIS_IDLE_CLOSE)",
                self.idle_close,
            )
        return now - self.idle_since < self.idle_close

    def _waits_for_flight(self, now: float, in_flight: int) -> bool:
        """Whether an idle worker waits on, with only requests in flight left (a worker at
        work, or one stopped whose requests go back to the queue once its heartbeat
        expires): at most ``flight_wait`` seconds, then the idle wait begins. Closing
        before they were put back left them to no worker."""
        if self.flight_since is None:
            self.flight_since = now
            logger.info(
                "Nothing queued in Redis but %d requests in flight: waiting up to %.0f s for "
                "them (REDIS_WORKER_TIMEOUT)", in_flight, self.flight_wait,
            )  # fmt: skip
        if now - self.flight_since < self.flight_wait:
            self.idle_since = None
            return True
        return False

    def _in_flight(self) -> int:
        """The requests every worker's in-flight hash holds (this idle one's holds only
        what Redis took for it and never handed it)."""
        keys = self.redis.scan_iter(match=f"{self.prefix}:inflight:*", count=100)
        return sum(int(self.redis.hlen(key)) for key in keys)


@dataclass(frozen=True)
class StartedSite:
    """A site taken from the queue by ``worker``, as the queue held it (``raw``)."""

    spec: SiteSpec
    raw: bytes | str
    worker: str


def starting_key(prefix: str, worker: str) -> str:
    return f"{prefix}:sites:starting:{worker}"


def put_back_started(redis: Any, prefix: str, worker: str) -> int:
    """Put the sites ``worker`` took but had not started back at the head of the queue
    (each move one atomic step); how many."""
    moved = 0
    while redis.lmove(starting_key(prefix, worker), f"{prefix}:sites:queue", "RIGHT", "LEFT"):
        moved += 1
    return moved


def push_sites(redis: Any, prefix: str, specs: Iterable[SiteSpec]) -> int:
    """Queue sites for any worker; each site's line is kept by name for all workers. A site
    queued again is crawled afresh: its claimed pages are forgotten (what was delivered is
    not, so only new or changed articles come, and known pages are asked conditionally), and
    its tdmrep.json is read again."""
    pushed = 0
    for spec in specs:
        redis.delete(f"{prefix}:claimed:render:{spec.name}", f"{prefix}:claimed:visit:{spec.name}")
        read_again(redis, prefix, spec.name)  # its tdmrep.json, read afresh by the run
        redis.hset(f"{prefix}:sites", spec.name, spec.line())
        redis.rpush(f"{prefix}:sites:queue", spec.line())
        pushed += 1
    return pushed


@dataclass(frozen=True)
class PageClaim:
    """A page of ``site`` to be sent to the browser (``render``) or fetched plainly
    (``visit``) by one worker only, within the site's budget of ``budget`` rendered pages
    (0: none). It rides in the request's meta to the scheduler, which claims the page and
    queues the request in one script."""

    kind: str  # "render" or "visit"
    site: str
    key: str  # the canonical URL
    budget: int = 0

    def keys(self, prefix: str) -> list[str]:
        """The set it is claimed in, the other set it must not be in, the budget's set."""
        render = f"{prefix}:claimed:render:{self.site}"
        if self.kind == "render":
            return [render, render, render]
        return [f"{prefix}:claimed:visit:{self.site}", render, render]


CLAIM_META = "page_claim"  # request.meta: the PageClaim the scheduler makes with its push
