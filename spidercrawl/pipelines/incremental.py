"""Re-crawls bring only what is new: per-site memory of the articles already delivered.

For each site, ``STATE_DIR/<site>.json`` remembers every article delivered so far: its URL
key (:func:`spidercrawl.urls.article_key`: one key for www/non-www, tracking parameters,
AMP versions...), a hash of its title and text, and when it was first and last seen. On
the next crawl an article whose key and hash are known is dropped (unchanged), one whose
hash changed passes as an update, and one whose text is already known under another key
is dropped as a duplicate. Each article that passes says so in ``update``: ``new`` or
``changed``.

The state is written atomically (temporary file, then rename) every
``INCREMENTAL_SAVE_EVERY`` articles and when the spider closes. An interrupted crawl is
resumed by running it again: what was delivered is known and not delivered twice.

Settings: ``INCREMENTAL_ENABLED`` (True), ``STATE_DIR`` (``state``),
``INCREMENTAL_SAVE_EVERY`` (50). Stats: ``spidercrawl/incremental/{new,changed,unchanged,
duplicate}``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured

from spidercrawl.files import write_json_atomically
from spidercrawl.learn.store import safe_name
from spidercrawl.urls import article_key

logger = logging.getLogger(__name__)

STATE_FORMAT = 1


def content_hash(title: str, text: str) -> str:
    """A hash of what a reader sees: title and text, whitespace and case folded."""
    folded = " ".join(f"{title}\n{text}".split()).lower()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:32]


@dataclass
class SiteMemory:
    """What one site's earlier crawls delivered."""

    path: Path
    articles: dict[str, dict[str, str]] = field(default_factory=dict)  # key -> record
    by_hash: dict[str, str] = field(default_factory=dict)  # content hash -> key
    last_crawl: str = ""
    dirty: int = 0

    @classmethod
    def load(cls, path: Path) -> SiteMemory:
        memory = cls(path)
        if not path.exists():
            return memory
        try:
            data = json.loads(path.read_text("utf-8"))
            memory.articles = dict(data.get("articles") or {})
            memory.last_crawl = str(data.get("last_crawl") or "")
        except (OSError, ValueError, AttributeError) as error:
            logger.warning("Unreadable crawl state %s (%s): starting afresh", path, error)
            return cls(path)
        memory.by_hash = {record["hash"]: key for key, record in memory.articles.items()}
        return memory

    def save(self, last_crawl: str) -> None:
        self.last_crawl = last_crawl or self.last_crawl
        data = {"format": STATE_FORMAT, "last_crawl": self.last_crawl, "articles": self.articles}
        write_json_atomically(self.path, data)
        self.dirty = 0


class IncrementalPipeline:
    """Drops articles already delivered by an earlier crawl; marks new and changed ones."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("INCREMENTAL_ENABLED", True):
            raise NotConfigured("INCREMENTAL_ENABLED is off: every article is delivered")
        if not settings.getbool("LEARN_ENABLED", True):
            raise NotConfigured("LEARN_ENABLED is off: page items, no articles to remember")
        self.crawler = crawler
        self.state_dir = Path(settings.get("STATE_DIR", "state"))
        self.save_every = max(1, settings.getint("INCREMENTAL_SAVE_EVERY", 50))
        self.sites: dict[str, SiteMemory] = {}
        self.started = datetime.now(UTC).isoformat(timespec="seconds")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IncrementalPipeline:
        return cls(crawler)

    def _memory(self, site: str) -> SiteMemory:
        if site not in self.sites:
            memory = SiteMemory.load(self.state_dir / f"{safe_name(site)}.json")
            if memory.last_crawl:
                logger.info(
                    "%s: %d articles known from crawls up to %s; only new or changed ones "
                    "are delivered", site, len(memory.articles), memory.last_crawl,
                )  # fmt: skip
            self.sites[site] = memory
        return self.sites[site]

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "text" not in adapter or "method" not in adapter:  # not an article
            return item
        memory = self._memory(str(adapter.get("site") or "unknown"))
        url = str(adapter.get("canonical_url") or adapter.get("url") or "")
        key = article_key(url) or url
        if adapter.get("post_of"):  # posts of one page share its URL; their titles differ
            key = f"{key}#{content_hash(str(adapter.get('title') or ''), '')[:12]}"
        digest = content_hash(str(adapter.get("title") or ""), str(adapter.get("text") or ""))
        stats = self.crawler.stats
        now = datetime.now(UTC).isoformat(timespec="seconds")
        known = memory.articles.get(key)
        if known is not None and known["hash"] == digest:
            known["last_seen"] = now
            stats.inc_value("spidercrawl/incremental/unchanged")
            raise DropItem(f"unchanged since {known['first_seen']}: {url}", log_level="DEBUG")
        same_text = memory.by_hash.get(digest)
        if same_text is not None and same_text != key and adapter.get("text"):
            stats.inc_value("spidercrawl/incremental/duplicate")
            raise DropItem(f"same text as {same_text}: {url}", log_level="INFO")
        update = "changed" if known is not None else "new"
        stats.inc_value(f"spidercrawl/incremental/{update}")
        if known is not None:
            memory.by_hash.pop(known["hash"], None)
        memory.articles[key] = {
            "url": url,
            "hash": digest,
            "first_seen": known["first_seen"] if known else now,
            "last_seen": now,
        }
        memory.by_hash[digest] = key
        adapter["update"] = update
        memory.dirty += 1
        if memory.dirty >= self.save_every:
            memory.save(self.started)
        return item

    def close_spider(self, spider: Spider | None = None) -> None:
        """Runs once every item is through the pipelines (before ``spider_closed``)."""
        for site, memory in self.sites.items():
            memory.save(self.started)
            stats = self.crawler.stats
            logger.info(
                "%s: %d new, %d changed, %d unchanged, %d duplicates (state in %s)",
                site,
                stats.get_value("spidercrawl/incremental/new", 0),
                stats.get_value("spidercrawl/incremental/changed", 0),
                stats.get_value("spidercrawl/incremental/unchanged", 0),
                stats.get_value("spidercrawl/incremental/duplicate", 0),
                memory.path,
            )
