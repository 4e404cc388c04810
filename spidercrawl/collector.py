"""The one writer of a distributed crawl: the delivery stream into articles files and feeds.

Workers put each delivered article into the Redis stream ``PREFIX:delivered``
(:mod:`.delivery`). This reads the stream in order and appends each article to its site's
articles file (``ARTICLES_FILE``), a whole line per ``write``, with its stream id in
``delivery_id``. Where it resumes is read back from those files (the highest
``delivery_id`` of their last lines), so a collector killed at any moment and started again
writes every article once. Then each site's JSON Feed is rebuilt from its articles file
(``JSONFEED_PATH``), and the stream is trimmed up to what was written.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy.settings import BaseSettings

from spidercrawl.distributed import as_text, key_prefix
from spidercrawl.files import safe_name
from spidercrawl.pipelines.articles_file import (
    ArticlesFile,
    articles_file_path,
    last_lines,
    repair_last_line,
)
from spidercrawl.pipelines.jsonfeed import write_site_feed

logger = logging.getLogger(__name__)


def _stream_order(entry_id: str) -> tuple[int, int]:
    milliseconds, _, sequence = entry_id.partition("-")
    return int(milliseconds or 0), int(sequence or 0)


@dataclass
class Collector:
    """Writes the delivery stream to per-site files; ``run_once`` until nothing is left."""

    redis: Any
    prefix: str
    articles_template: str
    feed_template: str
    feed_max_items: int = 500
    batch: int = 500
    files: dict[str, ArticlesFile] = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, redis: Any, settings: BaseSettings) -> Collector:
        template = str(settings.get("ARTICLES_FILE") or "")
        if not template:
            raise ValueError("ARTICLES_FILE is empty: the collector has nowhere to write")
        return cls(
            redis,
            key_prefix(settings),
            template,
            str(settings.get("JSONFEED_PATH") or ""),
            settings.getint("JSONFEED_MAX_ITEMS"),
        )

    @property
    def stream(self) -> str:
        return f"{self.prefix}:delivered"

    def _path(self, site: str) -> Path:
        path = articles_file_path(self.articles_template, site)
        assert path is not None
        return path

    def position(self) -> str:
        """The id of the last article written, read from the files' last lines."""
        last = "0-0"
        for raw in self.redis.hkeys(f"{self.prefix}:sites"):
            path = self._path(as_text(raw))
            repair_last_line(path)
            for article in last_lines(path, 1):
                delivered = str(article.get("delivery_id") or "0-0")
                if _stream_order(delivered) > _stream_order(last):
                    last = delivered
        return last

    def run_once(self) -> int:
        """Write everything the stream holds beyond the files; returns how many."""
        after = self.position()
        total = 0
        while True:
            entries = self.redis.xrange(self.stream, min=f"({after}", count=self.batch)
            if not entries:
                break
            for entry_id, fields in entries:
                values = {as_text(k): as_text(v) for k, v in fields.items()}
                site = values.get("site", "unknown")
                try:
                    article = json.loads(values.get("article", "{}"))
                except ValueError:
                    logger.error("Stream entry %s is not an article: skipped", as_text(entry_id))
                    continue
                article["update"] = values.get("update", "new")
                article["delivery_id"] = as_text(entry_id)
                self._file(site).append(article)
                self.written[site] = self.written.get(site, 0) + 1
                total += 1
            after = as_text(entries[-1][0])
        if total:
            self.redis.xtrim(self.stream, minid=after)  # what is in the files may go
        return total

    def _file(self, site: str) -> ArticlesFile:
        if site not in self.files:
            self.redis.hsetnx(f"{self.prefix}:sites", site, site)  # its file is found again
            self.files[site] = ArticlesFile(self._path(site))
        return self.files[site]

    def write_feeds(self) -> None:
        if not self.feed_template:
            return
        for site in self.written:
            feed = Path(self.feed_template % {"site": safe_name(site)})
            write_site_feed(site, feed, {}, self._path(site), self.feed_max_items)

    def close(self) -> None:
        for articles in self.files.values():
            articles.close()

    def progress(self) -> dict[str, dict[str, int]]:
        """Per site: the verdicts counted by the workers so far."""
        counts = {}
        for raw in self.redis.hkeys(f"{self.prefix}:sites"):
            site = as_text(raw)
            values = self.redis.hgetall(f"{self.prefix}:counts:{site}")
            counts[site] = {as_text(k): int(v) for k, v in values.items()}
        return counts


def collect(collector: Collector, follow: bool, interval: float = 2.0) -> int:
    """Run the collector once, or (``follow``) until interrupted."""
    total = 0
    try:
        while True:
            written = collector.run_once()
            total += written
            if written:
                logger.info("Wrote %d articles (%d in all)", written, total)
            if not follow:
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        logger.info("Interrupted: %d articles written; the rest stays in the stream", total)
    finally:
        collector.write_feeds()
        collector.close()
    return total
