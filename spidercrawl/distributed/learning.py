"""Learning a site once for every worker: shared pages, a lock, a published model.

- Each worker adds the rendered pages of a site without a model to ``PREFIX:learn:SITE``
  (the newest ``3 x LEARN_MIN_PAGES`` are kept), so the pages to learn from are gathered
  across workers; each URL once (``PREFIX:learn-urls:SITE``): a page crawled again after
  its worker stopped (Redis gone, ``kill -9``) would otherwise count twice toward
  ``LEARN_MIN_PAGES``, and the model learn from fewer pages than it says.
- When there are enough, the first worker to take ``PREFIX:learning:SITE`` (a lock that
  expires after ``REDIS_LEARN_LOCK`` seconds, so a dead worker blocks nobody for long)
  learns from them and publishes the model: its files and version in ``PREFIX:model:SITE``.
- Every other worker installs the published model in its own ``MODELS_DIR`` and uses it:
  one version for all. A relearning after template drift is published the same way.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from scrapy.settings import BaseSettings

from spidercrawl.distributed import GUARD, as_text, key_prefix, redis_client
from spidercrawl.distributed.scheduler import worker_id

logger = logging.getLogger(__name__)

# Releases a lock only if this worker still holds it (it may have expired and moved on).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# Shares a page to learn from unless its URL was shared (KEYS: pages, their URLs; ARGV:
# url, page, pages kept); the site's page count.
_ADD_PAGE = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[2], ARGV[1]) == 0 then
  return redis.call('LLEN', KEYS[1])
end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
return redis.call('LLEN', KEYS[1])
"""


class SharedLearning:
    """The Redis side of :class:`~spidercrawl.learn.shared_learner.SharedSiteLearner`."""

    def __init__(self, redis: Any, prefix: str, keep_pages: int, lock_seconds: int) -> None:
        self.redis = redis
        self.prefix = prefix
        self.keep_pages = keep_pages
        self.lock_seconds = lock_seconds
        self.worker = worker_id()
        self.release_script = redis.register_script(_RELEASE)
        self.add_script = redis.register_script(_ADD_PAGE)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SharedLearning:
        return cls(
            redis_client(settings.get("REDIS_URL")),
            key_prefix(settings),
            3 * max(1, settings.getint("LEARN_MIN_PAGES")),
            max(10, settings.getint("REDIS_LEARN_LOCK")),
        )

    def add_page(self, site: str, page: dict[str, Any]) -> int:
        """Share a page to learn from; returns how many the site has now. (Every call to
        Redis here goes through GUARD: RedisDownError, a DropItem, when Redis is gone.)"""
        return int(GUARD(self._add_page, site, page))

    def _add_page(self, site: str, page: dict[str, Any]) -> int:
        body = {k: v for k, v in page.items() if not k.startswith("_")}
        encoded = json.dumps(body, ensure_ascii=False, default=str)
        keys = [f"{self.prefix}:learn:{site}", f"{self.prefix}:learn-urls:{site}"]
        url = str(page.get("url") or "")
        return int(self.add_script(keys=keys, args=[url, encoded, self.keep_pages]))

    def pages(self, site: str) -> list[dict[str, Any]]:
        pages = []
        for raw in GUARD(self.redis.lrange, f"{self.prefix}:learn:{site}", 0, -1):
            try:
                pages.append(json.loads(raw))
            except ValueError:
                logger.warning("%s: a damaged shared page was skipped", site)
        return pages

    def count(self, site: str) -> int:
        return int(GUARD(self.redis.llen, f"{self.prefix}:learn:{site}"))

    def lock(self, site: str) -> bool:
        """Take the site's learning lock (False if another worker holds it)."""
        key = f"{self.prefix}:learning:{site}"
        return bool(GUARD(self.redis.set, key, self.worker, nx=True, ex=self.lock_seconds))

    def unlock(self, site: str) -> None:
        GUARD(self.release_script, keys=[f"{self.prefix}:learning:{site}"], args=[self.worker])

    def publish(self, site: str, version: str, files: dict[str, bytes]) -> None:
        """Make a model the one every worker uses; the pages it was learned from go."""
        key = f"{self.prefix}:model:{site}"
        pipe = self.redis.pipeline()
        pipe.delete(key)
        pipe.hset(key, mapping={"version": version, "by": self.worker, **files})
        pipe.delete(f"{self.prefix}:learn:{site}", f"{self.prefix}:learn-urls:{site}")
        pipe.hincrby(f"{self.prefix}:learned", site, 1)  # how often: once per version
        GUARD(pipe.execute)

    def published_version(self, site: str) -> str:
        raw = GUARD(self.redis.hget, f"{self.prefix}:model:{site}", "version")
        return as_text(raw or "")

    def published_files(self, site: str) -> dict[str, bytes]:
        entries = GUARD(self.redis.hgetall, f"{self.prefix}:model:{site}")
        names = {as_text(k): v for k, v in entries.items()}
        return {k: v for k, v in names.items() if k not in ("version", "by")}
