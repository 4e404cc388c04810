"""Exactly-once delivery across workers: one atomic step in Redis per article.

A Lua script (Redis runs it without interleaving anything else) judges the article against
the site's memory (``PREFIX:articles:SITE``: key -> record; ``PREFIX:hashes:SITE``: content
hash -> key), records it if it is new or changed, counts the verdict
(``PREFIX:counts:SITE``, the crawl's progress), and appends it to the delivery stream
(``PREFIX:delivered``), with the page's HTTP validators (``PREFIX:validators:SITE``, for
a conditional fetch next time). Two workers holding the same article: one gets ``new``, the other
``unchanged``. A worker killed before the script ran delivered nothing (its page is put
back in the queue, :mod:`.scheduler`); after it ran, the article is in the stream.

``python -m spidercrawl.collect`` writes the stream to the articles files (:mod:`.collect`).
"""

from __future__ import annotations

import json
from typing import Any

from itemadapter import ItemAdapter
from scrapy.settings import BaseSettings

from spidercrawl.distributed import GUARD, as_text, key_prefix, redis_client
from spidercrawl.memory import ArticleIdentity, PageValidators, Verdict

# KEYS: articles, hashes, counts, stream, validators. ARGV: key, digest, has_text, now, url,
# article (JSON, without "update"), site, incremental ("1"/"0"), page key, its validators
# (JSON; "" when the page sent none), the page's digest ("" when unknown). The same text,
# or the same page (page_digest), is unchanged.
_DELIVER = """
if ARGV[9] ~= '' and ARGV[10] ~= '' then redis.call('HSET', KEYS[5], ARGV[9], ARGV[10]) end
local known = redis.call('HGET', KEYS[1], ARGV[1])
local record = nil
if known then record = cjson.decode(known) end
if ARGV[8] == '1' then
  if record and (record.hash == ARGV[2] or (ARGV[11] ~= '' and record.page_hash == ARGV[11])) then
    record.last_seen = ARGV[4]
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
    redis.call('HINCRBY', KEYS[3], 'unchanged', 1)
    return {'unchanged', record.first_seen}
  end
  local other = redis.call('HGET', KEYS[2], ARGV[2])
  if other and other ~= ARGV[1] and ARGV[3] == '1' then
    redis.call('HINCRBY', KEYS[3], 'duplicate', 1)
    return {'duplicate', other}
  end
end
local verdict = 'new'
local first = ARGV[4]
if record then
  verdict = 'changed'
  first = record.first_seen
  redis.call('HDEL', KEYS[2], record.hash)
end
local entry = {url = ARGV[5], hash = ARGV[2], first_seen = first, last_seen = ARGV[4]}
if ARGV[11] ~= '' then entry.page_hash = ARGV[11] end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], verdict, 1)
local id = redis.call('XADD', KEYS[4], '*', 'site', ARGV[7], 'update', verdict,
  'article', ARGV[6])
return {verdict, id}
"""


class RedisDelivery:
    """The delivery step of :class:`~spidercrawl.pipelines.delivery.DeliveryPipeline`
    when the crawl runs on Redis."""

    def __init__(self, redis: Any, prefix: str, incremental: bool) -> None:
        self.redis = redis
        self.prefix = prefix
        self.incremental = incremental
        self.script = redis.register_script(_DELIVER)
        self.url = ""

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RedisDelivery:
        delivery = cls(
            redis_client(settings.get("REDIS_URL")),
            key_prefix(settings),
            settings.getbool("INCREMENTAL_ENABLED"),
        )
        delivery.url = str(settings.get("REDIS_URL"))
        return delivery

    @property
    def stream(self) -> str:
        return f"{self.prefix}:delivered"

    def deliver(
        self,
        site: str,
        identity: ArticleIdentity,
        article: ItemAdapter,
        now: str,
        page: PageValidators = None,
    ) -> tuple[Verdict, str]:
        """The article's verdict and, for a drop, what it repeats (for a delivery, its
        stream id)."""
        body = {k: v for k, v in article.items() if k != "update"}
        result = GUARD(
            self.script,
            keys=[
                f"{self.prefix}:articles:{site}",
                f"{self.prefix}:hashes:{site}",
                f"{self.prefix}:counts:{site}",
                self.stream,
                f"{self.prefix}:validators:{site}",
            ],
            args=[
                identity.key,
                identity.digest,
                "1" if identity.has_text else "0",
                now,
                identity.url,
                json.dumps(body, ensure_ascii=False, default=str),
                site,
                "1" if self.incremental else "0",
                page[0] if page else "",
                json.dumps(page[1]) if page else "",
                identity.page_digest,
            ],
        )
        verdict, other = (as_text(v) for v in result)
        return verdict, other  # type: ignore[return-value]

    def describe(self) -> str:
        return f"Redis {self.url} ({self.prefix}:articles:SITE)"


def read_page_validators(redis: Any, prefix: str, site: str, key: str) -> dict[str, str] | None:
    """A delivered page's HTTP validators, as the delivery script recorded them."""
    raw = redis.hget(f"{prefix}:validators:{site}", key)
    if not raw:
        return None
    try:
        known = json.loads(raw)
    except ValueError:
        return None
    return known if isinstance(known, dict) else None
