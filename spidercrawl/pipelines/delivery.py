"""Delivering each article exactly once: judged against the crawl's memory, written, recorded.

For every article item, in this order:

1. judged against what earlier crawls delivered (:class:`~spidercrawl.memory.
   SiteMemory`): unchanged articles and duplicates of another URL are dropped; the rest pass
   with ``update`` = ``new`` or ``changed``;
2. written to the site's articles file (:mod:`spidercrawl.pipelines.articles_file`) when the
   command named no feed of its own;
3. recorded in the site's journal, so that a crawl killed at any moment and run again
   neither repeats nor loses an article.

With Redis (``REDIS_URL``), steps 1 to 3 are one atomic step in Redis instead: the check,
the record and the article's entry in the delivery stream (:mod:`spidercrawl.distributed`),
so that of several workers exactly one delivers each article.

Settings: ``INCREMENTAL_ENABLED`` (True; False delivers every article, even ones delivered
before), ``STATE_DIR`` (``state``), ``INCREMENTAL_SAVE_EVERY`` (500: articles between
snapshots of the memory; the journal holds the rest), ``ARTICLES_FILE``. Stats:
``spidercrawl/incremental/{new,changed,unchanged,duplicate}``, and the same per site under
``spidercrawl/site/<site>/`` (the spider's summary line of each site shows them).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured

from spidercrawl.document.reservations import respected_reservations
from spidercrawl.extract.formats import CONTENT_FORMATS, ArticleFormats
from spidercrawl.files import safe_name
from spidercrawl.memory import ArticleIdentity, SiteMemory, Verdict, article_identity, page_key
from spidercrawl.near_duplicates import DeliveredArticle, NearDuplicateIndex
from spidercrawl.pipelines.articles_file import (
    ArticlesFile,
    articles_file_path,
    articles_file_template,
    repair_last_line,
)

if TYPE_CHECKING:
    from spidercrawl.distributed.near_duplicates import SharedNearDuplicates

logger = logging.getLogger(__name__)

VERDICTS: tuple[Verdict, ...] = ("new", "changed", "unchanged", "duplicate")
DUPLICATE_MODES = ("keep", "mark", "drop")


class DeliveryPipeline:
    """Drops articles already delivered; writes and records the others, one at a time."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("LEARN_ENABLED"):
            if not settings.getdict("FEEDS") and settings.get("ARTICLES_FILE"):
                logger.warning(
                    "LEARN_ENABLED=False yields page items, not articles, and %s takes "
                    "articles only: name a file for the page items with -O pages.jsonl",
                    settings.get("ARTICLES_FILE"),
                )
            raise NotConfigured("LEARN_ENABLED is off: page items, no articles to deliver")
        self.crawler = crawler
        self.formats = article_formats(crawler)
        self.incremental = settings.getbool("INCREMENTAL_ENABLED")
        self.state_dir = Path(settings.get("STATE_DIR"))
        self.save_every = max(1, settings.getint("INCREMENTAL_SAVE_EVERY"))
        self.articles_template = articles_file_template(settings)
        self.sites: dict[str, SiteMemory | None] = {}
        self.files: dict[str, ArticlesFile] = {}
        self.counts: dict[str, dict[str, int]] = {}
        self.started = _now()
        self.redis = None
        if settings.get("REDIS_URL"):
            from spidercrawl.distributed.delivery import RedisDelivery

            self.redis = RedisDelivery.from_settings(settings)
        self.duplicates = str(settings.get("DUPLICATES")).lower()
        self.skip_paywalled = settings.getbool("SKIP_PAYWALLED")
        self.respected = respected_reservations(settings.get("RESPECT_RESERVATIONS"))
        if self.duplicates not in DUPLICATE_MODES:
            raise ValueError(f"DUPLICATES takes {', '.join(DUPLICATE_MODES)}: {self.duplicates!r}")
        self.near: NearDuplicateIndex | SharedNearDuplicates | None = None
        threshold = settings.getfloat("NEAR_DUPLICATE_THRESHOLD")
        if self.duplicates != "keep" and self.redis is not None:  # every worker's articles
            from spidercrawl.distributed.near_duplicates import SharedNearDuplicates

            self.near = SharedNearDuplicates(self.redis.redis, self.redis.prefix, threshold)
        elif self.duplicates != "keep":
            kept = self.state_dir if self.incremental else None
            self.near = NearDuplicateIndex(kept, threshold)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DeliveryPipeline:
        return cls(crawler)

    def _memory(self, site: str) -> SiteMemory | None:
        if site not in self.sites:
            memory = None
            if self.incremental and self.redis is None:
                memory = SiteMemory.load(
                    self.state_dir / f"{safe_name(site)}.json", self._articles_path(site)
                )
                if memory.last_crawl:
                    logger.info(
                        "%s: %d articles known from crawls up to %s; only new or changed "
                        "ones are delivered", site, len(memory.articles), memory.last_crawl,
                    )  # fmt: skip
            self.sites[site] = memory
            self.counts[site] = dict.fromkeys(VERDICTS, 0)
        return self.sites[site]

    def _articles_path(self, site: str) -> Path | None:
        return articles_file_path(self.articles_template, site)

    def _file(self, site: str) -> ArticlesFile | None:
        if site not in self.files:
            path = self._articles_path(site)
            if path is None:
                return None
            self.files[site] = ArticlesFile(path)
        return self.files[site]

    def _skip_if_withheld(self, site: str, adapter: ItemAdapter) -> None:
        """A paywalled article with ``SKIP_PAYWALLED``, or one its site reserves by one of
        the reservations ``RESPECT_RESERVATIONS`` names (noai, tdm...), is not delivered:
        counted (the site's summary line) and logged."""
        applied = [name for name in adapter.get("reserved") or () if name in self.respected]
        if self.skip_paywalled and adapter.get("access") == "paywalled":
            why, key = "paywalled (SKIP_PAYWALLED)", "paywalled_skipped"
        elif applied:
            reserved = ", ".join(applied)
            why, key = (
                f"reserved by the site: {reserved} (RESPECT_RESERVATIONS)",
                "reserved_skipped",
            )
        else:
            return
        self.crawler.stats.inc_value(f"spidercrawl/articles/{key}")
        self.crawler.stats.inc_value(f"spidercrawl/site/{site}/{key}")
        raise DropItem(f"not delivered, {why}: {adapter.get('url')}", log_level="INFO")

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "text" not in adapter or "method" not in adapter:  # not an article
            return item
        site = str(adapter.get("site") or "unknown")
        if not str(adapter.get("text") or "").strip():  # nothing to read: not delivered
            self.crawler.stats.inc_value("spidercrawl/articles/empty_not_delivered")
            self.crawler.stats.inc_value(f"spidercrawl/site/{site}/empty")  # its summary line
            raise DropItem(f"no article text: {adapter.get('url')}", log_level="INFO")
        self._skip_if_withheld(site, adapter)
        memory = self._memory(site)
        validators = adapter.pop("validators", None)  # recorded here, not delivered
        page = (page_key(str(adapter.get("url") or "")), validators) if validators else None
        digest = adapter.pop("page_digest", None) or ""  # recorded here, not delivered
        identity = article_identity({**adapter, "page_digest": digest})
        self._mark_near_duplicate(site, identity, adapter)
        article = self.formats.strip(adapter)  # shallow, once: the file's line
        now = _now()
        if self.redis is not None:
            verdict, other = self.redis.deliver(site, identity, ItemAdapter(article), now, page)
        elif memory is None:
            verdict, other = "new", ""
        else:
            verdict, other = memory.judge(identity)
        self.counts[site][verdict] += 1
        self.crawler.stats.inc_value(f"spidercrawl/incremental/{verdict}")
        self.crawler.stats.inc_value(f"spidercrawl/site/{site}/{verdict}")  # its summary line
        if verdict == "unchanged":
            if memory is not None and self.redis is None:
                memory.touch(identity, now, page)
            raise DropItem(f"unchanged since {other}: {identity.url}", log_level="DEBUG")
        if verdict == "duplicate":
            raise DropItem(f"same text as {other}: {identity.url}", log_level="INFO")
        adapter["update"] = verdict
        if self.redis is not None:  # already in the delivery stream, atomically
            return item
        articles = self._file(site)
        article["update"] = verdict
        offset = articles.append(article) if articles is not None else None
        if memory is not None:
            memory.record(identity, now, offset, page)
            if memory.dirty >= self.save_every:
                memory.save(self.started)
        return item

    def _mark_near_duplicate(
        self, site: str, identity: ArticleIdentity, adapter: ItemAdapter
    ) -> None:
        """Mark the article ``duplicate_of`` the one delivered before that it is a
        near-duplicate of, if any, and count it; or (``DUPLICATES=drop``) drop it. One that
        is not is remembered as the first of its story."""
        if self.near is None:
            return
        text = str(adapter.get("text") or "")
        first = DeliveredArticle(identity.url, site)
        original = self.near.check_and_add(_near_key(site, identity), first, text)
        if original is None:
            return
        self.crawler.stats.inc_value("spidercrawl/articles/near_duplicates")
        self.crawler.stats.inc_value(f"spidercrawl/site/{site}/near_duplicate")
        logger.info("%s is a near-duplicate of %s (%s)", identity.url, original.url, original.site)
        if self.duplicates == "drop":
            raise DropItem(f"a near-duplicate of {original.url}: {identity.url}", log_level="INFO")
        adapter["duplicate_of"] = {"url": original.url, "site": original.site}

    def open_spider(self, spider: Spider | None = None) -> None:
        """A last line that a killed process left half-written is cut now, not when the
        site's next article comes (which may be never, on a site that did not change)."""
        names = getattr(self.crawler.spider, "site_names", None)
        for site in names() if names is not None else ():
            path = self._articles_path(site)
            if path is not None:
                repair_last_line(path)

    def close_spider(self, spider: Spider | None = None) -> None:
        """Runs once every item is through the pipelines (before ``spider_closed``)."""
        for articles in self.files.values():
            articles.close()
        if self.near is not None:
            self.near.save()
        for site, memory in self.sites.items():
            if memory is not None:
                memory.save(self.started)
            logger.debug(
                "%s: state in %s",
                site,
                self.redis.describe() if self.redis else memory.path if memory else "nowhere",
            )


