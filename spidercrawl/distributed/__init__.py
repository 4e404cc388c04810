"""Many sites on many machines: Scrapy's scheduler in Redis (scrapy-redis), shared state.

``-s REDIS_URL=redis://HOST:PORT/DB`` (or ``SPIDERCRAWL_REDIS_URL``) turns it on
(:class:`RedisAddon`). Then, for every worker that reaches the same Redis:

- the request queue and the duplicate filter are scrapy-redis's, kept after a crawl ends,
  so a stopped crawl resumes where it was (:mod:`.scheduler`); requests a worker took but
  had not finished when it died are put back by the next worker that notices it is gone;
- sites come from a queue that ``python -m spidercrawl.enqueue`` fills (:mod:`.sites`),
  and the pages claimed per site (and the ``max_pages`` budget) are counted in Redis;
- each site's tdmrep.json is shared by the worker that read it, so that every worker
  marks the pages it reserves (:mod:`.tdm`);
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

from scrapy.exceptions import DropItem
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from spidercrawl import settings as project_settings

logger = logging.getLogger(__name__)

LOCAL_LEARNER = project_settings.SITE_LEARNER
SHARED_LEARNER = "spidercrawl.learn.shared_learner.SharedSiteLearner"


def as_text(value: object) -> str:
    """A value Redis sent back (bytes) as text: our keys and values are UTF-8."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class RedisUnavailableError(RuntimeError):
    """Redis cannot be reached, or cannot be used: the message says where and why."""


class NotDelivered(DropItem):
    """An article that could not be delivered because Redis did not answer: its page stays
    in flight in Redis and is crawled again (the item is not counted as done)."""


class RedisDownError(NotDelivered):
    """Redis stopped answering, after the client's own retries."""


class RedisRefusedError(NotDelivered):
    """Redis answered with an error (``WRONGTYPE``, a failing script): not an outage, so the
    worker goes on; the message names the command's error."""


class RedisGuard:
    """Every call a worker makes to Redis goes through here. Once Redis has stopped
    answering (after the client's retries, a few seconds), every later call fails at once,
    and the worker stops (the scheduler listens): without this, each page would wait out
    the retries on each of its calls, and a worker would take minutes to stop."""

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.listeners: list[Any] = []

    def __call__(self, function: Any, *arguments: Any, **keywords: Any) -> Any:
        from redis.exceptions import ReadOnlyError, RedisError, ResponseError

        if self.error is not None:
            raise RedisDownError(f"Redis stopped answering ({self.error})")
        try:
            return function(*arguments, **keywords)
        except ResponseError as error:
            if not isinstance(error, ReadOnlyError):  # a replica after a failover: an outage
                raise RedisRefusedError(
                    f"Redis refused a command ({error}): is another program writing under "
                    f"our REDIS_PREFIX?"
                ) from None
            self._down(error)
        except RedisError as error:
            self._down(error)

    def _down(self, error: Exception) -> None:
        """Every later call fails at once; the listeners (the scheduler) stop the worker."""
        self.error = error
        for listener in self.listeners:
            listener(error)
        raise RedisDownError(f"Redis stopped answering ({error})") from None


GUARD = RedisGuard()  # one per process: a worker talks to one Redis


def redis_client(url: str) -> Any:
    """A client of the Redis at ``url``, checked with a PING (RedisUnavailableError if not)."""
    import redis

    try:
        client = redis.Redis.from_url(
            url,
            socket_connect_timeout=5,
            health_check_interval=30,
            retry=_retry(),
            retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
        )
        client.ping()
    except (redis.exceptions.RedisError, ValueError) as error:
        raise RedisUnavailableError(f"cannot reach Redis at {url}: {error}") from None
    return client


def key_prefix(settings: BaseSettings) -> str:
    return str(settings.get("REDIS_PREFIX") or "spidercrawl")


def checked_redis_client(url: str, prefix: str) -> Any:
    """:func:`redis_client`, after checking that the keys under ``prefix`` are ours
    (RedisUnavailableError naming the keys another program wrote with our names)."""
    from spidercrawl.distributed.keys import check_keys

    client = redis_client(url)
    check = check_keys(client, prefix)
    if check.wrong:
        raise RedisUnavailableError(check.error(prefix))
    if check.foreign:
        logger.warning(
            "Redis: %d keys under %s: are not spidercrawl's (%s%s): left alone",
            len(check.foreign), prefix, ", ".join(check.foreign[:3]),
            ", ..." if len(check.foreign) > 3 else "",
        )  # fmt: skip
    return client


class RedisAddon:
    """With ``REDIS_URL`` set, the scheduler, duplicate filter and state go to Redis."""

    def update_settings(self, settings: BaseSettings) -> None:
        url = settings.get("REDIS_URL")
        if not url:
            return
        prefix = key_prefix(settings)
        for name, value in {
            # scrapy-redis's own client: blips retried as in redis_client.
            "REDIS_PARAMS": {
                "socket_timeout": 30,
                "socket_connect_timeout": 5,
                "retry_on_timeout": True,
                "retry": _retry(),
            },
            "SCHEDULER": "spidercrawl.distributed.scheduler.ReliableScheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,  # a stopped crawl resumes; enqueue --reset clears
            "SCHEDULER_QUEUE_KEY": f"{prefix}:requests",
            "SCHEDULER_DUPEFILTER_KEY": f"{prefix}:dupefilter",
            # Requests travel as JSON, not as scrapy-redis's default pickles (which run
            # code on the worker that takes them).
            "SCHEDULER_SERIALIZER": "spidercrawl.distributed.request_codec",
        }.items():
            settings.set(name, value, priority="addon")
        # Each site learned once for every worker, its model published in Redis. The
        # project's settings name the local learner (at a priority above the add-on's), so
        # that default is replaced here, but not a learner the user named on the command line.
        if (
            settings.get("SITE_LEARNER") == LOCAL_LEARNER
            and settings.getpriority("SITE_LEARNER") <= SETTINGS_PRIORITIES["project"]
        ):
            settings.set("SITE_LEARNER", SHARED_LEARNER, priority="project")


def _retry() -> Any:
    """A blip (a restart, a failover) is retried for a few seconds before it is an error."""
    from redis.backoff import ExponentialBackoff
    from redis.retry import Retry

    return Retry(ExponentialBackoff(cap=2.0, base=0.2), 5)