def _near_key(site: str, identity: ArticleIdentity) -> str:
    """An article's key in the near-duplicate index: its site's too, as a copy on another
    site may declare the original's canonical URL (and is a near-duplicate all the same)."""
    return f"{site} {identity.key}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def article_formats(crawler: Crawler) -> ArticleFormats:
    """``ARTICLE_FORMATS``, or a clear error that stops the crawl before it starts."""
    try:
        return ArticleFormats.parse(crawler.settings.getlist("ARTICLE_FORMATS"))
    except ValueError as error:
        raise ValueError(f"ARTICLE_FORMATS: {error}") from None


class ArticleFormatsPipeline:
    """The content forms ``ARTICLE_FORMATS`` leaves out, taken out of each article before
    Scrapy's exporters (``-o``) write it; the pipelines before it saw them all (the JSON
    Feed keeps its ``content_text``)."""

    def __init__(self, formats: ArticleFormats) -> None:
        self.formats = formats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArticleFormatsPipeline:
        formats = article_formats(crawler)
        if formats == ArticleFormats():
            raise NotConfigured("ARTICLE_FORMATS keeps every form")
        return cls(formats)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "method" in adapter:  # an article
            for name in CONTENT_FORMATS:
                if name in adapter and not self.formats.keeps(name):
                    del adapter[name]
        return item
